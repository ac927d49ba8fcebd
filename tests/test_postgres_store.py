"""The PostgreSQL backend behind the store interface, against a REAL server started here.

``tests/pg_server.py`` runs Debian's ``initdb`` + ``pg_ctl`` on a temporary directory (loopback
only); the tests skip, saying why, only where those binaries (or psycopg) are missing. Every test
uses its own workspace, i.e. its own schema, on the one server of this module.
"""

import json
import multiprocessing
import os
import signal
import time
import uuid

import pytest
import yaml
from graph_fakes import extraction_reply, the_answer
from pg_server import PostgresServer, skip_reason
from store_state import store_state
from store_worker import operate

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.model_client import ScriptedClient
from lightrag.components.storage.postgres_db import PostgresDatabase, schema_for, to_pyformat
from lightrag.components.storage.sql_db import StoreLockedError
from lightrag.core import Embedder, Generator
from lightrag.utils import build

DSN_ENV = "LIGHTRAG_TEST_PG_DSN"
DOCS = {
    "voyager.md": "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
                  "Voyager 1 photographed Titan, the largest moon of Saturn.",
    "cassini.md": "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
                  "Titan in 2005. Cassini found plumes on Enceladus.",
    "apollo.md": "Apollo 11 landed on the Moon in 1969. Neil Armstrong and Buzz Aldrin walked on "
                 "the Moon. Michael Collins stayed in orbit.",
}
SKIP = skip_reason()
needs_server = pytest.mark.skipif(SKIP is not None, reason=f"no PostgreSQL server: {SKIP}")


@pytest.fixture(scope="module")
def pg():
    if SKIP is not None:
        pytest.skip(f"no PostgreSQL server: {SKIP}")
    server = PostgresServer.start()
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
def workspace(pg):
    return f"t_{uuid.uuid4().hex[:10]}"


def make_rag(tmp_path, workspace, **kwargs):
    kwargs.setdefault("storage", "postgres")
    kwargs.setdefault("storage_kwargs", {"dsn_env": DSN_ENV} if kwargs["storage"] == "postgres" else {})
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(
            generator=Generator(model_client=ScriptedClient(response_fn=extraction_reply)),
            max_gleaning=1),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path),
        workspace=workspace,
        cosine_threshold=0.05,
        **kwargs,
    )


def open_db(workspace, **kwargs):
    return PostgresDatabase(dsn_env=DSN_ENV, workspace=workspace, **kwargs)


# ----------------------------------------------------------------- no server needed
def test_placeholders_become_pyformat_outside_quotes_and_comments():
    assert to_pyformat("SELECT v FROM kv WHERE ns = ? AND id IN (?,?)") == \
        "SELECT v FROM kv WHERE ns = %s AND id IN (%s,%s)"
    assert to_pyformat("SELECT '?', \"a?b\", ? -- what?\n, ? /* ? 5% */") == \
        "SELECT '?', \"a?b\", %s -- what?\n, %s /* ? 5%% */"
    assert to_pyformat("SELECT 5 % 2, 'it''s 100%', ?") == "SELECT 5 %% 2, 'it''s 100%%', %s"


def test_workspace_schemas_are_distinct_valid_identifiers():
    names = ["", "a", "A", "team-a", "team_a", "Team A", "x" * 80, "x" * 81, "é"]
    schemas = [schema_for(n) for n in names]
    assert len(set(schemas)) == len(names)
    assert schema_for("") == "lightrag" and schema_for("team_a") == "lightrag_team_a"
    for schema in schemas:
        assert len(schema.encode()) <= 63 and schema.replace("_", "").isalnum() and schema.islower()


