"""GraphRAG end to end with a scripted extraction LLM: insert, six modes, budgets, deletion,
resume after a crash, YAML round trip."""

import asyncio
import json

import pytest
from graph_fakes import extraction_reply, the_answer

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
    QueryParam,
)
from lightrag.components.graph_rag.schemas import DocStatus
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator
from lightrag.utils import build

DOCS = {
    "voyager.md": "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
                  "Voyager 1 photographed Titan, the largest moon of Saturn.",
    "cassini.md": "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
                  "Titan in 2005. Cassini found plumes on Enceladus.",
    "apollo.md": "Apollo 11 landed on the Moon in 1969. Neil Armstrong and Buzz Aldrin walked on "
                 "the Moon. Michael Collins stayed in orbit.",
}


def make_rag(tmp_path, answers=None, extractor_client=None, **kwargs):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(
            generator=Generator(model_client=extractor_client
                                or ScriptedClient(response_fn=extraction_reply)),
            max_gleaning=1),
        answer_generator=Generator(model_client=ScriptedClient(
            response_fn=answers or the_answer)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path),
        cosine_threshold=0.05,
        **kwargs,
    )


def insert_all(rag):
    return rag.insert(list(DOCS.values()), file_paths=list(DOCS))


def test_insert_builds_graph_and_vectors(tmp_path):
    rag = make_rag(tmp_path)
    result = insert_all(rag)
    assert len(result.processed) == 3 and not result.failed
    assert rag.graph.has_node("Voyager 1") and rag.graph.has_node("Saturn")
    assert rag.graph.has_edge("Voyager 1", "Jupiter") and rag.graph.has_edge("Saturn", "Jupiter")
    saturn = rag.graph.get_node("Saturn")
    assert "voyager.md" in saturn["file_path"] and "cassini.md" in saturn["file_path"]
    status = rag.status()
    assert status["documents"]["processed"] == 3 and status["chunks"] == result.chunks
    assert len(rag.entities_vdb) == status["entities"]
    assert len(rag.relations_vdb) == status["relations"]


