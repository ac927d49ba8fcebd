"""Node degrees are rows kept in step with the edges: a query reads them by key.

Whatever a sequence of commits does (new edges, re-upserts of existing ones, deleted edges and
nodes, rollbacks), every node's stored degree equals the count of its edges; a store written
before the rows gets them when opened; the explorer's most connected labels come from them.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage


def counted(graph: SQLGraphStorage) -> dict:
    degrees: dict = {}
    for s, t in graph.all_edge_pairs():
        degrees[s] = degrees.get(s, 0) + 1
        degrees[t] = degrees.get(t, 0) + 1
    return degrees


def test_degrees_follow_every_kind_of_change(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    rng = random.Random(3)
    names = [f"N{i}" for i in range(30)]
    for step in range(40):
        with graph.db.transaction():
            pairs = {tuple(rng.sample(names, 2)): {"weight": float(step)} for _ in range(rng.randint(1, 8))}
            graph.upsert_edges_batch(pairs)  # new edges and re-upserts of existing ones
            graph.upsert_edges_batch(dict(list(pairs.items())[:1]))  # twice in one commit
            if step % 5 == 4:
                graph.remove_edges(rng.sample(graph.all_edge_pairs(), 3))
            if step % 9 == 8:
                graph.remove_nodes([rng.choice(names)])
            assert graph.edge_count() == len(graph.all_edge_pairs())  # the writer's own view
        assert graph.edge_count() == len(graph.all_edge_pairs())
        expected = counted(graph)
        assert graph.node_degrees_batch(names) == {n: expected.get(n, 0) for n in names}
    reopened = SQLGraphStorage(open_graph_db())
    assert reopened.node_degrees_batch(names) == {n: expected.get(n, 0) for n in names}


def test_a_rolled_back_commit_leaves_the_degrees(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_edges_batch({("Titan", "Saturn"): {}})
    with pytest.raises(RuntimeError):
        with graph.db.transaction():
            graph.upsert_edges_batch({("Rhea", "Saturn"): {}, ("Mimas", "Saturn"): {}})
            graph.remove_nodes(["Titan"])
            raise RuntimeError("crash before the commit")
    assert graph.node_degrees_batch(["Saturn", "Titan", "Rhea"]) == {"Saturn": 1, "Titan": 1, "Rhea": 0}


def test_inside_its_transaction_the_writer_sees_its_own_degrees(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_edges_batch({("Titan", "Saturn"): {}})
    with graph.db.transaction():
        graph.upsert_edges_batch({("Rhea", "Saturn"): {}})
        assert graph.node_degrees_batch(["Saturn"]) == {"Saturn": 2}


def test_a_store_written_before_the_rows_gets_them_when_opened(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_edges_batch({("A", "B"): {}, ("A", "C"): {}, ("C", "D"): {}})
    db = graph.db
    with db.transaction():  # as an older version left it: edges only
        db.execute("UPDATE nodes SET degree = 0")
        db.execute("DELETE FROM meta WHERE name LIKE 'node_degrees:%'")
    assert SQLGraphStorage(open_graph_db()).node_degrees_batch(["A", "B", "C", "D"]) == \
        {"A": 2, "B": 1, "C": 2, "D": 1}


def test_most_connected_labels_come_first_then_the_unconnected(open_graph_db):
    graph = SQLGraphStorage(open_graph_db())
    graph.upsert_edges_batch({("Hub", f"L{i}"): {} for i in range(4)} | {("L0", "L1"): {}})
    graph.upsert_node("Alone", {"entity_type": "x"})
    assert graph.get_popular_labels(3) == ["Hub", "L0", "L1"]
    assert graph.get_popular_labels(10) == ["Hub", "L0", "L1", "L2", "L3", "Alone"]


def test_busiest_labels_stay_in_order_as_degrees_cross_the_busy_line(open_graph_db):
    from lightrag.components.storage.node_degrees import BUSY_DEGREE

    graph = SQLGraphStorage(open_graph_db())
    spokes = {f"H{h}": BUSY_DEGREE - 2 + 2 * h for h in range(5)}  # H0 under the line
    graph.upsert_edges_batch({(hub, f"{hub}-{i}"): {} for hub, n in spokes.items() for i in range(n)})

    def expected(limit: int) -> list:
        return [n for n, _ in sorted(counted(graph).items(), key=lambda nd: (-nd[1], nd[0]))][:limit]

    assert graph.get_popular_labels(3) == ["H4", "H3", "H2"] == expected(3)  # the busy ones
    assert graph.get_popular_labels(6) == expected(6)  # more than are busy: all sorted
    graph.remove_edges([("H4", f"H4-{i}") for i in range(8)])  # H4 falls under the line
    graph.upsert_edges_batch({("H0", f"H0-new-{i}"): {} for i in range(20)})  # H0 rises over it
    assert graph.get_popular_labels(3) == expected(3) == ["H0", "H3", "H2"]
    assert graph.get_popular_labels(5) == expected(5)
    assert SQLGraphStorage(open_graph_db()).get_popular_labels(4) == expected(4)  # another process


def test_a_store_indexed_from_a_lower_degree_keeps_its_listing_and_drops_that_index(tmp_path):
    path = str(tmp_path / "g.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_edges_batch({**{("Hub", f"n{i}"): {} for i in range(80)}, ("n1", "n2"): {}})
    with sqlite3.connect(path) as conn:  # as the version that indexed degree >= 16 left it
        conn.execute("DROP INDEX nodes_busiest")
        conn.execute("CREATE INDEX nodes_busy ON nodes (ns, degree) WHERE degree >= 16")
    reopened = SQLGraphStorage(SQLiteDatabase(path))
    assert not reopened.db.has_index("nodes_busy")
    assert reopened.get_popular_labels(3) == ["Hub", "n1", "n2"]


def test_an_older_store_s_degree_rows_move_into_its_nodes(tmp_path):
    """A store that kept degrees as ``node_degrees`` rows (with the index of every degree of a
    version before) opens with them in its nodes' rows and the table gone."""
    path = str(tmp_path / "g.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_edges_batch({**{("Hub", f"n{i}"): {} for i in range(20)}, ("n1", "n2"): {}})
    with sqlite3.connect(path) as conn:  # as that version left it
        conn.execute("CREATE TABLE node_degrees (ns TEXT NOT NULL, node TEXT NOT NULL, "
                     "degree INTEGER NOT NULL, PRIMARY KEY (ns, node))")
        conn.execute("INSERT INTO node_degrees SELECT ns, id, degree FROM nodes")
        conn.execute("CREATE INDEX node_degrees_by_degree ON node_degrees (ns, degree)")
        conn.execute("DROP INDEX nodes_busiest")
        conn.execute("ALTER TABLE nodes DROP COLUMN degree")
        conn.execute("UPDATE node_degrees SET degree = 3 WHERE node = 'n5'")  # its rows are what counts
    reopened = SQLGraphStorage(SQLiteDatabase(path))
    tables = {r[0] for r in reopened.db.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "node_degrees" not in tables
    assert reopened.node_degrees_batch(["Hub", "n1", "n2", "n5", "none"]) == \
        {"Hub": 20, "n1": 2, "n2": 2, "n5": 3, "none": 0}
    assert reopened.get_popular_labels(2) == ["Hub", "n5"]
    reopened.upsert_edges_batch({("n5", "new"): {}})
    assert SQLGraphStorage(SQLiteDatabase(path)).node_degrees_batch(["n5", "new"]) == {"n5": 4, "new": 1}


def test_check_reports_a_degree_that_disagrees_with_the_edges(tmp_path):
    from graph_fakes import fake_graph_rag

    rag = fake_graph_rag(str(tmp_path))
    result = rag.insert(["Marie Curie worked with Pierre Curie in Paris. Pierre Curie taught in Paris."],
                        ids=["doc-1"])
    assert not result.failed and rag.index.verify() == []
    db = rag.index.stores.db
    with db.transaction():
        db.execute("UPDATE nodes SET degree = degree + 5")
    problems = rag.index.verify()
    assert problems and all("degree" in p for p in problems)


def test_a_dense_display_subgraph_keeps_each_nodes_busiest_edges(open_graph_db):
    """The 1,000 hubs of a large store share ~100 edges each: the display subgraph keeps, per
    node, its edges to the busiest others (at most DISPLAY_EDGES_PER_NODE), marks itself
    truncated, and loses no node."""
    from lightrag.components.storage import graph_display

    graph = SQLGraphStorage(open_graph_db())
    names = [f"N{i:02d}" for i in range(40)]
    with graph.db.transaction():
        graph.upsert_nodes_batch({n: {"entity_type": "concept"} for n in names})
        graph.upsert_edges_batch({(a, b): {"weight": 1.0}
                                  for i, a in enumerate(names) for b in names[i + 1:]})
    shown = graph.get_knowledge_graph("*", max_nodes=30)
    per_node = graph_display.DISPLAY_EDGES_PER_NODE
    assert len(shown.nodes) == 30 and shown.is_truncated
    assert per_node * 15 <= len(shown.edges) <= per_node * 30  # 30 x 29 / 2 = 435 without the cap
    ends = {e["source"] for e in shown.edges} | {e["target"] for e in shown.edges}
    assert ends == {n["id"] for n in shown.nodes}
    sparse = graph.get_knowledge_graph("N00", max_depth=1, max_nodes=5)
    assert len(sparse.nodes) == 5 and len(sparse.edges) == 10  # every edge among 5 nodes kept


def test_edges_read_in_a_transaction_answer_until_it_commits_and_not_after(open_graph_db):
    graph, other = SQLGraphStorage(open_graph_db()), SQLGraphStorage(open_graph_db())
    graph.upsert_edge("Titan", "Saturn", {"weight": 1.0})
    with graph.db.transaction():
        assert graph.get_edge("Titan", "Saturn")["weight"] == 1.0
        assert graph.get_edge("Rhea", "Saturn") is None  # read: no such edge
        graph.upsert_edge("Rhea", "Saturn", {"weight": 2.0})  # new: its ends' degrees grow
        graph.upsert_edge("Saturn", "Titan", {"weight": 3.0})  # read before: no degree change
        assert graph.get_edge("Rhea", "Saturn")["weight"] == 2.0
        assert graph.has_node("Rhea") and graph.has_node("Titan")
    assert graph.node_degrees_batch(["Saturn", "Titan", "Rhea"]) == counted(graph) == {
        "Saturn": 2, "Titan": 1, "Rhea": 1}
    other.upsert_edge("Titan", "Saturn", {"weight": 4.0})  # another process commits
    other.remove_edges([("Rhea", "Saturn")])
    with graph.db.transaction():
        assert graph.get_edge("Titan", "Saturn")["weight"] == 4.0
        assert graph.get_edge("Rhea", "Saturn") is None
        graph.upsert_edge("Rhea", "Saturn", {"weight": 5.0})
    assert graph.node_degrees_batch(["Saturn", "Rhea"]) == {"Saturn": 2, "Rhea": 1}


def test_a_copy_of_a_store_that_kept_degrees_apart_counts_them(tmp_path):
    from lightrag.components.graph_rag.index.copy import copy_store

    path = str(tmp_path / "old.sqlite3")
    graph = SQLGraphStorage(SQLiteDatabase(path))
    graph.upsert_edges_batch({("Hub", "A"): {}, ("Hub", "B"): {}, ("A", "B"): {}})
    with sqlite3.connect(path) as conn:  # a version with node_degrees rows and no degree column
        conn.execute("CREATE TABLE node_degrees (ns TEXT NOT NULL, node TEXT NOT NULL, "
                     "degree INTEGER NOT NULL, PRIMARY KEY (ns, node))")
        conn.execute("INSERT INTO node_degrees SELECT ns, id, degree FROM nodes")
        conn.execute("DROP INDEX nodes_busiest")
        conn.execute("ALTER TABLE nodes DROP COLUMN degree")
        conn.execute("DROP TABLE node_windows")
    copied = copy_store(SQLiteDatabase(path), SQLiteDatabase(str(tmp_path / "new.sqlite3")))
    assert copied["nodes"] == 3 and copied["node_windows"] == 0
    target = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "new.sqlite3")))
    assert target.node_degrees_batch(["Hub", "A", "B"]) == {"Hub": 2, "A": 2, "B": 2}


