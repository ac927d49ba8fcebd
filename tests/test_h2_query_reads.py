"""A query's reads: each keyed row and each vector search once per query (QueryReads), and the
cycle collector paused while a mode retrieves (collection_paused)."""

from __future__ import annotations

import gc
import threading

import numpy as np
from test_ppr import KEYWORDS, QUESTION, stores
from test_ppr_local import sql_stores

from lightrag.components.graph_rag.ppr import PprSettings
from lightrag.components.graph_rag.ppr_local import supports_neighbourhood
from lightrag.components.graph_rag.query_modes import LL_VECTOR, QUERY_VECTOR, SEED_VECTORS, MixMode
from lightrag.components.graph_rag.query_reads import (
    QueryReads,
    collection_paused,
    query_reads,
    store_of,
)
from lightrag.components.graph_rag.schemas import QueryParam


class Nodes:
    def __init__(self):
        self.asked = []

    def get_nodes_batch(self, ids):
        self.asked.append(list(ids))
        return {i: {"id": i, "tags": [i]} for i in ids if i != "gone"}

    def get_by_ids(self, ids):
        self.asked.append(list(ids))
        return [{"id": i} if i != "gone" else None for i in ids]


class Searches:
    def __init__(self, matrix):
        self.matrix = matrix
        self.searched = 0

    def query(self, vector, top_k):
        return self.query_batch(np.atleast_2d(vector), top_k)[0]

    def query_batch(self, rows, top_k):
        self.searched += len(rows)
        scores = np.asarray(rows) @ self.matrix.T
        return [[{"id": f"e{j}", "score": float(s[j])} for j in np.argsort(-s)[:top_k]] for s in scores]


def test_a_row_is_read_once_and_an_absent_one_is_remembered_absent():
    store = Nodes()
    seen = QueryReads(store)
    assert list(seen.get_nodes_batch(["a", "gone"])) == ["a"]
    assert list(seen.get_nodes_batch(["b", "a", "gone"])) == ["b", "a"]
    assert store.asked == [["a", "gone"], ["b"]]
    seen.get_nodes_batch(["a"])["a"]["score"] = 1.0  # a caller's own copy
    assert "score" not in seen.get_nodes_batch(["a"])["a"]


def test_a_list_answer_stays_aligned_with_the_ids_asked():
    seen = QueryReads(Nodes())
    assert seen.get_by_ids(["gone", "a"]) == [None, {"id": "a"}]
    assert seen.get_by_ids(["a", "gone", "a"]) == [{"id": "a"}, None, {"id": "a"}]


def test_a_vector_search_answers_a_smaller_one_of_the_same_row():
    rng = np.random.default_rng(0)
    store = Searches(rng.normal(size=(30, 8)).astype(np.float32))
    seen = QueryReads(store)
    rows = rng.normal(size=(3, 8)).astype(np.float32)
    wide = seen.query_batch(rows, top_k=10)
    assert store.searched == 3
    assert seen.query(rows[1], top_k=1) == wide[1][:1] == store.query_batch(rows[1:2], 1)[0]
    assert seen.query_batch(rows[[2, 0]], top_k=4) == [wide[2][:4], wide[0][:4]]
    assert store.searched == 4  # the direct search above only
    seen.query(rows[0], top_k=20)
    assert store.searched == 5


def test_other_attributes_and_missing_methods_are_the_stores_own():
    store = Nodes()
    seen = QueryReads(store)
    assert store_of(seen) is store and store_of(store) is store
    assert not supports_neighbourhood(seen)
    assert not hasattr(seen, "query")
    wrapped = query_reads(stores())
    assert isinstance(wrapped.graph, QueryReads) and wrapped.relations_vdb is None
    assert query_reads(wrapped).graph is wrapped.graph


def test_mix_searches_each_entity_row_once_and_ranks_as_before(tmp_path):
    s = sql_stores(tmp_path)
    calls = []
    batch = s.entities_vdb.query_batch
    s.entities_vdb.query_batch = lambda rows, top_k: calls.append(len(rows)) or batch(rows, top_k)
    vectors = {QUERY_VECTOR: QUESTION, LL_VECTOR: KEYWORDS.mean(axis=0), SEED_VECTORS: KEYWORDS}
    param = QueryParam(mode="mix", chunk_top_k=10, only_need_context=True)
    mode = MixMode(PprSettings())
    ranked = [c["chunk_id"] for c in mode(s, vectors, param).chunks]
    assert calls == [1 + len(KEYWORDS)]  # the seeds' matches come from the entity search
    assert ranked[:2] == ["p_song", "p_born"]
    assert gc.isenabled()


def test_the_collector_is_restored_when_the_last_pause_ends():
    assert gc.isenabled()
    inside = threading.Event()
    leave = threading.Event()

    def other_query():
        with collection_paused():
            inside.set()
            leave.wait(5)

    worker = threading.Thread(target=other_query)
    with collection_paused():
        assert not gc.isenabled()
        worker.start()
        inside.wait(5)
    assert not gc.isenabled()  # the other query still runs
    leave.set()
    worker.join(5)
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()


def test_overlapping_queries_still_collect_cycles(monkeypatch):
    from lightrag.components.graph_rag import query_reads as reads

    monkeypatch.setattr(reads, "MAX_PAUSE_S", 0.0)
    leave = threading.Event()
    inside = threading.Event()

    def long_query():
        with collection_paused():
            inside.set()
            leave.wait(5)

    class Cycle:
        pass

    worker = threading.Thread(target=long_query)
    worker.start()
    inside.wait(5)
    try:
        with collection_paused():
            cycle = Cycle()
            cycle.me = cycle
            import weakref

            ref = weakref.ref(cycle)
            del cycle
        assert ref() is None  # collected although the other query still holds the pause
        assert not gc.isenabled()
    finally:
        leave.set()
        worker.join(5)
    assert gc.isenabled()


def test_cosines_known_to_the_query_are_not_read_again():
    from lightrag.components.graph_rag.chunk_choice import query_similarities

    class Chunks:
        asked = []

        def get_vectors_by_ids(self, ids):
            self.asked.append(list(ids))
            return {i: np.array([1.0, 0.0]) if i == "a" else np.array([0.0, 1.0]) for i in ids if i != "gone"}

    store, known = Chunks(), {}
    query = np.array([2.0, 0.0])
    assert query_similarities(store, ["a", "gone"], query, known) == {"a": 1.0}
    assert query_similarities(store, ["b", "a"], query, known) == {"b": 0.0, "a": 1.0}
    assert store.asked == [["a", "gone"], ["b"]] and known == {"a": 1.0, "b": 0.0}


def test_a_search_with_options_of_its_own_is_passed_through_unremembered():
    store = Searches(np.eye(4, dtype=np.float32))
    calls = []
    store.query_batch = lambda rows, top_k, nprobe=None: calls.append(nprobe) or [[] for _ in rows]
    seen = QueryReads(store)
    seen.query_batch(np.eye(2, 4), top_k=3, nprobe=2)
    seen.query_batch(np.eye(2, 4), top_k=3, nprobe=2)
    assert calls == [2, 2]
