"""``lightrag serve``: the HTTP server on uvicorn.

    LIGHTRAG_API_KEYS=key1,key2 lightrag serve --config graph.yaml --host 0.0.0.0 --port 9621
    lightrag serve --config graph.yaml          # no keys: 127.0.0.1 only
    LIGHTRAG_API_KEYS="admin;acme-key:acme" lightrag serve --max-workspaces 16

Every request may pick a workspace with the ``LIGHTRAG-WORKSPACE`` header or the ``/w/{name}/``
path prefix; each workspace's GraphRAG is built from the same config with ``workspace``
replaced (see ``docs/workspaces.md``).

Without API keys the server binds to loopback only and refuses any other host with an error.
Logs are JSON, one object per line on stderr (one per request on ``lightrag.server.access``).
SIGINT/SIGTERM shut down gracefully: open requests finish (up to ``--graceful-timeout`` seconds),
then queued documents get as long again; what is left stays PENDING in the store and resumes at
the next start. Then the stores are flushed.

This module imports FastAPI and uvicorn only inside :func:`build_server`, so the ``lightrag``
command works without the ``server`` extra.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="lightrag")
    >>> _ = add_serve_parser(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["serve", "--port", "8080"]).port
    8080
"""

from __future__ import annotations

import argparse
import copy
import logging
import sys
from typing import Any, Callable, Dict, Optional, Sequence

from lightrag.cli.common import graph_config
from lightrag.server.intake import DEFAULT_MAX_PENDING  # none of these imports FastAPI
from lightrag.server.slow_clients import (
    BODY_TIMEOUT,
    HEADER_TIMEOUT,
    header_timeout_protocol,
    raise_open_file_limit,
)
from lightrag.server.workspaces import DEFAULT_MAX_WORKSPACES

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 9621


