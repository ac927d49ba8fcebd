"""The store survives SIGKILL at any instant and several processes at once.

A real subprocess (tests/store_worker.py) inserts, deletes or merges and is killed at random
moments; the store must reopen consistent (GraphIndex.verify finds nothing: every PROCESSED
document has its chunks, vectors and graph items, nothing cites a deleted chunk, no orphans), and
running the interrupted operation again must give the same store as an uninterrupted run.
"""

import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store_state import store_state
from store_worker import doc_id, document, make_rag

WORKER = Path(__file__).with_name("store_worker.py")
TIMEOUT = 180


def run_to_end(workdir, *args):
    proc = subprocess.run([sys.executable, str(WORKER), str(workdir), *args], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-2000:]


def kill_during(workdir, delay, *args):
    """Start the operation, SIGKILL it ``delay`` seconds after the store is open."""
    proc = subprocess.Popen([sys.executable, str(WORKER), str(workdir), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        time.sleep(delay)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)


def snapshot(workdir):
    """Everything the store holds, without timestamps; asserts it is consistent first."""
    rag = make_rag(str(workdir))
    try:
        return store_state(rag)
    finally:
        rag.index.close()


def check_kills(tmp_path, base, args, trials, seed, max_delay):
    """Reference run, then ``trials`` killed runs that are re-run to the end: all equal."""
    def fresh(name):
        target = tmp_path / name
        if base is not None:
            shutil.copytree(base, target)
        return target

    reference = fresh("reference")
    run_to_end(reference, *args)
    expected = snapshot(reference)
    rng = random.Random(seed)
    for trial in range(trials):
        workdir = fresh(f"killed{trial}")
        kill_during(workdir, rng.uniform(0.0, max_delay), *args)
        snapshot(workdir)  # consistent right after the kill
        run_to_end(workdir, *args)
        assert snapshot(workdir) == expected, f"trial {trial}"
    return expected


@pytest.fixture(scope="module")
def base_store(tmp_path_factory):
    base = tmp_path_factory.mktemp("base")
    run_to_end(base, "insert", "0", "16")
    return base


@pytest.mark.subprocess
def test_killed_insert_resumes_to_the_same_store(tmp_path):
    expected = check_kills(tmp_path, None, ("insert", "0", "30"), trials=3, seed=1, max_delay=1.5)
    assert set(expected["status"].values()) == {"processed"} and len(expected["status"]) == 30


@pytest.mark.subprocess
def test_killed_delete_leaves_nothing_of_the_document(tmp_path, base_store):
    targets = [doc_id(1), doc_id(4), doc_id(7)]
    expected = check_kills(tmp_path, base_store, ("delete", *targets), trials=2, seed=2, max_delay=0.6)
    assert not set(targets) & set(expected["status"])
    assert not any(c.startswith(tuple(targets)) for c in expected["chunks"])
    assert "Probe4" not in expected["nodes"]
    text = repr(expected["nodes"]) + repr(expected["edges"])
    for sentence in document(4).split(". "):  # no text of a deleted document survives
        assert sentence.rstrip(".") not in text


@pytest.mark.subprocess
def test_killed_merge_is_all_or_nothing(tmp_path, base_store):
    expected = check_kills(tmp_path, base_store, ("merge", "Gas Giants", "Jupiter", "Saturn"),
                           trials=2, seed=3, max_delay=0.4)
    assert "Gas Giants" in expected["nodes"] and "Saturn" not in expected["nodes"]


@pytest.mark.subprocess
def test_two_processes_insert_into_one_store(tmp_path):
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(tmp_path), "insert", first, "15"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for first in ("0", "15")]
    for proc in procs:
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0 and "DONE" in out, err[-2000:]
    state = snapshot(tmp_path)
    assert sorted(state["status"]) == [doc_id(i) for i in range(30)]
    assert set(state["status"].values()) == {"processed"}