def test_connection_errors_name_the_problem_without_secrets(monkeypatch):
    pytest.importorskip("psycopg")
    for name in ("LIGHTRAG_PG_DSN", "PGHOST", "PGSERVICE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="LIGHTRAG_PG_DSN"):
        PostgresDatabase()
    with pytest.raises(ValueError, match="MY_DSN"):
        PostgresDatabase(dsn_env="MY_DSN")
    monkeypatch.setenv("MY_DSN", "postgresql://u:hunter2@127.0.0.1/db?no_such_option=1")
    with pytest.raises(ValueError, match=r"\$MY_DSN is not a valid") as bad:
        PostgresDatabase(dsn_env="MY_DSN")
    assert "hunter2" not in str(bad.value)
    from pg_server import _free_port

    port = _free_port()  # nothing listens there
    monkeypatch.setenv("MY_DSN", f"postgresql://u:hunter2@127.0.0.1:{port}/db")
    expected = f"cannot connect to the PostgreSQL store u@127.0.0.1:{port}/db"
    with pytest.raises(ConnectionError, match=expected) as down:
        PostgresDatabase(dsn_env="MY_DSN", connect_timeout=2)
    assert "hunter2" not in str(down.value)


def test_a_config_never_holds_the_database_password():
    for dsn in ("postgresql://u:hunter2@db/rag", "host=db password=hunter2"):
        with pytest.raises(ValueError, match="storage_kwargs.dsn.*secrets are not read from configs"):
            build({"component_name": "GraphRAG", "component_config": {
                "storage": "postgres", "storage_kwargs": {"dsn": dsn}}})


# ------------------------------------------------------------------ a real server
@needs_server
def test_graph_rag_on_postgres_inserts_queries_deletes(tmp_path, workspace):
    rag = make_rag(tmp_path, workspace)
    result = rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    assert len(result.processed) == 3 and not result.failed
    assert rag.graph.has_edge("Voyager 1", "Jupiter")
    status = rag.status()
    assert status["documents"]["processed"] == 3 and status["chunks"] == result.chunks
    assert rag.index.verify() == []
    for mode in ["naive", "local", "global", "hybrid", "mix"]:
        answer = rag.query("Which moon of Saturn was photographed by Voyager 1?", mode=mode)
        assert answer.content == "The answer." and answer.raw_data["chunks"], mode
    again = rag.insert(list(DOCS.values()))
    assert len(again.skipped) == 3
    assert sorted(path for _, path in rag.doc_status.file_paths()) == sorted(DOCS)
    listed = rag.doc_status.listing("processed")
    assert sorted(r["file_path"] for r in listed) == sorted(DOCS)
    assert all(r["chunks_count"] >= 1 and r["content_length"] > 0 for r in listed)
    newest = rag.doc_status.get_docs_paginated(page=1, page_size=2, status="processed")
    assert len(newest) == 2 and newest[0][1].updated_at >= newest[1][1].updated_at

    voyager_id = result.doc_ids[0]
    deletion = rag.delete_by_doc_id(voyager_id)
    assert "Voyager 1" in deletion.entities_deleted and not rag.graph.has_node("Voyager 1")
    assert "voyager.md" not in rag.graph.get_node("Titan")["file_path"]
    assert rag.index.verify() == []

    # a new instance (as after a restart), built from its YAML config
    text = yaml.safe_dump(rag.to_config())
    assert "storage: postgres" in text and f"dsn_env: {DSN_ENV}" in text
    reopened = GraphRAG.from_yaml(text)
    assert reopened.index.db.schema == schema_for(workspace)
    assert not reopened.graph.has_node("Voyager 1") and reopened.graph.has_node("Titan")
    assert reopened.status()["documents"]["processed"] == 2
    assert len(reopened.chunks_vdb) == len(rag.chunks_vdb) > 0
    hit = reopened.chunks_vdb.query("Cassini reached Saturn", top_k=1)[0]
    assert hit["file_path"] == "cassini.md"
    assert not list(tmp_path.iterdir())  # nothing written to the working directory


@needs_server
def test_reader_instance_sees_the_writers_commits(tmp_path, workspace):
    reader = make_rag(tmp_path, workspace)
    writer = make_rag(tmp_path, workspace)
    result = writer.insert(DOCS["cassini.md"], file_paths="cassini.md")
    assert reader.graph.has_node("Huygens")  # the graph is read by key: no refresh needed
    assert reader.index.refresh() is True  # the vectors (in memory on PostgreSQL) catch up
    assert reader.index.refresh() is False
    writer.insert(DOCS["apollo.md"], file_paths="apollo.md")
    answer = reader.query("Apollo 11 Moon", mode="local")  # a query refreshes first
    assert "apollo.md" in [c["file_path"] for c in answer.raw_data["chunks"]]
    writer.delete_by_doc_id(result.doc_ids[0])
    reader.index.refresh()
    assert not reader.graph.has_node("Huygens")
    assert all(h["file_path"] != "cassini.md" for h in reader.chunks_vdb.query("Cassini Saturn", 10))
    assert reader.index.verify() == []


@needs_server
def test_workspaces_are_isolated(tmp_path, workspace):
    other = workspace + "_other"
    a = make_rag(tmp_path, workspace)
    a.insert(DOCS["voyager.md"], file_paths="voyager.md")
    b = make_rag(tmp_path, other)
    assert b.status()["documents"]["processed"] == 0 and b.graph.node_count() == 0
    b.insert(DOCS["apollo.md"], file_paths="apollo.md")
    a.index.refresh()
    assert not a.graph.has_node("Apollo 11") and not b.graph.has_node("Voyager 1")
    db = open_db(workspace)
    tables = {r[0] for r in db.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", (db.schema,))}
    assert {"kv", "doc_status", "nodes", "edges", "vectors", "changes", "meta"} <= tables
    assert db.query("SELECT COUNT(*) FROM doc_status")[0][0] == 1
    db.close()


@needs_server
def test_writer_lock_waits_then_refuses_clearly(pg, tmp_path, workspace):
    holder = open_db(workspace)
    waiter = open_db(workspace, lock_timeout=0.3)
    # a server-side statement_timeout shorter than lock_timeout does not cut the wait short
    strict = PostgresDatabase(dsn=pg.dsn + "?options=-c%20statement_timeout%3D50",
                              workspace=workspace, lock_timeout=0.3)
    impatient = open_db(workspace, lock_timeout=0)
    rag = make_rag(tmp_path, workspace, lock_timeout=0.3)
    with holder.transaction():
        holder.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)")
        started = time.monotonic()
        with pytest.raises(StoreLockedError, match="is being written by another process.*lock_timeout=0.3"):
            with waiter.transaction():
                pass
        assert 0.25 < time.monotonic() - started < 5
        with pytest.raises(StoreLockedError, match="lock_timeout=0.3"):
            strict.execute("INSERT INTO t VALUES (?, ?)", ("k", "v"))
        with pytest.raises(StoreLockedError, match="schema " + schema_for(workspace)):
            impatient.execute("INSERT INTO t VALUES (?, ?)", ("k", "v"))
        with pytest.raises(StoreLockedError):
            rag.insert(DOCS["apollo.md"])
    with waiter.transaction():  # free again, and the refused connections still work
        waiter.execute("INSERT INTO t VALUES (?, ?)", ("k", "it's 100% ?"))
    assert impatient.query("SELECT v FROM t WHERE k = ?", ("k",)) == [("it's 100% ?",)]
    assert strict.query("SHOW statement_timeout") == [("50ms",)]
    assert rag.insert(DOCS["apollo.md"]).processed


@needs_server
def test_rollback_and_lost_connection(workspace):
    db = open_db(workspace)
    db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v BYTEA)")
    with pytest.raises(RuntimeError):
        with db.transaction():
            db.execute("INSERT INTO t VALUES (?, ?)", ("a", b"\x00\xff"))
            raise RuntimeError("boom")
    assert db.query("SELECT COUNT(*) FROM t") == [(0,)]
    db.executemany("INSERT INTO t VALUES (?, ?)", [("a", b"\x00\xff"), ("b", b"")])
    killer = open_db(workspace)
    killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE application_name = 'lightrag' AND pid <> pg_backend_pid()")
    assert sorted((k, bytes(v)) for k, v in db.query("SELECT k, v FROM t")) == \
        [("a", b"\x00\xff"), ("b", b"")]
    db.execute("DELETE FROM t WHERE k = ?", ("b",))  # writes work on the new connection too
    assert killer.query("SELECT k FROM t") == [("a",)]


