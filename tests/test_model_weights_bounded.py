"""A model's relation weight is a finite number however it is written; nothing stored is
Infinity (SQLite's JSON functions and JSON readers reject it)."""

import json
import math

import pytest

from lightrag.components.graph_rag import EntityExtractor, GraphRAG, HeuristicKeywordExtractor
from lightrag.components.model_client import ScriptedClient
from lightrag.components.storage.graph_properties import clean_properties
from lightrag.core import Embedder, Generator


def _reply(weight: str) -> str:
    return ('{"entities":[{"name":"Aa","type":"person","description":"d"},'
            '{"name":"Bb","type":"person","description":"e"}],'
            '"relationships":[{"source":"Aa","target":"Bb","description":"x","keywords":"k",'
            f'"weight":{weight}}}]}}')


@pytest.mark.parametrize("weight, stored", [("Infinity", 2.0), ("-5", 2.0), ("NaN", 2.0),
                                            ("1e308", 2e6), ("3", 6.0)])
def test_model_weights_are_finite_and_bounded(tmp_path, weight, stored):
    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=16)),
        extractor=EntityExtractor(generator=Generator(model_client=ScriptedClient(
            responses=[_reply(weight)], cycle=True)), use_json=True, max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(responses=["ok"], cycle=True)),
        keyword_extractor=HeuristicKeywordExtractor(), working_dir=str(tmp_path))
    rag.insert(["Aa met Bb.", "Bb met Aa again."])
    edge = rag.graph.get_edge("AA", "BB") or rag.graph.get_edge("Aa", "Bb")
    assert edge is not None and edge["weight"] == stored
    rows = rag.index.stores.db.query("SELECT data FROM edges")
    assert all(math.isfinite(json.loads(r[0])["weight"]) for r in rows)
    assert rag.index.verify() == []


def test_a_non_finite_property_is_refused_by_name():
    with pytest.raises(ValueError, match="'weight' is inf"):
        clean_properties({"weight": float("inf")}, "edge a-b")
