"""Reading a model's streamed reply for a ``Generator``: a time limit per piece and a hook at the end.

A client streams a reply as an iterator (or async iterator) of text pieces; its usage is only
known once the last piece has been read. :func:`watch_stream` wraps such a stream so that
``on_end`` runs right after the last piece and, with a ``limit``, so that a stream which stalls
raises :class:`~lightrag.core.timeouts.ModelCallTimeout` in its reader: each piece (the first
one included) must arrive within ``limit`` seconds of the reader asking for it. A long reply
that keeps coming is never cut off; only a silence longer than ``limit`` is.

A sync stream with a limit is read by a daemon thread that hands pieces over as they come (a
blocked read cannot be interrupted); a stalled read is left to finish in that thread, as a
timed-out request is. The thread reads at most :data:`MAX_AHEAD` pieces ahead of the reader, so a
reader that pauses (a slow client of ``/query``) does not make it buffer an endless or huge
reply in memory. An async stream is read in the caller's event loop, and a stalled read is
cancelled.

Example:
    >>> ended = []
    >>> pieces = watch_stream(iter(["Hel", "lo"]), on_end=lambda: ended.append(True), limit=5)
    >>> "".join(pieces), ended
    ('Hello', [True])
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, Optional, Tuple, Union

from lightrag.core.timeouts import ModelCallTimeout, acall_with_timeout

__all__ = ["watch_stream"]

log = logging.getLogger(__name__)

Stream = Union[Iterable[str], AsyncIterator[str]]

_PIECE, _END, _ERROR = "piece", "end", "error"

#: pieces the reading thread may hold that the reader has not taken yet
MAX_AHEAD = 1024


def watch_stream(
    source: Stream, on_end: Callable[[], None], limit: Optional[float] = None
) -> Union[Iterator[str], AsyncIterator[str]]:
    """``source``'s pieces, then a call to ``on_end`` (an async iterator when ``source`` is one).

    Args:
        source: the client's stream of text pieces.
        on_end: called once the last piece has been read; not when the stream breaks, stalls
            or its reader stops early.
        limit: seconds the reader may wait for any one piece before :class:`ModelCallTimeout`
            is raised; None or <= 0: no limit.
    """
    if isinstance(source, AsyncIterator):
        return _watch_async(source, on_end, limit)
    if limit and limit > 0:
        return _watch_sync_limited(source, on_end, limit)
    return _watch_sync(source, on_end)


def _watch_sync(source: Iterable[str], on_end: Callable[[], None]) -> Iterator[str]:
    yield from source
    on_end()


def _watch_sync_limited(source: Iterable[str], on_end: Callable[[], None], limit: float) -> Iterator[str]:
    """Pieces read by a worker thread; a wait longer than ``limit`` raises ModelCallTimeout."""
    handoff: queue.Queue[Tuple[str, Any]] = queue.Queue(maxsize=MAX_AHEAD)
    stop = threading.Event()
    context = contextvars.copy_context()
    worker = threading.Thread(
        target=context.run, args=(_produce, source, handoff, stop), name="lightrag-stream-read", daemon=True
    )
    worker.start()
    try:
        while True:
            try:
                kind, value = handoff.get(timeout=limit)
            except queue.Empty:
                raise ModelCallTimeout(limit) from None
            if kind == _END:
                break
            if kind == _ERROR:
                raise value
            yield value
    finally:
        stop.set()
    on_end()


def _hand_over(handoff: queue.Queue, item: Tuple[str, Any], stop: threading.Event) -> bool:
    """Put ``item`` once the reader has room for it; False when the reader has gone."""
    while not stop.is_set():
        try:
            handoff.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


def _produce(source: Iterable[str], handoff: queue.Queue, stop: threading.Event) -> None:
    """Read ``source`` into ``handoff`` until it ends, fails, or the reader has gone."""
    pieces = iter(source)
    try:
        for piece in pieces:
            if stop.is_set() or not _hand_over(handoff, (_PIECE, piece), stop):
                break
        else:
            _hand_over(handoff, (_END, None), stop)
    except BaseException as e:  # handed to the reader's thread
        _hand_over(handoff, (_ERROR, e), stop)
    finally:
        close = getattr(pieces, "close", None)
        if stop.is_set() and close is not None:
            try:
                close()
            except Exception as e:  # noqa: BLE001 - the reader has gone; nothing to report to
                log.debug("closing an abandoned stream failed: %s", e)


async def _watch_async(
    source: AsyncIterator[str], on_end: Callable[[], None], limit: Optional[float]
) -> AsyncIterator[str]:
    if not limit or limit <= 0:
        async for piece in source:
            yield piece
    else:
        while True:
            try:
                piece = await acall_with_timeout(source.__anext__(), limit)
            except StopAsyncIteration:
                break
            yield piece
    on_end()
