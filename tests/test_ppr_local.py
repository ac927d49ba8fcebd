"""PPR on the query's neighbourhood (stores past ``whole_graph_max_citations``): the same
two-hop answer as the whole-graph walk, read by key, with every store size."""

from __future__ import annotations

import numpy as np
from test_ppr import ENTITIES, KEYWORDS, QUESTION, ranked_ids, stores

from lightrag.components.graph_rag.ppr import PprSettings
from lightrag.components.graph_rag.ppr_local import MAX_PASSAGES, neighbourhood
from lightrag.components.graph_rag.query_modes import QUERY_VECTOR, SEED_VECTORS, MixMode, PprMode
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, QueryParam
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage


def sql_stores(tmp_path):
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))
    with graph.db.transaction():
        graph.upsert_nodes_batch({n: {"entity_type": "concept", "description": "",
                                      "source_id": GRAPH_FIELD_SEP.join(chunks)}
                                  for n, (_, chunks) in ENTITIES.items()})
    s = stores()
    s.graph = graph
    return s


def test_the_neighbourhood_walk_ranks_the_two_hop_passage_like_the_whole_graph(tmp_path):
    s = sql_stores(tmp_path)
    vectors = {QUERY_VECTOR: QUESTION, SEED_VECTORS: KEYWORDS}
    param = QueryParam(mode="ppr", chunk_top_k=10, only_need_context=True)
    whole = PprMode()(s, vectors, param)
    local_mode = PprMode(PprSettings(whole_graph_max_citations=0))
    local = local_mode(s, vectors, param)
    assert ranked_ids(whole)[:2] == ["p_song", "p_born"]
    assert ranked_ids(local)[:2] == ["p_song", "p_born"]
    assert local_mode._ranking._graph is None  # the whole graph was never built
    assert ranked_ids(MixMode(PprSettings(whole_graph_max_citations=0))(s, vectors, param))


def test_the_neighbourhood_holds_the_seeds_passages_and_their_entities(tmp_path):
    graph = sql_stores(tmp_path).graph
    records = dict(neighbourhood(graph, ["Hello Love"], []))
    assert records["Hello Love"] == ["p_song"]
    assert sorted(records["Hank Snow"]) == ["p_song"]  # hop 2: only passages already taken
    assert "Nova Scotia" not in records and "Music" not in records
    records = dict(neighbourhood(graph, ["Hank Snow"], ["p_other1"]))
    assert sorted(records["Hank Snow"]) == ["p_born", "p_song"]
    assert set(records) == {"Hank Snow", "Hello Love", "Nova Scotia", "Music"}


def test_a_hub_contributes_a_bounded_share(tmp_path):
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "hub.sqlite")))
    with graph.db.transaction():
        graph.upsert_nodes_batch({"Hub": {"source_id": GRAPH_FIELD_SEP.join(f"c{i}" for i in range(5000))}})
        graph.upsert_nodes_batch({f"Leaf{i}": {"source_id": f"c{i}"} for i in range(5000)})
    records = neighbourhood(graph, ["Hub"], [f"c{i}" for i in range(3000)])
    passages = {c for _, chunks in records for c in chunks}
    assert len(passages) <= MAX_PASSAGES
    assert np.mean([len(c) for _, c in records]) < 10


def test_the_size_count_is_not_repeated_after_every_insert(tmp_path, monkeypatch):
    """The bounded citation count (a scan of up to 1M index rows) runs for a new store, and
    after a version change only once ``SIZE_RECHECK_S`` passed since the last count."""
    from lightrag.components.graph_rag import query_modes

    s = sql_stores(tmp_path)
    counts = []
    count = s.graph.count_citations
    monkeypatch.setattr(s.graph, "count_citations", lambda at_most: counts.append(at_most) or count(at_most))
    vectors = {QUERY_VECTOR: QUESTION, SEED_VECTORS: KEYWORDS}
    param = QueryParam(mode="ppr", chunk_top_k=10, only_need_context=True)
    mode = PprMode(PprSettings(whole_graph_max_citations=0))

    def insert(name):
        with s.graph.db.transaction():
            s.graph.upsert_node(name, {"entity_type": "concept", "description": "", "source_id": "p_new"})

    assert ranked_ids(mode(s, vectors, param))[:2] == ["p_song", "p_born"]
    insert("Extra One")
    mode(s, vectors, param)
    assert len(counts) == 1  # a newer version within SIZE_RECHECK_S: the size class is kept
    monkeypatch.setattr(query_modes, "SIZE_RECHECK_S", 0.0)
    insert("Extra Two")
    assert ranked_ids(mode(s, vectors, param))[:2] == ["p_song", "p_born"]
    assert len(counts) == 2
