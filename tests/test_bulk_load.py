"""GraphIndex.bulk_load: pre-built chunks, entities and relations written in one transaction,
with their vectors or queued for embedding; searchable at once; bad input refused whole."""

import numpy as np
import pytest
from graph_fakes import fake_graph_rag


def make_rag(tmp_path):
    return fake_graph_rag(tmp_path, embedding_dim=64, max_gleaning=0)


def unit(seed, n=1, dim=64):
    rows = np.random.RandomState(seed).randn(n, dim).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


CHUNKS = {"doc-1-chunk-0": {"content": "Zorblax Prime orbits Vega Minor.", "full_doc_id": "doc-1",
                            "chunk_order_index": 0, "file_path": "a.txt", "tokens": 7}}
ENTITIES = {"Zorblax Prime": {"entity_type": "planet", "description": "A planet.",
                              "source_id": "doc-1-chunk-0", "file_path": "a.txt"},
            "Vega Minor": {"entity_type": "star", "description": "A star.",
                           "source_id": "doc-1-chunk-0", "file_path": "a.txt"}}
RELATIONS = {("Vega Minor", "Zorblax Prime"): {"weight": 1.0, "description": "orbits",
                                               "keywords": "orbit", "source_id": "doc-1-chunk-0",
                                               "file_path": "a.txt"}}


def test_bulk_load_writes_everything_with_its_vectors(tmp_path):
    rag = make_rag(tmp_path)
    rag.index.bulk_load(CHUNKS, ENTITIES, RELATIONS, chunk_vectors=unit(1),
                        entity_vectors=unit(2, 2), relation_vectors=unit(3))
    assert rag.graph.get_node("Zorblax Prime")["entity_type"] == "planet"
    assert rag.graph.get_edge("Zorblax Prime", "Vega Minor")["keywords"] == "orbit"
    assert rag.text_chunks.get_by_id("doc-1-chunk-0")["content"].startswith("Zorblax")
    hit = rag.chunks_vdb.query(unit(1)[0], top_k=1)[0]
    assert hit["id"] == "doc-1-chunk-0" and hit["score"] > 0.99
    assert rag.status()["pending_vectors"] == 0


def test_entities_and_relations_without_vectors_are_queued_then_embedded(tmp_path):
    rag = make_rag(tmp_path)
    rag.index.bulk_load(CHUNKS, ENTITIES, RELATIONS, chunk_vectors=unit(1))
    assert rag.status()["pending_vectors"] == 3
    rag.flush()
    assert rag.status()["pending_vectors"] == 0
    names = {h["entity_name"] for h in rag.entities_vdb.query("Zorblax Prime planet", top_k=2)}
    assert "Zorblax Prime" in names


def test_bad_input_is_refused_and_nothing_is_written(tmp_path):
    rag = make_rag(tmp_path)
    with pytest.raises(ValueError, match="2 entity vectors for 1"):
        rag.index.bulk_load({}, {"A": {}}, {}, entity_vectors=unit(1, 2))
    with pytest.raises(ValueError, match="not in the graph"):
        rag.index.bulk_load(CHUNKS, {"A": {}}, {("A", "Nowhere"): {"weight": 1.0}})
    assert not rag.graph.has_node("A") and rag.text_chunks.get_by_id("doc-1-chunk-0") is None


def test_name_vectors_index_the_names_once_and_an_insert_reuses_them(tmp_path):
    rag = make_rag(tmp_path)
    names = unit(4, 2)
    rag.index.bulk_load(CHUNKS, ENTITIES, RELATIONS, chunk_vectors=unit(1),
                        entity_vectors=unit(2, 2), relation_vectors=unit(3), name_vectors=names)
    stored = rag.index.entity_names.get_vectors_by_ids(["Zorblax Prime", "Vega Minor"])
    assert np.allclose(stored["Zorblax Prime"], names[0], atol=1e-6)
    assert np.allclose(stored["Vega Minor"], names[1], atol=1e-6)
    # a second batch naming a known entity keeps its name vector (no second row for it)
    rag.index.bulk_load({}, {"Zorblax Prime": {"description": "Again."}}, {}, name_vectors=unit(9))
    again = rag.index.entity_names.get_vectors_by_ids(["Zorblax Prime"])["Zorblax Prime"]
    assert np.allclose(again, names[0], atol=1e-6) and len(rag.index.entity_names) == 2
    with pytest.raises(ValueError, match="1 entity name vectors for 2"):
        rag.index.bulk_load({}, ENTITIES, {}, name_vectors=unit(5))


def test_a_hub_vector_record_keeps_its_first_chunks_and_the_graph_keeps_them_all(tmp_path):
    from lightrag.components.graph_rag.index.vectors import VECTOR_SOURCE_IDS
    from lightrag.components.graph_rag.merger import entity_vector_id, relation_vector_id

    rag = make_rag(tmp_path)
    docs = [f"Zorblax Prime met Quillon Vask on day {i}." for i in range(VECTOR_SOURCE_IDS + 9)]
    rag.insert(docs[:VECTOR_SOURCE_IDS], ids=[f"d{i:02d}" for i in range(VECTOR_SOURCE_IDS)])
    before = rag.entities_vdb.get_by_id(entity_vector_id("Zorblax Prime"))
    rag.insert(docs[VECTOR_SOURCE_IDS:], ids=[f"d{i:02d}" for i in range(VECTOR_SOURCE_IDS, len(docs))])
    cited = rag.graph.get_node("Zorblax Prime")["source_id"].split("<SEP>")
    assert len(cited) == len(docs)
    record = rag.entities_vdb.get_by_id(entity_vector_id("Zorblax Prime"))
    assert record["source_id"].split("<SEP>") == cited[:VECTOR_SOURCE_IDS]
    assert record == before  # cited again: its record stays as it was
    rag.delete_by_doc_id("d03")  # a sampled chunk goes: the sample is taken again
    record = rag.entities_vdb.get_by_id(entity_vector_id("Zorblax Prime"))
    cited = rag.graph.get_node("Zorblax Prime")["source_id"].split("<SEP>")
    assert record["source_id"].split("<SEP>") == cited[:VECTOR_SOURCE_IDS]
    assert not any(c.startswith("d03") for c in record["source_id"].split("<SEP>"))
    assert record["content"].startswith("Zorblax Prime\n")
    pair = tuple(sorted(("Zorblax Prime", "Quillon Vask")))
    edge_record = rag.relations_vdb.get_by_id(relation_vector_id(*pair))
    assert edge_record["source_id"].split("<SEP>") == rag.graph.get_edge(*pair)["source_id"].split(
        "<SEP>")[:VECTOR_SOURCE_IDS]
    first = rag.text_chunks.get_by_id(cited[0])["content"]  # the oldest chunk is still found
    context = rag.query("Zorblax Prime day 0", mode="local", only_need_context=True)
    assert "day 0." in first and "day 0." in str(context)
