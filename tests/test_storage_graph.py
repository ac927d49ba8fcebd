"""NetworkXGraphStorage: capabilities, GraphML persistence, subgraphs, label search, export."""

import csv
import json
import os

import networkx as nx
import numpy as np
import pytest

from lightrag.components.storage import BaseGraphStorage, KnowledgeGraph, NetworkXGraphStorage

NODES = ["Saturn", "Titan", "Voyager 1", "Jupiter", "Enceladus", "Io"]
EDGES = [("Titan", "Saturn"), ("Voyager 1", "Saturn"), ("Voyager 1", "Jupiter"),
         ("Enceladus", "Saturn"), ("Io", "Jupiter")]


def graph(tmp_path, workspace=""):
    return NetworkXGraphStorage(namespace="kg", workspace=workspace, working_dir=str(tmp_path))


def build(tmp_path):
    g = graph(tmp_path)
    for name in NODES:
        g.upsert_node(name, {"entity_type": "thing", "description": f"About {name}"})
    for s, t in EDGES:
        g.upsert_edge(s, t, {"weight": 1.0, "keywords": "orbit"})
    return g


def test_node_and_edge_reads(tmp_path):
    g = build(tmp_path)
    assert isinstance(g, BaseGraphStorage)
    assert g.has_node("Titan") and not g.has_node("Pluto")
    assert g.has_edge("Saturn", "Titan") and g.has_edge("Titan", "Saturn") and not g.has_edge("Titan", "Io")
    assert g.node_degree("Saturn") == 3 and g.node_degree("Pluto") == 0
    assert g.edge_degree("Titan", "Saturn") == 4
    assert g.get_node("Titan")["description"] == "About Titan" and g.get_node("Pluto") is None
    assert g.get_edge("Saturn", "Voyager 1") == {"weight": 1.0, "keywords": "orbit"}
    assert g.get_edge("Saturn", "Io") is None
    assert sorted(g.get_node_edges("Voyager 1")) == [("Voyager 1", "Jupiter"), ("Voyager 1", "Saturn")]
    assert g.get_node_edges("Pluto") is None
    assert set(g.get_nodes_batch(["Titan", "Pluto"])) == {"Titan"}
    assert g.node_degrees_batch(["Saturn", "Pluto"]) == {"Saturn": 3, "Pluto": 0}
    assert g.edge_degrees_batch([("Io", "Jupiter")]) == {("Io", "Jupiter"): 3}
    assert g.has_nodes_batch(["Io", "Pluto"]) == {"Io"}
    assert set(g.get_edges_batch([("Saturn", "Titan"), ("Titan", "Jupiter")])) == {("Saturn", "Titan")}
    batch = g.get_nodes_edges_batch(["Io", "Pluto"])
    assert batch == {"Io": [("Io", "Jupiter")], "Pluto": []}
    assert g.get_all_labels() == sorted(NODES)
    assert {n["id"] for n in g.get_all_nodes()} == set(NODES)
    assert len(g.get_all_edges()) == 5 and {"source", "target", "weight"} <= set(g.get_all_edges()[0])


def test_writes_merge_and_delete(tmp_path):
    g = build(tmp_path)
    g.upsert_node("Titan", {"description": "Largest moon", "size": np.float32(2.5), "n": np.int64(3)})
    assert g.get_node("Titan") == {"entity_type": "thing", "description": "Largest moon", "size": 2.5, "n": 3}
    g.upsert_edge("Saturn", "Titan", {"weight": 2.0, "source_id": None})
    assert g.get_edge("Titan", "Saturn") == {"weight": 2.0, "keywords": "orbit"}
    g.upsert_edge("Cassini", "Saturn", {"weight": 1.0})  # creates the missing endpoint
    assert g.has_node("Cassini") and g.node_degree("Saturn") == 4
    g.remove_edges([("Saturn", "Enceladus"), ("Saturn", "Nowhere")])
    g.delete_node("Jupiter")
    g.delete_node("Pluto")
    assert not g.has_edge("Saturn", "Enceladus") and not g.has_edge("Voyager 1", "Jupiter")
    assert g.node_degree("Io") == 0
    g.remove_nodes(["Io", "Cassini", "Pluto"])
    assert g.get_all_labels() == ["Enceladus", "Saturn", "Titan", "Voyager 1"]
    g.upsert_nodes_batch({"A": {"x": 1}, "B": {"x": 2}})
    g.upsert_edges_batch({("A", "B"): {"weight": 1.0}})
    assert g.has_edge("B", "A")
    with pytest.raises(TypeError, match="GraphML holds only"):
        g.upsert_node("Bad", {"tags": ["a", "b"]})
    with pytest.raises(TypeError, match="GraphML holds only"):
        g.upsert_edge("A", "B", {"meta": {"k": 1}})
    with pytest.raises(ValueError, match="non-empty strings"):
        g.upsert_node("", {})


