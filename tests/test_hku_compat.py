"""A program written for HKU LightRAG (``lightrag-hku``) runs on ``lightrag.LightRAG``: the model
as functions, storages initialized and finalized, ``insert`` returning a track id, ``query``
the answer text, HKU's names for deletes and graph edits."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from graph_fakes import extraction_reply

from lightrag import EmbeddingFunc, LightRAG, QueryParam
from lightrag.components.model_client.scripted_client import hashed_bag_of_words

DOCS = {
    "d1": "Mira Oduya founded Tallow Ferries in Port Brannock in 1987. Tallow Ferries sails to Veyla.",
    "d2": "Jonah Vell became chief executive of Tallow Ferries in 2015. Vell bought the Amber Wren.",
}


class FakeLLM:
    """HKU's ``llm_model_func`` contract: ``async (prompt, system_prompt, history_messages, **kw)``."""

    def __init__(self) -> None:
        self.calls = []

    async def __call__(self, prompt, system_prompt=None, history_messages=None, **kwargs):
        self.calls.append({"prompt": prompt, "system_prompt": system_prompt,
                           "history_messages": history_messages, **kwargs})
        earlier = [m["content"] for m in history_messages or []]
        text = "\n".join(filter(None, [system_prompt, *earlier, prompt]))
        if "Input text:" in text or "---Follow-up---" in prompt:
            return extraction_reply(text if "---Follow-up---" not in prompt else prompt)
        if "keywords" in text.lower() and "high_level_keywords" in text:
            return json.dumps({"high_level_keywords": ["ferries"], "low_level_keywords": ["Tallow Ferries"]})
        return "Mira Oduya founded Tallow Ferries."


async def embed(texts):
    return np.array([hashed_bag_of_words(t, 64) for t in texts], dtype=np.float32)


def make(tmp_path, **kwargs):
    llm = FakeLLM()
    rag = LightRAG(working_dir=str(tmp_path / "rag_storage"), llm_model_func=llm,
                   embedding_func=EmbeddingFunc(embedding_dim=64, max_token_size=8192, func=embed),
                   **kwargs)
    return rag, llm


def test_an_hku_program_runs_unchanged(tmp_path):
    rag, llm = make(tmp_path)

    async def main():
        await rag.initialize_storages()
        track_id = await rag.ainsert(list(DOCS.values()), ids=list(DOCS))
        answer = await rag.aquery("Who founded Tallow Ferries?", param=QueryParam(mode="mix"))
        data = await rag.aquery_data("Who founded Tallow Ferries?", param=QueryParam(mode="local"))
        status = await rag.get_processing_status()
        await rag.finalize_storages()
        return track_id, answer, data, status

    track_id, answer, data, status = asyncio.run(main())
    assert isinstance(track_id, str) and track_id
    assert answer == "Mira Oduya founded Tallow Ferries."
    assert data["status"] == "success" and data["metadata"]["query_mode"] == "local"
    assert "Tallow Ferries" in {e["entity_name"] for e in data["data"]["entities"]}
    assert status["processed"] == 2 and status["failed"] == 0
    extraction = next(c for c in llm.calls if "Input text:" in (c["prompt"] or ""))
    assert extraction["system_prompt"] and isinstance(extraction["history_messages"], list)


