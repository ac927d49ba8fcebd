"""Model output and input bounds of issue 26 (defects 8 and 11): a reply naming 100k entities
is cut, NaN embeddings are refused, provider error text is redacted before it is stored,
look-alike names meet in one node, a lone surrogate is a clear error."""

import math

import numpy as np
import pytest
from graph_fakes import extraction_reply, fake_graph_rag

from lightrag.components.graph_rag.extraction_parser import MAX_RECORDS, parse_extraction_output
from lightrag.components.model_client import ScriptedClient
from lightrag.utils.secrets import redact_text


def make_rag(tmp_path, embedder_client=None, extraction=extraction_reply):
    return fake_graph_rag(tmp_path, embedding_dim=32, max_gleaning=0,
                          embedder_client=embedder_client,
                          extraction_client=ScriptedClient(response_fn=extraction))


def test_a_reply_naming_100k_entities_is_cut():
    reply = "\n".join(f"entity<|#|>Name{i}<|#|>concept<|#|>Thing {i}." for i in range(100_000))
    entities, _, problems = parse_extraction_output(reply + "\n<|COMPLETE|>", "c1")
    assert len(entities) == MAX_RECORDS
    assert any("cut to" in p for p in problems)


class NaNEmbedder(ScriptedClient):
    """Embeddings that are all NaN."""

    def parse_embedding_response(self, response):
        parsed = super().parse_embedding_response(response)
        for item in parsed.data:
            item.embedding = [math.nan] * len(item.embedding)
        return parsed


def test_nan_embeddings_are_refused_never_stored(tmp_path):
    rag = make_rag(tmp_path, embedder_client=NaNEmbedder(embedding_dim=32))
    result = rag.insert(["Saturn has Titan."], ids=["a"])
    assert "NaN" in result.failed["a"]
    _, matrix = rag.chunks_vdb.rows()
    assert len(matrix) == 0 or np.isfinite(matrix).all()


def test_provider_error_text_is_redacted_in_the_stored_error(tmp_path):
    def leaky(prompt):
        raise RuntimeError("401 Unauthorized: request headers {'Authorization': "
                           "'Bearer sk-live-abcdefghijklmnopqrstuv'} api_key=gsk_abcdefghijklmnopqrstu")

    rag = make_rag(tmp_path, extraction=leaky)
    rag.insert(["Saturn has Titan."], ids=["a"])
    error = rag.doc_status.get_by_id("a")["error_msg"]
    assert error and "sk-live" not in error and "gsk_" not in error, error


def test_redact_text_shapes():
    assert "AIza" not in redact_text("key AIzaSyA1234567890123456789012345678901 failed")
    assert "secret-pw" not in redact_text("postgresql://me:secret-pw@db/rag refused")


def test_look_alike_names_become_one_node():
    reply = "\n".join([
        "entity<|#|>Acme\u200bCorp<|#|>organization<|#|>A firm.",
        "entity<|#|>Acme\u00adCorp<|#|>organization<|#|>A firm.",
        "entity<|#|>\u202eAcmeCorp<|#|>organization<|#|>A firm.",
        "entity<|#|>AcmeCorp<|#|>organization<|#|>A firm.",
        "<|COMPLETE|>"])
    entities, _, _ = parse_extraction_output(reply, "c1")
    assert {e.entity_name for e in entities} == {"AcmeCorp"}


def test_a_lone_surrogate_is_a_clear_error(tmp_path):
    rag = make_rag(tmp_path)
    with pytest.raises(ValueError, match="lone surrogate"):
        rag.insert(["Saturn \ud800 has Titan."])
