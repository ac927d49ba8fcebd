"""Tables of small rows that are all or nearly all primary key (a document's items), kept in the
key's own B-tree: SQLite's ``WITHOUT ROWID``, so a row is written and found in one B-tree instead
of a rowid table that repeats its key's index. PostgreSQL keeps every table as a heap and its
key in an index whatever it is declared as: a plain table there.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> db = SQLiteDatabase(":memory:")
    >>> with db.transaction():
    ...     create_keyed_table(db, "marks", "doc TEXT NOT NULL, item TEXT NOT NULL, PRIMARY KEY (doc, item)")
    >>> "WITHOUT ROWID" in db.query("SELECT sql FROM sqlite_master WHERE name = 'marks'")[0][0]
    True
"""

from __future__ import annotations

import logging
import time

from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)


def create_keyed_table(db: SQLDatabase, name: str, columns: str) -> None:
    """``CREATE TABLE IF NOT EXISTS name (columns)``, kept in its key's B-tree where the database
    has rowid tables; inside the caller's write transaction (the caller creates the table's other
    indexes after it). A table of an older store that has rowids is rebuilt once (logged), its
    rows copied in their stored order, in the same transaction."""
    if not db.rowid_tables:
        db.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
        return
    found = db.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    if found and "WITHOUT ROWID" in found[0][0].upper():
        return
    if not found:
        db.execute(f"CREATE TABLE {name} ({columns}) WITHOUT ROWID")
        return
    started = time.monotonic()
    log.info("rebuilding the %s table without rowids (once, for a store written before)", name)
    names = ", ".join(row[1] for row in db.query(f"PRAGMA table_info({name})"))
    db.execute(f"CREATE TABLE {name}__keyed ({columns}) WITHOUT ROWID")
    db.execute(f"INSERT INTO {name}__keyed ({names}) SELECT {names} FROM {name}")
    db.execute(f"DROP TABLE {name}")
    db.execute(f"ALTER TABLE {name}__keyed RENAME TO {name}")
    log.info("rebuilt the %s table in %.1f s", name, time.monotonic() - started)
