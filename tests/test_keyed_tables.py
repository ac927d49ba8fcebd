"""Tables of small, all-key rows (the documents' items) live in their primary key's B-tree: a
store written when they had rowids gets them rebuilt once when opened, keeping every row, and a
crash during that rebuild leaves the store as it was.
"""

from __future__ import annotations

import sqlite3

import pytest

from lightrag.components.storage.doc_items import DocItemsStorage
from lightrag.components.storage.sql_db import SQLiteDatabase

ROWID_ITEMS = ("CREATE TABLE doc_items (ns TEXT NOT NULL, doc TEXT NOT NULL, "
               "item TEXT NOT NULL, PRIMARY KEY (ns, doc, item))")


def table_sql(path: str, name: str) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (name,)).fetchone()[0]


def older_store(path: str) -> None:
    """A store as a version with a rowid ``doc_items`` table left it: items of two documents."""
    items = DocItemsStorage(SQLiteDatabase(path))
    items.add("doc-1", entities=["Hub", "n1"], relations=[("Hub", "n1")])
    items.add("doc-2", entities=["n2"])
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE doc_items RENAME TO doc_items_old")
        conn.execute(ROWID_ITEMS)
        conn.execute("INSERT INTO doc_items SELECT * FROM doc_items_old")
        conn.execute("DROP TABLE doc_items_old")


def test_a_new_store_keeps_its_items_without_rowids(tmp_path):
    path = str(tmp_path / "s.sqlite3")
    DocItemsStorage(SQLiteDatabase(path)).add("doc", entities=["A"])
    assert "WITHOUT ROWID" in table_sql(path, "doc_items")


def test_an_older_store_is_rebuilt_once_with_every_row(tmp_path, caplog):
    path = str(tmp_path / "s.sqlite3")
    older_store(path)
    assert "WITHOUT ROWID" not in table_sql(path, "doc_items")
    with caplog.at_level("INFO"):
        items = DocItemsStorage(SQLiteDatabase(path))
    assert "rebuilding the doc_items table" in caplog.text
    assert "WITHOUT ROWID" in table_sql(path, "doc_items")
    assert items.get_by_id("doc-1") == {"entities": ["Hub", "n1"], "relations": [["Hub", "n1"]]}
    assert items.get_by_id("doc-2") == {"entities": ["n2"], "relations": []}
    items.add("doc-3", entities=["n2"])
    assert items.keys() == ["doc-1", "doc-2", "doc-3"]
    caplog.clear()
    with caplog.at_level("INFO"):
        DocItemsStorage(SQLiteDatabase(path))
    assert "rebuilding" not in caplog.text


def test_a_crash_during_the_rebuild_leaves_the_older_table_and_its_rows(tmp_path, monkeypatch):
    path = str(tmp_path / "s.sqlite3")
    older_store(path)
    real_execute = SQLiteDatabase.execute

    def crash_on_drop(self, sql, params=()):
        if sql.startswith("DROP TABLE doc_items"):
            raise OSError("power cut")
        return real_execute(self, sql, params)

    monkeypatch.setattr(SQLiteDatabase, "execute", crash_on_drop)
    with pytest.raises(OSError, match="power cut"):
        DocItemsStorage(SQLiteDatabase(path))
    monkeypatch.undo()
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "doc_items__keyed" not in tables
        assert conn.execute("SELECT COUNT(*) FROM doc_items").fetchone() == (6,)
    assert "WITHOUT ROWID" not in table_sql(path, "doc_items")
    assert DocItemsStorage(SQLiteDatabase(path)).get_by_id("doc-2") == {"entities": ["n2"], "relations": []}