def _hold_lock_then_hang(dsn: str, workspace: str, ready) -> None:
    os.environ[DSN_ENV] = dsn
    db = open_db(workspace)
    db._begin()  # the writer lock, held until this process dies
    db._conn.execute("INSERT INTO t VALUES ('uncommitted', NULL)")
    ready.set()
    time.sleep(120)


@needs_server
def test_a_killed_writer_releases_the_lock_and_its_writes(pg, workspace):
    db = open_db(workspace, lock_timeout=30)
    db.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v BYTEA)")
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    child = ctx.Process(target=_hold_lock_then_hang, args=(pg.dsn, workspace, ready))
    child.start()
    try:
        assert ready.wait(60), "the child never took the lock"
        with pytest.raises(StoreLockedError):
            open_db(workspace, lock_timeout=0).execute("DELETE FROM t")
        os.kill(child.pid, signal.SIGKILL)
        with db.transaction():  # waits for the server to notice the dead session
            db.execute("INSERT INTO t VALUES (?, ?)", ("after", None))
    finally:
        child.kill()
        child.join(10)
    assert db.query("SELECT k FROM t") == [("after",)]


def _insert_worker(dsn: str, workspace: str, tmp: str, docs: dict, go, done) -> None:
    os.environ[DSN_ENV] = dsn
    from pathlib import Path

    rag = make_rag(Path(tmp), workspace)
    go.wait(60)
    for path, text in docs.items():
        result = rag.insert(text, file_paths=path)
        if result.failed or not (result.processed or result.skipped):  # skipped: done by the other
            done.put(("failed", path, str(result.failed)))
            return
    done.put(("ok", len(docs), ""))


