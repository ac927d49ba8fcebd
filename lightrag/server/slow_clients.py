"""Connections that never finish their request's headers are closed; file descriptors are raised.

uvicorn has no limit on the time a request's headers take: a client that opens a connection and
sends ``GET / HTTP/1.1`` and a header now and then (or nothing at all after a first byte) holds
a file descriptor for as long as it likes. 1,100 such connections, under the common limit of
1,024 descriptors, left ``lightrag serve`` answering nobody (``Connection reset by peer`` for
``/health`` and inserts) for as long as they stayed open.

:func:`header_timeout_protocol` wraps uvicorn's HTTP protocol: a connection whose next request's
headers are not complete ``seconds`` after the connection opened, or after the previous answer,
is closed (a request being answered, its body being read or its answer being streamed is never
cut). :func:`raise_open_file_limit` raises the soft limit of open files to the hard one.

Example:
    >>> protocol = header_timeout_protocol(20.0)  # doctest: +SKIP
    >>> uvicorn.Config(app, http=protocol)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Optional

log = logging.getLogger(__name__)

__all__ = ["HEADER_TIMEOUT", "HeaderTimeoutMixin", "header_timeout_protocol", "raise_open_file_limit"]

HEADER_TIMEOUT = 20.0  #: seconds a request's headers may take to arrive


class HeaderTimeoutMixin:
    """Mixed into a uvicorn HTTP protocol by :func:`header_timeout_protocol`: the timer of the
    next request's headers (``_header_seconds``)."""

    _header_seconds: float = HEADER_TIMEOUT
    _header_timer: Optional[asyncio.TimerHandle] = None
    _header_cycle: Any = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self._between_requests():
            self._arm_header_timer()
        super().data_received(data)  # type: ignore[misc]

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)  # type: ignore[misc]

    def _between_requests(self) -> bool:
        cycle = getattr(self, "cycle", None)
        return cycle is None or bool(getattr(cycle, "response_complete", False))

    def _arm_header_timer(self) -> None:
        self._header_cycle = getattr(self, "cycle", None)
        loop = getattr(self, "loop", None) or asyncio.get_event_loop()
        self._header_timer = loop.call_later(self._header_seconds, self._header_timed_out)

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


def header_timeout_protocol(seconds: float = HEADER_TIMEOUT, base: Optional[type] = None) -> type:
    """uvicorn's HTTP protocol class (``base``: the one ``http="auto"`` picks) closing a
    connection whose request headers take over ``seconds`` (see the module doc)."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    return type(f"HeaderTimeout{base.__name__}", (HeaderTimeoutMixin, base),
                {"_header_seconds": float(seconds)})


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
