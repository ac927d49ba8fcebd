"""Copy a graph-RAG store from one database to another: an embedded SQLite working directory into
a PostgreSQL workspace when a deployment outgrows one machine, or back for a local copy.

The rows of every store table (documents, chunks, status, extraction cache, pending work, graph,
vectors) are copied as they are (save the mapped vector file's row numbers, which the target
builds anew), in one transaction of the target, so the target is either the
complete copy or untouched. The target must be empty (a fresh workspace); the source is only
read, in one snapshot where its database holds one (SQLite, PostgreSQL): a writer committing
meanwhile is not in the copy, nor half in it. Each table is read in key order, a batch at a time
from the last key read (a 1M-chunk store's 2M relations cost the same per row at the end as at
the start). Query-time side tables and the change log are not copied: they are rebuilt on use.

Example:
    >>> import os, tempfile
    >>> from lightrag.components.graph_rag.index import GraphIndex
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> folder = tempfile.mkdtemp()
    >>> source = SQLiteDatabase(os.path.join(folder, "a.sqlite3"))
    >>> GraphIndex(None, database=source).enqueue(["Hi."], ["doc-1"], ["a.txt"], "t")
    (['doc-1'], [])
    >>> target = SQLiteDatabase(os.path.join(folder, "b.sqlite3"))
    >>> copy_store(source, target)  # doctest: +NORMALIZE_WHITESPACE
    {'kv': 1, 'doc_status': 1, 'nodes': 0, 'edges': 0, 'node_chunks': 0, 'node_windows': 0,
     'vectors': 0, 'doc_items': 0, 'synonym_pairs': 0}
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Iterator, List, Optional, Tuple

from lightrag.components.graph_rag.index.stores import STORE_TABLES, open_stores
from lightrag.components.storage.node_degrees import count_from_edges
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

#: columns that point into files beside the source database (the mapped vector file's rows):
#: not copied; the target lays out files of its own on first open
LOCAL_COLUMNS = {"vectors": ("row",)}


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
    stores = open_stores(target, embedder=None)  # creates the tables, as the index does
    copied: Dict[str, int] = {}
    with target.transaction(), source.snapshot():
        busy = {t: n for t in STORE_TABLES
                if (n := int(target.query(f"SELECT COUNT(*) FROM {t}")[0][0]))}
        if busy:
            raise ValueError(f"cannot copy into {target.describe()}: it already holds rows "
                             f"({', '.join(f'{t}: {n}' for t, n in busy.items())}); use a new "
                             "workspace or database")
        for table, key in STORE_TABLES.items():
            copied[table] = 0
            if not source.has_table(table):  # a table newer than the source's version
                continue
            columns = [c for c in source.columns(table) if c not in LOCAL_COLUMNS.get(table, ())]
            insert = (f"INSERT INTO {table} ({', '.join(columns)}) "
                      f"VALUES ({', '.join('?' * len(columns))})")
            for rows in _pages(source, table, columns, key, batch_size):
                target.executemany(insert, [tuple(bytes(v) if isinstance(v, memoryview) else v
                                                  for v in row) for row in rows])
                copied[table] += len(rows)
        if source.has_table("nodes") and "degree" not in source.columns("nodes"):
            count_from_edges(target)  # a source that kept degrees apart: counted again
        stores.synonyms.move_legacy()  # a source older than the pairs table: its kv rows moved
    log.info("copied %s from %s to %s", copied, source.describe(), target.describe())
    return copied


def _pages(source: SQLDatabase, table: str, columns: List[str], key: Tuple[str, ...],
           batch_size: int) -> Iterator[List[Tuple[Any, ...]]]:
    """The rows of ``table`` in ``key`` order, ``batch_size`` at a time, each read starting
    after the last key of the one before (through the key's index: every read costs the same
    wherever it is; ``LIMIT ... OFFSET`` skipped all rows before it, a quadratic pass). The
    names are this package's schema, never user input."""
    order = ", ".join(key)
    head = f"SELECT {', '.join(columns)} FROM {table}"
    after = f"({order}) > ({', '.join('?' * len(key))})"
    positions = [columns.index(k) for k in key]
    last: Optional[Tuple[Any, ...]] = None
    while True:
        if last is None:
            rows = source.query(f"{head} ORDER BY {order} LIMIT ?", (batch_size,))
        else:
            rows = source.query(f"{head} WHERE {after} ORDER BY {order} LIMIT ?", (*last, batch_size))
        if rows:
            yield rows
        if len(rows) < batch_size:
            return
        last = tuple(rows[-1][p] for p in positions)