def test_graphml_round_trip_keeps_types(tmp_path):
    g = build(tmp_path)
    g.upsert_node("Titan", {"radius_km": 2574, "habitable": False, "mass": 1.35e23, "note": "α <&> β"})
    g.index_done_callback()
    assert g.file_path.name == "graph_kg.graphml"
    again = graph(tmp_path)
    assert again.get_node("Titan")["radius_km"] == 2574 and again.get_node("Titan")["habitable"] is False
    assert again.get_node("Titan")["note"] == "α <&> β" and again.get_node("Titan")["mass"] == 1.35e23
    assert again.get_edge("Titan", "Saturn")["weight"] == 1.0 and again.node_degree("Saturn") == 3
    assert graph(tmp_path, workspace="other").get_all_labels() == []
    again.drop()
    assert not again.file_path.exists() and graph(tmp_path).get_all_labels() == []


def test_directed_file_loads_undirected(tmp_path):
    directed = nx.DiGraph()
    directed.add_edge("A", "B", weight=1.0)
    nx.write_graphml(directed, tmp_path / "graph_kg.graphml")
    g = graph(tmp_path)
    assert g.has_edge("B", "A") and g.get_node_edges("B") == [("B", "A")]


def test_crash_during_flush_and_corrupt_file(tmp_path, monkeypatch):
    g = build(tmp_path)
    g.index_done_callback()
    g.upsert_node("Pluto", {"entity_type": "dwarf"})

    def power_cut(src, dst):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        g.index_done_callback()
    monkeypatch.undo()
    assert not graph(tmp_path).has_node("Pluto") and graph(tmp_path).has_node("Titan")
    assert [p.name for p in tmp_path.iterdir()] == ["graph_kg.graphml"]
    (tmp_path / "graph_kg.graphml").write_text("<graphml><broken")
    with pytest.raises(ValueError, match="graph_kg.graphml"):
        graph(tmp_path)


def test_label_search_and_popularity(tmp_path):
    g = build(tmp_path)
    g.upsert_node("Saturn V", {"entity_type": "rocket"})
    g.upsert_node("Cassini orbited SATURN", {})
    assert g.search_labels("saturn") == ["Saturn", "Saturn V", "Cassini orbited SATURN"]
    assert g.search_labels("SAT", limit=1) == ["Saturn"] and g.search_labels("  ") == []
    assert g.search_labels("zzz") == []
    assert g.get_popular_labels(2) == ["Saturn", "Jupiter"]  # degree 3, then 2 (ties by name)
    assert len(g.get_popular_labels()) == len(g.get_all_labels())


def test_knowledge_graph_star_bfs_and_truncation(tmp_path):
    g = build(tmp_path)
    star = g.get_knowledge_graph("*", max_nodes=3)
    assert isinstance(star, KnowledgeGraph) and star.is_truncated
    assert [n["id"] for n in star.nodes] == ["Saturn", "Jupiter", "Voyager 1"]
    assert {(e["source"], e["target"]) for e in star.edges} == {
        ("Saturn", "Voyager 1"), ("Voyager 1", "Jupiter")}
    full = g.get_knowledge_graph("*")
    assert not full.is_truncated and len(full.nodes) == 6 and len(full.edges) == 5
    node = full.nodes[0]
    assert node["labels"] == [node["id"]] and node["properties"]["entity_type"] == "thing"
    assert {"id", "source", "target", "properties"} == set(full.edges[0])
    one_hop = g.get_knowledge_graph("Titan", max_depth=1)
    assert {n["id"] for n in one_hop.nodes} == {"Titan", "Saturn"} and len(one_hop.edges) == 1
    assert not one_hop.is_truncated
    assert len(g.get_knowledge_graph("Titan", max_depth=2).nodes) == 4  # + Voyager 1, Enceladus
    assert len(g.get_knowledge_graph("Titan", max_depth=4).nodes) == 6
    assert [n["id"] for n in g.get_knowledge_graph("Titan", max_depth=0).nodes] == ["Titan"]
    cut = g.get_knowledge_graph("Saturn", max_depth=3, max_nodes=2)
    assert cut.is_truncated and [n["id"] for n in cut.nodes] == ["Saturn", "Voyager 1"]  # busiest first
    assert g.get_knowledge_graph("Pluto") == KnowledgeGraph()
    with pytest.raises(ValueError):
        g.get_knowledge_graph("*", max_nodes=0)


def test_export_formats(tmp_path):
    g = build(tmp_path)
    out = tmp_path / "out"
    assert g.export(str(out / "kg.graphml")) == [out / "kg.graphml"]
    assert set(nx.read_graphml(out / "kg.graphml").nodes) == set(NODES)
    g.export(str(out / "kg.json"), format="JSON")
    data = json.loads((out / "kg.json").read_text())
    assert len(data["nodes"]) == 6 and len(data["edges"]) == 5 and data["nodes"][0]["entity_type"] == "thing"
    files = g.export(str(out / "kg.csv"), format="csv")
    assert [f.name for f in files] == ["kg_entities.csv", "kg_relations.csv"]
    entities = list(csv.DictReader((out / "kg_entities.csv").open()))
    relations = list(csv.DictReader((out / "kg_relations.csv").open()))
    assert list(entities[0])[0] == "id" and {e["id"] for e in entities} == set(NODES)
    assert list(relations[0])[:2] == ["source", "target"] and len(relations) == 5
    assert relations[0]["keywords"] == "orbit"
    with pytest.raises(ValueError, match="unknown export format"):
        g.export(str(out / "x"), format="xlsx")
