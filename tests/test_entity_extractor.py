"""Tests of the LLM entity extractor: prompts, gleaning, merging, JSON mode and failures."""

from __future__ import annotations

import pytest

from lightrag.components.graph_rag.entity_extractor import EntityExtractor, ExtractionResult
from lightrag.components.graph_rag.prompts import EXTRACTION_JSON_SCHEMA, fill_generator_prompt
from lightrag.components.model_client.local_llm_client import LocalLLMClient
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.generator import Generator

D = "<|#|>"
TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London."
FIRST = (
    f"entity{D}Ada Lovelace{D}person{D}A mathematician.\n"
    f"entity{D}Charles Babbage{D}person{D}An inventor.\n"
    f"relation{D}Ada Lovelace{D}Charles Babbage{D}collaboration{D}They worked together.\n<|DONE|>"
)
SECOND = (
    f"entity{D}Analytical Engine{D}artifact{D}A mechanical computer designed by Babbage.\n"
    f"entity{D}Ada Lovelace{D}person{D}Ada Lovelace is a mathematician who wrote about the engine.\n"
    f"relation{D}Charles Babbage{D}Analytical Engine{D}design{D}Babbage designed the engine.\n"
    "<|DONE|>"
)


def make(responses, **kwargs):
    client = ScriptedClient(responses=responses)
    return EntityExtractor(Generator(model_client=client), **kwargs), client


def test_single_call_without_gleaning():
    extractor, client = make([FIRST], max_gleaning=0)
    result = extractor(TEXT, "chunk-1", "notes.txt")
    assert result.ok and result.error is None
    assert len(client.requests) == 1
    assert [e.entity_name for e in result.entities] == ["Ada Lovelace", "Charles Babbage"]
    assert result.relations[0].file_path == "notes.txt"
    assert result.raw_outputs == [FIRST] and result.gleaning_rounds == 0
    prompt = client.requests[0]["prompt"]
    assert TEXT in prompt and "person, organization" in prompt and "<|DONE|>" in prompt


def test_gleaning_adds_records_and_longer_description_wins():
    extractor, client = make([FIRST, SECOND, "<|DONE|>"], max_gleaning=3)
    result = extractor(TEXT, "chunk-1")
    assert result.ok
    assert len(client.requests) == 3  # first pass, a round that adds, a round that adds nothing
    assert result.gleaning_rounds == 2
    by_name = {e.entity_name: e for e in result.entities}
    assert set(by_name) == {"Ada Lovelace", "Charles Babbage", "Analytical Engine"}
    assert by_name["Ada Lovelace"].description.startswith("Ada Lovelace is a mathematician who")
    assert len(result.relations) == 2
    gleaning_prompt = client.requests[1]["prompt"]
    assert TEXT in gleaning_prompt and "They worked together." in gleaning_prompt
    assert "do not repeat" in gleaning_prompt
    assert "A mechanical computer" in client.requests[2]["prompt"]  # history grows


def test_gleaning_stops_when_nothing_new():
    extractor, client = make([FIRST, FIRST], max_gleaning=5)
    result = extractor(TEXT, "chunk-1")
    assert len(client.requests) == 2 and result.gleaning_rounds == 1
    assert len(result.entities) == 2


def test_max_gleaning_limits_rounds():
    extractor, client = make([FIRST, SECOND], max_gleaning=1)
    result = extractor(TEXT, "chunk-1")
    assert len(client.requests) == 2 and result.gleaning_rounds == 1
    assert len(result.entities) == 3


def test_model_failure_sets_error():
    extractor, _ = make([RuntimeError("server down")])
    result = extractor(TEXT, "chunk-9")
    assert not result.ok and "server down" in result.error
    assert result.entities == [] and result.chunk_id == "chunk-9"


def test_unparseable_output_sets_error_after_retries():
    extractor, client = make(["Sorry, I cannot do that."] * 3)
    result = extractor(TEXT, "c")
    assert result.error and "no entity or relation" in result.error
    assert "after 3 attempts" in result.error and result.retries == 2
    assert len(client.requests) == 3


