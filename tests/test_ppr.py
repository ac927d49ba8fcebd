"""Personalized PageRank over the entity–passage graph, and the ``ppr`` query mode on hand-built
stores: the two-hop passage outranks a distractor that only matches the question's words."""

import numpy as np
import pytest

from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.ppr import (
    PassageGraph,
    PprSettings,
    personalized_pagerank,
    synonym_pairs,
)
from lightrag.components.graph_rag.query_modes import (
    QUERY_VECTOR,
    SEED_VECTORS,
    NaiveMode,
    PprMode,
)
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, QueryParam


def unit(*values):
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


# axes: 0 "Hello Love", 1 question words ("performer", "born", "where"), 2 "Hank Snow",
#       3 "Nova Scotia", 4 "Music" (a generic concept)
ENTITIES = {
    "Hello Love": (unit(1, 0, 0, 0, 0), ["p_song"]),
    "Hank Snow": (unit(0, 0, 1, 0, 0), ["p_song", "p_born"]),
    "Nova Scotia": (unit(0, 0, 0, 1, 0), ["p_born"]),
    "Music": (unit(0, 0.2, 0, 0, 1), ["p_distractor", "p_other1", "p_other2",
                                      *(f"p_fill{i}" for i in range(15))]),
}
PASSAGES = {  # id -> (text, vector)
    "p_song": ("Hello Love is a song performed by Hank Snow.", unit(0.8, 0.1, 0.6, 0, 0)),
    "p_born": ("Hank Snow was born in Nova Scotia.", unit(0, 0.32, 0.7, 0.7, 0)),
    "p_distractor": ("Where were the performers of music born? Many performers were born "
                     "far from where they performed.", unit(0, 0.32, 0, 0, 0.9)),
    "p_other1": ("Music theory.", unit(0, 0, 0, 0, 1)),
    "p_other2": ("Music history.", unit(0, 0.1, 0, 0, 1)),
    # more passages loosely about the question's words: dense retrieval's other candidates
    **{f"p_fill{i}": (f"Music fact {i}.", unit(0, 0.2, 0, 0, 1)) for i in range(15)},
}
QUESTION = unit(0.6, 0.8, 0, 0, 0)  # "Where was the performer of Hello Love born?"
KEYWORDS = np.stack([unit(1, 0, 0, 0, 0), unit(0, 1, 0, 0, 0)])  # "Hello Love", "performer"


class FakeGraph:
    version = 1

    def get_all_nodes(self):
        return [{"id": n, "source_id": GRAPH_FIELD_SEP.join(c), "description": ""}
                for n, (_, c) in ENTITIES.items()]

    def get_nodes_batch(self, names):
        return {n: {"entity_type": "concept", "description": "", "source_id":
                    GRAPH_FIELD_SEP.join(ENTITIES[n][1])} for n in names if n in ENTITIES}


class FakeVectors:
    def __init__(self, records):
        self.ids = list(records)
        self.records = records
        self.matrix = np.stack([records[i]["vector"] for i in self.ids])

    def _hits(self, vector, top_k):
        scores = self.matrix @ (np.asarray(vector) / np.linalg.norm(vector))
        order = np.argsort(-scores)[:top_k]
        return [{"id": self.ids[i], "score": float(scores[i]),
                 **{k: v for k, v in self.records[self.ids[i]].items() if k != "vector"}}
                for i in order]

    def query(self, vector, top_k):
        return self._hits(vector, top_k)

    def query_batch(self, matrix, top_k):
        return [self._hits(row, top_k) for row in matrix]

    def get_vectors_by_ids(self, ids):
        return {i: self.records[i]["vector"] for i in ids if i in self.records}


class FakeKV:
    def get_by_ids(self, ids):
        return [{"content": PASSAGES[i][0], "tokens": len(PASSAGES[i][0].split()),
                 "file_path": f"{i}.txt"} if i in PASSAGES else None for i in ids]


def stores(synonyms=()):
    entities = FakeVectors({n: {"entity_name": n, "vector": v} for n, (v, _) in ENTITIES.items()})
    chunks = FakeVectors({i: {"content": t, "file_path": f"{i}.txt", "vector": v}
                          for i, (t, v) in PASSAGES.items()})
    return GraphStores(graph=FakeGraph(), entities_vdb=entities, relations_vdb=None,
                       chunks_vdb=chunks, text_chunks=FakeKV(), synonym_pairs=synonyms)


def ranked_ids(result):
    return [c["chunk_id"] for c in result.chunks]


