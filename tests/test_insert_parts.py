"""A large document is embedded, extracted and committed in parts: the same store as in one
go, the status PROCESSING between parts, and a crash between parts leaves a store that opens
and finishes the document when it is inserted again."""

from __future__ import annotations

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag.index import GraphIndex

TEXT = " ".join(f"Person{i} met Person{i + 1} in Town{i % 7}. Person{i} wrote to Acme{i % 3}."
                for i in range(120))


def _store(rag):
    return (sorted(rag.graph.get_all_labels()), rag.status()["chunks"],
            sorted(rag.graph.node_source_ids(["Acme0"])["Acme0"]))


def _with_parts(rag, size):
    original = rag.insert_pipeline

    def pipeline():
        made = original()
        made.part_chunks = size
        return made

    rag.insert_pipeline = pipeline
    return rag


def test_parts_give_the_same_store_as_one_commit(tmp_path):
    whole = fake_graph_rag(tmp_path / "whole")
    whole.insert(TEXT, ids="big")
    parted = _with_parts(fake_graph_rag(tmp_path / "parts"), 4)
    result = parted.insert(TEXT, ids="big")
    assert result.processed == ["big"] and not result.failed
    assert _store(parted) == _store(whole)
    assert parted.status()["chunks"] > 8  # several parts
    status = parted.index.doc_status.get_by_id("big")
    assert status["status"] == "processed" and status["chunks_count"] == parted.status()["chunks"]


def test_a_crash_between_parts_leaves_a_store_that_finishes_on_reinsert(tmp_path, monkeypatch):
    rag = _with_parts(fake_graph_rag(tmp_path / "crash"), 4)
    real = GraphIndex.record
    calls = {"n": 0}

    async def crash_on_third(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("the process dies between parts")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(GraphIndex, "record", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        rag.insert(TEXT, ids="big")
    monkeypatch.setattr(GraphIndex, "record", real)
    reopened = _with_parts(fake_graph_rag(tmp_path / "crash"), 4)
    assert reopened.index.doc_status.get_by_id("big")["status"] == "processing"
    assert reopened.status()["chunks"] == 8  # two parts were committed
    done = reopened.insert(TEXT, ids="big")
    assert done.processed == ["big"]
    whole = fake_graph_rag(tmp_path / "whole")
    whole.insert(TEXT, ids="big")
    assert _store(reopened) == _store(whole)


def test_part_size_must_be_positive(tmp_path):
    from lightrag.components.graph_rag.insert_pipeline import InsertPipeline

    rag = fake_graph_rag(tmp_path)
    with pytest.raises(ValueError, match="part_chunks"):
        InsertPipeline(rag.insert_pipeline().preparer, rag.index, part_chunks=0)
