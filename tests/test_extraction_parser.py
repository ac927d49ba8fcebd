"""Tests of the tolerant extraction-output parser."""

from __future__ import annotations

import pytest

from lightrag.components.graph_rag.extraction_parser import (
    MAX_NAME_CHARS,
    has_completion_marker,
    is_explicit_empty,
    normalize_delimiters,
    parse_extraction_output,
    records_to_json,
    records_to_lines,
)

D = "<|#|>"
GOOD = (
    f"entity{D}Ada Lovelace{D}Person{D}Ada Lovelace is a mathematician.\n"
    f"entity{D}Charles Babbage{D}person{D}Charles Babbage designed engines.\n"
    f"relation{D}Ada Lovelace{D}Charles Babbage{D}collaboration, computing{D}They worked together.\n"
    "<|DONE|>"
)


def names(entities):
    return [e.entity_name for e in entities]


def pairs(relations):
    return [(r.src_id, r.tgt_id) for r in relations]


def test_good_output():
    entities, relations, problems = parse_extraction_output(GOOD, "chunk-1", "a.txt")
    assert names(entities) == ["Ada Lovelace", "Charles Babbage"]
    assert [e.entity_type for e in entities] == ["person", "person"]
    assert pairs(relations) == [("Ada Lovelace", "Charles Babbage")]
    rel = relations[0]
    assert rel.keywords == "collaboration, computing"
    assert rel.weight == 1.0
    assert rel.source_id == "chunk-1" and rel.file_path == "a.txt"
    assert entities[0].source_id == "chunk-1" and entities[0].created_at
    assert problems == []


def test_think_block_fences_bullets_and_quotes():
    text = (
        f"<think>The entities are... entity{D}Fake{D}x{D}y</think>\nSure, here they are:\n```\n"
        f'1. entity{D}"Ada Lovelace"{D}PERSON{D}"A mathematician."\n'
        f"- entity{D}'charles babbage'{D}Person{D}An inventor.\n"
        f"* relation{D}Ada Lovelace{D}Charles Babbage{D}work{D}Worked together.\n```\n<|DONE|>"
    )
    entities, relations, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["Ada Lovelace", "Charles Babbage"]
    assert entities[0].description == "A mathematician."
    assert pairs(relations) == [("Ada Lovelace", "Charles Babbage")]
    assert any("not records" in p for p in problems)  # the prose line


@pytest.mark.parametrize("bad", ["<|##|>", "<|>", "<#>", "<|SEP|>", "<|sep|>", "< | # | >", "|#|"])
def test_corrupted_delimiters(bad):
    text = f"entity{bad}Oslo{bad}location{bad}Capital of Norway.\n<|DONE|>"
    entities, _, _ = parse_extraction_output(text, "c")
    assert names(entities) == ["Oslo"]
    assert entities[0].description == "Capital of Norway."


def test_normalize_delimiters_leaves_other_tags():
    assert normalize_delimiters("a<|##|>b<s>c<br>") == f"a{D}b<s>c<br>"


def test_records_separated_by_delimiter_instead_of_newlines():
    text = (
        f"entity{D}A{D}person{D}desc a{D}entity{D}B{D}organization{D}desc b{D}"
        f"relation{D}A{D}B{D}relationship{D}A works at B{D}entity{D}C{D}concept{D}desc c"
    )
    entities, relations, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["A", "B", "C"]
    assert pairs(relations) == [("A", "B")]
    assert relations[0].keywords == "relationship"  # a label word as keyword stays a field
    assert "completion marker missing" in problems


def test_five_field_entity_row_is_a_relation():
    text = f"entity{D}Alice{D}Bob{D}friendship{D}Alice and Bob are friends.\n<|DONE|>"
    entities, relations, problems = parse_extraction_output(text, "c")
    assert entities == []
    assert pairs(relations) == [("Alice", "Bob")]
    assert relations[0].keywords == "friendship"
    assert any("labelled entity" in p for p in problems)


def test_drops_empty_and_self_loops_and_bad_types():
    text = (
        f"entity{D}{D}person{D}no name\n"
        f"entity{D}Alice{D}person{D}\n"
        f"entity{D}Widget{D}Tool/Device{D}A small tool.\n"
        f"entity{D}Gadget{D}Home Appliance, Tool{D}A device.\n"
        f"relation{D}Alice Smith{D}ALICE SMITH{D}self{D}Alice knows herself.\n"
        f"relation{D}Alice{D}Bob{D}knows{D}\n<|DONE|>"
    )
    entities, relations, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["Widget", "Gadget"]
    assert entities[0].entity_type == "unknown"
    assert entities[1].entity_type == "homeappliance"
    assert relations == []
    joined = " | ".join(problems)
    for expected in ("empty name", "empty description", "rejected", "self-loop"):
        assert expected in joined


