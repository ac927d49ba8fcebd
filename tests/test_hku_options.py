"""HKU LightRAG's constructor fields from its README's programs (``llm_model_kwargs`` for an
Ollama host, ``addon_params``, ``enable_llm_cache=False``, storages by name, summary sizes) work
on ``lightrag.LightRAG``: each one that has an effect here has the same one, and the others are
refused with the reason (they raised ``TypeError: GraphRAG got unknown argument(s)`` before)."""

from __future__ import annotations

import logging

import pytest
from test_hku_compat import DOCS, make


def _calls_with(llm, marker):
    return [c for c in llm.calls if marker in "\n".join(filter(None, [c["system_prompt"], c["prompt"]]))]


def test_llm_model_kwargs_go_with_every_model_call(tmp_path):
    rag, llm = make(tmp_path, llm_model_kwargs={"host": "http://127.0.0.1:11434",
                                                "options": {"num_ctx": 8192}})
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    assert rag.query("Who founded Tallow Ferries?") == "Mira Oduya founded Tallow Ferries."
    assert len(llm.calls) >= 3  # extraction, keywords, answer
    for call in llm.calls:
        assert call["host"] == "http://127.0.0.1:11434" and call["options"] == {"num_ctx": 8192}


def test_addon_params_set_the_extraction_prompts_language_and_entity_types(tmp_path):
    rag, llm = make(tmp_path, addon_params={"language": "French",
                                            "entity_types": ["ferry_company", "vessel"]})
    rag.insert(DOCS["d1"], ids="d1")
    extraction = _calls_with(llm, "Input text:")[0]
    assert "French" in extraction["system_prompt"]
    assert "ferry_company, vessel" in extraction["system_prompt"]


def test_descriptions_are_summarized_by_the_llm_with_hkus_summary_fields(tmp_path):
    rag, llm = make(tmp_path, force_llm_summary_on_merge=2, summary_max_tokens=50,
                    summary_length_recommended=77)
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    summaries = _calls_with(llm, "Merged description:")
    assert summaries and "Tallow Ferries" in summaries[0]["prompt"]
    assert "at most about 77 words" in summaries[0]["system_prompt"]
    node = rag.graph_rag.graph.get_node("Tallow Ferries")
    assert node["description"] == "Mira Oduya founded Tallow Ferries."  # the model's summary


def test_vector_threshold_batch_size_and_timeout_are_mapped(tmp_path):
    rag, _ = make(tmp_path, vector_db_storage_cls_kwargs={"cosine_better_than_threshold": 0.35},
                  embedding_batch_num=7, default_llm_timeout=42)
    index = rag.graph_rag.index
    assert index.cosine_threshold == 0.35 and index.embedding_batch_size == 7
    assert rag.graph_rag.engine.answer_generator.timeout == 42
    assert rag.graph_rag.extractor.generator.timeout == 42


def test_hkus_default_storages_and_speed_only_fields_are_accepted(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="lightrag.components.graph_rag.hku_options"):
        rag, _ = make(tmp_path, kv_storage="JsonKVStorage", vector_storage="NanoVectorDBStorage",
                      graph_storage="NetworkXStorage", doc_status_storage="JsonDocStatusStorage",
                      enable_llm_cache=False, enable_llm_cache_for_entity_extract=True,
                      max_parallel_insert=2, embedding_func_max_async=8)
    rag.insert(DOCS["d1"], ids="d1")
    assert rag.query("Who founded Tallow Ferries?") == "Mira Oduya founded Tallow Ferries."
    assert "NanoVectorDBStorage" in caplog.text and "answers are not cached" in caplog.text


@pytest.mark.parametrize("fields, error, message", [
    ({"graph_storage": "Neo4JStorage"}, ValueError, "graph_storage='Neo4JStorage' is not supported"),
    ({"kv_storage": "PGKVStorage"}, ValueError, "storage='postgres'"),
    ({"vector_storage": "PGVectorStorage"}, ValueError, "storage='postgres'"),
    ({"vector_storage": "MilvusVectorDBStorage"}, ValueError, "not supported"),
    ({"enable_llm_cache_for_entity_extract": False}, ValueError, "kept by its text"),
    ({"addon_params": {"example_number": 2}}, ValueError, "example_number"),
    ({"vector_db_storage_cls_kwargs": {"m": 16}}, ValueError, "cosine_better_than_threshold"),
    ({"rerank_model_func": print}, TypeError, "reranker="),
    ({"top_k": 20}, TypeError, r"QueryParam\(top_k=...\)"),
    ({"no_such_field": 1}, TypeError, "no_such_field"),
])
def test_fields_without_an_effect_here_are_refused_with_the_reason(tmp_path, fields, error, message):
    with pytest.raises(error, match=message):
        make(tmp_path, **fields)


def test_addon_params_need_an_llm(tmp_path):
    from lightrag import LightRAG

    with pytest.raises(ValueError, match="pass llm_model_func"):
        LightRAG(working_dir=str(tmp_path), addon_params={"language": "French"})


def test_this_packages_own_vector_storage_names_still_pass_through(tmp_path):
    rag, _ = make(tmp_path, vector_storage="MappedVectorStorage")
    rag.insert(DOCS["d1"], ids="d1")
    assert rag.query("Who founded Tallow Ferries?") == "Mira Oduya founded Tallow Ferries."
