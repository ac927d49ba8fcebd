"""Checkpoints of a SQLite write-ahead log in a thread of their own, off the writer's commits.

In WAL mode a commit appends pages to ``<db>-wal``; a *checkpoint* copies them back into the
database file. SQLite runs it inside the commit that crosses ``wal_autocheckpoint`` pages, so
every few dozen commits one of them stalls while tens of MB are copied and synced: measured on
the scale store, three commits of a 100-document insert took 36-85 ms of the 0.34 s all 124
commits took at 10k chunks, and single commits up to 223 ms at 1M. :class:`WalCheckpointer`
runs ``PRAGMA wal_checkpoint(PASSIVE)`` on a connection of its own every ``every`` commits, and
after every commit of :data:`BIG_COMMIT_ROWS` changed rows or more, in a daemon thread: a
passive checkpoint never blocks the writer or readers, and SQLite releases the GIL while it
copies, so the copying overlaps the writer's Python work on another core.

The log starts over from its beginning only when every frame is copied as the writer begins
a transaction, which a pass running beside a busy writer seldom leaves it: after a pass that
found :data:`RESTART_PAGES` or more, each commit wakes the thread, and the writer's next
transaction after a pass that copied every commit restarts the log for free (nothing left to
copy or sync: in practice the first transaction after a pause, such as between two batches of
an insert). Only past :data:`FORCE_RESTART_PAGES` does the writer copy the tail itself
(:meth:`WalCheckpointer.restart_due`; not a big commit the thread is copying), which costs it
the database file's sync: 45-75 ms per copy at 1M chunks even for a tail of 50 pages, against
0.1 ms for the free restart (measured on the scale store, ``/tmp/s32/probe7.py``: up to two
such copies per 100 documents). SQLite's own ``wal_autocheckpoint`` stays as the safety valve,
set high (:data:`WRITER_CHECKPOINT_PAGES`).

Measured (100 documents inserted into a copy of the 1M-chunk scale store, three runs each):
with a pass every 16 commits and the valve at 8,192 pages, the log outgrew the valve and single
commits checkpointed and synced inline (192-204 ms; all 124 commits 0.52-0.54 s); now the
commits take 0.12-0.13 s (the longest 21-22 ms) and the writer's 4-5 tail copies 52-62 ms in
all: 46.6 / 56.2 / 54.3 docs/s against 45.8 / 50.4 / 54.3.

Example:
    >>> import os, sqlite3, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "db.sqlite3")
    >>> conn = sqlite3.connect(path, isolation_level=None)
    >>> _ = conn.execute("PRAGMA journal_mode=WAL")
    >>> checkpointer = WalCheckpointer(path, every=2)
    >>> for i in range(4):
    ...     _ = conn.execute(f"CREATE TABLE t{i} (x)")
    ...     checkpointer.committed()
    >>> checkpointer.stop()
    >>> checkpointer.runs >= 1
    True
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from typing import Optional

log = logging.getLogger(__name__)

#: commits between two background checkpoints (~200-300 pages each on the scale store; small
#: passes leave the writer's tail copy small)
CHECKPOINT_EVERY = 4
#: rows a commit changes from which it wakes the thread at once: an insert's commit of several
#: documents (~2,000 rows, ~4,700 log pages at 1M chunks) is copied while the writer prepares
#: the next one, not by the writer before its next transaction (measured at 1M chunks: the
#: writer's tail copies took 120-136 ms per 100 documents, none at 10k)
BIG_COMMIT_ROWS = 1000
#: log pages after which every commit wakes the thread, and the writer's next transaction after
#: a pass that copied every commit starts the log over (:meth:`WalCheckpointer.restart_due`)
RESTART_PAGES = 4096
#: log pages after which the writer copies the tail the thread left itself, syncs and starts
#: the log over, whatever it costs (64 MB of log: a writer that never pauses)
FORCE_RESTART_PAGES = 4 * RESTART_PAGES
#: the writer's own ``wal_autocheckpoint`` (pages, 128 MB of log): a valve for when readers keep
#: the log from starting over, above the ~5,000 pages one 100-document vector commit writes at
#: 1M chunks (at 8,192 that commit checkpointed inline)
WRITER_CHECKPOINT_PAGES = 32768


class WalCheckpointer:
    """Passive checkpoints of the database at ``path`` in a daemon thread, one after every
    ``every`` calls of :meth:`committed` (the thread starts with the first one)."""

    def __init__(self, path: str, every: int = CHECKPOINT_EVERY, timeout: float = 5.0) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.path, self.every, self.timeout = path, every, timeout
        self.runs = 0
        self._commits = 0
        self._asked = False  # a checkpoint asked for and not begun yet
        self._wake = threading.Event()
        self._stopping = False
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._long = False  # the last pass copied a log of RESTART_PAGES or more
        self._big_asked = False  # a big commit waits for the next pass
        self._big_running = False  # the pass copying now began after a big commit
        self._commit_count = 0  # calls of committed() so far
        self._covered = -1  # the count when the last pass that copied the whole log began
        self._frames = 0  # the log's pages at the last pass

    def restart_due(self) -> bool:
        """Whether the writer should checkpoint before its next transaction so the log restarts
        from its beginning (once per long log: the thread's last pass found
        :data:`RESTART_PAGES` or more). The log restarts only if every frame is copied when the
        writer begins.

        Due when the thread's last complete pass began after the writer's last commit: the
        checkpoint then finds nothing to copy and the restart is free. Otherwise only once the
        log reaches :data:`FORCE_RESTART_PAGES`: the writer's copy of the tail ends with a sync of
        the database file (45-75 ms at 1M chunks, whatever the tail's size). Never while a
        commit of :data:`BIG_COMMIT_ROWS` rows is waiting for the thread or being copied by it:
        the writer would copy that commit inline (94-115 ms per 100 documents at 1M chunks,
        where one such commit writes ~4,700 pages)."""
        with self._lock:
            if not self._long or self._big_asked or self._big_running:
                return False
            if self._covered != self._commit_count and self._frames < FORCE_RESTART_PAGES:
                return False
            self._long = False
            return True

    def committed(self, rows: int = 0) -> None:
        """Count a commit of the writer that changed ``rows`` rows; every ``every`` of them
        wakes the thread, and every one while the log is long (so a pass follows each commit,
        and the writer's next transaction after it restarts the log for free), or of
        :data:`BIG_COMMIT_ROWS` rows or more (copied at once, beside the writer's next work)."""
        self._commits += 1
        with self._lock:
            self._commit_count += 1
        if self._commits < self.every and not self._long and rows < BIG_COMMIT_ROWS:
            return
        self._commits = 0
        with self._lock:
            if self._stopping:
                return
            self._asked = True
            self._big_asked = self._big_asked or rows >= BIG_COMMIT_ROWS
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        """Run the checkpoint asked for, if any, and end the thread (before the writer closes)."""
        with self._lock:
            self._stopping = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as e:
            log.warning("WAL checkpoints of %s stay in the commits: %s", self.path, e)
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                with self._lock:
                    asked, self._asked = self._asked, False
                    self._big_running, self._big_asked = self._big_asked, False
                    count = self._commit_count  # the commits this pass's copy includes, at least
                if asked:
                    ran = long = whole = False
                    try:
                        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                        ran, long = True, not busy and frames >= RESTART_PAGES
                        whole = not busy and copied == frames
                    except sqlite3.Error as e:  # e.g. busy: the next one, or the writer's, copies
                        log.debug("background checkpoint of %s: %s", self.path, e)
                    with self._lock:
                        self._long = self._long or long
                        if ran and frames >= 0:  # -1 when busy
                            self._frames = frames
                        if whole:
                            self._covered = count
                        self._big_running = False
                        self.runs += ran
                if self._stopping:
                    return
        finally:
            conn.close()