def _docs(worker: int, n: int) -> dict:
    return {f"w{worker}-{i}.md": f"Probe W{worker}x{i} reached Saturn in {1900 + i}. "
                                 f"Probe W{worker}x{i} photographed Titan and Mimas."
            for i in range(n)}


@needs_server
def test_two_processes_insert_at_once_and_lose_nothing(pg, tmp_path, workspace):
    """Two processes (two servers, say) insert 6 documents each plus the same 3 (a shared
    backlog) at the same time: every document is there once, hubs merged by both hold all."""
    per_worker = 6
    shared = {f"shared-{i}.md": f"Lander L{i} touched Saturn in {2000 + i}. Lander L{i} saw Titan."
              for i in range(3)}
    make_rag(tmp_path, workspace)  # create the tables once, so both start inserting at once
    ctx = multiprocessing.get_context("spawn")
    go, done = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=_insert_worker, args=(
        pg.dsn, workspace, str(tmp_path), {**shared, **_docs(w, per_worker)}, go, done))
        for w in range(2)]
    for worker in workers:
        worker.start()
    try:
        go.set()
        results = [done.get(timeout=240) for _ in workers]
    finally:
        for worker in workers:
            worker.join(30)
            if worker.is_alive():
                worker.kill()
    assert results == [("ok", per_worker + 3, "")] * 2
    rag = make_rag(tmp_path, workspace)
    assert rag.status()["documents"]["processed"] == 2 * per_worker + 3
    assert rag.index.verify() == []
    expected = {*shared, *(p for w in range(2) for p in _docs(w, per_worker))}
    saturn = rag.graph.get_node("Saturn")  # merged by both writers: no update lost, none twice
    paths = saturn["file_path"].split("<SEP>")
    assert set(paths) == expected and len(paths) == len(expected)
    chunks = saturn["source_id"].split("<SEP>")
    assert len(chunks) == len(set(chunks)) == len(expected)
    for w in range(2):
        for i in range(per_worker):
            assert rag.graph.has_edge(f"Probe W{w}x{i}", "Saturn")
    lander = rag.graph.get_node("Lander L1")["description"].split("<SEP>")
    assert len(lander) == len(set(lander))


