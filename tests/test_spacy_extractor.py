"""Tests of the spaCy (no-LLM) entity extractor, on the real small English model."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from lightrag.components.graph_rag.entity_extractor import ExtractionResult  # noqa: E402
from lightrag.components.graph_rag.spacy_extractor import (  # noqa: E402
    SpacyEntityExtractor,
    load_spacy_model,
)

pytestmark = pytest.mark.slow

PARAGRAPH = (
    "In 2019 the marine biologist Noor Haddad joined the Tidewater Institute in Halifax. "
    "She tracked grey seal colonies with thermal drones. "
    "Noor Haddad later presented the results at the Royal Society in London, where the "
    "Tidewater Institute received an award. The seal colonies grew by 12 percent."
)


@pytest.fixture(scope="module")
def extractor():
    try:
        load_spacy_model()
    except OSError as e:
        pytest.skip(f"spaCy model not installed: {e}")
    return SpacyEntityExtractor()


@pytest.fixture(scope="module")
def result(extractor):
    return extractor(PARAGRAPH, "chunk-1", "seals.txt")


def test_named_entities_with_mapped_types(result):
    assert isinstance(result, ExtractionResult) and result.ok
    types = {e.entity_name: e.entity_type for e in result.entities}
    assert types["Noor Haddad"] == "person"
    assert types["Tidewater Institute"] == "organization"
    assert types["Halifax"] == "location" and types["London"] == "location"
    assert types["2019"] == "date"
    assert all(e.source_id == "chunk-1" and e.file_path == "seals.txt" for e in result.entities)


def test_noun_chunks_become_concepts(result):
    types = {e.entity_name: e.entity_type for e in result.entities}
    assert types.get("Thermal Drone") == "concept"  # determiner dropped, head noun lemmatised
    assert "Seal Colony" in types
    assert "She" not in types and "Percent" not in types  # pronouns; parts of skipped numbers


def test_descriptions_are_the_mentioning_sentences(result):
    haddad = next(e for e in result.entities if e.entity_name == "Noor Haddad")
    assert "joined the Tidewater Institute" in haddad.description
    assert "presented the results" in haddad.description
    assert "grey seal" not in haddad.description


def test_cooccurrence_relations(result):
    by_pair = {frozenset((r.src_id, r.tgt_id)): r for r in result.relations}
    both = by_pair[frozenset(("Noor Haddad", "Tidewater Institute"))]
    assert both.weight == 2.0  # two sentences mention both
    assert "join" in both.keywords and "present" in both.keywords
    assert "Halifax" in by_pair[frozenset(("Halifax", "Tidewater Institute"))].description
    assert all(r.src_id != r.tgt_id for r in result.relations)
    assert frozenset(("Noor Haddad", "Thermal Drone")) not in by_pair  # different sentences


def test_without_noun_chunks(extractor):
    plain = SpacyEntityExtractor(use_noun_chunks=False)
    result = plain("Ada Lovelace met Charles Babbage in London.", "c")
    assert {e.entity_type for e in result.entities} <= {"person", "location"}
    rel = next(r for r in result.relations if {r.src_id, r.tgt_id} == {"Ada Lovelace", "Charles Babbage"})
    assert rel.keywords == "meet" and rel.weight == 1.0


def test_empty_text_is_an_empty_result(extractor):
    result = extractor("", "c")
    assert result.ok and result.entities == [] and result.relations == []


def test_extract_many_matches_call(extractor):
    results = extractor.extract_many(
        [(PARAGRAPH, "a", "seals.txt"), ("Ada Lovelace met Charles Babbage.", "b")]
    )
    assert [r.chunk_id for r in results] == ["a", "b"]
    single = extractor(PARAGRAPH, "a", "seals.txt")
    assert [e.entity_name for e in results[0].entities] == [e.entity_name for e in single.entities]
    by_mapping = extractor.extract_many({"x": "Paris is in France.",
                                         "y": {"content": "Oslo.", "file_path": "n.md"}})
    assert [r.chunk_id for r in by_mapping] == ["x", "y"] and by_mapping[1].entities[0].file_path == "n.md"
    with pytest.raises(ValueError):
        extractor.extract_many([("only text",)])


async def test_acall(extractor):
    result = await extractor.acall("Ada Lovelace met Charles Babbage.", "c")
    assert {e.entity_name for e in result.entities} >= {"Ada Lovelace", "Charles Babbage"}


def test_missing_model_is_a_clear_error():
    with pytest.raises(OSError, match="no_such_spacy_model"):
        load_spacy_model("no_such_spacy_model")


def test_the_model_is_loaded_once_however_it_is_named(extractor):
    from lightrag.components.graph_rag.spacy_extractor import DEFAULT_SPACY_MODEL

    assert load_spacy_model() is load_spacy_model(DEFAULT_SPACY_MODEL)
    assert load_spacy_model(name=DEFAULT_SPACY_MODEL) is load_spacy_model()
