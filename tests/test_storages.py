"""Embedded storages: CRUD, persistence, atomic flushes, workspaces, vector search, graph queries."""

import json
import os

import numpy as np
import pytest

from lightrag.components.graph_rag.schemas import DocProcessingStatus, DocStatus
from lightrag.components.model_client import ScriptedClient
from lightrag.components.storage import (
    JsonDocStatusStorage,
    JsonKVStorage,
    NetworkXGraphStorage,
    NumpyVectorStorage,
)
from lightrag.core import Embedder


def embedder():
    return Embedder(model_client=ScriptedClient(embedding_dim=128))


# ------------------------------------------------------------------------------- KV
def test_kv_crud_merge_and_persistence(tmp_path):
    kv = JsonKVStorage(namespace="docs", working_dir=str(tmp_path))
    kv.upsert({"a": {"text": "x", "n": 1}, "b": {"text": "y"}})
    kv.upsert({"a": {"n": 2}})
    assert kv.get_by_id("a") == {"text": "x", "n": 2}
    assert kv.get_by_ids(["b", "zz"]) == [{"text": "y"}, None]
    assert kv.filter_keys(["a", "c"]) == {"c"}
    kv.delete(["b"])
    assert kv.keys() == ["a"] and len(kv) == 1 and not kv.is_empty()
    kv.index_done_callback()
    again = JsonKVStorage(namespace="docs", working_dir=str(tmp_path))
    assert again.get_by_id("a") == {"text": "x", "n": 2}
    with pytest.raises(TypeError):
        kv.upsert({"bad": "not a dict"})
    again.drop()
    assert again.is_empty() and not again.file_path.exists()


def test_workspaces_are_isolated_and_names_checked(tmp_path):
    one = JsonKVStorage(namespace="docs", workspace="alice", working_dir=str(tmp_path))
    two = JsonKVStorage(namespace="docs", workspace="bob", working_dir=str(tmp_path))
    one.upsert({"k": {"v": 1}})
    one.index_done_callback()
    two.index_done_callback()
    assert JsonKVStorage(namespace="docs", workspace="bob", working_dir=str(tmp_path)).get_by_id("k") is None
    assert (tmp_path / "alice" / "kv_store_docs.json").exists()
    for bad in ["../escape", "a/b", ".."]:
        with pytest.raises(ValueError, match="workspace"):
            JsonKVStorage(namespace="docs", workspace=bad, working_dir=str(tmp_path))


def test_crash_during_flush_keeps_previous_file(tmp_path, monkeypatch):
    kv = JsonKVStorage(namespace="docs", working_dir=str(tmp_path))
    kv.upsert({"a": {"v": 1}})
    kv.index_done_callback()
    kv.upsert({"a": {"v": 2}, "b": {"v": 3}})

    def power_cut(src, dst):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        kv.index_done_callback()
    monkeypatch.undo()
    assert JsonKVStorage(namespace="docs", working_dir=str(tmp_path)).get_by_id("a") == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["kv_store_docs.json"]