# --------------------------------------------------- SIGKILL at random moments (as test_store_crash)
def _crash_rag(workspace):
    from store_worker import make_rag as make_worker_rag

    return make_worker_rag("unused", storage="postgres", storage_kwargs={"dsn_env": DSN_ENV},
                           workspace=workspace, insert_batch_size=2, vector_flush_size=8,
                           lock_timeout=60)


def _operate_in_child(dsn, workspace, op, args, ready):
    os.environ[DSN_ENV] = dsn
    rag = _crash_rag(workspace)
    rag.chunker("warm-up", "Load the tokenizer before the clock starts.", "")
    ready.set()
    operate(rag, op, args)
    time.sleep(60)  # the parent kills this process


def _snapshot(workspace):
    rag = _crash_rag(workspace)
    try:
        return store_state(rag)
    finally:
        rag.index.close()


@needs_server
@pytest.mark.parametrize("op, args, base_docs", [
    ("insert", (0, 16), 0),
    ("delete", ("doc-0001", "doc-0004", "doc-0007"), 10),
    ("merge", ("Gas Giants", "Jupiter", "Saturn"), 10),
])
def test_a_killed_operation_leaves_a_consistent_store_that_resumes(pg, workspace, op, args,
                                                                   base_docs):
    """SIGKILL a process at a random moment of insert / delete / merge on PostgreSQL: the store
    is consistent at once, and running the operation again gives the uninterrupted result."""
    import random

    def prepared(name):
        rag = _crash_rag(name)
        if base_docs:
            operate(rag, "insert", (0, base_docs))
        return rag

    reference = prepared(workspace + "_ref")
    started = time.monotonic()
    operate(reference, op, args)
    duration = time.monotonic() - started
    expected = _snapshot(workspace + "_ref")
    ctx = multiprocessing.get_context("spawn")
    rng = random.Random(op)
    for trial in range(2):
        name = f"{workspace}_k{trial}"
        prepared(name).index.close()
        ready = ctx.Event()
        child = ctx.Process(target=_operate_in_child, args=(pg.dsn, name, op, args, ready))
        child.start()
        try:
            assert ready.wait(60), "the child never opened the store"
            time.sleep(rng.uniform(0.1, 0.9) * duration)
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.join(30)
        _snapshot(name)  # consistent right after the kill
        operate(_crash_rag(name), op, args)
        assert _snapshot(name) == expected, f"{op} trial {trial}"
    if op == "delete":
        assert not set(args) & set(expected["status"])
    elif op == "merge":
        assert "Gas Giants" in expected["nodes"] and "Saturn" not in expected["nodes"]


