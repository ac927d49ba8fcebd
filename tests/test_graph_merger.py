"""GraphMerger rules, chunking ids and entity-name normalisation."""

import numpy as np
import pytest

from lightrag.components.graph_rag import Chunker, GraphMerger
from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.schemas import (
    GRAPH_FIELD_SEP,
    EntityRecord,
    RelationRecord,
    normalize_entity_name,
)
from lightrag.components.model_client import ScriptedClient
from lightrag.components.storage import NetworkXGraphStorage
from lightrag.core import Embedder, Generator


def ent(name, etype, desc, chunk, path="a.md"):
    return EntityRecord(entity_name=name, entity_type=etype, description=desc, source_id=chunk,
                        file_path=path)


def rel(src, tgt, desc, chunk, keywords="k", weight=1.0, path="a.md"):
    return RelationRecord(src_id=src, tgt_id=tgt, description=desc, keywords=keywords,
                          weight=weight, source_id=chunk, file_path=path)


def result(chunk, entities=(), relations=()):
    return ExtractionResult(chunk_id=chunk, entities=list(entities), relations=list(relations))


@pytest.fixture
def stores(tmp_path):
    return NetworkXGraphStorage(namespace="g", working_dir=str(tmp_path))


def test_entities_merge_type_descriptions_sources(stores):
    graph = stores
    GraphMerger().call([
        result("c1", [ent("Titan", "location", "A moon.", "c1")]),
        result("c2", [ent("Titan", "moon", "Largest moon of Saturn.", "c2", "b.md"),
                      ent("Titan", "moon", "A moon.", "c2", "b.md")]),
        result("c3", [ent("Titan", "moon", "Has lakes.", "c3")]),
    ], graph)
    node = graph.get_node("Titan")
    assert node["entity_type"] == "moon"
    assert node["description"].split(GRAPH_FIELD_SEP) == ["A moon.", "Largest moon of Saturn.", "Has lakes."]
    assert node["source_id"].split(GRAPH_FIELD_SEP) == ["c1", "c2", "c3"]
    assert node["file_path"].split(GRAPH_FIELD_SEP) == ["a.md", "b.md"]


def test_relations_are_undirected_weighted_and_create_endpoints(stores):
    graph = stores
    stats = GraphMerger().call([
        result("c1", [ent("Saturn", "planet", "A planet.", "c1")],
               [rel("Titan", "Saturn", "Titan orbits Saturn.", "c1", keywords="orbit")]),
        result("c2", relations=[rel("Saturn", "Titan", "Saturn hosts Titan.", "c2",
                                    keywords="moon, orbit", weight=2.0)]),
    ], graph)
    edge = graph.get_edge("Saturn", "Titan")
    assert edge["weight"] == 3.0 and edge["keywords"] == "moon,orbit"
    assert edge["description"].count(GRAPH_FIELD_SEP) == 1
    assert graph.get_node("Titan")["entity_type"] == "unknown"
    assert len(graph.get_all_edges()) == 1 and "Titan" in stats.entities


def test_merge_is_idempotent_per_chunk(stores):
    graph = stores
    batch = [result("c1", [ent("Titan", "moon", "A moon.", "c1")],
                    [rel("Titan", "Saturn", "Orbits.", "c1")])]
    GraphMerger().call(batch, graph)
    before = (graph.get_node("Titan"), graph.get_edge("Titan", "Saturn"))
    GraphMerger().call(batch, graph)
    assert (graph.get_node("Titan"), graph.get_edge("Titan", "Saturn")) == before


def test_summary_when_fragments_accumulate(stores):
    graph = stores
    client = ScriptedClient(response_fn=lambda p: "One merged description.")
    summarizer = Generator(model_client=client, template="{{name}}: {{descriptions}}")
    merger = GraphMerger(summarizer=summarizer, force_llm_summary_on_merge=3)
    merger.call([result(f"c{i}", [ent("Titan", "moon", f"Fact {i}.", f"c{i}")]) for i in range(2)],
                graph)
    assert len(client.requests) == 0
    stats = merger.call([result("c9", [ent("Titan", "moon", "Fact 9.", "c9")])], graph)
    assert stats.summaries == 1 and graph.get_node("Titan")["description"] == "One merged description."
    assert "Fact 9." in client.requests[0]["prompt"]


