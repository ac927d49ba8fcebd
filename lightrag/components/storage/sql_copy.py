"""Copy a graph-RAG store from one database to another: an embedded SQLite working directory into
a PostgreSQL workspace when a deployment outgrows one machine, or back for a local copy.

The rows of every store table (documents, chunks, status, extraction cache, pending work, graph,
vectors) are copied as they are, in one transaction of the target, so the target is either the
complete copy or untouched. The target must be empty (a fresh workspace); the source is only
read (stop its writers first, or the copy may miss their last commits). Query-time side tables
and the change log are not copied: they are rebuilt on use.

Example:
    >>> import os, tempfile
    >>> from lightrag.components.graph_rag.index import GraphIndex
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> folder = tempfile.mkdtemp()
    >>> source = SQLiteDatabase(os.path.join(folder, "a.sqlite3"))
    >>> GraphIndex(None, database=source).full_docs.upsert({"doc-1": {"content": "Hi."}})
    >>> target = SQLiteDatabase(os.path.join(folder, "b.sqlite3"))
    >>> copy_store(source, target)
    {'kv': 1, 'doc_status': 0, 'nodes': 0, 'edges': 0, 'vectors': 0}
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Tuple

from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

#: the store tables and their primary keys (the order rows are read in)
STORE_TABLES: Dict[str, Tuple[str, ...]] = {
    "kv": ("ns", "id"),
    "doc_status": ("ns", "id"),
    "nodes": ("ns", "id"),
    "edges": ("ns", "src", "tgt"),
    "vectors": ("ns", "id"),
}


def _columns(db: SQLDatabase, table: str) -> List[str]:
    with db._mutex:
        cursor = db._conn.execute(f"SELECT * FROM {table} WHERE 1 = 0")
        return [d[0] for d in cursor.description]


def _create_tables(db: SQLDatabase) -> None:
    """Create the store tables exactly as :class:`GraphIndex` does (it is their owner)."""
    from lightrag.components.graph_rag.index import GraphIndex

    GraphIndex(None, database=db)


def copy_store(source: SQLDatabase, target: SQLDatabase, batch_size: int = 2000) -> Dict[str, int]:
    """Copy every store table of ``source`` into the empty ``target``; returns rows per table.

    Args:
        source: the database of a store to read (e.g. ``open_database("sqlite", "./rag")``).
        target: the database to fill (e.g. ``open_database("postgres", "./rag",
            workspace="team_a", dsn_env="LIGHTRAG_PG_DSN")``); its tables are created if missing
            and must hold no rows.
        batch_size: rows read and written at a time.

    Raises:
        ValueError: ``target`` already holds rows, or ``batch_size`` is not positive.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    _create_tables(target)
    copied: Dict[str, int] = {}
    with target.transaction():
        busy = {t: n for t in STORE_TABLES
                if (n := int(target.query(f"SELECT COUNT(*) FROM {t}")[0][0]))}
        if busy:
            raise ValueError(f"cannot copy into {target.describe()}: it already holds rows "
                             f"({', '.join(f'{t}: {n}' for t, n in busy.items())}); use a new "
                             "workspace or database")
        for table, key in STORE_TABLES.items():
            columns = _columns(source, table)
            names = ", ".join(columns)
            insert = (f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})")
            copied[table] = 0
            while True:
                rows: List[Tuple[Any, ...]] = source.query(
                    f"SELECT {names} FROM {table} ORDER BY {', '.join(key)} LIMIT ? OFFSET ?",
                    (batch_size, copied[table]))
                if not rows:
                    break
                target.executemany(insert, [tuple(bytes(v) if isinstance(v, memoryview) else v
                                                  for v in row) for row in rows])
                copied[table] += len(rows)
    log.info("copied %s from %s to %s", copied, source.describe(), target.describe())
    return copied
