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


def test_a_merge_into_a_hub_reads_its_window_only_when_a_new_citation_enters_it(tmp_path):
    path = str(tmp_path / "g.sqlite3")
    db = SQLiteDatabase(path)
    graph = SQLGraphStorage(db)
    graph.upsert_node("Hub", {"description": "a", "source_id": SEP.join(ids(*range(10, 20)))})
    statements: list = []
    db._conn.set_trace_callback(statements.append)
    try:
        with db.transaction():
            merged = graph.get_nodes_for_merge(["Hub"])["Hub"]
            graph.upsert_node("Hub", {"description": "b"})
            graph.add_node_sources("Hub", ids(30, 31))  # after the window's last (c13)
    finally:
        db._conn.set_trace_callback(None)
    assert merged["source_count"] == 10 and merged["description"] == "a"
    # the writer's node read names the table only for rows without a last id
    assert not [s for s in statements if "node_windows" in s and "window_last IS NULL" not in s]
    other = SQLGraphStorage(SQLiteDatabase(path))
    assert other.get_node("Hub") == {"description": "b", "source_count": 12,
                                     "source_id": SEP.join(ids(10, 11, 12, 13))}
    with db.transaction():
        graph.get_nodes_for_merge(["Hub"])
        graph.add_node_sources("Hub", ids(40, 5))  # c05 enters: the window is read and written
        assert graph.get_node("Hub")["source_id"] == SEP.join(ids(5, 10, 11, 12))
        graph.get_nodes_for_merge(["Hub"])
    assert other.get_node("Hub")["source_id"] == SEP.join(ids(5, 10, 11, 12))
    assert other.get_node("Hub")["source_count"] == 14


def test_the_writers_public_reads_of_an_unread_hub_put_its_window_back(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_node("Hub", {"description": "a", "source_id": SEP.join(ids(*range(10, 20)))})
    window = SEP.join(ids(10, 11, 12, 13))
    with graph.db.transaction():
        assert "source_id" not in graph.get_nodes_for_merge(["Hub"])["Hub"]
        graph.upsert_node("Hub", {"description": "b"})
        assert graph.get_node("Hub")["source_id"] == window
        assert graph.get_nodes_batch(["Hub"])["Hub"]["description"] == "b"
    assert SQLGraphStorage(open_graph_db()).get_node("Hub") == {
        "description": "b", "source_count": 10, "source_id": window}


def test_windows_match_the_smallest_citations_whatever_the_order_of_merges(tmp_path):
    import random

    rng = random.Random(5)
    path = str(tmp_path / "g.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    cited: dict = {"A": set(), "B": set()}
    for step in range(60):
        with graph.db.transaction():
            for node in rng.sample(sorted(cited), rng.randint(1, 2)):
                action = rng.random()
                if action < 0.15 and cited[node]:
                    gone = rng.sample(sorted(cited[node]), min(2, len(cited[node])))
                    graph.remove_node_sources(node, gone)
                    cited[node] -= set(gone)
                    continue
                graph.get_nodes_for_merge([node])
                if action < 0.5:
                    graph.upsert_node(node, {"description": f"d{step}"})
                new = [f"c{rng.randint(0, 999):03d}" for _ in range(rng.randint(1, 3))]
                graph.add_node_sources(node, new)
                cited[node] |= set(new)
                if action > 0.9:
                    assert graph.get_node(node)["source_count"] == len(cited[node])
        reopened = SQLGraphStorage(SQLiteDatabase(path))
        for node, chunks in cited.items():
            data = reopened.get_node(node)
            if data is None:
                continue
            assert data["source_count"] == len(chunks)
            assert set(data["source_id"].split(SEP)) == set(node_sources.window_ids(sorted(
                chunks)).split(SEP)) or len(chunks) <= 4


def test_a_store_written_before_the_last_id_column_gets_it_and_merges_the_same(tmp_path):
    path = str(tmp_path / "g.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_node("Hub", {"description": "a", "source_id": SEP.join(ids(*range(10, 20)))})
    graph.db.execute("ALTER TABLE nodes DROP COLUMN window_last")  # as an older version made it
    reopened = SQLGraphStorage(SQLiteDatabase(path))
    assert "window_last" in reopened.db.columns("nodes")
    reopened.add_node_sources("Hub", ids(2))
    reopened.add_node_sources("Hub", ids(40))
    assert SQLGraphStorage(SQLiteDatabase(path)).get_node("Hub") == {
        "description": "a", "source_count": 12, "source_id": SEP.join(ids(2, 10, 11, 12))}