def test_corrupt_file_is_a_clear_error(tmp_path):
    (tmp_path / "kv_store_docs.json").write_text("{not json")
    with pytest.raises(ValueError, match="kv_store_docs.json"):
        JsonKVStorage(namespace="docs", working_dir=str(tmp_path))
    (tmp_path / "vdb_chunks.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="vdb_chunks.npz"):
        NumpyVectorStorage(namespace="chunks", working_dir=str(tmp_path))


# --------------------------------------------------------------------------- status
def test_doc_status_queries(tmp_path):
    store = JsonDocStatusStorage(namespace="doc_status", working_dir=str(tmp_path))
    store.upsert({
        "d1": DocProcessingStatus(status=DocStatus.PROCESSED, track_id="t1", content_hash="h1").to_dict(),
        "d2": DocProcessingStatus(status=DocStatus.FAILED, track_id="t1", error_msg="boom").to_dict(),
        "d3": DocProcessingStatus(status=DocStatus.PENDING, track_id="t2").to_dict(),
    })
    assert store.get_status_counts() == {"pending": 1, "processing": 0, "processed": 1, "failed": 1}
    failed = store.get_by_status(DocStatus.FAILED)
    assert list(failed) == ["d2"] and failed["d2"].error_msg == "boom"
    assert set(store.get_by_track_id("t1")) == {"d1", "d2"}
    assert set(store.get_by_statuses([DocStatus.PENDING, DocStatus.FAILED])) == {"d2", "d3"}
    assert store.get_doc_by_content_hash("h1")[0] == "d1"
    assert len(store.get_docs_paginated(page=1, page_size=2)) == 2
    store.index_done_callback()
    again = JsonDocStatusStorage(namespace="doc_status", working_dir=str(tmp_path))
    assert again.get_status_counts()["processed"] == 1


# --------------------------------------------------------------------------- vector
def test_vector_upsert_query_delete_and_reload(tmp_path):
    store = NumpyVectorStorage(namespace="chunks", embedder=embedder(), cosine_threshold=0.1,
                               meta_fields=["file_path"], working_dir=str(tmp_path))
    store.upsert({
        "seal": {"content": "grey seals live in colonies near Halifax", "file_path": "a.md", "x": 1},
        "bridge": {"content": "the bridge spans the river", "file_path": "b.md"},
        "drone": {"content": "thermal drones track seal colonies", "file_path": "c.md"},
    })
    hits = store.query("where do grey seals live", top_k=2)
    assert [h["id"] for h in hits][0] == "seal" and hits[0]["file_path"] == "a.md"
    assert "x" not in hits[0] and hits[0]["score"] >= hits[-1]["score"]
    assert all(h["score"] >= 0.1 for h in store.query("unrelated words entirely", top_k=3))
    store.upsert({"seal": {"content": "the bridge spans the river again", "file_path": "a.md"}})
    assert len(store) == 3 and store.query("bridge spans river", top_k=1)[0]["id"] in {"seal", "bridge"}
    store.delete(["bridge", "missing"])
    assert len(store) == 2 and store.get_by_id("bridge") is None
    assert set(store.get_vectors_by_ids(["seal", "drone", "nope"])) == {"seal", "drone"}
    store.index_done_callback()
    again = NumpyVectorStorage(namespace="chunks", embedder=embedder(), working_dir=str(tmp_path))
    assert len(again) == 2 and again.get_by_id("drone")["file_path"] == "c.md"
    np.testing.assert_allclose(again.get_vectors_by_ids(["seal"])["seal"],
                               store.get_vectors_by_ids(["seal"])["seal"])


def test_vector_top_k_threshold_filter_and_batch(tmp_path):
    store = NumpyVectorStorage(namespace="v", cosine_threshold=-1.0, working_dir=str(tmp_path))
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    store.upsert({f"id{i}": {"content": str(i)} for i in range(50)}, vectors=vectors)
    assert len(store.query(vectors[3], top_k=100)) == 50
    assert store.query(vectors[3], top_k=1)[0]["id"] == "id3"
    assert [h["id"] for h in store.query(vectors[3], top_k=5, ids_filter={"id7", "id9"})] in (
        ["id7", "id9"], ["id9", "id7"])
    batch = store.query_batch(vectors[[1, 2]], top_k=1)
    assert [b[0]["id"] for b in batch] == ["id1", "id2"]
    strict = NumpyVectorStorage(namespace="w", cosine_threshold=0.99, working_dir=str(tmp_path))
    strict.upsert({"a": {"content": ""}}, vectors=np.array([[1.0, 0.0]]))
    assert strict.query(np.array([0.0, 1.0]), top_k=1) == []


def test_vector_dimension_mismatch_and_missing_embedder(tmp_path):
    store = NumpyVectorStorage(namespace="v", working_dir=str(tmp_path))
    store.upsert({"a": {"content": "x"}}, vectors=np.ones((1, 4)))
    with pytest.raises(ValueError, match="4-d vectors but got 3-d"):
        store.upsert({"b": {"content": "y"}}, vectors=np.ones((1, 3)))
    with pytest.raises(ValueError, match="no embedder"):
        store.query("text", top_k=1)
    assert NumpyVectorStorage(namespace="empty", working_dir=str(tmp_path)).query(np.ones(4), 3) == []


def test_vector_growth_keeps_rows(tmp_path):
    store = NumpyVectorStorage(namespace="v", cosine_threshold=-1, working_dir=str(tmp_path))
    for i in range(100):
        store.upsert({f"k{i}": {"content": ""}}, vectors=np.eye(100, dtype=np.float32)[i:i + 1])
    assert len(store) == 100 and store.query(np.eye(100)[57], top_k=1)[0]["id"] == "k57"
    store.delete([f"k{i}" for i in range(0, 100, 2)])
    assert store.query(np.eye(100)[57], top_k=1)[0]["id"] == "k57" and len(store) == 50


# ---------------------------------------------------------------------------- graph
def build_graph(tmp_path):
    g = NetworkXGraphStorage(namespace="kg", working_dir=str(tmp_path))
    for name in ["Saturn", "Titan", "Voyager 1", "Jupiter", "Enceladus"]:
        g.upsert_node(name, {"entity_type": "thing", "description": f"About {name}"})
    for s, t in [("Titan", "Saturn"), ("Voyager 1", "Saturn"), ("Voyager 1", "Jupiter"),
                 ("Enceladus", "Saturn")]:
        g.upsert_edge(s, t, {"weight": 1.0, "keywords": "orbit"})
    return g


def test_graph_capabilities(tmp_path):
    g = build_graph(tmp_path)
    assert g.has_node("Titan") and g.has_edge("Saturn", "Titan") and g.has_edge("Titan", "Saturn")
    assert g.node_degree("Saturn") == 3 and g.edge_degree("Titan", "Saturn") == 4
    assert g.get_node("Titan")["description"] == "About Titan" and g.get_node("Pluto") is None
    assert g.get_edge("Saturn", "Voyager 1")["keywords"] == "orbit"
    assert sorted(g.get_node_edges("Voyager 1")) == [("Voyager 1", "Jupiter"), ("Voyager 1", "Saturn")]
    assert set(g.get_nodes_batch(["Titan", "Pluto"])) == {"Titan"}
    assert g.node_degrees_batch(["Saturn", "Pluto"]) == {"Saturn": 3, "Pluto": 0}
    assert set(g.get_edges_batch([("Saturn", "Titan"), ("Titan", "Jupiter")])) == {("Saturn", "Titan")}
    assert g.get_all_labels() == sorted(["Saturn", "Titan", "Voyager 1", "Jupiter", "Enceladus"])
    assert g.search_labels("sat") == ["Saturn"] and g.get_popular_labels(1) == ["Saturn"]
    g.upsert_node("Titan", {"description": "Largest moon"})
    assert g.get_node("Titan") == {"entity_type": "thing", "description": "Largest moon"}
    g.remove_edges([("Saturn", "Enceladus")])
    g.delete_node("Jupiter")
    assert not g.has_edge("Saturn", "Enceladus") and not g.has_edge("Voyager 1", "Jupiter")
    with pytest.raises(TypeError, match="GraphML"):
        g.upsert_node("Bad", {"tags": ["a", "b"]})


def test_graph_persistence_subgraph_and_export(tmp_path):
    g = build_graph(tmp_path)
    g.index_done_callback()
    again = NetworkXGraphStorage(namespace="kg", working_dir=str(tmp_path))
    assert again.get_edge("Titan", "Saturn")["weight"] == 1.0
    star = again.get_knowledge_graph("*", max_nodes=2)
    assert star.is_truncated and {n["id"] for n in star.nodes} == {"Saturn", "Voyager 1"}
    bfs = again.get_knowledge_graph("Titan", max_depth=1)
    assert {n["id"] for n in bfs.nodes} == {"Titan", "Saturn"} and len(bfs.edges) == 1
    assert len(again.get_knowledge_graph("Titan", max_depth=3).nodes) == 5
    assert again.get_knowledge_graph("Pluto").nodes == []
    again.export(str(tmp_path / "out.json"), format="json")
    data = json.loads((tmp_path / "out.json").read_text())
    assert len(data["nodes"]) == 5 and len(data["edges"]) == 4
    again.export(str(tmp_path / "kg.csv"), format="csv")
    assert (tmp_path / "kg_entities.csv").read_text().startswith("id,")
    assert len((tmp_path / "kg_relations.csv").read_text().splitlines()) == 5
    with pytest.raises(ValueError, match="unknown export format"):
        again.export(str(tmp_path / "x"), format="xlsx")