def test_ppr_ranks_the_two_hop_passage_above_a_word_matching_distractor():
    vectors = {QUERY_VECTOR: QUESTION, SEED_VECTORS: KEYWORDS}
    param = QueryParam(mode="ppr", chunk_top_k=10, only_need_context=True)
    naive = NaiveMode()(stores(), vectors, param)
    assert ranked_ids(naive).index("p_distractor") < ranked_ids(naive).index("p_born")
    ppr = PprMode()(stores(), vectors, param)
    order = ranked_ids(ppr)
    assert order[:2] == ["p_song", "p_born"], order
    assert ranked_ids(naive)[:2] == ["p_song", "p_distractor"]
    assert order.index("p_born") < order.index("p_distractor")
    assert ppr.processing_info["mode"] == "ppr"


@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_power_iteration_matches_networkx_pagerank(damping):
    nx = pytest.importorskip("networkx")
    graph = PassageGraph.build([(n, c) for n, (_, c) in ENTITIES.items()])
    seeds = {graph.entity_index["Hello Love"]: 1.0}
    scores = personalized_pagerank(graph, seeds, damping=damping, tolerance=1e-10, max_iterations=400)
    g = nx.Graph()
    for name, (_, chunks) in ENTITIES.items():
        g.add_edges_from((name, c) for c in chunks)
    expected = nx.pagerank(g, alpha=damping, personalization={"Hello Love": 1.0}, tol=1e-12,
                           max_iter=1000)
    nodes = graph.entity_names + graph.chunk_ids
    assert np.allclose(scores, [expected[n] for n in nodes], atol=1e-5)
    assert scores.sum() == pytest.approx(1.0, abs=1e-5)


def test_synonym_edges_carry_mass_between_near_duplicate_names():
    entities = [("U.S.", ["a"]), ("United States", ["b"]), ("Canada", ["c"])]
    alone = PassageGraph.build(entities)
    joined = PassageGraph.build(entities, [("U.S.", "United States", 0.95)])
    seed = {alone.entity_index["U.S."]: 1.0}
    b_alone = alone.passage_scores(personalized_pagerank(alone, seed))[alone.chunk_index["b"]]
    b_joined = joined.passage_scores(personalized_pagerank(joined, seed))[joined.chunk_index["b"]]
    assert b_alone == 0.0 and b_joined > 0.0


def test_synonym_pairs_new_rows_blocked_and_validated():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(50, 16)).astype(np.float32)
    names = [f"e{i}" for i in range(50)] + ["e3 copy"]
    matrix = np.vstack([base, base[3] + 0.01])
    pairs = synonym_pairs(names, matrix, new_rows=[50], threshold=0.95, top_k=3, block=7)
    assert [(a, b) for a, b, _ in pairs] == [("e3", "e3 copy")]
    assert synonym_pairs(names, matrix, threshold=0.95, block=4) == pairs
    with pytest.raises(ValueError, match="names but"):
        synonym_pairs(names[:3], matrix)
    with pytest.raises(ValueError, match="threshold"):
        synonym_pairs(names, matrix, threshold=0.0)


def test_passage_graph_is_cached_per_store_version():
    mode = PprMode()
    s = stores()
    vectors = {QUERY_VECTOR: QUESTION, SEED_VECTORS: KEYWORDS}
    param = QueryParam(mode="ppr", chunk_top_k=5)
    mode(s, vectors, param)
    first = mode._ranking._graph
    mode(s, vectors, param)
    assert mode._ranking._graph is first
    s.graph.version = 2
    mode(s, vectors, param)
    assert mode._ranking._graph is not first


def test_ppr_without_seeds_falls_back_to_dense_order():
    empty = {QUERY_VECTOR: QUESTION}
    param = QueryParam(mode="ppr", chunk_top_k=5)
    settings = PprSettings(seed_threshold=0.99, passage_weight=0.0)
    ranked = ranked_ids(PprMode(settings)(stores(), empty, param))
    assert len(ranked) >= 2  # entity lines may take the place of the last chunks
    assert ranked == ranked_ids(NaiveMode()(stores(), empty, param))[:len(ranked)]


