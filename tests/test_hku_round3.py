"""Round 3 of running HKU LightRAG programs unchanged on ``lightrag.LightRAG``: the question
reaches ``llm_model_func`` alone as ``prompt``, HKU's storage attributes read (async) from the
facade, ``lightrag.base`` imports, and ``include_vector_data``."""

from __future__ import annotations

import asyncio

import pytest
from test_hku_compat import DOCS, make

from lightrag import QueryParam


def loaded(tmp_path):
    rag, llm = make(tmp_path)
    rag.insert(list(DOCS.values()), ids=list(DOCS), file_paths=["one.txt", "two.txt"])
    return rag, llm


def test_the_answer_call_gets_the_question_alone_as_prompt(tmp_path):
    rag, llm = loaded(tmp_path)
    rag.query("Who founded Tallow Ferries?", param=QueryParam(mode="local", user_prompt="Be brief."))
    answer_call = llm.calls[-1]
    assert answer_call["prompt"] == "Who founded Tallow Ferries?"  # was "<User>\n...\n</User>\nYou:"
    assert "Be brief." in answer_call["system_prompt"] and "Tallow Ferries" in answer_call["system_prompt"]
    rag.query("Hello there", param=QueryParam(mode="bypass"))
    assert llm.calls[-1]["prompt"] == "Hello there"


def test_hku_storage_attributes_read_asynchronously(tmp_path):
    rag, _ = loaded(tmp_path)
    from lightrag.base import DocStatus

    async def read():
        graph = rag.chunk_entity_relation_graph  # was an AttributeError naming docs/compat.md
        node = await graph.get_node("Tallow Ferries")
        has_edge = await graph.has_edge("Mira Oduya", "Tallow Ferries")
        labels = await graph.get_all_labels()
        doc = await rag.full_docs.get_by_id("d1")
        processed = await rag.doc_status.get_docs_by_statuses([DocStatus.PROCESSED])
        counts = await rag.doc_status.get_status_counts()
        by_track = await rag.doc_status.get_docs_by_track_id("no-such-track")
        hits = await rag.entities_vdb.query("Tallow Ferries", top_k=2)
        return node, has_edge, labels, doc, processed, counts, by_track, hits

    node, has_edge, labels, doc, processed, counts, by_track, hits = asyncio.run(read())
    assert node["entity_type"] and has_edge is True and "Mira Oduya" in labels
    assert doc["content"] == DOCS["d1"]
    assert set(processed) == set(DOCS) and processed["d1"].status == DocStatus.PROCESSED
    assert list(counts) == ["pending", "parsing", "analyzing", "processing", "preprocessed",
                            "processed", "failed"] and counts["processed"] == 2
    assert by_track == {} and 1 <= len(hits) <= 2
    with pytest.raises(PermissionError, match="read-only"):
        rag.full_docs.upsert({"x": {"content": "y"}})
    assert rag.graph_rag.doc_status.get_by_id("d1")["status"] == "processed"  # ours stays sync


def test_lightrag_base_names_import():
    from lightrag.base import DeletionResult, DocStatus
    from lightrag.base import QueryParam as BaseQueryParam

    assert BaseQueryParam is QueryParam and DocStatus.FAILED == "failed"
    assert DeletionResult("success", "d1", "Document d1 deleted.").status_code == 200


def test_include_vector_data_adds_hkus_vector_data(tmp_path):
    rag, _ = loaded(tmp_path)
    info = asyncio.run(rag.get_entity_info("Tallow Ferries", include_vector_data=True))
    assert info["vector_data"] == info["graph_data"] and info["vector_data"] is not info["graph_data"]
    assert "vector_data" not in asyncio.run(rag.get_entity_info("Tallow Ferries"))
    relation = asyncio.run(rag.get_relation_info("Mira Oduya", "Tallow Ferries", include_vector_data=True))
    assert relation["vector_data"]["description"] == relation["graph_data"]["description"]
    assert asyncio.run(rag.get_entity_info("Nobody", include_vector_data=True))["vector_data"] is None


def test_conversation_history_reaches_the_model_as_history_messages(tmp_path):
    rag, llm = loaded(tmp_path)
    history = [{"role": "user", "content": "Tell me about ferries."},
               {"role": "assistant", "content": "Tallow Ferries is a ferry line."}]
    for mode in ("local", "bypass"):
        rag.query("Who founded it?", param=QueryParam(mode=mode, conversation_history=history))
        call = llm.calls[-1]
        assert call["history_messages"] == history and call["prompt"] == "Who founded it?"
        assert "ferry line" not in call["system_prompt"]  # was an "Earlier conversation" block

    async def streamed():
        param = QueryParam(mode="local", stream=True, conversation_history=history)
        return [piece async for piece in await rag.aquery("Who founded it?", param=param)]

    assert "".join(asyncio.run(streamed())) and llm.calls[-1]["history_messages"] == history
