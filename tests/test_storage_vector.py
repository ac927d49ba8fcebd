"""NumpyVectorStorage: search, threshold, top-k, deletes, overwrite, dimensions, persistence."""

import os

import numpy as np
import pytest

from lightrag.components.model_client import ScriptedClient
from lightrag.components.storage import BaseVectorStorage, NumpyVectorStorage
from lightrag.core import Embedder


def embedder(dim=64):
    return Embedder(model_client=ScriptedClient(embedding_dim=dim))


def store(tmp_path, namespace="v", **kwargs):
    return NumpyVectorStorage(namespace=namespace, working_dir=str(tmp_path), **kwargs)


TEXTS = {
    "seal": {"content": "grey seals live in colonies near Halifax", "file_path": "a.md", "x": 1},
    "bridge": {"content": "the suspension bridge spans the wide river", "file_path": "b.md"},
    "drone": {"content": "thermal drones count penguin nests at night", "file_path": "c.md"},
}


def test_bag_of_words_embedder_finds_the_matching_text(tmp_path):
    s = store(tmp_path, embedder=embedder(), cosine_threshold=0.1, meta_fields=["file_path"],
              embedding_batch_size=2)
    s.upsert(TEXTS)
    hits = s.query("where do grey seals live", top_k=3)
    assert hits[0]["id"] == "seal" and hits[0]["file_path"] == "a.md"
    assert hits[0]["content"] == TEXTS["seal"]["content"] and "x" not in hits[0]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert s.query("bridge over a river", top_k=1)[0]["id"] == "bridge"
    assert s.get_by_id("drone") == {"id": "drone", "content": TEXTS["drone"]["content"], "file_path": "c.md"}
    assert s.get_by_ids(["seal", "nope"])[1] is None
    assert isinstance(s, BaseVectorStorage) and "cosine_threshold=0.1" in repr(s)


async def test_async_upsert_and_embed(tmp_path):
    s = store(tmp_path, embedder=embedder(), cosine_threshold=0.1)
    await s.aupsert(TEXTS)
    matrix = await s.aembed(["grey seals Halifax", "penguin nests"])
    assert matrix.dtype == np.float32 and matrix.shape == (2, 64)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-5)
    assert [hits[0]["id"] for hits in s.query_batch(matrix, top_k=1)] == ["seal", "drone"]


def test_threshold_top_k_filter_and_batch(tmp_path):
    s = store(tmp_path, cosine_threshold=-1.0)
    vectors = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    s.upsert({f"id{i}": {"content": str(i)} for i in range(50)}, vectors=vectors)
    assert len(s.query(vectors[3], top_k=100)) == 50 and s.query(vectors[3], top_k=0) == []
    top5 = s.query(vectors[3], top_k=5)
    assert len(top5) == 5 and top5[0]["id"] == "id3" and top5[0]["score"] == pytest.approx(1.0)
    every = s.query(vectors[3], top_k=50)
    assert [h["id"] for h in every[:5]] == [h["id"] for h in top5]
    filtered = s.query(vectors[3], top_k=5, ids_filter={"id7", "id9", "ghost"})
    assert {h["id"] for h in filtered} == {"id7", "id9"}
    assert filtered[0]["score"] >= filtered[1]["score"]
    wide = {f"id{i}" for i in range(40)}
    assert s.query(vectors[3], top_k=3, ids_filter=wide) == [h for h in every if h["id"] in wide][:3]
    assert s.query(vectors[3], top_k=3, ids_filter=set()) == []
    batch = s.query_batch(vectors[[1, 2, 3]], top_k=2)
    assert [b[0]["id"] for b in batch] == ["id1", "id2", "id3"]
    assert [h["id"] for h in batch[2]] == [h["id"] for h in top5[:2]]
    assert batch[2][1]["score"] == pytest.approx(top5[1]["score"], abs=1e-6)
    strict = store(tmp_path, "w", cosine_threshold=0.99)
    strict.upsert({"a": {"content": ""}, "b": {"content": ""}}, vectors=np.array([[1.0, 0.0], [0.7, 0.7]]))
    assert strict.query(np.array([0.0, 1.0]), top_k=2) == []
    assert [h["id"] for h in strict.query(np.array([2.0, 0.0]), top_k=2)] == ["a"]


