"""Tables of small, all-key rows (node degrees, the documents' items) live in their primary key's
B-tree: a store written when they had rowids gets them rebuilt once when opened, keeping every
row and index, and a crash during that rebuild leaves the store as it was.
"""

from __future__ import annotations

import sqlite3

import pytest

from lightrag.components.storage.doc_items import DocItemsStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage

ROWID_DEGREES = ("CREATE TABLE node_degrees (ns TEXT NOT NULL, node TEXT NOT NULL, "
                 "degree INTEGER NOT NULL, PRIMARY KEY (ns, node))")
ROWID_ITEMS = ("CREATE TABLE doc_items (ns TEXT NOT NULL, doc TEXT NOT NULL, "
               "item TEXT NOT NULL, PRIMARY KEY (ns, doc, item))")


def table_sql(path: str, name: str) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (name,)).fetchone()[0]


def older_store(path: str) -> None:
    """A store as a version with rowid tables left it: 30 hub edges plus a chain, items of two
    documents."""
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_edges_batch({**{("Hub", f"n{i}"): {} for i in range(30)}, ("n1", "n2"): {}})
    DocItemsStorage(graph.db).add("doc-1", entities=["Hub", "n1"], relations=[("Hub", "n1")])
    DocItemsStorage(graph.db).add("doc-2", entities=["n2"])
    with sqlite3.connect(path) as conn:
        for name, create in (("node_degrees", ROWID_DEGREES), ("doc_items", ROWID_ITEMS)):
            conn.execute(f"ALTER TABLE {name} RENAME TO {name}_old")
            conn.execute(create)
            conn.execute(f"INSERT INTO {name} SELECT * FROM {name}_old")
            conn.execute(f"DROP TABLE {name}_old")


def test_a_new_store_keeps_degrees_and_items_without_rowids(tmp_path):
    path = str(tmp_path / "s.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_edges_batch({("A", "B"): {}})
    DocItemsStorage(graph.db).add("doc", entities=["A"])
    assert "WITHOUT ROWID" in table_sql(path, "node_degrees")
    assert "WITHOUT ROWID" in table_sql(path, "doc_items")


def test_an_older_store_is_rebuilt_once_with_every_row_and_index(tmp_path, caplog):
    path = str(tmp_path / "s.sqlite3")
    older_store(path)
    assert "WITHOUT ROWID" not in table_sql(path, "node_degrees")
    with caplog.at_level("INFO"):
        graph = SQLGraphStorage(SQLiteDatabase(path))
        items = DocItemsStorage(graph.db)
    assert "rebuilding the node_degrees table" in caplog.text
    assert "WITHOUT ROWID" in table_sql(path, "node_degrees")
    assert "WITHOUT ROWID" in table_sql(path, "doc_items")
    assert graph.node_degrees_batch(["Hub", "n1", "n2", "n9", "none"]) == \
        {"Hub": 30, "n1": 2, "n2": 2, "n9": 1, "none": 0}
    assert graph.get_popular_labels(2) == ["Hub", "n1"]  # the busy index came back
    assert set(items.documents_naming(entities=["n1"])) == {"doc-1"}
    graph.upsert_edges_batch({("n2", "new"): {}})
    assert graph.node_degrees_batch(["n2", "new"]) == {"n2": 3, "new": 1}
    caplog.clear()
    with caplog.at_level("INFO"):
        SQLGraphStorage(SQLiteDatabase(path))
    assert "rebuilding" not in caplog.text


def test_a_crash_during_the_rebuild_leaves_the_older_table_and_its_rows(tmp_path, monkeypatch):
    path = str(tmp_path / "s.sqlite3")
    older_store(path)
    real_execute = SQLiteDatabase.execute

    def crash_on_drop(self, sql, params=()):
        if sql.startswith("DROP TABLE node_degrees"):
            raise OSError("power cut")
        return real_execute(self, sql, params)

    monkeypatch.setattr(SQLiteDatabase, "execute", crash_on_drop)
    with pytest.raises(OSError, match="power cut"):
        SQLGraphStorage(SQLiteDatabase(path))
    monkeypatch.undo()
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "node_degrees__keyed" not in tables
        assert conn.execute("SELECT degree FROM node_degrees WHERE node = 'Hub'").fetchone() == (30,)
    assert "WITHOUT ROWID" not in table_sql(path, "node_degrees")
    assert SQLGraphStorage(SQLiteDatabase(path)).node_degrees_batch(["Hub"]) == {"Hub": 30}