def test_hku_graph_edits_and_deletes(tmp_path):
    rag, _ = make(tmp_path)
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    created = rag.create_entity("Grey Heron", {"entity_type": "vessel", "description": "The flagship."})
    assert created["description"] == "The flagship."
    with pytest.raises(ValueError, match="already exists"):
        rag.create_entity("Grey Heron", {"description": "again"})
    renamed = rag.edit_entity("Grey Heron", {"entity_name": "Grey Heron II", "description": "Renamed."})
    assert renamed["description"] == "Renamed." and rag.graph_rag.graph.get_node("Grey Heron") is None
    with pytest.raises(ValueError, match="allow_rename"):
        rag.edit_entity("Grey Heron II", {"entity_name": "Heron"}, allow_rename=False)
    rag.create_relation("Grey Heron II", "Tallow Ferries",
                        {"description": "flagship of", "keywords": "fleet"})
    rag.delete_by_relation("Grey Heron II", "Tallow Ferries")
    assert rag.graph_rag.graph.get_edge("Grey Heron II", "Tallow Ferries") is None
    rag.delete_by_entity("Grey Heron II")
    assert rag.graph_rag.graph.get_node("Grey Heron II") is None
    rag.delete_by_doc_id("d2", delete_llm_cache=True)
    assert rag.graph_rag.graph.get_node("Jonah Vell") is None
    assert asyncio.run(rag.get_processing_status())["processed"] == 2  # d1 and the manual entity
    rag.export_data(str(tmp_path / "graph.csv"))
    assert list(tmp_path.glob("graph*.csv"))
    with pytest.raises(ValueError, match="'excel' is not supported"):
        rag.export_data(str(tmp_path / "graph.xlsx"), file_format="excel")


def test_hku_options_we_do_not_have_are_refused_by_name(tmp_path):
    rag, _ = make(tmp_path)
    with pytest.raises(ValueError, match="split_by_character"):
        rag.insert("Some text.", split_by_character="\n")
    with pytest.raises(ValueError, match="system_prompt"):
        rag.query("Who?", system_prompt="You are terse.")
    assert rag.graph_rag.status()["documents"].get("processed", 0) == 0  # nothing was stored


def test_hku_reads_and_graph_rag_methods_through_the_facade(tmp_path):
    rag, _ = make(tmp_path)
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    assert "Tallow Ferries" in asyncio.run(rag.get_graph_labels())
    info = asyncio.run(rag.get_entity_info("Mira Oduya"))
    assert info["graph_data"]["entity_type"] == "concept" and info["source_id"]
    relation = asyncio.run(rag.get_relation_info("Mira Oduya", "Tallow Ferries"))
    assert relation["graph_data"] is not None
    assert rag.status()["documents"]["processed"] == 2  # GraphRAG's own methods pass through
    with pytest.raises(AttributeError, match="clear_cache.*Coming from HKU"):
        rag.clear_cache()


def test_offline_defaults_without_model_functions(tmp_path):
    rag = LightRAG(working_dir=str(tmp_path / "offline"))
    assert type(rag.graph_rag.engine.answer_generator).__name__ == "ExtractiveAnswerer"
    assert "LightRAG(working_dir=" in repr(rag)


def test_an_async_streaming_llm_function_streams_to_sync_and_async_callers(tmp_path):
    llm = FakeLLM()

    async def streaming(prompt, system_prompt=None, history_messages=None, stream=False, **kwargs):
        reply = await llm(prompt, system_prompt, history_messages)
        if not stream:
            return reply

        async def pieces():
            for word in reply.split(" "):
                yield word + " "
        return pieces()

    rag = LightRAG(working_dir=str(tmp_path / "s"), llm_model_func=streaming,
                   embedding_func=EmbeddingFunc(embedding_dim=64, func=embed))
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    streamed = rag.query("Who founded Tallow Ferries?", param=QueryParam(mode="naive", stream=True))
    assert "".join(streamed).strip() == "Mira Oduya founded Tallow Ferries."

    async def read():
        pieces = await rag.aquery("Who founded Tallow Ferries?", param=QueryParam(mode="naive", stream=True))
        return "".join([p async for p in pieces]).strip()

    assert asyncio.run(read()) == "Mira Oduya founded Tallow Ferries."


def test_a_failed_stream_raises_instead_of_ending_empty(tmp_path):
    async def failing(prompt, system_prompt=None, history_messages=None, stream=False, **kwargs):
        if stream:
            raise RuntimeError("gateway down")
        return await FakeLLM()(prompt, system_prompt, history_messages)

    rag = LightRAG(working_dir=str(tmp_path / "f"), llm_model_func=failing,
                   embedding_func=EmbeddingFunc(embedding_dim=64, func=embed))
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    with pytest.raises(RuntimeError, match="gateway down"):
        "".join(rag.query("Who founded Tallow Ferries?", param=QueryParam(mode="naive", stream=True)))