def test_reinsert_is_skipped_and_dedup_by_content(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    calls = len(rag.extractor.generator.model_client.requests)
    again = rag.insert(list(DOCS.values()))
    assert len(again.skipped) == 3 and not again.processed
    assert len(rag.extractor.generator.model_client.requests) == calls


def test_all_six_modes_return_context_and_references(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    for mode in ["naive", "local", "global", "hybrid", "mix"]:
        result = rag.query("Which moon of Saturn was photographed by Voyager 1?", mode=mode)
        assert result.content == "The answer.", mode
        raw = result.raw_data
        assert raw["chunks"], mode
        assert raw["references"] and raw["references"][0]["file_path"].endswith(".md"), mode
        assert raw["processing_info"]["mode"] == mode
    local = rag.query("Voyager 1 Saturn", mode="local", only_need_context=True)
    assert "Knowledge Graph Data (Entity)" in local.content and "Voyager 1" in local.content
    bypass = rag.query("Hello?", mode="bypass")
    assert bypass.content == "The answer." and bypass.raw_data["chunks"] == []


def test_user_keywords_and_prompt_contents(tmp_path):
    seen = []
    rag = make_rag(tmp_path, answers=lambda p: seen.append(p) or "ok")
    insert_all(rag)
    result = rag.query("anything", mode="local", ll_keywords=["Apollo 11"], user_prompt="Be terse.",
                       conversation_history=[{"role": "user", "content": "earlier question"}])
    assert result.raw_data["keywords"]["low_level"] == ["Apollo 11"]
    assert "Apollo 11" in [e["entity_name"] for e in result.raw_data["entities"]]
    assert "Be terse." in seen[-1] and "earlier question" in seen[-1] and "anything" in seen[-1]
    prompt = rag.query("anything", mode="naive", only_need_prompt=True).content
    assert "Document Chunks" in prompt and "anything" in prompt


def test_token_budgets_limit_context(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    wide = rag.query("Saturn Titan Voyager Cassini", mode="hybrid", only_need_context=True)
    narrow = rag.query("Saturn Titan Voyager Cassini", mode="hybrid", only_need_context=True,
                       max_entity_tokens=40, max_relation_tokens=40, max_total_tokens=400)
    assert len(narrow.raw_data["entities"]) < len(wide.raw_data["entities"])
    assert len(narrow.raw_data["relationships"]) <= len(wide.raw_data["relationships"])
    entity_lines = [json.dumps({"entity": e["entity_name"]}) for e in narrow.raw_data["entities"]]
    assert sum(len(line) for line in entity_lines) < 40 * 6


def test_weight_pick_method_and_streaming(tmp_path):
    rag = make_rag(tmp_path, answers=lambda p: "streamed answer text")
    insert_all(rag)
    weighted = rag.query("Saturn", mode="local", chunk_pick_method="WEIGHT", only_need_context=True)
    assert weighted.raw_data["chunks"]
    streamed = rag.query("Saturn", mode="mix", stream=True)
    assert streamed.is_streaming and "".join(streamed.response_iterator) == "streamed answer text"

    async def astream():
        result = await rag.aquery("Saturn", mode="mix", stream=True)
        return "".join([piece async for piece in result.response_iterator])

    assert asyncio.run(astream()) == "streamed answer text"


def test_relevance_merge_reaches_bridge_entities(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    ask = dict(mode="local", ll_keywords=["Huygens"], top_k=1, only_need_context=True)
    ranked = rag.query("Which probe landed on Titan?", chunk_merge_method="RELEVANCE", **ask)
    interleaved = rag.query("Which probe landed on Titan?", chunk_merge_method="ROUND_ROBIN", **ask)
    assert [e["entity_name"] for e in ranked.raw_data["entities"]] == ["Huygens"]
    # Titan is the far end of the kept relation Huygens-Titan: its other chunk (Voyager's photo
    # of Titan) is a candidate only when the bridge entities are followed.
    assert [c["file_path"] for c in interleaved.raw_data["chunks"]] == ["cassini.md"]
    assert [c["file_path"] for c in ranked.raw_data["chunks"]] == ["cassini.md", "voyager.md"]
    scores = [c["score"] for c in ranked.raw_data["chunks"]]
    assert scores == sorted(scores, reverse=True)


def test_support_breaks_similarity_ties():
    from collections import Counter

    import numpy as np

    from lightrag.components.graph_rag.context import query_similarities, rank_by_relevance

    class Vectors:
        def get_vectors_by_ids(self, ids):
            table = {"far": [0.0, 1.0], "near": [1.0, 0.0], "near_cited": [1.0, 0.0]}
            return {i: np.array(table[i], dtype=np.float32) for i in ids if i in table}

    candidates = ["near", "far", "near_cited", "gone"]
    similarity = query_similarities(Vectors(), candidates, np.array([2.0, 0.0]))
    ranked = rank_by_relevance(candidates, Counter({"near_cited": 3}), similarity, limit=2)
    assert [c for c, _ in ranked] == ["near_cited", "near"]
    assert ranked[1][1] == pytest.approx(1.0)


def test_bad_queries_raise_clear_errors(tmp_path):
    rag = make_rag(tmp_path)
    with pytest.raises(ValueError, match="unknown query mode"):
        rag.query("x", mode="sideways")
    with pytest.raises(ValueError, match="unknown query parameters"):
        rag.query("x", colour="red")
    with pytest.raises(ValueError, match="chunk_merge_method is 'SCORE'"):
        rag.query("x", chunk_merge_method="SCORE")
    with pytest.raises(ValueError, match="non-empty"):
        rag.query("   ")
    with pytest.raises(ValueError, match="document 1 is empty"):
        rag.insert(["ok text", " "])
    with pytest.raises(TypeError, match="not a str"):
        rag.insert([b"bytes"])
    with pytest.raises(ValueError, match="2 ids for 1 documents"):
        rag.insert("text", ids=["a", "b"])


def test_empty_store_gives_no_context_answer(tmp_path):
    result = make_rag(tmp_path).query("What is Titan?", mode="mix")
    assert result.content.endswith("[no-context]")
    assert result.raw_data["processing_info"]["no_context"]


def test_failed_extraction_is_recorded_and_retried(tmp_path):
    flaky_calls = {"n": 0}

    def flaky(prompt):
        flaky_calls["n"] += 1
        if "Apollo" in prompt and flaky_calls["n"] < 50:
            return "garbage without records"
        return extraction_reply(prompt)

    rag = make_rag(tmp_path, extractor_client=ScriptedClient(response_fn=flaky))
    first = insert_all(rag)
    apollo_id = first.doc_ids[2]
    assert apollo_id in first.failed and first.failed_chunks
    assert rag.doc_status.get_by_id(apollo_id)["status"] == DocStatus.FAILED.value
    assert rag.graph.has_node("Saturn") and not rag.graph.has_node("Neil Armstrong")
    flaky_calls["n"] = 100
    second = rag.insert(DOCS["apollo.md"])
    assert apollo_id in second.processed and rag.graph.has_node("Neil Armstrong")


def test_crash_mid_insert_leaves_reloadable_stores_and_resumes(tmp_path, monkeypatch):
    rag = make_rag(tmp_path)
    rag.insert(DOCS["voyager.md"], file_paths="voyager.md")
    saturn_before = rag.graph.get_node("Saturn")

    def crash(*args, **kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(rag.merger, "acall", crash)
    crashed = rag.insert(DOCS["cassini.md"], file_paths="cassini.md")
    assert crashed.failed
    monkeypatch.undo()

    reloaded = make_rag(tmp_path)
    assert reloaded.graph.get_node("Saturn")["description"] == saturn_before["description"]
    counts = reloaded.doc_status.get_status_counts()
    assert counts["processed"] == 1 and counts["failed"] == 1
    resumed = reloaded.insert([])
    assert len(resumed.processed) == 1
    saturn = reloaded.graph.get_node("Saturn")
    assert "cassini.md" in saturn["file_path"]
    assert reloaded.graph.get_node("Voyager 1")["file_path"] == "voyager.md"
    again = reloaded.insert(DOCS["cassini.md"], file_paths="cassini.md")
    assert again.skipped and reloaded.graph.get_node("Saturn") == saturn


def test_delete_removes_exclusive_items_and_rebuilds_shared(tmp_path):
    rag = make_rag(tmp_path)
    result = insert_all(rag)
    voyager_id, cassini_id = result.doc_ids[0], result.doc_ids[1]
    titan_before = rag.graph.get_node("Titan")
    assert "voyager.md" in titan_before["file_path"]
    deletion = rag.delete_by_doc_id(voyager_id)
    assert "Voyager 1" in deletion.entities_deleted and not rag.graph.has_node("Voyager 1")
    assert "Titan" in deletion.entities_rebuilt
    titan = rag.graph.get_node("Titan")
    assert "voyager.md" not in titan["file_path"] and "Voyager" not in titan["description"]
    assert rag.doc_status.get_by_id(voyager_id) is None
    assert all(not c.startswith(voyager_id) for c in rag.text_chunks.keys())
    hits = rag.entities_vdb.query("Voyager 1", top_k=50)
    assert all(h["entity_name"] != "Voyager 1" for h in hits)
    reloaded = make_rag(tmp_path)
    assert not reloaded.graph.has_node("Voyager 1") and reloaded.graph.has_node("Titan")
    assert cassini_id in reloaded.doc_status.keys()
    with pytest.raises(KeyError):
        rag.delete_by_doc_id("doc-missing")


def test_edit_merge_and_export(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    rag.edit_entity("Titan", {"description": "Largest moon of Saturn."})
    assert rag.graph.get_node("Titan")["description"] == "Largest moon of Saturn."
    rag.edit_entity("Buzz Aldrin", {}, rename_to="Edwin Aldrin")
    assert rag.graph.has_node("Edwin Aldrin") and not rag.graph.has_node("Buzz Aldrin")
    assert rag.graph.get_node_edges("Edwin Aldrin")
    merged = rag.merge_entities(["Cassini", "Huygens"], "Cassini Huygens")
    assert "cassini.md" in merged["file_path"]
    assert not rag.graph.has_node("Cassini") and not rag.graph.has_node("Huygens")
    for fmt, name in [("graphml", "kg.graphml"), ("json", "kg.json")]:
        rag.export(str(tmp_path / name), format=fmt)
        assert (tmp_path / name).stat().st_size > 0
    with pytest.raises(ValueError, match="cannot edit"):
        rag.edit_entity("Titan", {"colour": "orange"})


def test_a_merged_entity_belongs_to_its_documents_so_deleting_them_removes_it(tmp_path):
    rag = make_rag(tmp_path)
    cassini_id = insert_all(rag).doc_ids[1]
    rag.merge_entities(["Cassini", "Huygens"], "Cassini Huygens")
    items = rag.index.stores.doc_graph_items.get_by_id(cassini_id)
    assert "Cassini Huygens" in items["entities"]
    assert not {"Cassini", "Huygens"} & {*items["entities"], *(n for p in items["relations"] for n in p)}
    deletion = rag.delete_by_doc_id(cassini_id)
    assert "Cassini Huygens" in deletion.entities_deleted
    assert not rag.graph.has_node("Cassini Huygens") and rag.index.verify() == []


def aldrin_renamed(tmp_path):
    """A store of apollo.md and gemini.md (both name "Buzz Aldrin"), the entity then renamed
    "Edwin Aldrin": ``(rag, apollo id, gemini id)``."""
    rag = make_rag(tmp_path)
    apollo, gemini = rag.insert(
        [DOCS["apollo.md"], "Buzz Aldrin flew on Gemini 12 in 1966. Buzz Aldrin walked in space."],
        file_paths=["apollo.md", "gemini.md"]).doc_ids
    rag.edit_entity("Buzz Aldrin", {}, rename_to="Edwin Aldrin")
    return rag, apollo, gemini


def test_a_renamed_entity_is_rebuilt_under_its_new_name_and_goes_with_its_last_document(tmp_path):
    rag, apollo, gemini = aldrin_renamed(tmp_path)
    deletion = rag.delete_by_doc_id(apollo)
    assert "Edwin Aldrin" in deletion.entities_rebuilt
    aldrin = rag.graph.get_node("Edwin Aldrin")  # rebuilt from gemini.md's records, renamed
    assert "Gemini 12" in aldrin["description"] and "Moon" not in aldrin["description"]
    assert aldrin["file_path"] == "gemini.md" and rag.index.verify() == []
    rag.delete_by_doc_id(gemini)  # its last document: it goes
    assert not rag.graph.has_node("Edwin Aldrin") and rag.index.verify() == []
    rag.insert("Buzz Aldrin wrote a memoir.", file_paths="memoir.md")  # the old name, anew
    assert rag.graph.has_node("Buzz Aldrin")


def test_an_old_name_used_again_and_renamed_again_keeps_both_entities_rebuildable(tmp_path):
    rag, apollo, gemini = aldrin_renamed(tmp_path)
    memoir = rag.insert("Buzz Aldrin wrote a memoir in 2009.", file_paths="memoir.md").doc_ids[0]
    rag.edit_entity("Buzz Aldrin", {}, rename_to="Aldrin the author")  # the old name, renamed again
    deletion = rag.delete_by_doc_id(apollo)
    assert "Edwin Aldrin" in deletion.entities_rebuilt
    aldrin = rag.graph.get_node("Edwin Aldrin")  # gemini.md's records of "Buzz Aldrin"
    assert "Gemini 12" in aldrin["description"] and aldrin["file_path"] == "gemini.md"
    author = rag.graph.get_node("Aldrin the author")
    assert "memoir" in author["description"] and "Gemini" not in author["description"]
    assert rag.index.verify() == []
    rag.delete_by_doc_id(gemini)
    assert not rag.graph.has_node("Edwin Aldrin") and rag.graph.has_node("Aldrin the author")
    rag.delete_by_doc_id(memoir)
    assert not rag.graph.has_node("Aldrin the author") and rag.index.verify() == []


def test_tree_prints_and_yaml_round_trip(tmp_path):
    rag = make_rag(tmp_path)
    text = repr(rag)
    for part in ["GraphRAG(", "(chunker): Chunker(", "(extractor): EntityExtractor(",
                 "(index): GraphIndex(", "(merger): GraphMerger(", "(graph): SQLGraphStorage(",
                 "(local_mode): LocalMode(", "(answer_generator): Generator("]:
        assert part in text, part
    rebuilt = build(rag.to_config())
    assert repr(rebuilt) == text
    assert QueryParam.from_dict(rag.query_defaults).mode == "mix"


def test_failure_inside_a_document_commit_rolls_it_back(tmp_path, monkeypatch):
    rag = make_rag(tmp_path)
    rag.insert(DOCS["voyager.md"], file_paths="voyager.md")
    saturn_before = rag.graph.get_node("Saturn")
    chunks_before = set(rag.text_chunks.keys())
    real_upsert_edge = rag.index.graph.upsert_edge
    calls = {"n": 0}

    def fail_on_third_edge(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real_upsert_edge(*args, **kwargs)

    monkeypatch.setattr(rag.index.graph, "upsert_edge", fail_on_third_edge)
    failed = rag.insert(DOCS["cassini.md"], file_paths="cassini.md")
    assert failed.failed and "disk full" in next(iter(failed.failed.values()))
    monkeypatch.undo()
    # the half-merged document left nothing behind, in memory or on disk
    for view in (rag, make_rag(tmp_path)):
        assert view.graph.get_node("Saturn") == saturn_before
        assert not view.graph.has_node("Enceladus")
        assert set(view.text_chunks.keys()) == chunks_before
        assert view.doc_status.get_status_counts()["failed"] == 1
    resumed = make_rag(tmp_path).insert([])
    assert len(resumed.processed) == 1
    assert make_rag(tmp_path).graph.has_node("Enceladus")


def test_exports_hold_readable_user_data_with_normal_permissions(tmp_path):
    import csv
    import os

    rag = make_rag(tmp_path / "store")
    insert_all(rag)
    umask = os.umask(0)
    os.umask(umask)
    (json_file,) = rag.export(str(tmp_path / "kg.json"))
    data = json.loads(json_file.read_text())
    saturn = next(n for n in data["nodes"] if n["id"] == "Saturn")
    assert isinstance(saturn["source_id"], list) and len(saturn["source_id"]) >= 2
    assert sorted(saturn["file_path"]) == ["cassini.md", "voyager.md"]
    assert "<SEP>" not in json_file.read_text() and "context_line" not in json_file.read_text()
    assert json_file.stat().st_mode & 0o777 == 0o666 & ~umask
    files = rag.export(str(tmp_path / "kg.csv"))
    assert [f.name for f in files] == ["kg_entities.csv", "kg_relations.csv"]
    rows = list(csv.DictReader(files[0].open()))
    assert "<SEP>" not in files[0].read_text() and {"id", "description"} <= set(rows[0])
    (graphml,) = rag.export(str(tmp_path / "kg.graphml"))
    assert "<SEP>" not in graphml.read_text()


def test_query_param_fields_the_caller_set_win_over_config_defaults_even_at_class_defaults(tmp_path):
    rag = make_rag(tmp_path, query_defaults={"mode": "ppr", "chunk_top_k": 40})
    chosen = rag.resolve_query_param(QueryParam(mode="mix", chunk_top_k=20))
    assert (chosen.mode, chosen.chunk_top_k) == ("mix", 20)  # HKU's usual call: mix is the default
    assert rag.resolve_query_param(QueryParam(top_k=5)).mode == "ppr"  # unset fields: the config's
    assigned = QueryParam()
    assigned.mode = "mix"
    assert rag.resolve_query_param(assigned).mode == "mix"
    assert rag.resolve_query_param(QueryParam(mode="mix"), mode="local").mode == "local"
    rag.insert(DOCS["voyager.md"], file_paths="voyager.md")
    result = rag.query("Which planets did Voyager 1 fly past?", param=QueryParam(mode="mix"))
    assert result.raw_data["processing_info"]["mode"] == "mix"


def test_bytes_and_unknown_export_extensions_get_errors_that_say_what_to_do(tmp_path):
    rag = make_rag(tmp_path)
    with pytest.raises(TypeError, match="bytes, not a str: decode it first"):
        rag.insert(b"Voyager 1 flew past Jupiter.")
    with pytest.raises(TypeError, match="document 1 is bytes"):
        rag.insert(["Voyager 1 flew past Jupiter.", b"Titan"])
    with pytest.raises(TypeError, match="a str or a list of str, got int"):
        rag.insert(123)
    rag.insert(DOCS["voyager.md"], file_paths="voyager.md")
    with pytest.raises(ValueError, match=r"extension \.md is not a format"):
        rag.export(str(tmp_path / "graph.md"))
    assert not (tmp_path / "graph.md").exists()
    (written,) = rag.export(str(tmp_path / "graph"))
    assert written.stat().st_size > 0


def test_a_budget_smaller_than_the_best_chunk_gets_its_opening_not_nothing(tmp_path):
    """graph_rag_local_llm.yaml's 900-token window against 1,200-token chunks retrieved no chunk
    at all, so the model answered "not enough information" on every normal document."""
    from graph_fakes import fake_graph_rag

    rag = fake_graph_rag(tmp_path, chunk_tokens=1200, chunk_overlap=0, max_gleaning=0)
    filler = " ".join(f"Voyager 1 measured plasma wave number {i} near Saturn." for i in range(120))
    rag.insert("Voyager 1 photographed Titan in 1980. " + filler, file_paths="long.md")
    context = rag.query("Which moon did Voyager 1 photograph?", mode="naive",
                        only_need_context=True, max_total_tokens=800)
    (chunk,) = context.raw_data["chunks"]
    assert chunk["content"].startswith("Voyager 1 photographed Titan in 1980.")
    assert chunk["truncated"] and chunk["tokens"] < 800
    assert "Voyager 1 photographed Titan" in context.content


def test_an_endless_generated_answer_is_cut(tmp_path):
    from lightrag.components.graph_rag.query_engine import MAX_ANSWER_CHARS

    rag = make_rag(tmp_path, answers=lambda prompt: "Voyager flew past Saturn. " * 100_000)
    insert_all(rag)
    result = rag.query("Which planets did Voyager fly past?", mode="bypass")
    assert len(result.content) <= MAX_ANSWER_CHARS
    assert result.raw_data["processing_info"]["answer_cut_from_chars"] == 2_600_000


def test_a_deletion_counts_the_relations_that_went_with_its_entities(tmp_path):
    rag = make_rag(tmp_path)
    voyager_id = insert_all(rag).doc_ids[0]
    before = rag.status()["relations"]
    result = rag.delete_by_doc_id(voyager_id)
    removed = before - rag.status()["relations"]
    assert removed > 0 and len(result.relations_deleted) == removed


def test_copies_of_a_query_param_keep_their_own_record_of_what_was_set(tmp_path):
    import copy

    rag = make_rag(tmp_path, query_defaults={"mode": "ppr", "chunk_top_k": 40})
    original = QueryParam(top_k=5)
    duplicate = copy.copy(original)
    duplicate.mode = "mix"
    assert rag.resolve_query_param(original).mode == "ppr"  # the copy's assignment stays its own
    assert rag.resolve_query_param(duplicate).mode == "mix"
    changed = original.with_changes(only_need_context=True)
    resolved = rag.resolve_query_param(changed)
    assert (resolved.mode, resolved.chunk_top_k, resolved.top_k) == ("ppr", 40, 5)
    assert resolved.only_need_context


def test_a_sync_stream_sends_its_request_when_read(tmp_path):
    """A sync query's stream is read after the query's event loop ended: its request is sent
    then, in the reader's thread, where Ctrl-C stops the wait (red team 4)."""
    asked = []
    rag = make_rag(tmp_path, answers=lambda p: asked.append(p) or "streamed answer text")
    insert_all(rag)
    streamed = rag.query("Saturn", mode="mix", stream=True)
    assert asked == [] and streamed.response_iterator.error is None
    assert "".join(streamed.response_iterator) == "streamed answer text" and len(asked) == 1