def test_numpy_fallback_gives_the_scipy_scores(monkeypatch):
    import builtins

    import numpy as np

    from lightrag.components.graph_rag import ppr

    entities = [("Alice", ["c1", "c2"]), ("Bob", ["c2", "c3"]), ("Carol", ["c3"]), ("Dan", ["c4"])]
    monkeypatch.setattr(ppr, "SCIPY_FROM_NNZ", 0)  # every block large: scipy's CSR
    with_scipy = ppr.PassageGraph.build(entities, synonyms=[("Alice", "Carol", 0.95)])
    assert not isinstance(with_scipy.to_passages, ppr.CooMatrix)
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name.startswith("scipy"):
            raise ImportError("no scipy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    without = ppr.PassageGraph.build(entities, synonyms=[("Alice", "Carol", 0.95)])
    assert isinstance(without.to_passages, ppr.CooMatrix)
    seeds = {without.entity_index["Alice"]: 1.0}
    assert np.allclose(ppr.personalized_pagerank(without, seeds),
                       ppr.personalized_pagerank(with_scipy, seeds), atol=1e-6)


def test_a_query_sized_graph_is_multiplied_with_numpy():
    from lightrag.components.graph_rag import ppr

    graph = ppr.PassageGraph.build([("Alice", ["c1", "c2"]), ("Bob", ["c2"])])
    assert isinstance(graph.to_passages, ppr.CooMatrix)  # a query's neighbourhood: NumPy only


@pytest.mark.parametrize("values, error, words", [
    ({"damping": 1.0}, ValueError, "PprSettings.damping must be in [0, 1)"),
    ({"fusion": "max"}, ValueError, "PprSettings.fusion is 'max'"),
    ({"rrf_k": 2.5}, TypeError, "PprSettings.rrf_k must be an integer"),
    ({"ppr_weight": "2"}, TypeError, "PprSettings.ppr_weight must be a number"),
    ({"ppr_weight": float("nan")}, ValueError, "PprSettings.ppr_weight must be a finite number"),
    ({"passage_weight": 1.5}, ValueError, "PprSettings.passage_weight"),
    ({"dampign": 0.5}, ValueError, "unknown PprSettings field(s) 'dampign'"),
])
def test_bad_ppr_settings_are_refused_naming_the_field(values, error, words):
    with pytest.raises(error) as caught:
        PprSettings.from_dict(values)
    assert words in str(caught.value)


def test_ppr_settings_come_from_the_graph_rag_config(tmp_path):
    from lightrag.components.graph_rag import GraphRAG

    scripted = {"component_name": "ScriptedClient", "component_config": {"embedding_dim": 16}}
    config = {"component_name": "GraphRAG", "component_config": {
        "working_dir": str(tmp_path),
        "embedder": {"component_name": "Embedder", "component_config": {"model_client": scripted}},
        "extractor": {"component_name": "SpacyEntityExtractor", "component_config": {}},
        "answer_generator": {"component_name": "Generator",
                             "component_config": {"model_client": scripted}},
        "ppr_settings": {"damping": 0.5, "fusion": "score"}}}
    rag = GraphRAG.from_yaml(config)
    for mode in (rag.engine.mode("ppr"), rag.engine.mode("mix")):
        assert mode.settings.damping == 0.5 and mode.settings.fusion == "score"
        assert mode.settings.rrf_k == PprSettings().rrf_k  # unset fields keep the defaults
    assert rag.to_config()["component_config"]["ppr_settings"] == {"damping": 0.5, "fusion": "score"}


def test_a_large_graph_is_rebuilt_in_the_background_while_queries_use_the_last_one(monkeypatch):
    import threading
    import time

    from lightrag.components.graph_rag import query_modes

    monkeypatch.setattr(query_modes, "BACKGROUND_REBUILD_CITATIONS", 1)  # every graph is "large"
    mode = PprMode()
    s = stores()
    vectors = {QUERY_VECTOR: QUESTION, SEED_VECTORS: KEYWORDS}
    param = QueryParam(mode="ppr", chunk_top_k=5)
    first_ids = ranked_ids(mode(s, vectors, param))
    first = mode._ranking._graph
    release = threading.Event()
    reads = s.graph.get_all_nodes

    def slow_read():
        release.wait(10)  # a writer's commit made the store bigger: reading it takes a while
        return reads()
    s.graph.get_all_nodes = slow_read
    s.graph.version = 2
    started = time.perf_counter()
    assert ranked_ids(mode(s, vectors, param)) == first_ids  # the last graph, at once
    assert time.perf_counter() - started < 5 and mode._ranking._graph is first
    release.set()
    mode._ranking._rebuilding.join(10)
    assert mode._ranking._graph is not first and mode._ranking._key[1] == 2
    mode(s, vectors, param)
    assert mode._ranking._rebuilding is not None and not mode._ranking._rebuilding.is_alive()
