"""``PostgresDatabase``: the stores of a working directory on a shared PostgreSQL server.

The same interface as the embedded :class:`~lightrag.components.storage.sql_db.SQLiteDatabase`
(the stores issue the same SQL), for several server processes, CLI runs or Ray workers on
several machines sharing one store:

* **Connection.** psycopg 3, one autocommit connection per database object with explicit
  ``BEGIN`` / ``COMMIT`` / ``ROLLBACK``. The DSN comes from ``dsn`` or, by default, from the
  environment variable named by ``dsn_env`` (``LIGHTRAG_PG_DSN``), so configs never hold a
  password (put it in ``~/.pgpass``, ``PGPASSWORD`` or the variable). A connection that broke
  (server restart, idle timeout) is opened again by the next call outside a transaction.
* **Workspaces.** Each workspace is one schema (``lightrag`` for the default workspace,
  ``lightrag_<name>`` otherwise), created if missing and put on the ``search_path``: tenants of
  one database never see each other's rows.
* **Writer lock.** A write transaction takes ``pg_advisory_xact_lock`` on a key derived from the
  schema, waiting at most ``lock_timeout`` seconds (``SET LOCAL lock_timeout``; ``0`` means try
  once), then raises :class:`~lightrag.components.storage.sql_db.StoreLockedError`. The lock is
  released by ``COMMIT`` / ``ROLLBACK``, also when a client dies (the server ends its session).
* **Dialect.** Vectors are ``BYTEA``, the change log's key a ``BIGSERIAL``; the stores' ``?``
  placeholders become ``%s`` (a literal ``%`` is doubled; ``?`` inside quotes or comments is
  kept).
* **pgvector.** :meth:`PostgresDatabase.vector_extension` says whether the server's ``vector``
  extension is usable (created on first use when the server has it and the role may); the
  vector stores then search in the server (:mod:`~lightrag.components.storage.pg_vector`), else
  in memory. ``pgvector=False`` keeps them in memory, ``pgvector=True`` refuses a server
  without it.

Example (``export LIGHTRAG_PG_DSN=postgresql://lightrag@db.internal:5432/rag`` first):
    >>> db = PostgresDatabase(workspace="team_a")  # doctest: +SKIP
    >>> db.describe()  # doctest: +SKIP
    'the PostgreSQL store lightrag@db.internal:5432/rag (schema lightrag_team_a)'
    >>> to_pyformat("SELECT v FROM kv WHERE id = ? AND v LIKE '%?'")
    "SELECT v FROM kv WHERE id = %s AND v LIKE '%%?'"
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

from lightrag.components.storage.pg_vector import register_adapter
from lightrag.components.storage.sql_db import DEFAULT_LOCK_TIMEOUT, SQLDatabase, StoreLockedError

log = logging.getLogger(__name__)

DEFAULT_DSN_ENV = "LIGHTRAG_PG_DSN"
SCHEMA_PREFIX = "lightrag"
_MAX_IDENTIFIER = 63  # PostgreSQL's NAMEDATALEN - 1 (bytes)
_LOCK_NOT_AVAILABLE = "55P03"
T = TypeVar("T")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise ImportError("storage 'postgres' needs psycopg 3: pip install -e '.[postgres]'") from e
    return psycopg


@functools.lru_cache(maxsize=1024)
def to_pyformat(sql: str) -> str:
    """Translate a statement written with ``?`` placeholders to psycopg's ``%s`` style.

    Every ``%`` is doubled (psycopg reads ``%`` anywhere in a statement that has parameters);
    a ``?`` becomes ``%s`` only outside single-quoted strings, double-quoted identifiers and
    ``--`` / ``/* */`` comments.

    Example:
        >>> to_pyformat("INSERT INTO t (a, b) VALUES (?, '50%')")
        "INSERT INTO t (a, b) VALUES (%s, '50%%')"
        >>> to_pyformat('SELECT "odd?name" FROM t -- why?')
        'SELECT "odd?name" FROM t -- why?'
    """
    out: List[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in ("'", '"'):
            end = sql.find(c, i + 1)
            end = n if end < 0 else end + 1
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        else:
            out.append("%s" if c == "?" else "%%" if c == "%" else c)
            i += 1
    return "".join(out)


def schema_for(workspace: str) -> str:
    """The schema of a workspace: ``lightrag`` for ``""``, ``lightrag_<name>`` otherwise, with a
    short hash appended when the name had to be changed (other characters, upper case, length)
    so two distinct workspaces never share a schema.

    Example:
        >>> schema_for(""), schema_for("team_a")
        ('lightrag', 'lightrag_team_a')
        >>> schema_for("Team A").startswith("lightrag_team_a_")
        True
    """
    if not workspace:
        return SCHEMA_PREFIX
    slug = re.sub(r"[^a-z0-9_]+", "_", workspace.lower()).strip("_") or "w"
    name = f"{SCHEMA_PREFIX}_{slug}"
    if slug != workspace or len(name) > _MAX_IDENTIFIER:
        digest = hashlib.sha1(workspace.encode("utf-8")).hexdigest()[:8]
        name = f"{name[:_MAX_IDENTIFIER - 9]}_{digest}"
    return name


def _lock_key(schema: str) -> int:
    digest = hashlib.blake2b(f"lightrag-writer:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class PostgresDatabase(SQLDatabase):
    """The stores' database on a PostgreSQL server: one schema per workspace, an advisory
    writer lock, the change log that keeps every process's in-memory graph and vectors in step.

    Args:
        dsn: a libpq connection string or URI. Leave it out (the usual case) to read it from
            the environment variable ``dsn_env``; better without a password (``~/.pgpass``,
            ``PGPASSWORD``).
        dsn_env: the environment variable holding the DSN (default ``LIGHTRAG_PG_DSN``).
        workspace: the tenant; picks the schema (see :func:`schema_for`).
        schema: use this schema name instead of the workspace's.
        lock_timeout: seconds a writer waits for another process's writer lock (``0``: do not
            wait).
        connect_timeout: seconds to wait for the server when connecting.
        application_name: shown in ``pg_stat_activity``.
        pgvector: ``None`` (default) searches vectors in the server when it has the pgvector
            extension and in memory otherwise; ``True`` requires pgvector (``ValueError`` at
            the first vector store otherwise); ``False`` never uses it.

    Example:
        >>> db = PostgresDatabase(dsn_env="LIGHTRAG_PG_DSN", workspace="docs")  # doctest: +SKIP
        >>> with db.transaction():  # doctest: +SKIP
        ...     db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)")
        ...     db.execute("INSERT INTO t VALUES (?, ?)", ("a", "1"))
        >>> db.query("SELECT v FROM t WHERE k = ?", ("a",))  # doctest: +SKIP
        [('1',)]
    """

    blob_type = "BYTEA"
    serial_key = "BIGSERIAL PRIMARY KEY"
    rowid_tables = False  # a heap, and the primary key in its index, whatever the table is declared as

    @staticmethod
    def json_text(column: str, key: str) -> str:
        return f"(({column})::jsonb ->> '{key}')"

    def has_table(self, name: str) -> bool:
        return bool(self.query("SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])

    def has_index(self, name: str) -> bool:
        return self.has_table(name)  # tables and indexes are both relations

    def __init__(self, dsn: Optional[str] = None, dsn_env: str = DEFAULT_DSN_ENV,
                 workspace: str = "", schema: Optional[str] = None,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT, connect_timeout: float = 10.0,
                 application_name: str = "lightrag", pgvector: Optional[bool] = None) -> None:
        self._pg = _psycopg()
        register_adapter()  # pgvector values as parameters, on every connection made from now on
        if pgvector not in (None, True, False):
            raise ValueError(f"pgvector must be None (use it when the server has it), True or False, "
                             f"got {pgvector!r}")
        self.pgvector = pgvector
        self._vector: Optional[Tuple[Optional[str], str]] = None
        self._settings_conn: Any = None  # the connection that _session_settings were set on
        self._session_settings: Dict[str, str] = {}
        self.dsn_env = dsn_env
        self._dsn = self._resolve_dsn(dsn, dsn_env)
        self.workspace = workspace
        self.schema = schema or schema_for(workspace)
        if not self.schema or len(self.schema.encode("utf-8")) > _MAX_IDENTIFIER:
            raise ValueError(f"schema name must be 1 to {_MAX_IDENTIFIER} bytes, got {self.schema!r}")
        self.connect_timeout = float(connect_timeout)
        self.application_name = application_name
        self._lock_key = _lock_key(self.schema)
        self._where = self._server_label()
        self._snapshots = threading.local()  # this thread's snapshot connection (snapshot())
        super().__init__(lock_timeout)

    # --------------------------------------------------------------- set-up
    @staticmethod
    def _resolve_dsn(dsn: Optional[str], dsn_env: str) -> str:
        if dsn is not None:
            return dsn
        value = os.environ.get(dsn_env) if dsn_env else None
        if value is not None:
            return value
        if os.environ.get("PGHOST") or os.environ.get("PGSERVICE"):
            return ""  # libpq's own PG* environment variables
        raise ValueError(
            f"storage 'postgres' needs a connection string: set the environment variable "
            f"{dsn_env or DEFAULT_DSN_ENV} (e.g. postgresql://lightrag@db-host:5432/rag, password "
            "in ~/.pgpass or PGPASSWORD), or name another variable with storage_kwargs "
            "{'dsn_env': ...}")

    def _server_label(self) -> str:
        """``user@host:port/dbname`` from the DSN, never its password."""
        try:
            parts = self._pg.conninfo.conninfo_to_dict(self._dsn)
        except self._pg.Error:
            source = f"${self.dsn_env}" if self.dsn_env and os.environ.get(self.dsn_env) else "dsn"
            raise ValueError(f"the PostgreSQL connection string in {source} is not a valid libpq "
                             "string or URI (postgresql://user@host:5432/dbname)") from None
        host = parts.get("host") or os.environ.get("PGHOST") or "localhost"
        port = parts.get("port") or os.environ.get("PGPORT") or "5432"
        user = parts.get("user") or os.environ.get("PGUSER")
        dbname = parts.get("dbname") or os.environ.get("PGDATABASE") or user or ""
        return f"{user + '@' if user else ''}{host}:{port}/{dbname}"

    def describe(self) -> str:
        return f"the PostgreSQL store {self._where} (schema {self.schema})"

    def _connect(self) -> Any:
        pg = self._pg
        try:
            conn = pg.connect(self._dsn, autocommit=True, connect_timeout=max(1, round(self.connect_timeout)),
                              application_name=self.application_name)
        except pg.OperationalError as e:
            raise ConnectionError(f"cannot connect to {self.describe()}: "
                                  f"{str(e).strip().splitlines()[0] if str(e).strip() else e!r}") from e
        schema = pg.sql.Identifier(self.schema)
        try:
            exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                                  (self.schema,)).fetchone()
            if not exists:
                self._lock(conn)
                try:
                    conn.execute(pg.sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                log.info("%s: created the schema", self.describe())
            conn.execute(pg.sql.SQL("SET search_path TO {}").format(schema))
        except BaseException:
            conn.close()
            raise
        return conn

    def _ensure_connected(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None and (conn.closed or conn.broken) and not self._depth:
            log.warning("%s: the connection was lost; connecting again", self.describe())
            self._conn = self._connect()

    def _outside_transaction(self, run: Callable[[], T]) -> T:
        """Run ``run`` (a read, or the start of a transaction: nothing to redo) once more on a
        new connection if the old one turns out to be lost (server restart, idle timeout)."""
        self._ensure_connected()
        try:
            return run()
        except self._pg.OperationalError:
            if self._depth or not self._conn.broken:
                raise
        self._ensure_connected()
        return run()

    # ---------------------------------------------------------- transactions
    def _lock(self, conn: Any) -> None:
        """``BEGIN`` and take the writer lock, or roll back and raise StoreLockedError."""
        started = time.monotonic()
        try:
            if self.lock_timeout <= 0:
                conn.execute("BEGIN")
                got = conn.execute(f"SELECT pg_try_advisory_xact_lock({self._lock_key})",
                                   prepare=False).fetchone()[0]
            else:  # one round trip (no parameters: the simple protocol takes several statements)
                # (statement_timeout off while waiting: the server's own must not cut it short)
                conn.execute(f"BEGIN; SET LOCAL lock_timeout = {max(1, round(self.lock_timeout * 1000))}; "
                             "SET LOCAL statement_timeout = 0; "
                             f"SELECT pg_advisory_xact_lock({self._lock_key}); "
                             "SET LOCAL lock_timeout TO DEFAULT; SET LOCAL statement_timeout TO DEFAULT",
                             prepare=False)
                got = True
        except BaseException as e:
            if not conn.broken:
                conn.execute("ROLLBACK")
            if getattr(e, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                raise
            raise self._locked(started) from e
        if not got:
            conn.execute("ROLLBACK")
            raise self._locked(started)

    def _locked(self, started: float) -> StoreLockedError:
        return StoreLockedError(
            f"{self.describe()} is being written by another process; waited "
            f"{time.monotonic() - started:.0f} s for its writer lock (lock_timeout="
            f"{self.lock_timeout:g}). Stop the other writer or raise lock_timeout.")

    def _begin(self) -> None:
        self._outside_transaction(lambda: self._lock(self._conn))

    def _end(self, commit: bool) -> None:
        if not commit and self._conn.broken:
            return  # nothing to roll back: the server already ended the transaction
        self._conn.execute("COMMIT" if commit else "ROLLBACK")

    def _sql(self, sql: str) -> str:
        return to_pyformat(sql)

    @staticmethod
    def _is_locked_error(error: Exception) -> bool:
        return (isinstance(error, StoreLockedError)
                or getattr(error, "sqlstate", None) == _LOCK_NOT_AVAILABLE)

    # ------------------------------------------------------------ statements
    def executemany(self, sql: str, rows: Any) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            with self._writing():
                if len(rows) == 1:  # one round trip, no pipeline set-up
                    self._conn.execute(self._sql(sql), rows[0])
                    return
                with self._conn.cursor() as cursor:
                    cursor.executemany(self._sql(sql), rows)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """This thread's reads inside the block see one committed state: a connection of its
        own in a ``REPEATABLE READ, READ ONLY`` transaction serves them (the database object's
        connection, which its writer shares, stays free). Inside a write transaction, or
        nested, it changes nothing."""
        if self.in_transaction or getattr(self._snapshots, "conn", None) is not None:
            yield
            return
        conn = self._connect()
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._snapshots.conn = conn
            yield
        finally:
            self._snapshots.conn = None
            try:
                if not conn.broken:
                    conn.execute("ROLLBACK")
            finally:
                conn.close()

    def query(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        snapshot = getattr(self._snapshots, "conn", None)
        if snapshot is not None and not self.in_transaction:
            return [tuple(r) for r in snapshot.execute(self._sql(sql), tuple(params)).fetchall()]
        with self._mutex:
            if self._depth:
                return [tuple(r) for r in self._conn.execute(self._sql(sql), tuple(params)).fetchall()]
            return self._outside_transaction(
                lambda: [tuple(r) for r in self._conn.execute(self._sql(sql), tuple(params)).fetchall()])

    def refresh(self) -> bool:
        with self._mutex:
            if self._depth:
                return False
            return self._outside_transaction(super().refresh)

    def query_with_settings(self, settings: Dict[str, str], sql: str,
                            params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        """:meth:`query` under server settings (``hnsw.ef_search``...). Outside a transaction
        they are set for the session, once per connection and value (no extra round trip on
        the next query); inside one, for that transaction only (a rollback would undo a session
        setting unseen)."""
        with self._mutex:
            if self._depth:
                for name, value in settings.items():
                    self._conn.execute("SELECT set_config(%s, %s, true)", (name, str(value)))
                return self.query(sql, params)

            def run() -> List[Tuple[Any, ...]]:
                if self._settings_conn is not self._conn:  # a new connection has none of them
                    self._settings_conn, self._session_settings = self._conn, {}
                for name, value in settings.items():
                    if self._session_settings.get(name) != str(value):
                        self._conn.execute("SELECT set_config(%s, %s, false)", (name, str(value)))
                        self._session_settings[name] = str(value)
                return [tuple(r) for r in self._conn.execute(self._sql(sql), tuple(params)).fetchall()]

            return self._outside_transaction(run)

    # --------------------------------------------------------------- pgvector
    def vector_extension(self) -> Optional[str]:
        """The schema of the server's pgvector extension (created there when the server has
        it and this role may), or None: vectors are then searched in memory. Decided once per
        database object and logged once; ``pgvector=True`` without it raises ``ValueError``."""
        if self._vector is None:
            self._vector = self._find_vector_extension()
            schema, why = self._vector
            if schema is None:
                log.info("%s: vectors loaded into memory in each process (%s)", self.describe(), why)
            else:
                log.info("%s: vectors searched in the server (%s)", self.describe(), why)
        schema, why = self._vector
        if schema is None and self.pgvector:
            raise ValueError(f"{self.describe()}: pgvector=True but {why}; install the server's "
                             "pgvector package (Debian: postgresql-<version>-pgvector) and run "
                             "CREATE EXTENSION vector as a superuser, or leave pgvector unset")
        return schema

    def vector_version(self) -> Optional[str]:
        """The installed pgvector version (``"0.8.0"``), or None."""
        rows = self.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        return rows[0][0] if rows else None

    def _installed_vector(self) -> Optional[Tuple[str, str]]:
        rows = self.query("SELECT n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n "
                          "ON n.oid = e.extnamespace WHERE e.extname = 'vector'")
        return (rows[0][0], rows[0][1]) if rows else None

    def _find_vector_extension(self) -> Tuple[Optional[str], str]:
        """``(schema or None, why)``."""
        if self.pgvector is False:
            return None, "pgvector=False"
        found = self._installed_vector()
        if found is None:
            if not self.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"):
                return None, "the server has no pgvector extension"
            if self._depth:
                return None, "pgvector is available but not created (CREATE EXTENSION vector)"
            try:
                with self._mutex:
                    self._outside_transaction(lambda: self._conn.execute(
                        "CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public"))
            except self._pg.Error as e:
                found = self._installed_vector()  # another process may have created it meanwhile
                if found is None:
                    first = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
                    return None, (f"pgvector is available but CREATE EXTENSION vector failed: {first}; "
                                  "a superuser can run it once")
            found = found or self._installed_vector()
        if found is None:
            return None, "the server has no pgvector extension"
        return found[0], f"pgvector {found[1]} in schema {found[0]}"
