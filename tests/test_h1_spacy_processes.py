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