def test_names_normalised_and_capped():
    long_name = "x" * 400
    text = f"entity{D}  ELECTRONS {D}concept{D}Particles.\nentity{D}{long_name}{D}concept{D}Long."
    entities, _, _ = parse_extraction_output(text, "c")
    assert entities[0].entity_name == "Electrons"
    assert len(entities[1].entity_name) == MAX_NAME_CHARS


def test_old_tuple_format_with_strength():
    text = (
        '("entity"<|>"ADA LOVELACE"<|>"PERSON"<|>"A mathematician")##\n'
        '("relationship"<|>"ADA LOVELACE"<|>"BABBAGE"<|>"They worked together"<|>"collaboration"<|>8)##'
        '("content_keywords"<|>"computing")<|COMPLETE|>'
    )
    entities, relations, _ = parse_extraction_output(text, "c")
    assert names(entities) == ["Ada Lovelace"]
    rel = relations[0]
    assert (rel.src_id, rel.tgt_id, rel.weight) == ("Ada Lovelace", "Babbage", 8.0)
    assert rel.description == "They worked together" and rel.keywords == "collaboration"


def test_partial_output_keeps_complete_rows():
    text = f"entity{D}Alpha{D}concept{D}First letter.\nentity{D}Beta{D}conc"
    entities, _, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["Alpha"]
    assert "completion marker missing" in problems
    assert any("Beta" in p for p in problems)


def test_unlabelled_rows_and_template_echo():
    text = (
        f"entity{D}name{D}type{D}description\n"
        f"Foo{D}concept{D}A foo.\nFoo{D}Bar{D}link{D}Foo links to Bar.\n<|DONE|>"
    )
    entities, relations, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["Foo"]
    assert pairs(relations) == [("Foo", "Bar")]
    assert any("template" in p for p in problems)


def test_json_output():
    text = (
        "<think>ok</think>Here it is:\n```json\n"
        '{"entities": [{"name": "paris", "type": "City", "description": "Capital of France."},'
        ' {"name": "France", "type": "location", "description": "A country."}],'
        ' "relationships": [{"source": "Paris", "target": "France", "keywords": ["capital", "city"],'
        ' "description": "Paris is the capital of France.", "weight": 2}]}\n```'
    )
    entities, relations, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["Paris", "France"]
    assert entities[0].entity_type == "city"
    assert relations[0].keywords == "capital, city" and relations[0].weight == 2.0
    assert problems == []


def test_truncated_json_keeps_complete_items():
    text = (
        '{"entities": [{"name": "Oslo", "type": "location", "description": "A city."}, '
        '{"name": "Bergen", "type": "loc'
    )
    entities, _, problems = parse_extraction_output(text, "c")
    assert names(entities) == ["Oslo"]
    assert any("Bergen" in p for p in problems)


def test_line_output_with_braces_in_descriptions():
    text = f'entity{D}Set Notation{D}concept{D}Written as {{"a": [1]}}.\n<|DONE|>'
    entities, _, _ = parse_extraction_output(text, "c")
    assert names(entities) == ["Set Notation"]


def test_garbage_and_empty():
    assert parse_extraction_output("I cannot help with that.", "c")[:2] == ([], [])
    assert parse_extraction_output("", "c") == ([], [], ["empty output"])
    assert not is_explicit_empty("I cannot help with that.")
    assert is_explicit_empty("Nothing to extract.\n<|DONE|>")
    assert is_explicit_empty('{"entities": [], "relationships": []}')
    assert not is_explicit_empty(f"entity{D}A{D}B\n<|DONE|>")
    assert has_completion_marker("x <|complete|>") and not has_completion_marker("x")


def test_round_trips():
    entities, relations, _ = parse_extraction_output(GOOD, "c")
    for rendered in (records_to_lines(entities, relations), records_to_json(entities, relations)):
        again, again_rel, problems = parse_extraction_output(rendered, "c")
        assert names(again) == names(entities) and pairs(again_rel) == pairs(relations)
        assert problems == []
