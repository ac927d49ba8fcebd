"""Model output is untrusted: a bad or truncated extraction answer is never cached, is retried,
and the chunk fails with the reason when it stays bad.

Issue 16: unparseable answers were stored in the response cache, so a retry replayed the same
garbage (documents FAILED forever with the SQLite cache); truncated line output (records cut, no
completion marker) was accepted as success and cached, losing entities for good.
"""

from __future__ import annotations

import sqlite3

import pytest
from graph_fakes import extraction_reply

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.schemas import DocStatus
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator

D = "<|#|>"
TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London."
FULL = (
    f"entity{D}Ada Lovelace{D}person{D}A mathematician.\n"
    f"entity{D}Charles Babbage{D}person{D}An inventor.\n"
    f"entity{D}Analytical Engine{D}artifact{D}A mechanical computer.\n"
    f"relation{D}Ada Lovelace{D}Charles Babbage{D}collaboration{D}They worked together.\n<|DONE|>"
)
TRUNCATED = FULL[: FULL.index("A mechanical")] + "A mech"  # cut inside the third record
GARBAGE = "I'm sorry, as an AI model I cannot extract entities."


def cached_texts(path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT value FROM cache")]


def extractor_for(client, cache_path, **kwargs) -> EntityExtractor:
    return EntityExtractor(Generator(model_client=client, cache_path=str(cache_path)), **kwargs)


def test_unparseable_answer_is_not_cached_and_is_retried(tmp_path):
    cache = tmp_path / "cache.db"
    client = ScriptedClient(responses=[GARBAGE, FULL])
    result = extractor_for(client, cache, max_gleaning=0)(TEXT, "c1")
    assert result.ok and len(result.entities) == 3
    assert len(client.requests) == 2 and result.retries == 1
    texts = cached_texts(cache)
    assert len(texts) == 1 and "Ada Lovelace" in texts[0] and "sorry" not in texts[0]
    # a new process with the same cache file gets the good answer without calling the model
    offline = ScriptedClient(responses=[RuntimeError("the model must not be called")])
    again = extractor_for(offline, cache, max_gleaning=0)(TEXT, "c1")
    assert again.ok and len(again.entities) == 3 and offline.requests == []


def test_answers_that_stay_unparseable_fail_the_chunk_and_leave_no_cache(tmp_path):
    cache = tmp_path / "cache.db"
    client = ScriptedClient(responses=[GARBAGE, GARBAGE, GARBAGE])
    result = extractor_for(client, cache, max_gleaning=0, max_retries=2)(TEXT, "c1")
    assert not result.ok and "no entity or relation" in result.error
    assert "after 3 attempts" in result.error and len(client.requests) == 3
    assert cached_texts(cache) == []
    fixed = ScriptedClient(responses=[FULL])  # the next insert asks the model again
    assert extractor_for(fixed, cache, max_gleaning=0)(TEXT, "c1").ok
    assert len(fixed.requests) == 1


def test_truncated_line_output_is_retried_not_accepted(tmp_path):
    cache = tmp_path / "cache.db"
    client = ScriptedClient(responses=[TRUNCATED, FULL])
    result = extractor_for(client, cache, max_gleaning=0)(TEXT, "c1")
    assert result.ok and {e.entity_name for e in result.entities} == {
        "Ada Lovelace", "Charles Babbage", "Analytical Engine"}
    assert len(result.relations) == 1
    assert any("truncated" in p for p in result.problems)
    assert all("A mech" not in text or "A mechanical" in text for text in cached_texts(cache))


def test_truncated_output_that_stays_truncated_fails_with_the_reason(tmp_path):
    client = ScriptedClient(responses=[TRUNCATED] * 3)
    result = extractor_for(client, tmp_path / "c.db", max_gleaning=0)(TEXT, "c1")
    assert not result.ok and "truncated" in result.error and "completion marker" in result.error
    assert cached_texts(tmp_path / "c.db") == []


def test_truncated_json_is_retried():
    cut = '{"entities": [{"name": "Ada Lovelace", "type": "person", "description": "A mathem'
    good = ('{"entities": [{"name": "Ada Lovelace", "type": "person", "description": "A '
            'mathematician."}], "relationships": []}')
    client = ScriptedClient(responses=[cut, good])
    result = EntityExtractor(Generator(model_client=client), use_json=True, max_gleaning=0)(TEXT, "c")
    assert result.ok and result.entities[0].description == "A mathematician."
    assert len(client.requests) == 2


def test_marker_can_be_optional_for_models_that_never_write_it():
    no_marker = FULL.replace("<|DONE|>", "")
    client = ScriptedClient(responses=[no_marker])
    extractor = EntityExtractor(Generator(model_client=client), max_gleaning=0,
                                require_completion_marker=False)
    assert extractor(TEXT, "c").ok and len(client.requests) == 1


def test_a_bad_gleaning_round_is_retried_then_ignored():
    client = ScriptedClient(responses=[FULL, GARBAGE, GARBAGE])
    extractor = EntityExtractor(Generator(model_client=client), max_gleaning=1, max_retries=1)
    result = extractor(TEXT, "c")
    assert result.ok and len(result.entities) == 3
    assert len(client.requests) == 3
    assert any("gleaning round 1" in p and "ignored" in p for p in result.problems)
    assert GARBAGE not in client.requests[-1]["prompt"]  # rejected answers are never replayed


@pytest.mark.asyncio
async def test_async_path_retries_too(tmp_path):
    client = ScriptedClient(responses=[GARBAGE, FULL])
    result = await extractor_for(client, tmp_path / "c.db", max_gleaning=0).acall(TEXT, "c1")
    assert result.ok and len(client.requests) == 2
    assert len(cached_texts(tmp_path / "c.db")) == 1


def test_truncation_reason_cases():
    from lightrag.components.graph_rag.extraction_parser import truncation_reason

    assert truncation_reason(FULL) is None
    assert truncation_reason("<|DONE|>") is None
    assert truncation_reason(GARBAGE) is None  # not records: the parser's "nothing parsed" case
    assert "fields" in truncation_reason(f"entity{D}Ada{D}person")
    assert truncation_reason('{"entities": [], "relationships": []}') is None


def test_system_records_failed_chunks_and_recovers_on_the_next_insert(tmp_path):
    """The 'FAILED forever with the SQLite cache' defect, end to end."""
    state = {"broken": True}

    def model(prompt: str) -> str:
        reply = extraction_reply(prompt)
        return GARBAGE if state["broken"] else reply

    cache = tmp_path / "llm_cache.db"
    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(Generator(model_client=ScriptedClient(response_fn=model),
                                            cache_path=str(cache)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=lambda p: "ok")),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path / "store"),
    )
    doc = "Voyager 1 photographed Titan in 1980. Titan is the largest moon of Saturn."
    first = rag.insert(doc, ids="doc-1")
    assert "doc-1" in first.failed and "no entity or relation" in first.failed["doc-1"]
    assert rag.doc_status.get_by_id("doc-1")["status"] in (DocStatus.FAILED, DocStatus.FAILED.value)
    assert cached_texts(cache) == []
    state["broken"] = False
    second = rag.insert(doc, ids="doc-1")
    assert second.processed == ["doc-1"] or "doc-1" in second.processed
    assert rag.graph.has_node("Titan")


def test_control_characters_escape_sequences_and_endless_descriptions_never_reach_the_graph():
    from lightrag.components.graph_rag.extraction_parser import MAX_DESCRIPTION_CHARS

    reply = (f"entity{D}Null\x00Byte\x1b[31mRed\x1b[0m{D}person{D}Rings a bell\x07.\n"
             f"entity{D}Loop{D}concept{D}{'again ' * 40_000}\n"
             f"relation{D}NullByteRed{D}Loop{D}link{D}\x1b]0;owned\x07Linked.\n<|DONE|>")
    result = EntityExtractor(Generator(model_client=ScriptedClient(responses=[reply])),
                             max_gleaning=0)(TEXT, "chunk-1")
    names = {e.entity_name: e for e in result.entities}
    assert set(names) == {"NullByteRed", "Loop"}
    assert names["NullByteRed"].description == "Rings a bell."
    assert len(names["Loop"].description) <= MAX_DESCRIPTION_CHARS
    (relation,) = result.relations
    assert relation.description == "Linked."