def test_the_busiest_nodes_display_holds_every_edge_among_them(open_graph_db):
    """Hubs look the others up by key, quieter nodes read their edges: whichever end finds a
    pair, the display of the busiest nodes has exactly the edges among them (checked against
    every edge of a random graph with hubs of hundreds of edges)."""
    rng = random.Random(7)
    graph = SQLGraphStorage(open_graph_db())
    names = [f"E{i:03d}" for i in range(300)]
    hubs = names[:6]
    edges = {tuple(sorted((h, o))) for h in hubs for o in rng.sample(names, 120) if o != h}
    edges |= {tuple(sorted(rng.sample(names, 2))) for _ in range(500)}
    with graph.db.transaction():
        graph.upsert_nodes_batch({n: {"entity_type": "concept"} for n in names})
        graph.upsert_edges_batch({pair: {"weight": 1.0} for pair in edges})
    for max_nodes in (5, 12, 30):
        shown = graph.get_knowledge_graph("*", max_nodes=max_nodes)
        chosen = {n["id"] for n in shown.nodes}
        among = {pair for pair in edges if set(pair) <= chosen}
        if len(among) <= 10 * max_nodes:  # below the display's cap of edges per node
            assert {tuple(sorted((e["source"], e["target"]))) for e in shown.edges} == among
        assert set(hubs) <= chosen or max_nodes < len(hubs)
