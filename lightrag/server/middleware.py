"""ASGI middleware of the HTTP server: request-size limit, access log + metrics, API keys.

* :class:`BodyLimitMiddleware` answers 413 when ``Content-Length`` is over the limit, and also
  when a body without a length (chunked) grows over it (it is read before the app sees it).
* :class:`ObservabilityMiddleware` gives every request an id (``X-Request-ID``, taken from the
  request or made up), counts it in :class:`ServerMetrics` by its *route template* (``/documents/
  {doc_id}``, so ids never explode the label space) and logs one structured record per request on
  the ``lightrag.server.access`` logger; :class:`JsonLogFormatter` writes it as one JSON object
  per line.
* :class:`SecurityHeadersMiddleware` adds ``X-Content-Type-Options: nosniff``,
  ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer`` and, unless the route set its own,
  the Content-Security-Policy :data:`DEFAULT_CSP` (every asset is served by the app itself, so
  nothing else is allowed) to every response.
* :func:`check_api_key` accepts ``X-API-Key: <key>`` or ``Authorization: Bearer <key>``.

Example:
    >>> import logging
    >>> record = logging.LogRecord("lightrag.server.access", logging.INFO, "", 0, "GET /health 200",
    ...                            None, None)
    >>> record.fields = {"status": 200}
    >>> JsonLogFormatter().format(record).endswith('"status": 200}')
    True
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import time
import uuid
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Sequence

from lightrag.server.metrics import ServerMetrics
from lightrag.utils.secrets import redact_text

access_log = logging.getLogger("lightrag.server.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

API_KEYS_ENV = "LIGHTRAG_API_KEYS"
# inline styles are allowed (the vendored graph library sets style attributes); scripts are not
DEFAULT_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; "
               "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
               "form-action 'self'; frame-ancestors 'none'")


def api_keys_from_env(environ: Optional[MutableMapping[str, str]] = None) -> List[str]:
    """The keys of ``LIGHTRAG_API_KEYS`` (blanks dropped).

    The plain form is comma-separated keys, each good for every workspace. A key may be limited
    to workspaces as ``key:ws1,ws2``; when any entry has a ``:``, entries are separated by ``;``
    (or new lines) instead, and each is ``key`` or ``key:ws1,ws2``
    (:class:`lightrag.server.auth.KeyRing` reads them).

    >>> api_keys_from_env({"LIGHTRAG_API_KEYS": "k1, k2,,"})
    ['k1', 'k2']
    >>> api_keys_from_env({"LIGHTRAG_API_KEYS": "admin; acme-key:acme,globex"})
    ['admin', 'acme-key:acme,globex']
    """
    raw = (os.environ if environ is None else environ).get(API_KEYS_ENV, "")
    if ":" in raw:
        return [k.strip() for k in raw.replace("\n", ";").split(";") if k.strip()]
    return [k.strip() for k in raw.split(",") if k.strip()]


def check_api_key(keys: Sequence[str], x_api_key: Optional[str], authorization: Optional[str]) -> bool:
    """Whether the request carries one of ``keys`` (constant-time comparison)."""
    offered = [x_api_key or ""]
    if authorization and authorization[:7].lower() == "bearer ":
        offered.append(authorization[7:].strip())
    return any(hmac.compare_digest(o.encode(), k.encode()) for o in offered if o for k in keys)


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's ``fields``; the
    message and the traceback pass through :func:`~lightrag.utils.secrets.redact_text` (an SDK
    error whose provider echoed the request's key reaches no log)."""

    def format(self, record: logging.LogRecord) -> str:
        data: Dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact_text(record.getMessage()),
        }
        if record.exc_info:
            # a provider SDK's exception carries what the provider echoed (a key, a Basic value)
            data["exception"] = redact_text(self.formatException(record.exc_info))
        data.update(getattr(record, "fields", None) or {})
        return json.dumps(data, ensure_ascii=False, default=str)


async def send_json(send: Send, status: int, body: Dict[str, Any]) -> None:
    """Answer an ASGI request with ``body`` as JSON (from a middleware, before the app)."""
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


class BodyLimitMiddleware:
    """Reject request bodies over ``max_bytes`` with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        too_big = {"detail": f"request body over the limit of {self.max_bytes} bytes"}
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await send_json(send, 400, {"detail": "invalid Content-Length"})
            elif int(length) > self.max_bytes:
                await send_json(send, 413, too_big)
            else:
                await self.app(scope, receive, send)
            return
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_bytes:
                await send_json(send, 413, too_big)
                return
        body, replayed = b"".join(chunks), False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class ObservabilityMiddleware:
    """Request id, metrics by route template, and one structured access-log record per request."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or uuid.uuid4().hex[:16]
        state = {"status": 500, "bytes": 0}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            elif message["type"] == "http.response.body":
                state["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            seconds = time.perf_counter() - started
            matched = scope.get("route")
            route = (getattr(matched, "path_format", None) or getattr(matched, "path", None)
                     or "unmatched")
            self.metrics.observe_request(scope["method"], route, state["status"], seconds)
            client = scope.get("client")
            fields = {"request_id": request_id, "method": scope["method"], "path": scope["path"],
                      "route": route, "status": state["status"],
                      "duration_ms": round(seconds * 1000, 3), "response_bytes": state["bytes"],
                      "client": f"{client[0]}:{client[1]}" if client else None}
            access_log.info("%s %s %s", scope["method"], scope["path"], state["status"],
                            extra={"fields": fields})


class SecurityHeadersMiddleware:
    """``nosniff``, ``X-Frame-Options: DENY``, no referrer and a Content-Security-Policy on every
    response (a route's own ``Content-Security-Policy`` header is kept)."""

    def __init__(self, app: ASGIApp, csp: str = DEFAULT_CSP) -> None:
        self.app = app
        self.csp = csp.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {name.lower() for name, _ in headers}
                extra = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                         (b"referrer-policy", b"no-referrer"),
                         (b"content-security-policy", self.csp)]
                message["headers"] = headers + [(n, v) for n, v in extra if n not in names]
            await send(message)

        await self.app(scope, receive, send_wrapper)
