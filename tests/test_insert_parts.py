"""A large document is embedded, extracted and committed in parts: the same store as in one
go, the status PROCESSING between parts, and a crash between parts leaves a store that opens
and finishes the document when it is inserted again."""

from __future__ import annotations

import pytest
from graph_fakes import fake_graph_rag, with_pipeline

from lightrag.components.graph_rag.index import GraphIndex

TEXT = " ".join(f"Person{i} met Person{i + 1} in Town{i % 7}. Person{i} wrote to Acme{i % 3}."
                for i in range(120))


def _store(rag):
    return (sorted(rag.graph.get_all_labels()), rag.status()["chunks"],
            sorted(rag.graph.node_source_ids(["Acme0"])["Acme0"]))


def _with_parts(rag, size):
    return with_pipeline(rag, part_chunks=size)


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


def test_streamed_chunks_are_the_token_splitters_chunks():
    import random

    from lightrag.components.data_process import TextSplitter
    from lightrag.components.graph_rag.chunking import token_windows

    rng = random.Random(5)
    alphabet = list("abcXYZ 0123  \n\n\t.,;'!?-_()é中文🙂\u00a0\r") + ["'s", "'ll", "<|endoftext|>"]
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        size = rng.randint(2, 20)
        overlap = rng.randint(0, size - 1)
        whole = TextSplitter("token", chunk_size=size, chunk_overlap=overlap).split_text(text)
        assert list(token_windows(text, size, overlap, segment_chars=rng.randint(1, 40))) == whole


def test_a_document_is_cut_as_it_is_committed_never_more_than_two_parts_ahead(tmp_path, monkeypatch):
    rag = _with_parts(fake_graph_rag(tmp_path / "stream"), 4)
    counts = {"cut": 0, "committed": 0, "ahead": 0}
    chunker = rag.chunker
    real_iter, real_record = chunker.iter_chunks, GraphIndex.record

    def counting(*args, **kwargs):
        for item in real_iter(*args, **kwargs):
            counts["cut"] += 1
            counts["ahead"] = max(counts["ahead"], counts["cut"] - counts["committed"])
            yield item

    async def record(self, doc_id, chunks, *args, **kwargs):
        assert kwargs.get("part", 0) == 0 or self.pending_vector_count() == 0  # vectors per part
        done = await real_record(self, doc_id, chunks, *args, **kwargs)
        counts["committed"] += len(chunks)
        return done

    object.__setattr__(chunker, "iter_chunks", counting)
    monkeypatch.setattr(GraphIndex, "record", record)
    assert rag.insert(TEXT, ids="big").processed == ["big"]
    assert counts["committed"] == counts["cut"] == rag.status()["chunks"] > 12
    assert counts["ahead"] <= 2 * 4 + 1
    assert rag.index.verify() == []


def test_chunks_count_is_set_when_the_last_part_is_committed(tmp_path, monkeypatch):
    rag = _with_parts(fake_graph_rag(tmp_path / "count"), 4)
    real = GraphIndex.record
    seen = []

    async def record(self, doc_id, *args, **kwargs):
        seen.append(self.doc_status.get_by_id(doc_id)["chunks_count"])
        return await real(self, doc_id, *args, **kwargs)

    monkeypatch.setattr(GraphIndex, "record", record)
    rag.insert(TEXT, ids="big")
    assert set(seen) == {None}  # unknown while the document is still being cut
    assert rag.index.doc_status.get_by_id("big")["chunks_count"] == rag.status()["chunks"]


def test_chunking_failing_in_a_later_part_fails_the_document_and_a_reinsert_finishes_it(tmp_path):
    rag = _with_parts(fake_graph_rag(tmp_path / "cut"), 4)
    chunker = rag.chunker
    real_iter = chunker.iter_chunks

    def breaks_after_ten(*args, **kwargs):
        for n, item in enumerate(real_iter(*args, **kwargs)):
            if n == 10:
                raise RuntimeError("tokenizer crashed")
            yield item

    object.__setattr__(chunker, "iter_chunks", breaks_after_ten)
    result = rag.insert(TEXT, ids="big")
    assert "chunking failed: RuntimeError: tokenizer crashed" in result.failed["big"]
    assert rag.index.doc_status.get_by_id("big")["status"] == "failed"
    object.__setattr__(chunker, "iter_chunks", real_iter)
    reopened = _with_parts(fake_graph_rag(tmp_path / "cut"), 4)
    assert reopened.insert(TEXT, ids="big").processed == ["big"]
    whole = fake_graph_rag(tmp_path / "whole")
    whole.insert(TEXT, ids="big")
    assert _store(reopened) == _store(whole) and reopened.index.verify() == []


def test_a_chunker_without_iter_chunks_is_still_committed_in_parts(tmp_path):
    rag = _with_parts(fake_graph_rag(tmp_path / "plain"), 4)
    chunker = rag.chunker
    object.__setattr__(rag, "chunker", lambda doc_id, text, path: chunker.call(doc_id, text, path))
    assert rag.insert(TEXT, ids="big").processed == ["big"]
    whole = fake_graph_rag(tmp_path / "whole")
    whole.insert(TEXT, ids="big")
    assert _store(rag) == _store(whole)


def test_an_error_recording_a_later_part_fails_the_document_and_a_reinsert_finishes_it(tmp_path,
                                                                                      monkeypatch):
    rag = _with_parts(fake_graph_rag(tmp_path / "err"), 4)
    real = GraphIndex.record

    async def broken_third_part(self, *args, **kwargs):
        if kwargs.get("part") == 2:
            raise RuntimeError("disk full")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(GraphIndex, "record", broken_third_part)
    result = rag.insert(TEXT, ids="big")
    assert "part 2: RuntimeError: disk full" in result.failed["big"]
    monkeypatch.setattr(GraphIndex, "record", real)
    reopened = _with_parts(fake_graph_rag(tmp_path / "err"), 4)
    assert reopened.index.doc_status.get_by_id("big")["status"] == "failed"
    assert reopened.insert(TEXT, ids="big").processed == ["big"]
    assert reopened.index.verify() == []


def test_a_document_deleted_while_its_insert_runs_is_reported_superseded_not_already_indexed():
    from lightrag.components.graph_rag.index import SUPERSEDED, RecordResult
    from lightrag.components.graph_rag.insert_result import InsertResult

    result = InsertResult()
    result.add(RecordResult(doc_id="d1", status=SUPERSEDED))
    assert result.superseded == ["d1"] and result.skipped == []


def test_the_cli_summary_names_documents_another_request_deleted_meanwhile(capsys):
    from types import SimpleNamespace

    from lightrag.cli.common import print_insert_summary
    from lightrag.components.graph_rag.insert_result import InsertResult

    rag = SimpleNamespace(status=lambda: {"chunks": 0, "entities": 0, "relations": 0},
                          index=SimpleNamespace(db=SimpleNamespace(describe=lambda: "sqlite")))
    print_insert_summary(rag, InsertResult(superseded=["d1"]))
    line = capsys.readouterr().out.splitlines()[0]
    assert line == ("documents: 0 processed, 0 already indexed, 0 failed, 1 deleted or replaced "
                    "meanwhile by another request")
