"""A hub's edges are bounded when a query reads them: preferred neighbours first, then a share."""

from __future__ import annotations

import pytest

from lightrag.components.storage import NetworkXGraphStorage, SQLGraphStorage, SQLiteDatabase


@pytest.fixture(params=["sql", "networkx"])
def graph(request, tmp_path):
    if request.param == "sql":
        store = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))
    else:
        store = NetworkXGraphStorage("graph", working_dir=str(tmp_path))
    edges = {("hub", f"n{i:03d}"): {"weight": 1.0} for i in range(300)}
    edges[("a-first", "hub")] = {"weight": 1.0}  # the hub as the target of an edge
    edges[("small", "n001")] = {"weight": 1.0}
    if isinstance(store, SQLGraphStorage):
        with store.db.transaction():
            store.upsert_edges_batch(edges)
    else:
        store.upsert_edges_batch(edges)
    return store


def test_a_hub_gives_at_most_limit_edges_with_the_preferred_ones_first(graph):
    bounded = graph.get_nodes_edges_bounded(["hub", "small"], 20, prefer=["n250", "a-first", "zzz"])
    hub = bounded["hub"]
    assert len(hub) == 20
    assert set(hub[:2]) == {("hub", "n250"), ("hub", "a-first")}
    assert len(set(hub)) == 20 and all(s == "hub" for s, _ in hub)
    full = set(graph.get_nodes_edges_batch(["hub"])["hub"])
    assert set(hub) <= full
    assert bounded["small"] == [("small", "n001")]


def test_preferred_edges_are_kept_even_beyond_the_limit(graph):
    prefer = [f"n{i:03d}" for i in range(30)]
    hub = graph.get_nodes_edges_bounded(["hub"], 10, prefer=prefer)["hub"]
    assert {t for _, t in hub} == set(prefer)


def test_an_unknown_node_has_no_edges(graph):
    assert graph.get_nodes_edges_bounded(["nobody"], 5) == {"nobody": []}
