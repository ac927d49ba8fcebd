"""Two processes on one document id (issue 26, defects 1 and 2): a re-send with new text while
the first version is processed, and a delete racing an insert. The second process
(tests/race_worker.py) indexes version 1 with a slow model; this process re-sends version 2 or
deletes the id at a random moment. Afterwards the document is fully version 2 (last write wins)
or fully gone, and the store checks clean."""

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from race_worker import make_rag, version

from lightrag.components.graph_rag.schemas import DocStatus

WORKER = Path(__file__).with_name("race_worker.py")
TRIALS = 20


def stored_chunks(rag, doc_id):
    return {cid: c for cid, c in rag.text_chunks.items() if c.get("full_doc_id") == doc_id}


def assert_fully_version_2(rag, i):
    doc_id = f"race-{i}"
    text = version(i, 2)
    status = rag.doc_status.get_by_id(doc_id)
    assert status is not None and status["status"] == DocStatus.PROCESSED.value, (i, status)
    assert rag.full_docs.get_by_id(doc_id)["content"] == text
    chunks = stored_chunks(rag, doc_id)
    assert chunks and set(chunks) == set(status["chunks_list"]), (i, status, list(chunks))
    assert all(c["content"] in text for c in chunks.values()), (i, chunks)
    entities = set(rag.index.stores.doc_graph_items.get_by_id(doc_id)["entities"])
    assert f"Probe{i}" not in entities and f"Rover{i}" in entities, (i, entities)
    assert not rag.graph.has_node(f"Probe{i}")


def assert_fully_gone(rag, i):
    doc_id = f"race-{i}"
    assert rag.doc_status.get_by_id(doc_id) is None
    assert rag.full_docs.get_by_id(doc_id) is None
    assert stored_chunks(rag, doc_id) == {}
    assert rag.index.stores.doc_graph_items.get_by_id(doc_id) is None
    assert not rag.graph.has_node(f"Probe{i}")


@pytest.mark.slow
def test_resend_and_delete_racing_another_process(tmp_path):
    rng = random.Random(26)
    worker = subprocess.Popen([sys.executable, str(WORKER), str(tmp_path), str(2 * TRIALS)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    rag = make_rag(str(tmp_path))
    try:
        for i in range(2 * TRIALS):
            assert worker.stdout.readline().strip() == f"ENQUEUED {i}"
            time.sleep(rng.uniform(0, 0.25))
            if i % 2 == 0:
                rag.insert(version(i, 2), ids=f"race-{i}")
            else:
                rag.delete_by_doc_id(f"race-{i}")
            assert worker.stdout.readline().strip() == f"DONE {i}"
            rag.index.refresh()
            if i % 2 == 0:
                assert_fully_version_2(rag, i)
                assert rag.insert(version(i, 2), ids=f"race-{i}").skipped == [f"race-{i}"]
            else:
                assert_fully_gone(rag, i)
            assert rag.index.verify() == [], i
            worker.stdin.write("next\n")
            worker.stdin.flush()
    finally:
        worker.stdin.close()
        assert worker.wait(timeout=60) == 0
        rag.index.close()


def test_a_store_opens_and_answers_while_another_process_holds_its_writer_lock(tmp_path):
    """A writer stopped mid-transaction (Ctrl-Z) held every reader's open for lock_timeout:
    opening ran its schema statements in write transactions."""
    workdir = str(tmp_path / "store")
    rag = make_rag(workdir)
    rag.insert(["Ada Lovelace wrote the first program. Charles Babbage built the engine."])
    rag.close()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(60)"),
        str(Path(workdir) / "lightrag.sqlite3")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        reader = make_rag(workdir)  # the default lock_timeout is 120 s
        assert reader.status()["documents"]["processed"] == 1
        context = reader.query("Who wrote the first program?", mode="naive", only_need_context=True)
        assert "Ada Lovelace" in context.content
        assert time.monotonic() - started < 10
        reader.close()
    finally:
        holder.kill()
        holder.wait()


def test_a_store_that_needs_its_change_log_names_the_lock_it_waited_for(tmp_path):
    import sqlite3

    from lightrag.components.storage.sql_db import SQLiteDatabase, StoreLockedError

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:  # a store written before the change log
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(60)"), str(path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLockedError, match="being written by another process"):
            SQLiteDatabase(str(path), lock_timeout=0.5)
    finally:
        holder.kill()
        holder.wait()
