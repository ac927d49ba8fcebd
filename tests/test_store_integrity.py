"""Store integrity defects of issue 26: relation vector ids that collided (7), leftovers of
deleted documents (6), a killed delete's queued vectors (10)."""

import numpy as np
from graph_fakes import extraction_reply, the_answer

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.index_vectors import RELATION_IDS_META
from lightrag.components.graph_rag.merger import legacy_relation_vector_id, relation_vector_id
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator


def make_rag(tmp_path, **kwargs):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path), cosine_threshold=0.05, **kwargs)


def test_relation_vector_ids_do_not_collide():
    assert relation_vector_id("A", "BC") != relation_vector_id("AB", "C")
    assert legacy_relation_vector_id("A", "BC") == legacy_relation_vector_id("AB", "C")
    assert relation_vector_id("X", "Y") == relation_vector_id("Y", "X")


def test_colliding_relations_each_get_their_own_vector(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Ab met CdEf. AbCd met Ef."], ids=["d1"])
    relations = {(h["src_id"], h["tgt_id"]) for h in
                 (rag.relations_vdb.get_by_id(i) for i in rag.relations_vdb._ids)}
    assert relations == {("Ab", "CdEf"), ("AbCd", "Ef")}
    assert rag.index.verify() == []


def _legacy_store(tmp_path):
    """A store as the old code wrote it: relation vectors under the ambiguous ids."""
    rag = make_rag(tmp_path)
    rag.insert(["Ab met CdEf. AbCd met Ef. Saturn has Titan."], ids=["d1"])
    store = rag.relations_vdb
    with rag.index.db.transaction():
        for vid in list(store._ids):
            record = store.get_by_id(vid)
            vector = store.get_vectors_by_ids([vid])[vid]
            store.delete([vid])
            old = legacy_relation_vector_id(record["src_id"], record["tgt_id"])
            if store.get_by_id(old) is None:  # the collision: one vector survives
                store.upsert({old: {k: v for k, v in record.items() if k != "id"}},
                             vectors=vector[None, :])
        rag.index.db.execute("DELETE FROM meta WHERE name = ?", (RELATION_IDS_META,))
    rag.index.close()
    return len(rag.graph.all_edge_pairs())


def test_old_store_checks_clean_then_is_rekeyed_on_first_write(tmp_path):
    edges = _legacy_store(tmp_path)
    rag = make_rag(tmp_path)
    assert rag.index.verify() == []  # no false damage before the upgrade
    assert len(rag.relations_vdb) == edges - 1
    rag.insert(["Venus is hot."], ids=["d2"])  # the first write re-keys and queues the lost one
    assert rag.index.verify() == []
    wanted = {relation_vector_id(s, t) for s, t in rag.graph.all_edge_pairs()}
    assert set(rag.relations_vdb._ids) == wanted
    for vid in wanted:
        record = rag.relations_vdb.get_by_id(vid)
        assert relation_vector_id(record["src_id"], record["tgt_id"]) == vid
    rag.index.close()
    again = make_rag(tmp_path)
    assert again.index.verify() == []
    assert np.isfinite(again.relations_vdb.rows()[1]).all()