def test_upsert_overwrites_and_deletes_swap_rows(tmp_path):
    s = store(tmp_path, cosine_threshold=-1)
    eye = np.eye(100, dtype=np.float32)
    for i in range(100):  # one at a time: the matrix grows by doubling
        s.upsert({f"k{i}": {"content": f"c{i}"}}, vectors=eye[i:i + 1])
    assert len(s) == 100 and s.query(eye[57], top_k=1)[0]["id"] == "k57"
    s.upsert({"k57": {"content": "moved"}}, vectors=eye[3:4])
    assert len(s) == 100 and s.get_by_id("k57")["content"] == "moved"
    assert {h["id"] for h in s.query(eye[3], top_k=2)} == {"k3", "k57"}
    s.delete([f"k{i}" for i in range(0, 100, 2)] + ["ghost"])
    assert len(s) == 50 and s.get_by_id("k0") is None and "k1" in s
    assert s.query(eye[99], top_k=1)[0]["id"] == "k99"  # the last row was moved, not lost
    vecs = s.get_vectors_by_ids(["k99", "k0", "k57"])
    assert set(vecs) == {"k99", "k57"} and vecs["k99"].dtype == np.float32
    np.testing.assert_allclose(vecs["k57"], eye[3])
    assert {h["id"] for h in s.query(eye[1], top_k=50)} == {f"k{i}" for i in range(1, 100, 2)}


def test_persistence_round_trip(tmp_path):
    s = store(tmp_path, "chunks", embedder=embedder(), meta_fields=["file_path"])
    s.upsert(TEXTS)
    s.delete(["bridge"])
    s.index_done_callback()
    assert s.file_path.name == "vdb_chunks.npz"
    with np.load(s.file_path, allow_pickle=False) as data:  # no pickled objects inside
        assert data["matrix"].dtype == np.float32 and int(data["dim"]) == 64
    again = store(tmp_path, "chunks", embedder=embedder(), meta_fields=["file_path"])
    assert len(again) == 2 and again.dimension == 64 and again.get_by_id("drone")["file_path"] == "c.md"
    np.testing.assert_array_equal(again.get_vectors_by_ids(["seal"])["seal"],
                                  s.get_vectors_by_ids(["seal"])["seal"])
    assert again.query("grey seals", top_k=1)[0]["id"] == "seal"
    again.upsert({"new": {"content": "fresh text"}})  # appending after a load grows the matrix
    assert len(again) == 3
    again.drop()
    assert len(again) == 0 and not again.file_path.exists()
    other = store(tmp_path, "chunks", workspace="tenant")
    assert len(other) == 0


def test_dimension_mismatch_and_missing_embedder(tmp_path):
    s = store(tmp_path)
    s.upsert({"a": {"content": "x"}}, vectors=np.ones((1, 4)))
    with pytest.raises(ValueError, match="4-d vectors but got 3-d"):
        s.upsert({"b": {"content": "y"}}, vectors=np.ones((1, 3)))
    with pytest.raises(ValueError, match="4-d vectors but the query has 5-d"):
        s.query(np.ones(5), top_k=1)
    with pytest.raises(ValueError, match="4-d vectors but the queries have 2-d"):
        s.query_batch(np.ones((2, 2)), top_k=1)
    with pytest.raises(ValueError, match="no embedder"):
        s.query("text", top_k=1)
    with pytest.raises(ValueError, match="2 vectors for 1 records"):
        s.upsert({"c": {"content": "z"}}, vectors=np.ones((2, 4)))
    with pytest.raises(TypeError, match="JSON-serialisable"):
        s.upsert({"c": {"content": {1, 2}}}, vectors=np.ones((1, 4)))
    assert store(tmp_path, "empty").query(np.ones(4), 3) == []
    s.index_done_callback()
    with pytest.raises(ValueError, match="holds 4-d vectors but the embedder makes 64-d"):
        store(tmp_path, embedding_dim=64)
    switched = store(tmp_path, embedder=embedder(64))  # a new model, dimension unknown up front
    with pytest.raises(ValueError, match="4-d vectors but got 64-d"):
        switched.upsert({"d": {"content": "words"}})
    with pytest.raises(ValueError, match="cosine_threshold"):
        store(tmp_path, "t", cosine_threshold=2.0)


def test_crash_during_flush_and_corrupt_file(tmp_path, monkeypatch):
    s = store(tmp_path)
    s.upsert({"a": {"content": "x"}}, vectors=np.ones((1, 4)))
    s.index_done_callback()
    s.upsert({"b": {"content": "y"}}, vectors=np.ones((1, 4)))

    def power_cut(src, dst):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        s.index_done_callback()
    monkeypatch.undo()
    assert len(store(tmp_path)) == 1 and [p.name for p in tmp_path.iterdir()] == ["vdb_v.npz"]
    (tmp_path / "vdb_bad.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="vdb_bad.npz"):
        store(tmp_path, "bad")