def check_bind(host: str, api_keys: Sequence[str]) -> None:
    """Refuse a non-loopback ``host`` when no API key is configured.

    >>> check_bind("0.0.0.0", [])
    Traceback (most recent call last):
    ...
    ValueError: refusing to serve on 0.0.0.0 without API keys: ...
    """
    if not api_keys and host not in LOOPBACK_HOSTS:
        raise ValueError(f"refusing to serve on {host} without API keys: set "
                         "LIGHTRAG_API_KEYS=key1,key2 or use --host 127.0.0.1")


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` command to an ``argparse`` subparsers object; it runs :func:`run_serve`."""
    parser = subparsers.add_parser(
        "serve", help="serve a GraphRAG over HTTP (FastAPI + uvicorn)",
        description="Serve a GraphRAG over HTTP. API keys come from LIGHTRAG_API_KEYS "
                    "(comma-separated); without keys only 127.0.0.1 is allowed.")
    parser.add_argument("--config", help="a GraphRAG YAML config (default: the packaged one)")
    parser.add_argument("--working-dir", help="where the stores live (overrides the config)")
    parser.add_argument("--workspace", help="a workspace inside the working dir")
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--max-request-mb", type=float, default=10.0,
                        help="largest request body in MiB (default 10); larger ones get 413")
    parser.add_argument("--graceful-timeout", type=float, default=30.0,
                        help="seconds open requests, and then queued documents, get to finish on "
                             "shutdown (default 30; unfinished documents resume at the next start)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--header-timeout", type=float, default=HEADER_TIMEOUT,
                        help="seconds a request's headers may take to arrive; slower connections "
                             f"are closed (default {HEADER_TIMEOUT:g})")
    parser.add_argument("--body-timeout", type=float, default=BODY_TIMEOUT,
                        help="seconds a request's body may send nothing; a stalled one gets 408 "
                             f"and its connection is closed (default {BODY_TIMEOUT:g})")
    parser.add_argument("--max-pending", type=int, default=DEFAULT_MAX_PENDING,
                        help="most unfinished documents queued; more get 429 with Retry-After "
                             f"(default {DEFAULT_MAX_PENDING})")
    parser.add_argument("--max-workspaces", type=int, default=DEFAULT_MAX_WORKSPACES,
                        help="most workspaces open at once besides the default one (LIGHTRAG-"
                             "WORKSPACE header or /w/NAME/ prefix); the least recently used one no "
                             "request is using is closed to open another, an idle one first "
                             f"(default {DEFAULT_MAX_WORKSPACES})")
    parser.add_argument("--no-ui", action="store_true",
                        help="serve the API only: no web UI at / and no /docs, /redoc pages")
    parser.add_argument("--no-resume", action="store_true",
                        help="do not resume documents left unfinished by a crash at startup")
    parser.set_defaults(func=run_serve)
    return parser


def configure_logging(level: str = "info") -> None:
    """JSON logs, one object per line, on stderr (replaces the root handlers)."""
    from lightrag.server.middleware import JsonLogFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


def _check_limits(args: argparse.Namespace) -> None:
    if args.max_request_mb <= 0:
        raise ValueError("--max-request-mb must be positive")
    if getattr(args, "max_pending", DEFAULT_MAX_PENDING) < 1:
        raise ValueError("--max-pending must be at least 1")
    if getattr(args, "max_workspaces", DEFAULT_MAX_WORKSPACES) < 1:
        raise ValueError("--max-workspaces must be at least 1")
    for flag in ("header_timeout", "body_timeout"):
        if not getattr(args, flag, 1.0) > 0:
            raise ValueError(f"--{flag.replace('_', '-')} must be positive")


def workspace_factory(config: Dict[str, Any]) -> Callable[[str], Any]:
    """A function building the GraphRAG of a workspace: ``config`` with ``workspace`` replaced.

    >>> factory = workspace_factory({"component_name": "GraphRAG", "component_config": {}})
    >>> callable(factory)
    True
    """
    from lightrag.utils.config import build

    def open_workspace(name: str) -> Any:
        copied = copy.deepcopy(config)
        copied.setdefault("component_config", {})["workspace"] = name
        return build(copied)

    return open_workspace


def build_server(args: argparse.Namespace, api_keys: Optional[Sequence[str]] = None) -> Any:
    """The ``uvicorn.Server`` for parsed ``serve`` arguments (keys: ``LIGHTRAG_API_KEYS``)."""
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as e:
        raise ImportError("lightrag serve needs the server extra: pip install -e '.[server]'") from e

    from lightrag.server.app import create_app
    from lightrag.server.middleware import api_keys_from_env
    from lightrag.utils.config import build

    keys = list(api_keys_from_env() if api_keys is None else api_keys)
    check_bind(args.host, keys)
    _check_limits(args)
    config = graph_config(args)
    rag = build(config)
    app = create_app(rag, api_keys=keys, max_request_bytes=int(args.max_request_mb * 1024 * 1024),
                     resume_pending=not args.no_resume,
                     max_pending=getattr(args, "max_pending", DEFAULT_MAX_PENDING),
                     ui=not getattr(args, "no_ui", False), drain_timeout=args.graceful_timeout,
                     workspace_factory=workspace_factory(config),
                     max_workspaces=getattr(args, "max_workspaces", DEFAULT_MAX_WORKSPACES))
    config = uvicorn.Config(app, host=args.host, port=args.port, log_config=None, access_log=False,
                            timeout_graceful_shutdown=args.graceful_timeout, lifespan="on",
                            http=header_timeout_protocol(getattr(args, "header_timeout", HEADER_TIMEOUT),
                                                         body_seconds=getattr(args, "body_timeout",
                                                                              BODY_TIMEOUT)))
    logging.getLogger(__name__).info(
        "serving %s on http://%s:%d (auth: %s)", type(rag).__name__, args.host, args.port,
        "API keys" if keys else "none, loopback only")
    return uvicorn.Server(config)


def run_serve(args: argparse.Namespace) -> int:
    """Run the server until SIGINT/SIGTERM; returns the exit code."""
    configure_logging(args.log_level)
    raise_open_file_limit()  # each connection is a file descriptor
    build_server(args).run()
    return 0
