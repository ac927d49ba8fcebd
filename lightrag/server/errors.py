"""What the server answers for an error no route handles: JSON, never a key.

* a ``ValueError`` (a bad value the library refused) is 400 with its message;
* a model provider's failure (the SDK's error: ``openai.InternalServerError``, a connection
  error, a timeout, a reply that is not JSON) is 502 naming the failure: an embedding model that
  fails during a query or a graph import is the provider's fault, not the server's, and the
  client learns what failed instead of a plain-text ``Internal Server Error``;
* anything else is a JSON 500 that says the server log has the details (an internal error's
  text may name files and settings; it is logged, not sent);
  :class:`UnhandledErrorMiddleware` answers these two and keeps the connection open;
* a full store (:class:`~lightrag.components.storage.sql_db.StoreFullError`) is 507, a store
  another process writes for longer than ``lock_timeout`` (``StoreLockedError``: a graph
  import, a delete) is 503 with ``Retry-After``, as an insert is.

Every message passes through :func:`~lightrag.utils.secrets.redact_text`: an SDK error carries
what the provider echoed of the request (``Incorrect API key provided: ...``, the
``Authorization`` header, the ``Basic`` value of a base URL's password).

Example:
    >>> class InternalServerError(Exception): pass
    >>> InternalServerError.__module__ = "openai"
    >>> is_provider_error(InternalServerError("500")), is_provider_error(KeyError("x"))
    (True, False)
"""

from __future__ import annotations

import asyncio
import logging
import traceback

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from lightrag.components.storage.sql_db import StoreFullError, StoreLockedError
from lightrag.server.middleware import ASGIApp, Message, Receive, Scope, Send, send_json
from lightrag.utils.http_errors import ProviderResponseError
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

__all__ = ["UnhandledErrorMiddleware", "add_error_handlers", "is_provider_error"]

#: the packages whose exceptions are a model provider's (or its HTTP client's) failures
PROVIDER_PACKAGES = frozenset({
    "openai", "groq", "anthropic", "cohere", "mistralai", "ollama", "google", "httpx", "httpx2",
    "httpcore", "httpcore2", "aiohttp", "requests", "urllib3",
})  # fmt: skip


def is_provider_error(error: BaseException) -> bool:
    """Whether ``error`` is a model provider's failure: an exception of a provider SDK or HTTP
    client (by the package that defines it or one of its bases), a reply that could not be read,
    a connection error or a timeout."""
    if isinstance(error, (ProviderResponseError, ConnectionError, TimeoutError, asyncio.TimeoutError)):
        return True
    return any((cls.__module__ or "").split(".")[0] in PROVIDER_PACKAGES
               for cls in type(error).__mro__)


def add_error_handlers(app: FastAPI) -> None:
    """Answer errors no route handles with JSON (see the module doc)."""

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, exc: ValueError) -> JSONResponse:
        if is_provider_error(exc):
            return _provider_failed(exc)
        return JSONResponse({"detail": redact_text(str(exc))}, status_code=400)

    @app.exception_handler(StoreLockedError)
    async def store_locked(request: Request, exc: StoreLockedError) -> JSONResponse:
        return JSONResponse({"detail": redact_text(str(exc))}, status_code=503,
                            headers={"Retry-After": "5"})

    @app.exception_handler(StoreFullError)
    async def store_full(request: Request, exc: StoreFullError) -> JSONResponse:
        return JSONResponse({"detail": redact_text(str(exc))}, status_code=507)


class UnhandledErrorMiddleware:
    """Answer an exception no route handled with JSON (502 for a model provider's failure, else
    500) and keep the connection: Starlette's own 500 answers plain text and re-raises, and
    uvicorn then closes the connection under a client that keeps it alive (its next request on
    it got ``Connection reset by peer``). The traceback is logged redacted. An exception after
    the answer started (a stream) is re-raised: too late for another answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception as exc:
            if started:
                raise
            log.error("%s %s failed:\n%s", scope.get("method"), scope.get("path"),
                      redact_text(traceback.format_exc()))
            if is_provider_error(exc):
                await send_json(send, 502, {"detail": _provider_message(exc)})
            else:
                await send_json(send, 500, {"detail": "internal server error; the server log "
                                                      "has the details"})


def _provider_message(exc: BaseException) -> str:
    return redact_text(f"a model provider failed: {type(exc).__name__}: {exc}")


def _provider_failed(exc: BaseException) -> JSONResponse:
    message = _provider_message(exc)
    log.warning("%s", message)
    return JSONResponse({"detail": message}, status_code=502)
