"""Tests of the query keyword extractors (LLM and heuristic)."""

from __future__ import annotations

import pytest

from lightrag.components.graph_rag.keyword_extractor import (
    HeuristicKeywordExtractor,
    KeywordExtractor,
    Keywords,
    dedup_keywords,
    heuristic_keywords,
    parse_keywords_output,
)
from lightrag.components.graph_rag.prompts import KEYWORDS_JSON_SCHEMA
from lightrag.components.model_client.local_llm_client import LocalLLMClient
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.generator import Generator

QUERY = "How did the Harwell steel mill closure affect Sheffield?"


def make(responses, **kwargs):
    client = ScriptedClient(responses=responses)
    return KeywordExtractor(Generator(model_client=client), **kwargs), client


def test_llm_keywords_parsed():
    answer = '{"high_level_keywords": ["industrial decline", "jobs"], "low_level_keywords": ["Sheffield"]}'
    extractor, client = make([answer])
    keywords = extractor(QUERY)
    assert keywords == Keywords(
        high_level=["industrial decline", "jobs"], low_level=["Sheffield"], from_llm=True
    )
    request = client.requests[0]
    assert QUERY in request["prompt"] and "high_level_keywords" in request["prompt"]
    assert request["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    "text",
    [
        '<think>hmm</think>```json\n{"high_level_keywords": ["a", "b"], "low_level_keywords": ["X"]}\n```',
        "Sure! {'high_level_keywords': 'a, b', 'low_level_keywords': 'X',} done",
        '{"high_level": ["a", "A", "b"], "low_level": "X\\n"}',
        '{"high_level_keywords": ["a; b"], "low_level_keywords": ["X"',
    ],
)
def test_tolerant_parse(text):
    assert parse_keywords_output(text) == (["a", "b"], ["X"])


def test_parse_rejects_answers_without_keywords():
    with pytest.raises(ValueError):
        parse_keywords_output("no json here")
    with pytest.raises(ValueError):
        parse_keywords_output('{"answer": 42}')


def test_dedup_keywords():
    assert dedup_keywords("a, b;\nA ,  c") == ["a", "b", "c"]
    assert dedup_keywords(None) == []
    assert dedup_keywords(['"Quoted"', "- bullet"]) == ["Quoted", "bullet"]


def test_user_keywords_skip_the_llm():
    extractor, client = make(["never used"])
    keywords = extractor(QUERY, hl_keywords=["economy"], ll_keywords=["Sheffield", "sheffield"])
    assert keywords == Keywords(high_level=["economy"], low_level=["Sheffield"])
    assert client.requests == []
    only_low = extractor(QUERY, ll_keywords=["Harwell"])
    assert only_low.low_level == ["Harwell"] and only_low.high_level == []
    assert client.requests == []


def test_empty_lists_short_query_becomes_low_level():
    extractor, _ = make(['{"high_level_keywords": [], "low_level_keywords": []}'] * 2)
    assert extractor("Tell me about kelp") == Keywords(low_level=["Tell me about kelp"], from_llm=True)
    long_query = "hello there, this is a long greeting that says nothing in particular at all"
    assert extractor(long_query) == Keywords(from_llm=True)


def test_model_failure_falls_back_to_heuristic():
    extractor, _ = make([RuntimeError("rate limited")])
    keywords = extractor(QUERY)
    assert not keywords.from_llm and "rate limited" in keywords.error
    assert "Harwell" in keywords.low_level[0] and "Sheffield" in keywords.low_level
    assert "closure" in keywords.high_level


def test_unparseable_answer_falls_back_to_heuristic():
    extractor, _ = make(["I think the keywords are steel and Sheffield."])
    keywords = extractor(QUERY)
    assert keywords.error.startswith("unparseable") and keywords.low_level


def test_json_schema_selection():
    local = KeywordExtractor(Generator(model_client=LocalLLMClient()))
    assert local._model_kwargs() == {"json_schema": KEYWORDS_JSON_SCHEMA}
    forced, client = make(['{"high_level_keywords": ["a"], "low_level_keywords": ["B"]}'],
                          use_json_schema=True)  # fmt: skip
    forced("q")
    assert client.requests[0]["json_schema"] == KEYWORDS_JSON_SCHEMA


async def test_acall():
    extractor, client = make(['{"high_level_keywords": ["a"], "low_level_keywords": ["B"]}'])
    keywords = await extractor.acall("What is B?")
    assert keywords.low_level == ["B"] and keywords.from_llm
    given = await extractor.acall("What is B?", hl_keywords=["x"])
    assert given.high_level == ["x"] and len(client.requests) == 1


@pytest.mark.parametrize(
    "query, high, low",
    [
        ("How did Marie Curie influence modern radiotherapy?",
         ["influence", "modern", "radiotherapy"], ["Marie Curie"]),
        ("Compare GPT-4 and iPhone sales in New York City",
         ["compare", "sales"], ["GPT-4", "iPhone", "New York City"]),
        ("What did the Bank of England say about inflation in 2023?",
         ["inflation"], ["Bank of England", "2023"]),
        ("what causes ocean acidification", ["causes", "ocean", "acidification"],
         ["causes ocean acidification"]),
        ("hello", ["hello"], ["hello"]),
        ("", [], []),
    ],
)  # fmt: skip
def test_heuristic_keywords(query, high, low):
    assert heuristic_keywords(query) == (high, low)


async def test_heuristic_extractor_component():
    extractor = HeuristicKeywordExtractor()
    keywords = extractor("Who founded the Tidewater Institute?")
    assert keywords.low_level == ["Tidewater Institute"] and keywords.high_level == ["founded"]
    assert keywords.error is None and not keywords.from_llm
    assert (await extractor.acall("x", ll_keywords=["Y"])).low_level == ["Y"]


def test_extracted_keywords_are_bounded_so_a_long_title_case_question_is_answered(tmp_path):
    from graph_fakes import fake_graph_rag

    from lightrag.components.graph_rag.keyword_extractor import Keywords
    from lightrag.components.graph_rag.schemas import MAX_KEYWORD_CHARS, MAX_KEYWORDS

    bounded = Keywords(low_level=["Word " * 60] + [f"k{i}" for i in range(100)])
    assert len(bounded.low_level) == MAX_KEYWORDS
    assert max(map(len, bounded.low_level)) <= MAX_KEYWORD_CHARS
    rag = fake_graph_rag(tmp_path)
    rag.insert(["The Cassini Huygens Mission studied Saturn Rings And Moons for thirteen years."])
    question = ("What Did The Cassini Huygens Mission Of NASA ESA And The Italian Space Agency "
                "Discover About Saturn Rings And Moons During Its Thirteen Years In Orbit Around "
                "The Planet Before Its Grand Finale Plunge Into The Atmosphere?")
    for mode in ("local", "hybrid", "ppr"):
        result = rag.query(question, mode=mode, only_need_context=True)
        assert "Cassini" in result.content, mode
