"""The hand-written fast paths of an insert give exactly what the generic code gives."""

import random

from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.index.stores import cached_form
from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord
from lightrag.core.tokenizer import get_encoding
from lightrag.utils.token_offsets import decode_with_offsets


def test_offsets_match_tiktoken_on_text_that_splits_characters():
    enc = get_encoding("cl100k_base")
    rng = random.Random(7)
    alphabet = "ab déf ñ 日本語 🙂🚀 Ωμέγα \n\t.,;ﷺ𝔘"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        tokens = enc.encode(text, disallowed_special=())
        assert decode_with_offsets(enc, tokens) == enc.decode_with_offsets(tokens), text
    assert decode_with_offsets(enc, []) == ("", [])


def test_cached_form_is_to_dict():
    extraction = ExtractionResult(
        chunk_id="c1",
        entities=[EntityRecord(entity_name="ADA", entity_type="person", description="A poet.",
                               source_id="c1", file_path="a.md")],
        relations=[RelationRecord(src_id="ADA", tgt_id="BYRON", description="Daughter.",
                                  keywords="family", weight=2.5, source_id="c1")],
        raw_outputs=["first", "glean"], gleaning_rounds=1, retries=2, problems=["dropped x"])
    form = cached_form(extraction)
    assert form == extraction.to_dict()
    assert list(form) == list(extraction.to_dict())
    form["raw_outputs"].append("changed")
    assert extraction.raw_outputs == ["first", "glean"]
