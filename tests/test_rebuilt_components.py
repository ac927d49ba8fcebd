"""Components rebuilt from ``to_dict`` (a pickled or saved pipeline, lightrag 0.1's
``pickle_to_file``/``from_dict``) work as the originals did. Each of these raised
``AttributeError`` on its first use after the rebuild: what ``to_dict`` leaves out (a spaCy
pipeline, a PPR ranking, an open database, a file store's records) was never made again."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.agent.react import ReActAgent
from lightrag.components.graph_rag import HeuristicKeywordExtractor
from lightrag.components.model_client import ScriptedClient
from lightrag.core.component import Component

DOCS = ["Voyager 1 flew past Saturn in 1980 and studied Titan.",
        "Titan is the largest moon of Saturn, with a thick nitrogen atmosphere.",
        "Cassini orbited Saturn from 2004 and dropped the Huygens probe onto Titan."]


def _rebuilt(component: Component) -> Component:
    return type(component).from_dict(pickle.loads(pickle.dumps(component.to_dict())))


def test_a_rebuilt_graph_rag_reopens_its_store_and_finds_the_same_context_in_every_mode(tmp_path):
    rag = fake_graph_rag(str(tmp_path))
    rag.insert(DOCS)
    rebuilt = _rebuilt(rag)
    assert rebuilt.index.status()["chunks"] == rag.index.status()["chunks"] > 0
    for mode in ("naive", "local", "global", "hybrid", "mix", "ppr"):
        want = rag.query("What is the atmosphere of Titan?", mode=mode, only_need_context=True)
        got = rebuilt.query("What is the atmosphere of Titan?", mode=mode, only_need_context=True)
        assert got.content == want.content, mode
        assert "Titan" in got.content or mode == "global", mode  # global: no relation matches
    rebuilt.insert(["Huygens landed on Titan in 2005."])  # the insert's progress map is made again
    assert rebuilt.index.status()["documents"]["processed"] == len(DOCS) + 1


def test_a_rebuilt_keyword_extractor_extracts_as_the_original():
    original = HeuristicKeywordExtractor()
    question = "Which probe did Cassini drop onto Titan?"
    assert _rebuilt(original)(question) == original(question)


def test_a_rebuilt_agent_still_has_its_llm_tool():
    agent = _rebuilt(ReActAgent(model_client=ScriptedClient(responses=["ok"])))
    manager = agent.tool_manager
    assert [t.definition.func_name for t in manager.tools] == ["llm_tool", "finish"]
    assert manager.context["llm_tool"] is manager.tools[0]  # one object, not three copies
    assert manager.tools[0]("hi").output == "ok"


def test_rebuilt_file_stores_read_their_files_again(tmp_path):
    from lightrag.components.storage.json_kv import JsonKVStorage
    from lightrag.components.storage.networkx_graph import NetworkXGraphStorage
    from lightrag.components.storage.numpy_vector import NumpyVectorStorage

    kv = JsonKVStorage("docs", working_dir=str(tmp_path))
    kv.upsert({"a": {"text": "alpha"}})
    kv.index_done_callback()
    graph = NetworkXGraphStorage("g", working_dir=str(tmp_path))
    graph.upsert_edge("A", "B", {"weight": 1.0})
    graph.index_done_callback()
    vectors = NumpyVectorStorage("v", working_dir=str(tmp_path), embedding_dim=4)
    matrix = np.eye(4, dtype=np.float32)
    vectors.upsert({f"id{i}": {"content": str(i)} for i in range(4)}, vectors=matrix)
    vectors.index_done_callback()
    assert _rebuilt(kv).get_by_id("a") == {"text": "alpha"}
    assert _rebuilt(graph).has_edge("A", "B")
    hits = _rebuilt(vectors).query(matrix[2], top_k=1)
    assert [h["id"] for h in hits] == ["id2"]


def test_a_rebuilt_spacy_extractor_plans_its_workers():
    pytest.importorskip("spacy", reason="the spacy extra is not installed")
    from lightrag.components.graph_rag.spacy_extractor import SpacyEntityExtractor

    original = SpacyEntityExtractor()
    assert _rebuilt(original).worker_processes(100) == original.worker_processes(100)
