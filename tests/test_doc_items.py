"""Each document's graph items are rows: added part by part, replaced, deleted, and moved once
from the JSON records of an older store, on SQLite and PostgreSQL; a store that kept an index
of them by item drops it once."""

from __future__ import annotations

import json
import uuid

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.storage.doc_items import DocItemsStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_kv import SQLKVStorage

DSN_ENV = "LIGHTRAG_TEST_DOC_ITEMS_DSN"


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path, monkeypatch):
    if request.param == "sqlite":
        return SQLiteDatabase(tmp_path / "items.sqlite3")
    monkeypatch.setenv(DSN_ENV, request.getfixturevalue("postgres_server").dsn)
    from lightrag.components.storage.postgres_db import PostgresDatabase

    return PostgresDatabase(dsn_env=DSN_ENV, workspace=f"t_{uuid.uuid4().hex[:10]}")


def test_parts_add_items_replace_and_delete(db):
    items = DocItemsStorage(db)
    items.add("doc-1", ["Titan", "Saturn"], [("Saturn", "Titan")])
    items.add("doc-1", ["Huygens", "Titan"], [("Huygens", "Titan")])  # a later part
    items.add("doc-2", ["Titan"], [])
    items.add("doc-3")  # recorded, naming nothing
    assert items.get_by_id("doc-1") == {"entities": ["Huygens", "Saturn", "Titan"],
                                        "relations": [["Huygens", "Titan"], ["Saturn", "Titan"]]}
    assert items.get_by_id("doc-3") == {"entities": [], "relations": []}
    assert items.get_by_id("nowhere") is None
    assert items.get_many(["doc-3", "nowhere", "doc-1"]) == {
        "doc-1": items.get_by_id("doc-1"), "doc-3": {"entities": [], "relations": []}}
    assert items.get_many(["doc-1", "doc-2"], naming=["Huygens"]) == {
        "doc-1": {"entities": ["Huygens"], "relations": [["Huygens", "Titan"]]}}
    assert items.keys() == ["doc-1", "doc-2", "doc-3"] and len(items) == 3
    items.replace({"doc-2": {"entities": ["Rhea"], "relations": [["Rhea", "Saturn"]]}})
    assert items.get_by_id("doc-2") == {"entities": ["Rhea"], "relations": [["Rhea", "Saturn"]]}
    items.change({"doc-1": {"entities": ["Titan"], "relations": [["Huygens", "Titan"]]}},
                 {"doc-1": {"entities": ["Titan (moon)"], "relations": [["Huygens", "Titan (moon)"]]}})
    assert items.get_by_id("doc-1") == {"entities": ["Huygens", "Saturn", "Titan (moon)"],
                                        "relations": [["Huygens", "Titan (moon)"], ["Saturn", "Titan"]]}
    items.delete(["doc-1"])
    assert items.get_by_id("doc-1") is None and items.keys() == ["doc-2", "doc-3"]
    assert dict(items.items())["doc-2"]["entities"] == ["Rhea"]


def test_the_items_naming_a_name_are_read_alone_whatever_its_characters(db):
    items = DocItemsStorage(db)
    items.add("d", ["50%_off", "Titan", "x50%_off"],
              [("50%_off", "Titan"), ("Titan", "x50%_off"), ("Titan", "x50%_off2")])
    assert items.get_many(["d"], naming=["50%_off"]) == {  # LIKE's wildcards are escaped
        "d": {"entities": ["50%_off"], "relations": [["50%_off", "Titan"]]}}
    assert items.get_many(["d"], naming=["x50%_off"])["d"]["relations"] == [["Titan", "x50%_off"]]


def test_names_with_separators_and_unicode_round_trip(db):
    items = DocItemsStorage(db)
    names = ["Ærø", "a,b", "x y", "名前", "O'Brien"]
    items.add("d", names, [("a,b", "名前")])
    assert items.get_by_id("d") == {"entities": sorted(names), "relations": [["a,b", "名前"]]}


def test_an_older_store_s_records_move_to_rows_once(tmp_path):
    rag = fake_graph_rag(tmp_path)
    rag.insert(["Saturn has a moon called Titan. Titan has lakes.",
                "Huygens landed on Titan in 2005."], ids=["doc-a", "doc-b"])
    stores = rag.index.stores
    before = dict(stores.doc_graph_items.items())
    assert set(before) == {"doc-a", "doc-b"} and before["doc-a"]["entities"]
    # write the store as an older version did: JSON records in kv, no rows
    with stores.db.transaction():
        SQLKVStorage(stores.db, namespace="doc_graph_items").replace(
            {d: json.loads(json.dumps(v)) for d, v in before.items()})
        stores.doc_graph_items.drop()
    rag.index.close()
    reopened = fake_graph_rag(tmp_path)
    assert dict(reopened.index.stores.doc_graph_items.items()) == before
    assert len(SQLKVStorage(reopened.index.stores.db, namespace="doc_graph_items")) == 0
    assert reopened.index.verify() == []
    reopened.delete_by_doc_id("doc-b")  # a delete reads the moved rows
    assert reopened.index.stores.doc_graph_items.get_by_id("doc-b") is None
    assert reopened.index.verify() == []


def test_a_store_with_the_index_by_item_drops_it_once_and_keeps_every_row(tmp_path, caplog):
    path = tmp_path / "s.sqlite3"
    items = DocItemsStorage(SQLiteDatabase(path))
    items.add("doc-1", ["Titan", "Saturn"], [("Saturn", "Titan")])
    items.db.execute("CREATE INDEX doc_items_by_item ON doc_items (ns, item, doc)")  # as before
    with caplog.at_level("INFO"):
        reopened = DocItemsStorage(SQLiteDatabase(path))
    assert "dropped the doc_items index by item" in caplog.text
    assert not reopened.db.has_index("doc_items_by_item")
    assert reopened.get_by_id("doc-1") == {"entities": ["Saturn", "Titan"],
                                           "relations": [["Saturn", "Titan"]]}
    caplog.clear()
    with caplog.at_level("INFO"):
        DocItemsStorage(SQLiteDatabase(path))
    assert "dropped" not in caplog.text
