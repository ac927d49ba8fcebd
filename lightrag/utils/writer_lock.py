"""``WriterLock``: one lock for the coroutines and threads of a process.

A ``threading.Lock`` held across ``await`` would let a second coroutine of the same loop block
the loop while it waits; an ``asyncio.Lock`` does not work across threads (the server's worker
threads, ``run_sync``). This one waits in a worker thread when it is taken, so waiting never blocks
an event loop, and a cancelled waiter releases what it acquired late.

Example:
    >>> lock = WriterLock()
    >>> lock.acquire_sync(); lock.release()
"""

from __future__ import annotations

import asyncio
import threading


class WriterLock:
    """A lock for coroutines and threads alike: waiting never blocks an event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    async def acquire(self) -> None:
        if self._lock.acquire(blocking=False):
            return
        waiter = asyncio.ensure_future(asyncio.to_thread(self._lock.acquire))
        try:
            await asyncio.shield(waiter)
        except asyncio.CancelledError:
            waiter.add_done_callback(lambda _: self._lock.release())
            raise

    def acquire_sync(self) -> None:
        self._lock.acquire()

    def release(self) -> None:
        self._lock.release()