@needs_server
def test_copy_a_sqlite_store_into_postgres_and_back(tmp_path, workspace):
    from lightrag.components.graph_rag.index.copy import copy_store
    from lightrag.components.storage.sql_db import SQLiteDatabase

    local = make_rag(tmp_path / "local", "", storage="sqlite")
    local.insert(list(DOCS.values()), file_paths=list(DOCS))
    expected = store_state(local)
    copied = copy_store(local.index.db, open_db(workspace), batch_size=7)
    assert copied["doc_status"] == 3 and copied["nodes"] == len(expected["nodes"])
    for table in ("kv", "vectors", "edges"):
        assert copied[table] == local.index.db.query(f"SELECT COUNT(*) FROM {table}")[0][0] > 0
    shared = make_rag(tmp_path, workspace)
    assert store_state(shared) == expected
    question = "Which moon of Saturn was photographed by Voyager 1?"
    assert shared.query(question, mode="mix", only_need_context=True).content == \
        local.query(question, mode="mix", only_need_context=True).content
    with pytest.raises(ValueError, match="already holds rows .*doc_status: 3"):
        copy_store(local.index.db, open_db(workspace))
    shared.insert("Pioneer 10 flew past Jupiter in 1973.", file_paths="pioneer.md")
    copy_store(shared.index.db, SQLiteDatabase(tmp_path / "back" / "lightrag.sqlite3"))
    back = make_rag(tmp_path / "back", "", storage="sqlite")
    assert store_state(back) == store_state(shared) and back.graph.has_node("Pioneer 10")


@needs_server
def test_synonym_pairs_of_an_older_postgres_store_move_to_rows(tmp_path, workspace):
    rag = make_rag(tmp_path, workspace, synonym_threshold=0.99)
    rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    a, b = sorted(n["id"] for n in rag.graph.get_all_nodes())[:2]
    db = rag.index.db
    with rag.index.writing_sync():  # the layout of an older store: a JSON record per pair in kv
        rag.index.stores.synonyms.drop()
        db.executemany("INSERT INTO kv (ns, id, value) VALUES (?, ?, ?)",
                       [("entity_synonyms", f"{a}\x1f{b}", '{"score": 0.97}'),
                        ("entity_synonyms_by_name", a, json.dumps({"with": [b]}))])
    rag.close()
    reopened = make_rag(tmp_path, workspace, synonym_threshold=0.99)
    assert reopened.index.stores.synonyms.pairs() == [(a, b, 0.97)]
    assert not reopened.index.db.query("SELECT 1 FROM kv WHERE ns LIKE 'entity_synonyms%'")
    assert reopened.index.verify() == []


@needs_server
def test_vectors_in_memory_without_pgvector_and_pgvector_true_refused(tmp_path, workspace):
    """This module's server is Debian's: without its pgvector package the vector stores load
    into memory (today's behaviour); ``pgvector=True`` names what is missing."""
    from lightrag.components.storage.sql_vector import SQLVectorStorage

    db = open_db(workspace)
    if db.vector_extension() is not None:
        pytest.skip("this server has pgvector (tests/test_pgvector_store.py covers it)")
    assert type(SQLVectorStorage(db, namespace="chunks")) is SQLVectorStorage
    with pytest.raises(ValueError, match="pgvector=True but the server has no pgvector extension"):
        make_rag(tmp_path, workspace, storage_kwargs={"dsn_env": DSN_ENV, "pgvector": True})


def test_a_pass_reads_one_committed_state_while_another_writer_commits(workspace):
    """``snapshot()`` on PostgreSQL: the pass's batches come from one ``REPEATABLE READ``
    transaction on a connection of its own; a commit made meanwhile is seen after the block,
    and the database's own connection stays free for its writer."""
    from lightrag.components.storage.sql_kv import SQLKVStorage

    db, writer = open_db(workspace), open_db(workspace)
    kv = SQLKVStorage(db, namespace="x")
    kv.upsert({f"k{i:02d}": {"v": i} for i in range(10)})
    with db.snapshot():
        seen = [k for k, _ in kv.iter_items(batch=3)][:4]
        SQLKVStorage(writer, namespace="x").upsert({"k00a": {"v": "new"}, "k99": {"v": "new"}})
        kv.upsert({"k00b": {"v": "own"}})  # this object's writer is not held up by the pass
        seen += [k for k, _ in kv.iter_items(batch=3)][4:]
        assert seen == [f"k{i:02d}" for i in range(10)]
    assert len(list(kv.iter_items(batch=3))) == 13
    writer.close()
    db.close()
