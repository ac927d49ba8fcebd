"""An entity or relation cited again is embedded again only when what its vector stands for
changes (its first description fragment, an entity's type, a relation's keywords): a hub cited by
every new document costs no embedding, and the stored vectors stay those of the current graph."""

from __future__ import annotations

from typing import List

from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag.merger import entity_vector_id, relation_vector_id
from lightrag.components.model_client import ScriptedClient


def make_rag(tmp_path):
    """A GraphRAG on the fakes, and the client that embeds for it (its requests: what was embedded)."""
    client = ScriptedClient(embedding_dim=64)
    return fake_graph_rag(tmp_path, embedder_client=client, chunk_tokens=200, chunk_overlap=0,
                          max_gleaning=0), client


def embedded(client: ScriptedClient) -> List[str]:
    texts: List[str] = []
    for request in client.requests:
        value = request.get("input", [])
        texts.extend([value] if isinstance(value, str) else value)
    return texts


def kg(chunk: str, text: str, description: str, relation: str, keywords: str) -> dict:
    return {
        "chunks": [{"content": text, "source_id": chunk, "file_path": f"{chunk}.md"}],
        "entities": [{"entity_name": "Zorblax Corporation", "entity_type": "organization",
                      "description": description, "source_id": chunk},
                     {"entity_name": "Velmora", "entity_type": "location",
                      "description": "A river city.", "source_id": chunk}],
        "relationships": [{"src_id": "Zorblax Corporation", "tgt_id": "Velmora", "keywords": keywords,
                           "description": relation, "source_id": chunk}],
    }


def test_a_citation_that_changes_no_vector_text_embeds_nothing_of_the_item(tmp_path):
    rag, client = make_rag(tmp_path)
    rag.insert_custom_kg(kg("c1", "Zorblax builds turbines in Velmora.", "A maker of quantum turbines.",
                            "Zorblax builds turbines in Velmora.", "factory"), doc_id="first")
    stores = rag.index.stores
    before = stores.entities_vdb.get_vectors_by_ids([entity_vector_id("Zorblax Corporation")])
    client.requests.clear()

    rag.insert_custom_kg(kg("c2", "Zorblax also sells spare parts in Velmora.", "It sells spare parts.",
                            "Zorblax sells parts in Velmora.", "factory"), doc_id="second")
    texts = embedded(client)
    assert "Zorblax also sells spare parts in Velmora." in texts  # the new chunk is embedded
    assert not any("quantum turbines" in t or "spare parts." == t for t in texts)
    assert "factory" not in texts and "Zorblax Corporation" not in texts
    key = entity_vector_id("Zorblax Corporation")
    assert (stores.entities_vdb.get_vectors_by_ids([key])[key] == before[key]).all()
    node = stores.graph.get_node("Zorblax Corporation")
    assert "It sells spare parts." in node["description"]  # the graph has the new fragment
    assert len(node["source_id"].split("<SEP>")) == 2  # cited by both chunks


def test_new_keywords_embed_the_relation_again(tmp_path):
    rag, client = make_rag(tmp_path)
    rag.insert_custom_kg(kg("c1", "Zorblax builds turbines in Velmora.", "A maker of quantum turbines.",
                            "Zorblax builds turbines in Velmora.", "factory"), doc_id="first")
    client.requests.clear()
    rag.insert_custom_kg(kg("c3", "Zorblax exports turbines from Velmora.", "A maker of quantum turbines.",
                            "Zorblax exports from Velmora.", "export"), doc_id="third")
    assert "export,factory" in embedded(client)
    record = rag.index.stores.relations_vdb.get_by_ids(
        [relation_vector_id("Velmora", "Zorblax Corporation")])[0]
    assert record["keywords"] == "export,factory"
    assert not rag.index.stores.pending_vectors.keys()


def test_inserting_a_document_embeds_only_its_new_texts(tmp_path):
    rag, client = make_rag(tmp_path)
    first = "Alice Walker met Bob Stone in Paris."
    rag.insert(first, ids="d1")
    client.requests.clear()
    rag.insert("Alice Walker visited Carol Green.", ids="d2")
    texts = embedded(client)
    assert "Alice Walker visited Carol Green." in texts  # Carol's and the new relation's text
    assert first not in texts  # Alice's vector text is unchanged: not embedded again
    record = rag.index.stores.entities_vdb.get_by_ids([entity_vector_id("Alice Walker")])[0]
    assert first in record["content"]
