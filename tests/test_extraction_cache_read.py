"""Cached extractions read back as the objects that were cached, re-labelled per chunk, one at a
time or many together."""

from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.index.stores import open_stores
from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord, TextChunkSchema
from lightrag.components.storage.sql_db import SQLiteDatabase


def test_cached_extractions_come_back_whole_and_relabelled(tmp_path):
    stores = open_stores(SQLiteDatabase(tmp_path / "s.sqlite3"), embedder=None, extractor_name="X")
    chunk = TextChunkSchema(content="Ada met Bob.", full_doc_id="d", chunk_order_index=0,
                            file_path="a.md", tokens=4)
    twin = TextChunkSchema(content="Ada met Bob.", full_doc_id="e", chunk_order_index=0,
                           file_path="b.md", tokens=4)
    result = ExtractionResult(
        chunk_id="c1", raw_outputs=["raw"], gleaning_rounds=1, retries=2, problems=["fixed"],
        entities=[EntityRecord(entity_name="Ada", entity_type="person", description="A.",
                               source_id="c1", file_path="a.md")],
        relations=[RelationRecord(src_id="Ada", tgt_id="Bob", keywords="met", weight=2.5,
                                  description="Met.", source_id="c1", file_path="a.md")])
    with stores.db.transaction():
        stores.extractions.add([result], {"c1": chunk})
    got = stores.extractions.get_many({"c1": chunk, "c2": twin, "c3": TextChunkSchema(content="?")})
    assert set(got) == {"c1", "c2"}  # c3's content was never extracted
    assert got["c1"] == result
    assert got["c2"].chunk_id == "c2" and got["c2"].raw_outputs == ["raw"]
    records = [*got["c2"].entities, *got["c2"].relations]
    assert {(r.source_id, r.file_path) for r in records} == {("c2", "b.md")}
    assert got["c2"].relations[0].weight == 2.5 and got["c2"].retries == 2
    assert stores.extractions.get("c2", twin) == got["c2"]
