"""Ray inserts get the re-send protection of local inserts (issue 26, defects 1 and 11): a worker
result for version 1 of a document that was re-sent with version 2 (or deleted) while the worker
ran is not recorded; version 2 stays to be indexed by the insert that sent it."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

from test_server import make_rag  # noqa: E402

from lightrag.components.graph_rag.distributed import (  # noqa: E402
    ExtractionWorker,
    _prepared,
    dumps_components,
)
from lightrag.components.graph_rag.insert_result import InsertResult, run_sync  # noqa: E402
from lightrag.components.graph_rag.schemas import DocStatus, compute_mdhash_id  # noqa: E402

V1 = "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn."
V2 = "The Cassini mission of NASA reached Saturn in 2004. Cassini found plumes on Enceladus."


def worker_output(rag, text):
    blob = dumps_components((rag.chunker, rag.extractor, rag.embedder, rag.embedding_batch_size))
    return run_sync(ExtractionWorker(blob, 1).process("doc", text, "doc.md", {}))


def _commit(rag, out, result, content_hash):
    """Record a worker's output as ray_insert does: through the insert pipeline's commit."""
    run_sync(rag.insert_pipeline().commit(_prepared(out, content_hash), result))


def chunk_texts(rag):
    return [c["content"] for _, c in rag.text_chunks.items()]


def test_a_worker_result_for_a_replaced_text_is_not_recorded(tmp_path):
    rag = make_rag(tmp_path)
    rag.enqueue_documents([V1], ids=["doc"])
    out = worker_output(rag, V1)  # the worker ran on version 1 ...
    rag.enqueue_documents([V2], ids=["doc"])  # ... while version 2 was sent
    result = InsertResult()
    _commit(rag, out, result, compute_mdhash_id(V1))
    assert result.superseded == ["doc"] and not result.skipped and not result.processed
    assert not any("Voyager" in text for text in chunk_texts(rag))
    record = rag.doc_status.get_by_id("doc")
    assert record["status"] != DocStatus.PROCESSED.value
    assert rag.full_docs.get_by_id("doc")["content"] == V2
    rag.insert([V2], ids=["doc"])  # version 2 is indexed by its own insert, not skipped
    assert any("Cassini" in text for text in chunk_texts(rag))


def test_a_worker_result_for_the_stored_text_is_recorded(tmp_path):
    rag = make_rag(tmp_path)
    rag.enqueue_documents([V1], ids=["doc"])
    result = InsertResult()
    _commit(rag, worker_output(rag, V1), result, compute_mdhash_id(V1))
    assert result.processed == ["doc"] and not result.skipped
    assert rag.doc_status.get_by_id("doc")["status"] == DocStatus.PROCESSED.value
