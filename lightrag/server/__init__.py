"""The HTTP server of graph RAG (extra ``server``: FastAPI + uvicorn).

``lightrag serve --config graph.yaml`` runs it (:mod:`lightrag.cli.serve`); :func:`create_app`
builds the app for your own ASGI server, :class:`BackgroundServer` runs one in a thread. Besides
the JSON API it serves a web UI at ``/`` (documents, graph explorer, query playground) and the
API docs at ``/docs`` and ``/redoc``, all from assets inside the package
(:mod:`lightrag.server.ui`). Inserts are durable before they are acknowledged
(:mod:`lightrag.server.intake`). One server serves several isolated workspaces
(:mod:`lightrag.server.workspaces`). Importing this package does not import FastAPI; the names
below load on first use.

Example:
    >>> from lightrag.server import create_app  # doctest: +SKIP
    >>> app = create_app(rag, api_keys=["secret"])  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "create_app": "lightrag.server.app",
    "BackgroundServer": "lightrag.server.runner",
    "ServerMetrics": "lightrag.server.metrics",
    "JsonLogFormatter": "lightrag.server.middleware",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lightrag.server' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
