"""``SpacyEntityExtractor.extract_many`` in several processes: the same entities and relations
as in one, and one process where forking is not possible or not worth it."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from lightrag.components.graph_rag import spacy_extractor  # noqa: E402
from lightrag.components.graph_rag.spacy_extractor import SpacyEntityExtractor, load_spacy_model  # noqa: E402

TEXTS = [
    "Noor Haddad joined the Tidewater Institute in Halifax in 2019.",
    "Marie Curie worked in Paris with Pierre Curie.",
    "The Danube flows through Vienna and Budapest before reaching the Black Sea.",
    "Ada Lovelace met Charles Babbage in London.",
] * 3


@pytest.fixture(scope="module")
def loaded():
    try:
        load_spacy_model()
    except OSError as e:
        pytest.skip(f"spaCy model not installed: {e}")


def _graph(results):
    return [(sorted((e.entity_name, e.entity_type, e.description) for e in r.entities),
             sorted((x.src_id, x.tgt_id, x.keywords, x.description, x.weight) for x in r.relations))
            for r in results]


def test_several_processes_give_the_same_graph(loaded):
    chunks = [(t, f"c{i}") for i, t in enumerate(TEXTS)]
    one = SpacyEntityExtractor(processes=1).extract_many(chunks)
    forked = SpacyEntityExtractor(processes=2, min_texts_per_process=2)
    assert forked.worker_processes(len(chunks)) == 2
    many = forked.extract_many(chunks)
    assert [r.chunk_id for r in many] == [f"c{i}" for i in range(len(TEXTS))]
    assert _graph(many) == _graph(one) and all(r.ok for r in many)


def test_small_calls_and_no_fork_stay_in_this_process(monkeypatch):
    extractor = SpacyEntityExtractor(min_texts_per_process=16)
    monkeypatch.setattr(spacy_extractor, "_usable_cores", lambda: 4)
    monkeypatch.setattr(spacy_extractor, "_forks_cheaply", lambda: True)
    assert [extractor.worker_processes(n) for n in (1, 31, 32, 48, 1000)] == [1, 1, 2, 3, 4]
    monkeypatch.setattr(spacy_extractor, "_forks_cheaply", lambda: False)
    assert extractor.worker_processes(1000) == 1
    assert SpacyEntityExtractor(processes=1).worker_processes(1000) == 1


def test_a_failed_fork_parses_in_this_process_from_then_on(loaded, monkeypatch):
    extractor = SpacyEntityExtractor(processes=2, min_texts_per_process=1)
    nlp = extractor.nlp
    calls = []

    class NoForkNlp:
        def pipe(self, texts, n_process=1, batch_size=32):
            calls.append(n_process)
            if n_process > 1:
                raise AssertionError("daemonic processes are not allowed to have children")
            return nlp.pipe(texts, batch_size=batch_size)

    monkeypatch.setattr(SpacyEntityExtractor, "nlp", property(lambda self: NoForkNlp()))
    results = extractor.extract_many([(t, f"c{i}") for i, t in enumerate(TEXTS[:4])])
    assert all(r.ok and r.entities for r in results)
    extractor.extract_many([(TEXTS[0], "again"), (TEXTS[1], "again2")])
    assert calls == [2, 1, 1]


def test_workers_forked_from_a_pool_thread_exit_cleanly(loaded, monkeypatch):
    """``aextract_many`` runs in an executor thread (``asyncio.to_thread``): the worker
    processes forked from there must finish with status 0, so spaCy does not warn (W127)
    after every call."""
    import asyncio
    import multiprocessing
    import warnings

    codes = []
    join = multiprocessing.Process.join

    def recording_join(self, *args, **kwargs):
        result = join(self, *args, **kwargs)
        codes.append(self.exitcode)
        return result

    monkeypatch.setattr(multiprocessing.Process, "join", recording_join)
    extractor = SpacyEntityExtractor(processes=2, min_texts_per_process=2)
    chunks = [(t, f"c{i}") for i, t in enumerate(TEXTS)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = asyncio.run(extractor.aextract_many(chunks))
    assert all(r.ok for r in results) and len(results) == len(TEXTS)
    assert codes and all(code == 0 for code in codes), codes
    assert not [w for w in caught if "W127" in str(w.message)]


CHILD = """
from lightrag.components.graph_rag.spacy_extractor import SpacyEntityExtractor
extractor = SpacyEntityExtractor(processes=2, min_texts_per_process=2)
texts = [f"Alice Smith number {i} met Bob Jones in Paris." for i in range(40000)]
print("parsing", flush=True)
extractor.extract_many([(t, f"c{i}") for i, t in enumerate(texts)])
"""


def _children(pid: int) -> list[int]:
    """The child pids of ``pid``'s threads; a thread that ends between the listing and
    the read is skipped (its ``children`` file is gone by then)."""
    import glob

    found = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path) as handle:
                found.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


@pytest.mark.skipif(not spacy_extractor._forks_cheaply() or not __import__("os").path.exists("/proc/self"),
                    reason="needs fork and /proc (Linux)")
def test_workers_die_when_the_indexing_process_is_killed(loaded, tmp_path):
    """A ``lightrag index`` killed by SIGKILL mid-parse must not leave spaCy's workers
    waiting for work forever (each holds a copy of the model)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "parse.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE)
    workers = []
    try:
        assert proc.stdout.readline().strip() == b"parsing"
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = _children(proc.pid)
            time.sleep(0.05)
        assert len(workers) == 2, "the workers did not start"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

        def alive(pid):
            try:
                return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
            except OSError:
                return False

        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if alive(pid)]
    finally:
        proc.kill()
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