@pytest.mark.subprocess
def test_a_reader_sees_another_process_commits(tmp_path):
    run_to_end(tmp_path, "insert", "0", "4")
    reader = make_rag(str(tmp_path))
    assert reader.status()["documents"]["processed"] == 4
    run_to_end(tmp_path, "insert", "4", "4")
    assert reader.status()["documents"]["processed"] == 8  # no restart
    hit = reader.query("Probe6 Jupiter", mode="naive", only_need_context=True)
    assert "Probe6" in hit.content
    assert reader.graph.has_node("Probe6") and reader.index.verify() == []


def test_a_writer_waits_for_the_lock_then_gives_up_clearly(tmp_path):
    from lightrag.components.storage.sql_db import StoreLockedError

    rag = make_rag(str(tmp_path), lock_timeout=0.3)
    holder = make_rag(str(tmp_path))
    with holder.index.writing_sync():
        with pytest.raises(StoreLockedError, match="another process"):
            rag.insert("Probe1 of NASA flew past Mars.")
    assert rag.insert("Probe1 of NASA flew past Mars.").processed


def test_synonym_pairs_are_found_at_index_time_and_follow_deletes(tmp_path):
    from test_graph_rag_system import make_rag as make_system

    rag = make_system(tmp_path, synonym_threshold=0.8)
    first = rag.insert("The United States Army trained in Texas.", ids="army")
    rag.insert("The United States signed the treaty in Paris.", ids="treaty")
    pairs = {(a, b) for a, b, _ in rag.stores.synonym_pairs}
    assert ("United States", "United States Army") in pairs  # names alike, texts not
    assert rag.stores.synonym_pairs is rag.stores.synonym_pairs  # cached while nothing changes
    reopened = make_system(tmp_path, synonym_threshold=0.8)
    assert ("United States", "United States Army") in {(a, b) for a, b, _ in reopened.stores.synonym_pairs}
    rag.delete_by_doc_id(first.doc_ids[0])
    assert not rag.stores.synonym_pairs


def test_synonym_pairs_of_removed_entities_go_and_the_others_stay(tmp_path):
    from test_graph_rag_system import make_rag as make_system

    rag = make_system(tmp_path, synonym_threshold=0.99)
    rag.insert("Acme met Acme Corp and ACME Inc in Lyon.", ids="acme")
    stores = rag.index.stores
    with rag.index.writing_sync():
        stores.synonyms.add({("Acme", "Acme Corp"): 0.95, ("ACME Inc", "Acme"): 0.93,
                             ("ACME Inc", "Acme Corp"): 0.92})
    rag.delete_entity("Acme Corp")  # its two pairs go (found by either name); the third stays
    assert stores.synonyms.pairs() == [("ACME Inc", "Acme", 0.93)] and rag.index.verify() == []
    rag.delete_entity("ACME Inc")
    assert stores.synonyms.pairs() == [] and rag.index.verify() == []


def test_synonym_pairs_of_a_store_written_before_the_pairs_table_move_to_rows(tmp_path):
    from test_graph_rag_system import make_rag as make_system

    rag = make_system(tmp_path, synonym_threshold=0.99)
    rag.insert("Acme met Acme Corp and ACME Inc in Lyon.", ids="acme")
    db = rag.index.stores.db
    with rag.index.writing_sync():  # the layout of an older store: JSON records in kv
        rag.index.stores.synonyms.drop()
        db.executemany("INSERT INTO kv (ns, id, value) VALUES (?, ?, ?)", [
            ("entity_synonyms", "ACME Inc\x1fAcme", '{"score": 0.93}'),
            ("entity_synonyms", "Acme\x1fAcme Corp", '{"score": 0.95}'),
            ("entity_synonyms_by_name", "Acme", '{"with": ["ACME Inc", "Acme Corp"]}')])
        db.set_meta("synonym_index", "1")
    rag.close()
    reopened = make_system(tmp_path, synonym_threshold=0.99)
    assert reopened.index.stores.synonyms.pairs() == [("ACME Inc", "Acme", 0.93),
                                                      ("Acme", "Acme Corp", 0.95)]
    assert not reopened.index.db.query("SELECT 1 FROM kv WHERE ns LIKE 'entity_synonyms%'")
    reopened.delete_entity("Acme")
    assert reopened.index.stores.synonyms.pairs() == [] and reopened.index.verify() == []
