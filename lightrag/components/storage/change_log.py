"""The change log that keeps in-memory stores (the graph, vector matrices) in step across
processes: a store writes a row to ``changes`` for every key it changes (:meth:`ChangeLog.log_changes`),
and :meth:`ChangeLog.refresh` asks each store to reload just the keys other processes changed
since it last looked. Mixed into :class:`~lightrag.components.storage.sql_db.SQLDatabase`, whose
connection, dialect and writer lock it uses.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Iterable, Optional, Set

log = logging.getLogger(__name__)

CHANGE_LOG_KEEP = 200_000
Reloader = Callable[[Optional[Set[str]]], None]


class ChangeLog:
    """The ``changes`` table, its pruning, and the reload of in-memory stores (a mixin)."""

    # provided by SQLDatabase
    _conn: Any
    _mutex: Any
    _depth: int
    _seen: int
    serial_key: str
    _reloaders: Dict[str, Reloader]
    _touched: Dict[str, Set[str]]
    set_meta: Callable[[str, str], None]
    has_table: Callable[[str], bool]
    _begin_waiting: Callable[[], None]

    def _create_change_log(self) -> None:
        """Create the ``changes`` and ``meta`` tables when the store lacks them. Their presence
        is read first: opening an existing store takes no write lock, so a reader opens while a
        writer (or a writer stopped mid-transaction) holds it."""
        if self.has_table("changes") and self.has_table("meta"):
            return
        self._begin_waiting()
        try:
            self._conn.execute(f"CREATE TABLE IF NOT EXISTS changes (seq {self.serial_key}, "
                               "store TEXT NOT NULL, key TEXT NOT NULL)")
            self._conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
        except BaseException:
            self._end(commit=False)
            raise
        self._end(commit=True)

    def _max_seq(self) -> int:
        row = self._conn.execute("SELECT MAX(seq) FROM changes").fetchone()
        return int(row[0] or 0)

    def _pruned_upto(self) -> int:
        row = self._conn.execute(self._sql("SELECT value FROM meta WHERE name = ?"),
                                 ("changes_pruned_upto",)).fetchone()
        return int(row[0]) if row else 0

    def _prune(self, seq: int) -> None:
        cut = seq - CHANGE_LOG_KEEP
        if cut > 0 and cut - self._pruned_upto() > CHANGE_LOG_KEEP // 4:
            self._conn.execute(self._sql("DELETE FROM changes WHERE seq <= ?"), (cut,))
            self.set_meta("changes_pruned_upto", str(cut))  # inside the committing transaction

    def register(self, store: str, reload: Reloader) -> None:
        """Ask to be told when keys of ``store`` change in another process: ``reload(keys)``
        (``keys`` None: reload everything)."""
        self._reloaders[store] = reload

    def log_changes(self, store: str, keys: Iterable[str]) -> None:
        """Record that ``keys`` of ``store`` changed (inside the current write transaction)."""
        keys = list(keys)
        if not keys:
            return
        self._touched.setdefault(store, set()).update(keys)
        self.executemany("INSERT INTO changes (store, key) VALUES (?, ?)", ((store, k) for k in keys))

    def refresh(self) -> bool:
        """Apply other processes' committed changes to the in-memory stores; True if any.
        Skipped (False) while this process has a write transaction open: a reader never waits
        for the writer."""
        if not self._mutex.acquire(blocking=False):
            return False
        try:
            if self._depth:
                return False
            return self._apply_changes()
        finally:
            self._mutex.release()

    def _apply_changes(self) -> bool:
        latest = self._max_seq()
        if latest <= self._seen:
            return False
        if self._seen < self._pruned_upto():
            log.info("%s: change log pruned past this reader; reloading everything", self.describe())
            for reload in self._reloaders.values():
                reload(None)
        else:
            rows = self._conn.execute(self._sql(
                "SELECT store, key FROM changes WHERE seq > ? AND seq <= ?"), (self._seen, latest))
            by_store: Dict[str, Set[str]] = {}
            for store, key in rows.fetchall():
                by_store.setdefault(store, set()).add(key)
            for store, keys in by_store.items():
                reload = self._reloaders.get(store)
                if reload is not None:
                    reload(keys)
        self._seen = latest
        return True
