"""Durable, bounded document intake of the HTTP server.

A document is stored PENDING (``rag.enqueue_documents``, committed before it returns) *before*
the server answers 202, then one background worker processes every unfinished document
(``rag.aprocess_pending()``; ``rag.ainsert([])`` on a GraphRAG without it). A kill at any moment
after the 202 loses nothing: at the next start :meth:`IntakeQueue.resume` processes what is
left. The queue is bounded: when accepting more documents would leave over ``max_pending``
unfinished (PENDING or PROCESSING) ones, :meth:`IntakeQueue.enqueue` raises :class:`QueueFull`
with a ``retry_after`` estimate in seconds, which the app answers as 429 with ``Retry-After``.

Processing runs (the background worker's and a ``wait: true`` insert's) go one at a time, so two
runs never extract the same pending document twice. Writes themselves are serialised by the
store's own writer lock (``GraphIndex.writing``): deletes and the final flush take no lock here.
The server keeps one queue per workspace.

A run's write steps go to a worker thread (:func:`~lightrag.components.graph_rag.index.recording.
write_in_thread`), which Python cannot stop: a cancelled run waits for the write in progress
before it ends. A request's own write (``wait: true``, a graph import) runs through
:meth:`IntakeQueue.finish`: a cancelled request answers at once while its run is cancelled and
finishes in the background, and :meth:`IntakeQueue.drain` waits for it, so the store is never
closed under a write.

Example:
    >>> queue = IntakeQueue(rag, max_pending=100)  # doctest: +SKIP
    >>> (await queue.enqueue(["Alice met Bob."], ["doc-1"], ["a.txt"])).doc_ids  # doctest: +SKIP
    ['doc-1']
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Set, TypeVar

from lightrag.components.graph_rag.schemas import DocStatus

log = logging.getLogger(__name__)

DEFAULT_MAX_PENDING = 1000

T = TypeVar("T")


class QueueFull(Exception):
    """Accepting the documents would leave more than ``max_pending`` unfinished ones."""

    def __init__(self, unfinished: int, incoming: int, max_pending: int, retry_after: int) -> None:
        super().__init__(
            f"the intake queue is full: {unfinished} documents unfinished, {incoming} more would "
            f"exceed the limit of {max_pending}; retry in {retry_after} s")
        self.retry_after = retry_after


class RunningTooLong(Exception):
    """The processing run going did not end in the time a request may wait for it."""


class IntakeQueue:
    """Stores accepted documents PENDING at once and processes them in one background worker.

    Args:
        rag: the :class:`~lightrag.components.graph_rag.GraphRAG`.
        max_pending: most unfinished documents accepted; more give :class:`QueueFull`.
        on_failure: called with no argument when a background run reports failed documents
            or raises (the app counts it in its metrics).
    """

    def __init__(self, rag: Any, max_pending: int = DEFAULT_MAX_PENDING,
                 on_failure: Optional[Any] = None) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending}")
        self.rag = rag
        self.max_pending = max_pending
        self.on_failure = on_failure
        self.accepting = True
        self._wanted = False
        self._worker: Optional[asyncio.Task] = None
        self._rate = 0.0  # documents per second of the last background run
        self._intake_lock = asyncio.Lock()
        self._run_lock = asyncio.Lock()  # one processing run at a time (not a write lock)
        self._runs = 0  # processing runs going or waiting for their turn
        self._stopping: Set[asyncio.Future] = set()  # cancelled requests' writes still finishing

    # ------------------------------------------------------------------ state
    def unfinished(self) -> int:
        """Documents stored PENDING or PROCESSING (FAILED ones wait for a retry, not in line)."""
        counts = self.rag.doc_status.get_status_counts()
        return counts.get(DocStatus.PENDING.value, 0) + counts.get(DocStatus.PROCESSING.value, 0)

    @property
    def busy(self) -> bool:
        """A processing run (background or ``wait: true``) is going or wanted."""
        return (self._wanted or self._runs > 0 or bool(self._stopping)
                or (self._worker is not None and not self._worker.done()))

    async def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until no processing run is going; whether it is so."""
        deadline = time.monotonic() + timeout
        while self.busy:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    async def between_runs(self, work: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Run ``work()`` (a delete) between two processing runs: after the one going, which it
        waits for up to ``timeout`` seconds, and before the next one (the run lock serves its
        waiters in turn). Waiting for the queue to be idle instead starved deletes under a
        steady trickle of inserts: each 202 wanted another run, so the queue was never idle and
        every delete got 503.

        Raises:
            RunningTooLong: the run going did not end within ``timeout`` seconds.
        """
        try:
            await asyncio.wait_for(self._run_lock.acquire(), timeout)
        except asyncio.TimeoutError:
            raise RunningTooLong(f"a processing run is still going after {timeout} s") from None
        try:
            return await work()
        finally:
            self._run_lock.release()

    def progress(self) -> Dict[str, Dict[str, Any]]:
        """Per-document progress of the running insert (``rag.insert_progress``, when present)."""
        return dict(getattr(self.rag, "insert_progress", None) or {})

    def retry_after(self, backlog: int) -> int:
        """Seconds until ``backlog`` documents are likely done (1 to 300; 5 before any run)."""
        if self._rate <= 0:
            return 5
        return max(1, min(300, math.ceil(backlog / self._rate)))

    # ------------------------------------------------------------------ intake
    def check_capacity(self, incoming: int) -> None:
        """Raise :class:`QueueFull` when ``incoming`` more documents would exceed the bound."""
        unfinished = self.unfinished()
        if unfinished + incoming > self.max_pending:
            raise QueueFull(unfinished, incoming, self.max_pending,
                            self.retry_after(max(1, unfinished + incoming - self.max_pending)))

    async def enqueue(self, texts: List[str], ids: List[str], paths: List[str]) -> Any:
        """Store the documents PENDING (durable on return), start the worker; an InsertResult.

        The store's writer lock may be held by a document being recorded, so the enqueue runs
        in a worker thread and waits there, never blocking the event loop. Concurrent intakes
        are serialised, so the bound holds.

        Raises:
            QueueFull: over ``max_pending`` unfinished documents.
            RuntimeError: the server is shutting down.
        """
        async with self._intake_lock:
            if not self.accepting:
                raise RuntimeError("the server is shutting down; retry later")
            self.check_capacity(len(ids))
            result = await asyncio.to_thread(self.rag.enqueue_documents, texts, ids, paths)
        self.kick()
        return result

    async def insert_now(self, texts: List[str], ids: List[str], paths: List[str]) -> Any:
        """Insert and process at once, after any running run (``wait: true``); the InsertResult."""
        if not self.accepting:
            raise RuntimeError("the server is shutting down; retry later")
        self.check_capacity(len(ids))
        return await self.finish(self._insert_now(texts, ids, paths))

    async def _insert_now(self, texts: List[str], ids: List[str], paths: List[str]) -> Any:
        self._runs += 1
        try:
            async with self._run_lock:
                return await self.rag.ainsert(texts, ids=ids, file_paths=paths)
        finally:
            self._runs -= 1

    async def finish(self, work: Awaitable[T]) -> T:
        """Await ``work`` (a request's write) as a task of its own. When the caller is cancelled
        (a shutdown past its graceful timeout) it is cancelled at once, so the request can
        answer; the task is cancelled too, and it ends only after the write its worker thread
        is doing (Python cannot stop a thread): until then the queue is :attr:`busy` and
        :meth:`drain` waits for it."""
        task = asyncio.ensure_future(work)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                if not task.cancelled():
                    task.exception()  # retrieved: the caller is gone, its outcome is moot
            else:
                task.cancel()
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)
            raise

    def kick(self) -> None:
        """Ask for a background run (runs coalesce: one worker, one run after the current)."""
        self._wanted = True
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work())

    def resume(self) -> int:
        """Start processing the documents a crash left PENDING/PROCESSING; how many there are."""
        unfinished = self.unfinished()
        if unfinished:
            log.info("resuming %d unfinished documents", unfinished)
            self.kick()
        return unfinished

    async def _process_pending(self) -> Any:
        process = getattr(self.rag, "aprocess_pending", None)
        if process is not None:
            return await process()
        return await self.rag.ainsert([])

    async def _work(self) -> None:
        while self._wanted:
            self._wanted = False
            async with self._run_lock:
                await self._run_once()

    async def _run_once(self) -> None:
        started, backlog = time.perf_counter(), self.unfinished()
        try:
            result = await self._process_pending()
        except Exception:
            log.exception("background processing of %d documents failed", backlog)
            self._failed()
            return
        seconds = time.perf_counter() - started
        done = len(getattr(result, "processed", []) or [])
        if done and seconds > 0:
            self._rate = done / seconds
        if getattr(result, "failed", None):
            self._failed()

    def _failed(self) -> None:
        if self.on_failure is not None:
            self.on_failure()

    def stop(self) -> None:
        """Stop accepting and start no further background run: the run going finishes and the
        documents queued after it stay PENDING in the store, for :meth:`resume` when the
        workspace opens again (a busy workspace closed to make room for another)."""
        self.accepting = False
        self._wanted = False

    async def drain(self, timeout: Optional[float] = None) -> int:
        """Stop accepting; finish the running and wanted background runs.

        Args:
            timeout: seconds to wait (None: as long as it takes); then the run is cancelled and
                its unfinished documents stay PENDING/PROCESSING in the store, for :meth:`resume`
                at the next start.

        Returns:
            How many documents were left unfinished.
        """
        self.accepting = False
        if self._stopping:  # cancelled requests' writes, each finishing the one in progress
            await asyncio.gather(*list(self._stopping), return_exceptions=True)
        worker = self._worker
        if worker is not None and not worker.done():
            try:
                await asyncio.wait_for(asyncio.shield(worker), timeout)
            except asyncio.TimeoutError:
                self._wanted = False
                worker.cancel()
                await asyncio.gather(worker, return_exceptions=True)
            except Exception:
                pass  # logged by the worker
        left = self.unfinished()
        if left:
            log.warning("stopping with %d unfinished documents; the next start resumes them", left)
        return left
