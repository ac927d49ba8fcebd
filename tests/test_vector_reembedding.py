"""Re-embedding an entity whose embedded text did not change gives its stored vector, so the
mapped vector file keeps its row: no append, no garbage, whatever scale the embedder's vectors
have (its fresh vectors are made unit vectors, as the stored name vectors are)."""

import numpy as np
import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag.merger import entity_vector_id
from lightrag.components.model_client import ScriptedClient
from lightrag.core.types import ModelType


class ScaledClient(ScriptedClient):
    """Hashed bag-of-words embeddings times 3.7: an embedder that does not normalise."""

    def call(self, api_kwargs=None, model_type=ModelType.UNDEFINED):
        out = super().call(api_kwargs, model_type)
        if model_type is ModelType.EMBEDDER:
            return [[3.7 * x for x in row] for row in out]
        return out


@pytest.mark.parametrize("client", [ScriptedClient, ScaledClient], ids=["unit", "unnormalised"])
def test_an_entity_cited_again_keeps_its_vector_row(tmp_path, client):
    rag = fake_graph_rag(tmp_path, embedder_client=client(embedding_dim=64), chunk_tokens=400)
    rag.insert(["Ada Lovelace wrote the first program. Charles Babbage designed the engine."],
               ids=["doc-1"])
    store = rag.index.entities_vdb
    ada = entity_vector_id("Ada Lovelace")
    row = dict(store.db.query("SELECT id, row FROM vectors WHERE ns = 'entities'"))[ada]
    vector = store.get_vectors_by_ids([ada])[ada].copy()
    garbage = store._garbage()
    rag.insert(["Ada Lovelace met Charles Babbage in London."], ids=["doc-2"])
    assert dict(store.db.query("SELECT id, row FROM vectors WHERE ns = 'entities'"))[ada] == row
    assert np.array_equal(store.get_vectors_by_ids([ada])[ada], vector)
    assert store._garbage() == garbage
    hits = rag.index.entities_vdb.query(vector, 1)
    assert hits[0]["id"] == ada and hits[0]["source_id"] == "doc-1-chunk-000"  # its sample, kept
    assert len(rag.graph.get_node("Ada Lovelace")["source_id"].split("<SEP>")) == 2


def test_a_records_sample_of_chunk_ids_is_kept_while_the_item_still_cites_it():
    """A vector record's chunk ids (and file paths) are a sample taken when it was written: a
    new citation keeps it; a sampled chunk deleted, or gone from a hub's window of its most
    recent 512, makes a new one."""
    from lightrag.components.graph_rag.index.vectors import VECTOR_SOURCE_IDS, keep_samples

    sample = [f"c{i}" for i in range(VECTOR_SOURCE_IDS)]

    class Stored:
        def get_by_ids(self, ids):
            return [{"source_id": "<SEP>".join(sample if i != "small" else ["c1", "c2"]),
                     "file_path": "a.md"} if i != "new" else None for i in ids]

    window = "<SEP>".join([f"c{i}" for i in range(1, 600)])  # c0 left the window
    records = {
        "kept": {"source_id": "<SEP>".join(f"c{i}" for i in range(5, 21)), "file_path": "b.md"},
        "small": {"source_id": "c1<SEP>c2<SEP>c3", "file_path": "a.md<SEP>b.md"},
        "slid": {"source_id": "<SEP>".join(f"c{i}" for i in range(1, 17)), "file_path": "a.md"},
        "new": {"source_id": "c1", "file_path": "a.md"}}
    cited = {"kept": {"source_id": "<SEP>".join(sample + ["c99"]), "file_path": "b.md"},
             "small": {"source_id": "c1<SEP>c2<SEP>c3", "file_path": "a.md<SEP>b.md"},
             "slid": {"source_id": window, "file_path": "a.md"}, "new": {"source_id": "c1"}}
    keep_samples(Stored(), records, cited)
    assert records["kept"]["source_id"].split("<SEP>") == sample  # all still cited: kept
    assert records["kept"]["file_path"] == "b.md"  # a.md is no longer cited: the current one
    assert records["small"] == {"source_id": "c1<SEP>c2", "file_path": "a.md"}  # cited again: kept
    assert records["slid"]["source_id"].split("<SEP>")[0] == "c1"  # c0 is gone: a new sample
    assert records["new"] == {"source_id": "c1", "file_path": "a.md"}
