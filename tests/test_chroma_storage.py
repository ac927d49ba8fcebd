"""ChromaVectorStorage against a real embedded Chroma, a real ``chroma run`` server on loopback,
and inside GraphRAG."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("chromadb")

from graph_fakes import extraction_reply, the_answer  # noqa: E402

from lightrag.components.graph_rag import Chunker, EntityExtractor, GraphRAG  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.components.storage import NumpyVectorStorage  # noqa: E402
from lightrag.components.storage.chroma_vector import (  # noqa: E402
    ChromaVectorStorage,
    collection_name,
)
from lightrag.core import Embedder, Generator  # noqa: E402

TEXTS = {
    "seal": "grey seals rest on the rocks of Halifax harbour",
    "bridge": "old stone bridges cross the rivers of Prague",
    "ship": "container ships leave Halifax harbour at dawn",
    "bake": "sourdough bread needs a long slow rise",
}


def embedder():
    return Embedder(model_client=ScriptedClient(embedding_dim=128))


def records():
    return {k: {"content": v, "topic": k, "rank": i} for i, (k, v) in enumerate(TEXTS.items())}


def make_store(tmp_path, **kwargs):
    return ChromaVectorStorage(namespace="chunks", embedder=embedder(), working_dir=str(tmp_path),
                               meta_fields=["topic", "rank", "tags"], cosine_threshold=0.05, **kwargs)


def test_collection_names_are_valid():
    assert collection_name("lightrag", "", "chunks") == "lightrag_chunks"
    assert collection_name("", "", "ab") == "lr_ab_vdb"
    assert collection_name("p", "w..x", "ns-") == "p_w.x_ns"


def test_matches_numpy_store_and_threshold(tmp_path):
    chroma = make_store(tmp_path)
    numpy = NumpyVectorStorage(namespace="chunks", embedder=embedder(), working_dir=str(tmp_path),
                               meta_fields=["topic", "rank"], cosine_threshold=0.05)
    chroma.upsert(records())
    numpy.upsert(records())
    assert len(chroma) == 4 and (tmp_path / "chroma").is_dir()
    for question in ["Halifax harbour seals", "bridges in Prague", "slow bread"]:
        ours, ref = chroma.query(question, top_k=3), numpy.query(question, top_k=3)
        assert [h["id"] for h in ours] == [h["id"] for h in ref], question
        assert np.allclose([h["score"] for h in ours], [h["score"] for h in ref], atol=1e-4)
        assert ours[0]["content"] == TEXTS[ours[0]["id"]] and ours[0]["topic"] == ours[0]["id"]
    chroma.cosine_threshold = 0.99
    assert chroma.query("Halifax harbour seals", top_k=3) == []
    assert chroma.query("anything", top_k=0) == []


def test_filter_batch_delete_get_and_vectors(tmp_path):
    store = make_store(tmp_path)
    store.upsert(records())
    hits = store.query("Halifax harbour", top_k=4, ids_filter={"ship", "bake"})
    assert {h["id"] for h in hits} <= {"ship", "bake"} and hits[0]["id"] == "ship"
    assert store.query("Halifax", top_k=4, ids_filter=set()) == []
    batch = store.query_batch(store.embed(["Halifax seals", "Prague bridges"]), top_k=1)
    assert [b[0]["id"] for b in batch] == ["seal", "bridge"]
    vectors = store.get_vectors_by_ids(["seal", "missing"])
    assert list(vectors) == ["seal"] and vectors["seal"].dtype == np.float32
    assert np.allclose(vectors["seal"], store.embed([TEXTS["seal"]])[0], atol=1e-5)
    assert store.get_by_id("bridge") == {"id": "bridge", "content": TEXTS["bridge"],
                                         "topic": "bridge", "rank": 1}
    assert store.get_by_ids(["nope", "bake"])[0] is None
    store.delete(["seal", "seal", "missing"])
    assert len(store) == 3 and store.get_by_id("seal") is None
    assert "seal" not in {h["id"] for h in store.query("grey seals", top_k=4)}


def test_metadata_coercion_replace_and_persistence(tmp_path, caplog):
    store = make_store(tmp_path)
    with caplog.at_level("WARNING"):
        store.upsert({"a": {"content": "alpha text", "topic": "x", "rank": np.int64(3),
                            "tags": ["t1", "t2"], "ignored": "not a meta field"}})
    assert "stored as JSON text" in caplog.text
    record = store.get_by_id("a")
    assert record == {"id": "a", "content": "alpha text", "topic": "x", "rank": 3, "tags": ["t1", "t2"]}
    store.upsert({"a": {"content": "alpha again", "topic": "y"}})  # replaces: rank and tags go
    assert store.get_by_id("a") == {"id": "a", "content": "alpha again", "topic": "y"}
    reopened = make_store(tmp_path)
    assert len(reopened) == 1 and reopened.get_by_id("a")["topic"] == "y"
    with pytest.raises(ValueError, match="embedding model changed"):
        reopened.upsert({"b": {"content": "x"}}, vectors=np.ones((1, 8), np.float32))
    with pytest.raises(ValueError, match="1 vectors for 2 records"):
        reopened.upsert({"b": {"content": "x"}, "c": {"content": "y"}}, vectors=np.ones((1, 128)))
    other = make_store(tmp_path, workspace="tenant2")
    assert len(other) == 0 and other.collection_name == "lightrag_tenant2_chunks"
    reopened.drop()
    assert len(reopened) == 0 and reopened.query("alpha", top_k=2) == []
    assert "ChromaVectorStorage(" in repr(reopened) and "mode='persistent'" in repr(reopened)


def test_bad_mode_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="mode must be"):
        make_store(tmp_path, mode="cloud")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chroma_cli():
    local = Path(sys.executable).with_name("chroma")
    return str(local) if local.exists() else shutil.which("chroma")


@pytest.fixture
def chroma_server(tmp_path):
    cli = _chroma_cli()
    if cli is None:
        pytest.skip("the `chroma` command (pip install chromadb) is not installed")
    port = _free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    process = subprocess.Popen([cli, "run", "--path", str(tmp_path / "server-db"), "--host",
                                "127.0.0.1", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, "chroma run exited early"
                time.sleep(0.1)
        else:
            pytest.fail("chroma run did not start listening within 20 s")
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.subprocess
def test_http_mode_against_a_real_chroma_server(tmp_path, chroma_server):
    store = make_store(tmp_path / "client", mode="http", host="127.0.0.1", port=chroma_server)
    store.upsert(records())
    assert len(store) == 4 and not (tmp_path / "client" / "chroma").exists()
    assert store.query("Halifax harbour seals", top_k=1)[0]["id"] == "seal"
    second = make_store(tmp_path / "other", mode="http", host="127.0.0.1", port=chroma_server)
    assert len(second) == 4, "a second client sees the same collection on the server"
    second.delete(["seal"])
    assert store.get_by_id("seal") is None and len(store) == 3
    assert "mode='http'" in repr(store)


def test_unreachable_server_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"no Chroma server at 127\.0\.0\.1:\d+"):
        make_store(tmp_path, mode="http", host="127.0.0.1", port=_free_port())


@pytest.mark.subprocess
def test_graph_rag_from_yaml_on_a_chroma_server(tmp_path, chroma_server):
    import graph_fakes  # noqa: F401  (registers the fake model functions for the YAML)

    def client(**config):
        return {"component_name": "ScriptedClient", "component_config": config}

    config = {"component_name": "GraphRAG", "component_config": {
        "embedder": {"component_name": "Embedder", "component_config": {
            "model_client": client(embedding_dim=256)}},
        "extractor": {"component_name": "EntityExtractor", "component_config": {
            "generator": {"component_name": "Generator", "component_config": {
                "model_client": client(response_fn={"class": "extraction_reply"})}}}},
        "answer_generator": {"component_name": "Generator", "component_config": {
            "model_client": client(response_fn={"class": "the_answer"})}},
        "working_dir": str(tmp_path / "work"), "cosine_threshold": 0.05,
        "vector_storage": "ChromaVectorStorage",
        "vector_storage_kwargs": {"mode": "http", "host": "127.0.0.1", "port": chroma_server}}}
    rag = GraphRAG.from_yaml(yaml.safe_dump(config))
    assert isinstance(rag.index.chunks_vdb, ChromaVectorStorage) and rag.chunks_vdb.mode == "http"
    assert len(rag.insert("NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter.").processed) == 1
    assert not (tmp_path / "work" / "chroma").exists(), "the vectors live on the server"
    same_server = ChromaVectorStorage(namespace="entities", mode="http", host="127.0.0.1",
                                      port=chroma_server, working_dir=str(tmp_path / "elsewhere"))
    assert len(same_server) == rag.status()["entities"] > 0
    assert rag.query("What did Voyager 1 fly past?", mode="local").content == "The answer."


def test_graph_rag_on_chroma(tmp_path):
    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path), cosine_threshold=0.05, vector_storage="ChromaVectorStorage")
    assert isinstance(rag.index.entities_vdb, ChromaVectorStorage)
    result = rag.insert(["NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn.",
                         "The Cassini mission of NASA reached Saturn in 2004."])
    assert len(result.processed) == 2
    assert len(rag.entities_vdb) == rag.status()["entities"]
    answer = rag.query("What did Voyager 1 fly past?", mode="mix")
    assert answer.content == "The answer."
    assert answer.raw_data["chunks"] and answer.raw_data["entities"]
    assert "Voyager 1" in {e["entity_name"] for e in answer.raw_data["entities"]}
    rag.delete_by_doc_id(result.doc_ids[0])
    assert all(h["entity_name"] != "Voyager 1" for h in rag.entities_vdb.query("Voyager 1", top_k=20))
