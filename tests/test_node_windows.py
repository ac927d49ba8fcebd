"""A hub's ``source_id`` window is a row beside its node row: the node reads the same wherever
its window is kept (in its transaction, after the commit, in another connection, in whole-graph
reads and exports, on SQLite and PostgreSQL), a merge that changes only the hub's description
leaves the window row alone, and a node that stops being a hub (or is deleted) takes its window
back (or with it).
"""

from __future__ import annotations

import json

import pytest

from lightrag.components.storage import node_sources
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage

SEP = "<SEP>"


@pytest.fixture(autouse=True)
def small_cap(monkeypatch):
    monkeypatch.setattr(node_sources, "SOURCE_ID_CAP", 4)


def ids(*numbers: int) -> list:
    return [f"c{i:02d}" for i in numbers]


def window_rows(db) -> dict:
    return {n: w for n, w in db.query("SELECT id, source_id FROM node_windows")}


def test_a_hub_reads_the_same_wherever_its_window_is_kept(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_node("Hub", {"entity_type": "person", "description": "first",
                              "source_id": SEP.join(ids(9, 3, 7))})
    graph.upsert_node("Leaf", {"entity_type": "place", "source_id": "c01"})
    for i in (5, 1, 8, 0):
        graph.add_node_sources("Hub", ids(i))
    hub = graph.get_node("Hub")
    assert hub["source_id"].split(SEP) == ids(0, 1, 3, 5) and hub["source_count"] == 7
    assert window_rows(graph.db) == {"Hub": hub["source_id"]}
    with graph.db.transaction():  # the writer's own view, before and after its change
        assert graph.get_node("Hub") == hub
        graph.upsert_node("Hub", {"description": "second"})
        assert graph.get_node("Hub") == {**hub, "description": "second"}
    hub["description"] = "second"
    other = SQLGraphStorage(open_graph_db())
    assert other.get_node("Hub") == hub
    assert other.get_nodes_batch(["Hub", "Leaf"])["Leaf"]["source_id"] == "c01"
    assert other.snapshot().nodes["Hub"]["source_id"] == hub["source_id"]
    assert dict(other.node_sources())["Hub"] == hub["source_id"]
    assert dict(other.iter_node_sources(batch=1))["Hub"] == hub["source_id"]
    assert "source_id" not in json.loads(other.db.query(
        "SELECT data FROM nodes WHERE id = 'Hub'")[0][0])  # the row holds the rest only


def test_a_description_merge_leaves_the_window_row_alone(tmp_path):
    db = SQLiteDatabase(str(tmp_path / "g.sqlite3"))
    graph = SQLGraphStorage(db)
    graph.upsert_node("Hub", {"description": "a", "source_id": SEP.join(ids(*range(10)))})
    statements: list = []
    db._conn.set_trace_callback(statements.append)
    try:
        with db.transaction():
            graph.upsert_node("Hub", {"description": "b"})
            graph.add_node_sources("Hub", ids(50))  # sorts after the window's last: window kept
    finally:
        db._conn.set_trace_callback(None)
    assert any("INTO nodes" in s for s in statements)
    assert not any("INTO node_windows" in s for s in statements)
    assert graph.get_node("Hub")["source_count"] == 11
    with db.transaction():
        graph.add_node_sources("Hub", ["c00a"])  # enters the window: the row is written
    assert window_rows(db)["Hub"].split(SEP) == ["c00", "c00a", "c01", "c02"]


def test_a_node_that_stops_being_a_hub_takes_its_window_back(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_node("Hub", {"source_id": SEP.join(ids(*range(6)))})
    graph.upsert_node("Other", {"source_id": SEP.join(ids(*range(6)))})
    assert set(window_rows(graph.db)) == {"Hub", "Other"}
    assert graph.remove_node_sources("Hub", ids(0, 1, 2)) == ids(0, 1, 2)
    reopened = SQLGraphStorage(open_graph_db())
    assert reopened.get_node("Hub")["source_id"].split(SEP) == ids(3, 4, 5)
    assert reopened.get_node("Hub")["source_count"] == 3
    graph.delete_node("Other")
    assert window_rows(graph.db) == {}
    assert SQLGraphStorage(open_graph_db()).get_node("Other") is None


def test_an_older_stores_inline_hub_window_reads_and_moves_out_on_its_next_write(tmp_path):
    path = str(tmp_path / "g.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_node("Hub", {"description": "a", "source_id": SEP.join(ids(*range(8)))})
    hub = graph.get_node("Hub")
    with graph.db.transaction():  # as an older version wrote it: the window inside the row
        graph.db.execute("DELETE FROM node_windows")
        graph.db.execute("UPDATE nodes SET data = ? WHERE id = 'Hub'", (json.dumps(hub),))
    reopened = SQLGraphStorage(SQLiteDatabase(path))
    assert reopened.get_node("Hub") == hub
    reopened.upsert_node("Hub", {"description": "b"})
    assert window_rows(reopened.db) == {"Hub": hub["source_id"]}
    assert SQLGraphStorage(SQLiteDatabase(path)).get_node("Hub") == {**hub, "description": "b"}


def test_dropping_the_graph_drops_its_windows_only(tmp_path):
    db = SQLiteDatabase(str(tmp_path / "g.sqlite3"))
    graph, other = SQLGraphStorage(db), SQLGraphStorage(db, namespace="other")
    graph.upsert_node("Hub", {"source_id": SEP.join(ids(*range(6)))})
    other.upsert_node("Hub", {"source_id": SEP.join(ids(*range(7)))})
    graph.drop()
    assert graph.get_node("Hub") is None
    assert other.get_node("Hub")["source_count"] == 7
    assert len(other.get_node("Hub")["source_id"].split(SEP)) == 4
