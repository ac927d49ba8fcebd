"""Connections whose headers never finish, or whose body stalls, are closed; file limits raised.

uvicorn has no limit on the time a request's headers take: a client that opens a connection and
sends ``GET / HTTP/1.1`` and a header now and then (or nothing at all after a first byte) holds
a file descriptor for as long as it likes. 1,100 such connections, under the common limit of
1,024 descriptors, left ``lightrag serve`` answering nobody (``Connection reset by peer`` for
``/health`` and inserts) for as long as they stayed open.

:func:`header_timeout_protocol` wraps uvicorn's HTTP protocol: a connection whose next request's
headers are not complete ``seconds`` after the connection opened, or after the previous answer,
is closed. Its body then has ``body_seconds`` between two reads (nginx's
``client_body_timeout``): a body that stalls longer is answered ``408`` and the connection
closed, however slowly the body came before (an upload that keeps coming is never cut, nor an
answer being streamed, nor a body the server itself stopped reading while the app was busy).
:func:`raise_open_file_limit` raises the soft limit of open files to the hard one.

Example:
    >>> protocol = header_timeout_protocol(20.0)  # doctest: +SKIP
    >>> uvicorn.Config(app, http=protocol)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Optional

log = logging.getLogger(__name__)

__all__ = ["BODY_TIMEOUT", "HEADER_TIMEOUT", "HeaderTimeoutMixin", "header_timeout_protocol",
           "raise_open_file_limit"]

HEADER_TIMEOUT = 20.0  #: seconds a request's headers may take to arrive
BODY_TIMEOUT = 60.0  #: seconds a request's body may go without sending a byte
_BODY_STALLED = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                 b"connection: close\r\ncontent-length: %d\r\n\r\n%s")


class HeaderTimeoutMixin:
    """Mixed into a uvicorn HTTP protocol by :func:`header_timeout_protocol`: the timer of the
    next request's headers (``_header_seconds``) and of its body's pauses (``_body_seconds``)."""

    _header_seconds: float = HEADER_TIMEOUT
    _header_timer: Optional[asyncio.TimerHandle] = None
    _header_cycle: Any = None
    _body_seconds: float = BODY_TIMEOUT
    _body_timer: Optional[asyncio.TimerHandle] = None
    _last_data: float = 0.0

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self._between_requests():
            self._arm_header_timer()
        super().data_received(data)  # type: ignore[misc]
        self._last_data = self._loop().time()
        if self._body_timer is None and self._reading_body():
            self._body_timer = self._loop().call_later(self._body_seconds, self._body_check)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        for name in ("_header_timer", "_body_timer"):
            timer = getattr(self, name)
            if timer is not None:
                timer.cancel()
                setattr(self, name, None)
        super().connection_lost(exc)  # type: ignore[misc]

    def _loop(self) -> asyncio.AbstractEventLoop:
        return getattr(self, "loop", None) or asyncio.get_event_loop()

    def _reading_body(self) -> bool:
        cycle = getattr(self, "cycle", None)
        return (cycle is not None and bool(getattr(cycle, "more_body", False))
                and not getattr(cycle, "response_complete", False))

    def _body_check(self) -> None:
        self._body_timer = None
        if not self._reading_body():
            return  # the body ended; the next one arms its own timer
        now = self._loop().time()
        flow = getattr(self, "flow", None)
        if flow is not None and getattr(flow, "read_paused", False):
            self._last_data = now  # the server is not reading: the client is not stalling
        idle = now - self._last_data
        if idle < self._body_seconds:
            self._body_timer = self._loop().call_later(self._body_seconds - idle, self._body_check)
            return
        transport = getattr(self, "transport", None)
        if transport is None or transport.is_closing():
            return
        log.info("closing a connection whose request body sent nothing for %g s", self._body_seconds)
        if not getattr(self.cycle, "response_started", False):  # type: ignore[attr-defined]
            detail = json.dumps({"detail": f"the request body sent nothing for "
                                           f"{self._body_seconds:g} s"}).encode()
            transport.write(_BODY_STALLED % (len(detail), detail))
        transport.close()

    def _between_requests(self) -> bool:
        cycle = getattr(self, "cycle", None)
        return cycle is None or bool(getattr(cycle, "response_complete", False))

    def _arm_header_timer(self) -> None:
        self._header_cycle = getattr(self, "cycle", None)
        self._header_timer = self._loop().call_later(self._header_seconds, self._header_timed_out)

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if not self._between_requests():
            return  # a request is being answered: its headers came in time
        if getattr(self, "cycle", None) is not self._header_cycle:
            self._arm_header_timer()  # a request was answered since: the next one's turn
            return
        transport = getattr(self, "transport", None)
        if transport is not None and not transport.is_closing():
            log.info("closing a connection whose request headers took over %g s",
                     self._header_seconds)
            transport.close()


def header_timeout_protocol(seconds: float = HEADER_TIMEOUT, base: Optional[type] = None,
                            body_seconds: float = BODY_TIMEOUT) -> type:
    """uvicorn's HTTP protocol class (``base``: the one ``http="auto"`` picks) closing a
    connection whose request headers take over ``seconds``, or whose body sends nothing for
    ``body_seconds`` (see the module doc)."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    return type(f"HeaderTimeout{base.__name__}", (HeaderTimeoutMixin, base),
                {"_header_seconds": float(seconds), "_body_seconds": float(body_seconds)})


def raise_open_file_limit() -> Optional[int]:
    """Raise this process's soft limit of open files to its hard limit (each connection is a
    file descriptor); the new soft limit, or None where it cannot be read."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or hard > soft:
            target = 1_048_576 if hard == resource.RLIM_INFINITY else hard
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        return soft
    except (ImportError, ValueError, OSError):
        return None