def test_explicit_empty_answer_is_valid_and_skips_gleaning():
    extractor, client = make(["<|DONE|>"], max_gleaning=2)
    result = extractor("The weather was mild.", "c")
    assert result.ok and result.entities == [] and result.relations == []
    assert len(client.requests) == 1


def test_failed_gleaning_keeps_first_pass():
    extractor, _ = make([FIRST, RuntimeError("timeout")], max_gleaning=1)
    result = extractor(TEXT, "c")
    assert result.ok and len(result.entities) == 2
    assert any("gleaning round 1 failed" in p for p in result.problems)


def test_duplicates_within_one_answer_merge():
    text = FIRST.replace(
        "<|DONE|>", f"entity{D}ADA LOVELACE{D}person{D}A much longer description.\n<|DONE|>"
    )
    extractor, _ = make([text], max_gleaning=0)
    result = extractor(TEXT, "c")
    assert [e.description for e in result.entities if e.entity_name == "Ada Lovelace"] == [
        "A much longer description."
    ]


def test_json_mode_sends_response_format_and_parses():
    answer = (
        '{"entities": [{"name": "Oslo", "type": "location", "description": "A city."}],'
        ' "relationships": []}'
    )
    extractor, client = make([answer, '{"entities": [], "relationships": []}'], use_json=True)
    result = extractor("Oslo is a city.", "c")
    assert result.ok and [e.entity_name for e in result.entities] == ["Oslo"]
    assert client.requests[0]["response_format"] == {"type": "json_object"}
    assert '"relationships"' in client.requests[0]["prompt"]
    assert "one JSON object" in client.requests[1]["prompt"]


def test_json_mode_kwargs_for_local_llm_and_override():
    local = EntityExtractor(Generator(model_client=LocalLLMClient()), use_json=True)
    assert local.json_mode_kwargs == {"json_schema": EXTRACTION_JSON_SCHEMA}
    extractor, client = make(['{"entities": [], "relationships": []}'], use_json=True,
                             json_mode_kwargs={})  # fmt: skip
    assert extractor("Nothing here.", "c").ok
    assert "response_format" not in client.requests[0]


def test_custom_types_language_and_examples():
    extractor, client = make(["<|DONE|>"], entity_types=["gene", "protein"], language="French",
                             examples="EXAMPLE-MARKER")  # fmt: skip
    extractor("x", "c")
    prompt = client.requests[0]["prompt"]
    assert "gene, protein, other" in prompt and "French" in prompt and "EXAMPLE-MARKER" in prompt
    assert "Noor Haddad" not in prompt


def test_streaming_generator_is_asked_not_to_stream():
    client = ScriptedClient(responses=[FIRST])
    gen = Generator(model_client=client, model_kwargs={"stream": True})
    result = EntityExtractor(gen, max_gleaning=0)(TEXT, "c")
    assert result.ok and client.requests[0]["stream"] is False


def test_templates_accepted_and_rejected():
    client = ScriptedClient(responses=[FIRST])
    gen = Generator(model_client=client, template="{{input_str}}")
    assert EntityExtractor(gen, max_gleaning=0)(TEXT, "c").ok
    assert client.requests[0]["prompt"].startswith("<SYS>")
    assert fill_generator_prompt(gen, "S", "U") == {"input_str": "<SYS>\nS\n</SYS>\nU"}
    with pytest.raises(ValueError, match="input_str"):
        EntityExtractor(Generator(model_client=client, template="{{question}}"))
    with pytest.raises(ValueError):
        EntityExtractor(Generator(model_client=client), max_gleaning=-1)


def test_result_round_trips_through_dict():
    extractor, _ = make([FIRST], max_gleaning=0)
    result = extractor(TEXT, "c")
    again = ExtractionResult.from_dict(result.to_dict())
    assert again == result
    assert again.entities[0].entity_name == "Ada Lovelace"


async def test_acall_matches_call():
    extractor, client = make([FIRST, SECOND, "<|DONE|>"], max_gleaning=2)
    result = await extractor.acall(TEXT, "c", "f.md")
    assert result.ok and result.gleaning_rounds == 2 and len(result.entities) == 3
    assert len(client.requests) == 3


def test_repr_shows_settings():
    extractor, _ = make([FIRST])
    assert "max_gleaning=1" in repr(extractor) and "Generator" in repr(extractor)