def test_entity_edits_refuse_what_would_half_apply_or_silently_do_nothing(tmp_path):
    rag, _ = make(tmp_path)
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    with pytest.raises(ValueError, match="already exists \\(as 'Tallow Ferries'\\)"):
        rag.create_entity("TALLOW FERRIES", {"description": "again"})
    created = rag.create_entity("ops/plan", {"description": "A plan."})
    assert created["entity_name"] == "Ops/Plan" and rag.edit_entity("Ops/Plan", {"description": "B."})
    with pytest.raises(ValueError, match="empty name"):
        rag.edit_entity("Mira Oduya", {"entity_name": "  "})
    with pytest.raises(ValueError, match="differ only in case"):
        rag.edit_entity("Mira Oduya", {"entity_name": "MIRA ODUYA"})
    with pytest.raises(ValueError, match="cannot set entity fields \\['weight'\\]"):
        rag.merge_entities(["Jonah Vell"], "Mira Oduya", target_entity_data={"weight": 3})
    with pytest.raises(KeyError, match="Nobody"):
        rag.merge_entities(["Nobody"], "Mira Oduya")
    assert rag.graph_rag.graph.get_node("Jonah Vell") is not None  # nothing was merged


def test_a_given_track_id_finds_the_documents(tmp_path):
    rag, _ = make(tmp_path)
    assert rag.insert(list(DOCS.values()), ids=list(DOCS), track_id="my-track") == "my-track"
    assert set(rag.graph_rag.doc_status.get_by_track_id("my-track")) == set(DOCS)


def test_finalized_storages_open_again(tmp_path):
    rag, _ = make(tmp_path)
    rag.insert(DOCS["d1"], ids="d1")
    asyncio.run(rag.finalize_storages())
    with pytest.raises(RuntimeError, match="initialize_storages"):
        rag.query("Who founded Tallow Ferries?")
    asyncio.run(rag.initialize_storages())
    assert "Mira Oduya" in rag.query("Who founded Tallow Ferries?")


def test_async_edits_embed_in_the_callers_event_loop(tmp_path):
    """A model function bound to the caller's loop (a shared async client) failed when an a*
    edit embedded through a loop of its own."""
    loops = set()

    async def loop_bound_embed(texts):
        loops.add(id(asyncio.get_running_loop()))
        return await embed(texts)

    rag = LightRAG(working_dir=str(tmp_path / "loop"), llm_model_func=FakeLLM(),
                   embedding_func=EmbeddingFunc(embedding_dim=64, func=loop_bound_embed))

    async def main():
        await rag.ainsert(list(DOCS.values()), ids=list(DOCS))
        loops.clear()
        await rag.acreate_entity("Grey Heron", {"description": "The flagship."})
        await rag.aedit_entity("Grey Heron", {"description": "The old flagship."})
        await rag.acreate_relation("Grey Heron", "Tallow Ferries", {"description": "ship of"})
        await rag.amerge_entities(["Jonah Vell"], "Mira Oduya")
        return id(asyncio.get_running_loop())

    caller = asyncio.run(main())
    assert loops == {caller}


def test_sync_calls_share_one_event_loop_so_loop_bound_clients_work(tmp_path):
    """A module-level async client binds to the first loop that uses it; a new loop per sync
    call failed the second insert ("Event loop is closed")."""
    bound = {}

    async def loop_bound_embed(texts):
        loop = asyncio.get_running_loop()
        if bound.setdefault("loop", loop) is not loop or loop.is_closed():
            raise RuntimeError("bound to a different event loop")
        return await embed(texts)

    rag = LightRAG(working_dir=str(tmp_path / "sync"), llm_model_func=FakeLLM(),
                   embedding_func=EmbeddingFunc(embedding_dim=64, func=loop_bound_embed))
    rag.insert(DOCS["d1"], ids="d1")
    rag.insert(DOCS["d2"], ids="d2")
    assert asyncio.run(rag.get_processing_status())["processed"] == 2
    rag.create_entity("Grey Heron", {"description": "The flagship."})
    assert "Mira Oduya" in rag.query("Who founded Tallow Ferries?")
