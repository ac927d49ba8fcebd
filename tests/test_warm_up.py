"""``GraphRAG.warm_up``: the local models a first query needs are loaded before it; nothing
remote is called."""

from __future__ import annotations

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag import HeuristicKeywordExtractor
from lightrag.components.model_client import ScriptedClient


class CountingClient(ScriptedClient):
    calls = 0

    def call(self, *args, **kwargs):
        CountingClient.calls += 1
        return super().call(*args, **kwargs)


def test_warm_up_calls_no_remote_or_scripted_model(tmp_path):
    rag = fake_graph_rag(tmp_path, embedder_client=CountingClient(embedding_dim=32))
    CountingClient.calls = 0
    assert rag.warm_up() >= 0
    assert CountingClient.calls == 0


def test_warm_up_loads_the_spacy_pipeline(tmp_path):
    pytest.importorskip("spacy")
    rag = fake_graph_rag(tmp_path)
    keywords = rag.engine.keyword_extractor  # spaCy when installed
    assert isinstance(keywords, HeuristicKeywordExtractor) and keywords._nlp is None
    rag.warm_up()
    assert keywords._nlp is not None
    assert "Hank Snow" in keywords("Where was Hank Snow born?").low_level