def test_map_reduce_summary_and_failed_summary_keeps_fragments():
    client = ScriptedClient(response_fn=lambda p: "S")
    merger = GraphMerger(summarizer=Generator(model_client=client, template="{{descriptions}}"),
                         summary_context_size=12)
    import asyncio

    text, calls = asyncio.run(merger.summarize("X", [f"fragment number {i} is here" for i in range(6)]))
    assert text == "S" and calls > 1
    failing = GraphMerger(summarizer=Generator(model_client=ScriptedClient(
        responses=[RuntimeError("down")]), template="{{descriptions}}"))
    kept, _ = asyncio.run(failing.summarize("X", ["a", "b"]))
    assert kept == "a" + GRAPH_FIELD_SEP + "b"


def test_chunker_ids_are_stable_and_positional():
    chunker = Chunker(chunk_token_size=4, chunk_overlap_token_size=1)
    first = chunker("doc-1", "alpha beta gamma delta epsilon zeta eta theta")
    second = chunker("doc-1", "alpha beta gamma delta epsilon zeta eta theta")
    assert list(first) == list(second) and list(first)[0] == "doc-1-chunk-000"
    assert all(c.full_doc_id == "doc-1" and c.tokens <= 4 for c in first.values())
    assert chunker("doc-2", "   ") == {}


@pytest.mark.parametrize("raw,expected", [
    ("  Voyager   1 ", "Voyager 1"), ('"Titan"', "Titan"), ("electrons", "Electrons"),
    ("ELECTRONS", "Electrons"), ("NASA", "NASA"), ("iPhone", "iPhone"), ("“Cassini”", "Cassini"),
])
def test_normalize_entity_name(raw, expected):
    assert normalize_entity_name(raw) == expected


def test_bulk_insert_embeds_each_entity_once(tmp_path):
    from graph_fakes import extraction_reply, the_answer

    from lightrag.components.graph_rag import (
        Chunker,
        EntityExtractor,
        GraphRAG,
        HeuristicKeywordExtractor,
    )
    from lightrag.components.graph_rag.merger import entity_vector_id

    docs = [f"Saturn has a moon named Moon{i}. Cassini studied Saturn and Moon{i}." for i in range(6)]

    def build(name, **kwargs):
        client = ScriptedClient(embedding_dim=64)
        rag = GraphRAG(
            embedder=Embedder(model_client=client),
            extractor=EntityExtractor(generator=Generator(
                model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
            answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
            keyword_extractor=HeuristicKeywordExtractor(),
            chunker=Chunker(chunk_token_size=200, chunk_overlap_token_size=0),
            working_dir=str(tmp_path / name), **kwargs)
        rag.insert(docs)
        embedded = [t for r in client.requests for t in r["input"]]
        return rag, embedded

    bulk, bulk_texts = build("bulk")
    per_doc, per_doc_texts = build("per_doc", insert_batch_size=1, vector_flush_size=1)
    assert bulk_texts.count("Saturn") == 1  # six documents touched it, its name is embedded once
    assert per_doc_texts.count("Saturn") == 1  # later flushes reuse the stored name vector
    assert len(bulk_texts) == len(set(bulk_texts))  # no text embedded twice in a bulk insert
    for rag in (bulk, per_doc):  # every entity and relation of the graph has its vector
        assert len(rag.entities_vdb) == len(rag.graph.get_all_labels())
        assert len(rag.relations_vdb) == len(rag.graph.get_all_edges())
        assert rag.status()["pending_vectors"] == 0
    # the vector embeds the entity's final description, as if it had been re-embedded every time
    sid = entity_vector_id("Saturn")
    assert np.allclose(bulk.entities_vdb.get_vectors_by_ids([sid])[sid],
                       per_doc.entities_vdb.get_vectors_by_ids([sid])[sid])
    hits = bulk.query("Saturn Cassini", mode="local", only_need_context=True)
    assert any(e["entity_name"] == "Saturn" for e in hits.raw_data["entities"])
