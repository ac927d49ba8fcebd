"""One SQL database shared by the stores of a working directory: transactions, the writer lock
and the change log that keeps in-memory caches (graph, vector matrices) in step across processes.

``SQLiteDatabase`` is the embedded default (stdlib ``sqlite3`` in WAL mode: readers never wait
for the writer, a write transaction is atomic and durable when ``commit`` returns). The stores
(:mod:`~lightrag.components.storage.sql_stores`) issue plain SQL through :meth:`execute` /
:meth:`query`, so another database (PostgreSQL) only needs its own subclass.

**Transactions.** :meth:`transaction` opens ``BEGIN IMMEDIATE``: it takes the database's single
writer lock, waiting up to ``lock_timeout`` seconds for another process, then raises
:class:`StoreLockedError`. Nested ``transaction()`` blocks join the outer one. A write made
outside any transaction runs in a transaction of its own.

**Change log.** Stores that keep data in memory (the graph, the vector matrices) write a row to
``changes`` for every key they change. :meth:`refresh` reads the rows written since it last looked
(by another process) and asks each store to reload just those keys, so a reader sees other
writers' commits without a restart, at the cost of one indexed ``SELECT`` when nothing changed. A
write transaction refreshes first, under the lock, so a writer never merges into stale data. After
a rollback the keys touched by the failed transaction are reloaded from the database.

Example:
    >>> import tempfile, os
    >>> db = SQLiteDatabase(os.path.join(tempfile.mkdtemp(), "store.sqlite3"))
    >>> with db.transaction():
    ...     db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)")
    ...     db.execute("INSERT INTO t VALUES (?, ?)", ("a", "1"))
    >>> db.query("SELECT v FROM t WHERE k = ?", ("a",))
    [('1',)]
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from lightrag.components.storage.change_log import ChangeLog, Reloader
from lightrag.components.storage.schema_setup import SchemaSetup, WriteNeeded
from lightrag.components.storage.wal_checkpointer import WRITER_CHECKPOINT_PAGES, WalCheckpointer

log = logging.getLogger(__name__)

DEFAULT_LOCK_TIMEOUT = 120.0
#: bytes of the database file SQLite reads through a memory map (``PRAGMA mmap_size``; the
#: standard library's SQLite maps at most 2 GiB). Off by default: on the 1M-chunk scale store
#: a map of 2 GiB changed neither the insert rate nor query latency beyond the machine's noise
#: (alternating rounds in one process: 1M inserts 6 % faster in one campaign, 4 % slower in the
#: next; docs/benchmarks.md, fourteenth session), while the pages it touches count in the
#: process's resident memory (3.0 GB after 100 queries against 1.4 GB).
DEFAULT_MMAP_SIZE = 0
#: megabytes of pages the writer's connection keeps between statements (``PRAGMA cache_size``;
#: SQLite's default is 2 MB, fewer pages than the inner pages of a large store's B-trees). Paired
#: rounds of 100-document inserts (docs/benchmarks.md, seventeenth session): 64 MB made them 4 %
#: faster at 10k and at 1M chunks, 256 MB 6-9 %. Pages are allocated as they are read; read
#: connections keep SQLite's default (a commit by the writer empties their caches anyway).
DEFAULT_WRITER_CACHE_MB = 64
COMMITS_META = "commits"  #: the meta row every commit bumps (:meth:`SQLDatabase.commit_token`)


class StoreLockedError(RuntimeError):
    """Another process holds the writer lock of the store for longer than ``lock_timeout``."""


class StoreFullError(OSError):
    """The disk (or the database's size limit) holding the store is full: the transaction was
    rolled back and nothing of it is stored."""


def _is_full_error(error: BaseException) -> bool:
    text = str(error).lower()
    return "disk is full" in text or "no space left" in text or "disk full" in text


class SQLDatabase(SchemaSetup, ChangeLog):
    """The database-independent part: transactions, metadata, and (from :class:`ChangeLog`) the
    change log that refreshes in-memory stores.

    Subclasses provide :meth:`_connect`, :meth:`_begin` and the SQL dialect (``blob_type``,
    ``serial_key``, placeholders written as ``?``).
    """

    blob_type = "BLOB"
    serial_key = "INTEGER PRIMARY KEY AUTOINCREMENT"
    #: whether tables have rowids unless made ``WITHOUT ROWID`` (SQLite; keyed_tables.py)
    rowid_tables = True

    @staticmethod
    def json_text(column: str, key: str) -> str:
        """SQL for the text of ``key`` in the JSON object held by ``column`` (a name of this
        package's schema and a fixed key, never user input)."""
        return f"json_extract({column}, '$.{key}')"

    def __init__(self, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.lock_timeout = float(lock_timeout)
        self._mutex = threading.RLock()  # one statement (or one transaction) at a time
        self._depth = 0
        self._owner: Optional[int] = None
        self._probing: Optional[int] = None  # the thread running an ensure_schema probe
        self._touched: Dict[str, Set[str]] = {}
        self._reloaders: Dict[str, Reloader] = {}
        self._commit_hooks: List[Callable[[], None]] = []
        self._rollback_hooks: List[Callable[[], None]] = []
        self._seen = 0
        self._conn = self._connect()
        self._create_change_log()
        self._seen = self._max_seq()

    # -------------------------------------------------------------- dialect
    def _connect(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _begin(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _end(self, commit: bool) -> None:
        self._conn.execute("COMMIT" if commit else "ROLLBACK")

    def _sql(self, sql: str) -> str:
        return sql

    # ----------------------------------------------------------- statements
    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one statement (in the current transaction, or in one of its own). A ``CREATE
        TABLE/INDEX IF NOT EXISTS`` outside a transaction whose table or index exists is not
        run: opening an existing store writes nothing, so it never waits for the writer lock."""
        if not self.in_transaction and self._exists_already(sql):
            return
        with self._writing():
            self._conn.execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            with self._writing():
                self._conn.executemany(self._sql(sql), rows)

    def query(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        """All rows of a ``SELECT``."""
        with self._mutex:
            return [tuple(r) for r in self._conn.execute(self._sql(sql), tuple(params)).fetchall()]

    def read(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        """All rows of a ``SELECT`` of *committed* data for readers outside the write transaction
        (inside it, the transaction's own view). The base class has one connection, so it is
        :meth:`query`; SQLite reads on a connection of their own, without waiting for a writer."""
        return self.query(sql, params)

    @property
    def local_folder(self) -> Optional[Path]:
        """The folder of an embedded database (None for a server): where file caches may live."""
        return None

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside the block see one committed state where the database can hold one
        open for a reader (:meth:`SQLiteDatabase.snapshot`, and PostgreSQL's); here each
        statement sees its own."""
        yield

    def has_table(self, name: str) -> bool:
        """Whether the table ``name`` exists (a name of this package's schema)."""
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def has_index(self, name: str) -> bool:
        """Whether the index ``name`` exists (a name of this package's schema)."""
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)))

    def query_in(self, sql: str, values: Sequence[Any], params: Sequence[Any] = (),
                 chunk: int = 500) -> List[Tuple[Any, ...]]:
        """``sql`` with one ``{in}`` placeholder list, run in slices of ``chunk`` values."""
        rows: List[Tuple[Any, ...]] = []
        values = list(values)
        for start in range(0, len(values), chunk):
            part = values[start:start + chunk]
            rows.extend(self.query(sql.format(in_=",".join("?" * len(part))), (*params, *part)))
        return rows

    def pages(self, table: str, keys: Sequence[str], extra: Sequence[str], namespace: str,
              batch: int) -> Iterator[Tuple[Any, ...]]:
        """Every row of ``namespace`` in ``table`` as ``(*keys, *extra)``, in the order of
        ``keys`` (the table's primary key after ``ns``), read ``batch`` rows at a time: each
        read starts after the last key of the one before, through the primary key's index, so
        a pass holds one batch and costs the same per row wherever it is. ``table``, ``keys``
        and the column expressions ``extra`` are this package's schema, never user input."""
        for name in (table, *keys):
            if not name.isidentifier():
                raise ValueError(f"not a column or table name: {name!r}")
        order = ", ".join(keys)
        head = f"SELECT {', '.join((*keys, *extra))} FROM {table} WHERE ns = ?"
        after = f"({order}) > ({', '.join('?' * len(keys))})" if len(keys) > 1 else f"{keys[0]} > ?"
        last: Optional[Tuple[Any, ...]] = None
        while True:
            if last is None:
                rows = self.query(f"{head} ORDER BY {order} LIMIT ?", (namespace, batch))
            else:
                rows = self.query(f"{head} AND {after} ORDER BY {order} LIMIT ?",
                                  (namespace, *last, batch))
            yield from rows
            if len(rows) < batch:
                return
            last = rows[-1][:len(keys)]

    # --------------------------------------------------------- transactions
    def columns(self, table: str) -> List[str]:
        """The column names of ``table`` (a name of this package's schema, never user input)."""
        if not table.isidentifier():
            raise ValueError(f"not a table name: {table!r}")
        with self._mutex:
            cursor = self._conn.execute(self._sql(f"SELECT * FROM {table} WHERE 1 = 0"))
            return [d[0] for d in cursor.description]

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0 and self._owner == threading.get_ident()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction holding the writer lock; commits on success, rolls back on error."""
        with self._mutex:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._begin_locked()
            self._depth, self._owner = 1, threading.get_ident()
            try:
                try:
                    yield
                except BaseException as e:
                    self._rollback()
                    self._raise_full(e)
                    raise
                try:
                    self._commit()
                except BaseException as e:
                    self._raise_full(e)
                    raise
            finally:
                self._depth, self._owner = 0, None

    def _raise_full(self, error: BaseException) -> None:
        """Name a full disk as such (SQLite says "database or disk is full")."""
        if _is_full_error(error) and not isinstance(error, StoreFullError):
            raise StoreFullError(f"{self.describe()}: the disk is full (nothing of the failed "
                                 f"write is stored; free space and retry): {error}") from error

    @contextmanager
    def _writing(self) -> Iterator[None]:
        if self.in_transaction:
            yield
        elif self._probing == threading.get_ident():
            raise WriteNeeded()
        else:
            with self.transaction():
                yield

    def _begin_waiting(self) -> None:
        """Begin a write transaction, waiting up to ``lock_timeout`` for the writer lock; a lock
        not obtained is a :class:`StoreLockedError` naming the wait."""
        started = time.monotonic()
        try:
            self._begin()
        except Exception as e:
            if self._is_locked_error(e):
                raise StoreLockedError(
                    f"{self.describe()} is being written by another process; waited "
                    f"{time.monotonic() - started:.0f} s for its writer lock (lock_timeout="
                    f"{self.lock_timeout:g}). Stop the other writer or raise lock_timeout.") from e
            raise

    def _begin_locked(self) -> None:
        self._begin_waiting()
        self._touched = {}
        try:
            self._apply_changes()
        except BaseException:
            self._end(commit=False)
            raise

    def _commit(self) -> None:
        try:
            for hook in self._commit_hooks:
                hook()
            self.increment_meta(COMMITS_META)
            seq = self._max_seq()
            self._prune(seq)
            self._end(commit=True)
        except BaseException:
            self._rollback()
            raise
        self._seen = max(self._seen, seq)
        self._touched = {}

    def _rollback(self) -> None:
        try:
            self._end(commit=False)
        except Exception as e:  # e.g. SQLite already rolled back after "disk is full"
            log.warning("%s: rollback: %s", self.describe(), e)
        finally:
            for hook in self._rollback_hooks:
                hook()
            touched, self._touched = self._touched, {}
            for store, keys in touched.items():
                reload = self._reloaders.get(store)
                if reload is not None:
                    reload(keys)

    @staticmethod
    def _is_locked_error(error: Exception) -> bool:
        return "locked" in str(error).lower() or "busy" in str(error).lower()

    def describe(self) -> str:
        return "the store"

    def meta(self, name: str) -> Optional[str]:
        """The value of the store's metadata ``name`` (its layout markers, file generations),
        or None."""
        rows = self.query("SELECT value FROM meta WHERE name = ?", (name,))
        return rows[0][0] if rows else None

    def commit_token(self) -> str:
        """A value that changes with every commit of any writer (a counter in ``meta`` that
        each write transaction bumps as it commits): readers keep what they read from committed
        data while it is the same (see :class:`~lightrag.components.graph_rag.query_reads.QueryReads`)."""
        rows = self.read("SELECT value FROM meta WHERE name = ?", (COMMITS_META,))
        return rows[0][0] if rows else "0"

    def set_meta(self, name: str, value: str) -> None:
        """Set the metadata ``name`` (in the current write transaction, or one of its own)."""
        self.execute("INSERT INTO meta (name, value) VALUES (?, ?) "
                     "ON CONFLICT (name) DO UPDATE SET value = excluded.value", (name, value))

    def increment_meta(self, name: str) -> None:
        """Add one to the integer metadata ``name`` (0 when absent), in one statement."""
        self.execute("INSERT INTO meta (name, value) VALUES (?, '1') ON CONFLICT (name) "
                     "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)", (name,))

    def delete_meta(self, *names: str) -> None:
        self.executemany("DELETE FROM meta WHERE name = ?", ((n,) for n in names))

    def on_commit(self, before_commit: Callable[[], None], after_rollback: Callable[[], None]) -> None:
        """Register a store that buffers its writes: ``before_commit`` writes them inside the
        transaction, ``after_rollback`` forgets (and reloads) them."""
        self._commit_hooks.append(before_commit)
        self._rollback_hooks.append(after_rollback)

    def close(self) -> None:
        with self._mutex:
            self._conn.close()
        reader = getattr(getattr(self, "_readers", None), "conn", None)
        if reader is not None:  # this thread's read connection (others close with their threads)
            reader.close()
            self._readers.conn = None


def _require_whole(name: str, value: object, unit: str, minimum: int) -> None:
    """Refuse, by name, an argument that is not a whole number (bools are not) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number of {unit} >= {minimum}, got {value!r}")


class SQLiteDatabase(SQLDatabase):
    """The embedded database: one SQLite file in WAL mode.

    Args:
        path: the database file (created with its folder).
        lock_timeout: seconds a writer waits for another process's writer lock.
        synchronous: SQLite's ``synchronous`` pragma. ``NORMAL`` (default) survives a killed
            process; ``FULL`` also survives a power cut, at one fsync per commit.
        mmap_size: bytes of the file read through a memory map instead of ``read()`` calls
            (:data:`DEFAULT_MMAP_SIZE`: none). Not for a store on a network file system: an I/O
            error on a mapped page ends the process instead of raising an error.
        writer_cache_mb: megabytes of database pages the writer's connection keeps in memory
            (:data:`DEFAULT_WRITER_CACHE_MB`).
    """

    def __init__(self, path: os.PathLike | str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                 synchronous: str = "NORMAL", mmap_size: int = DEFAULT_MMAP_SIZE,
                 writer_cache_mb: int = DEFAULT_WRITER_CACHE_MB) -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, got {synchronous!r}")
        _require_whole("mmap_size", mmap_size, "bytes", 0)
        _require_whole("writer_cache_mb", writer_cache_mb, "megabytes", 1)
        self.writer_cache_mb = writer_cache_mb
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self.mmap_size = mmap_size
        self._readers = threading.local()  # one read connection per thread (WAL: no waiting)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._changes_before = 0  # the connection's total_changes when its transaction began
        self._checkpointer = (None if str(self.path) == ":memory:"
                              else WalCheckpointer(str(self.path), timeout=lock_timeout))
        super().__init__(lock_timeout)

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.lock_timeout,
                                   isolation_level=None, check_same_thread=False)
            self._set_wal(conn)
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute("PRAGMA foreign_keys=OFF")
            conn.execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA cache_size={-1024 * self.writer_cache_mb}")
            if self.mmap_size:
                conn.execute(f"PRAGMA mmap_size={self.mmap_size}")
        except sqlite3.DatabaseError as e:
            raise ValueError(f"cannot open the store database {self.path}: {e}") from e
        return conn

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        """Switch to WAL mode. A new database's first switch needs the file to itself, and
        SQLite answers "locked" at once (no busy wait) while another process is creating it:
        retry until ``lock_timeout``."""
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if not self._is_locked_error(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _begin(self) -> None:
        if self._checkpointer is not None and self._checkpointer.restart_due():
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()  # the log starts over
        self._conn.execute("BEGIN IMMEDIATE")
        self._changes_before = self._conn.total_changes

    def _end(self, commit: bool) -> None:
        super()._end(commit)
        if commit and self._checkpointer is not None:
            self._checkpointer.committed(self._conn.total_changes - self._changes_before)

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()
        super().close()

    def describe(self) -> str:
        return f"the store {self.path}"

    @property
    def local_folder(self) -> Optional[Path]:
        return None if str(self.path) == ":memory:" else self.path.parent

    def query(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        """All rows of a ``SELECT``: inside this thread's write transaction, its own view;
        outside it, committed rows on a read connection (never waiting for a writer)."""
        return self.read(sql, params)

    def read(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        if self.in_transaction or str(self.path) == ":memory:":
            return SQLDatabase.query(self, sql, params)
        return [tuple(r) for r in self._reader().execute(sql, tuple(params)).fetchall()]

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._readers, "conn", None)
        if conn is None:
            conn = sqlite3.connect(str(self.path), timeout=self.lock_timeout,
                                   isolation_level=None, check_same_thread=False)
            if self.mmap_size:
                conn.execute(f"PRAGMA mmap_size={self.mmap_size}")
            self._readers.conn = conn
        return conn

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """This thread's reads inside the block see one committed state: one read transaction
        on its read connection (a pass over a large store, such as ``lightrag check`` or an
        export, is consistent while a writer commits beside it; the writer's log cannot start
        over until the block ends). Inside a write transaction, or nested, it changes nothing."""
        conn = None if self.in_transaction or str(self.path) == ":memory:" else self._reader()
        if conn is None or conn.in_transaction:
            yield
            return
        conn.execute("BEGIN")
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()  # the snapshot starts here
            yield
        finally:
            conn.execute("COMMIT")
