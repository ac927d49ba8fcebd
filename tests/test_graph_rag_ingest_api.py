"""GraphRAG's public ingestion steps used by the HTTP server and ``ray_insert``:
validate_documents, enqueue_documents, unfinished_document_ids, set_document_status."""

import pytest
from graph_fakes import extraction_reply, the_answer

from lightrag.components.graph_rag import EntityExtractor, GraphRAG
from lightrag.components.graph_rag.schemas import DocStatus
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator


def make_rag(tmp_path):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        working_dir=str(tmp_path), cosine_threshold=0.05)


def test_validate_documents_normalises_and_rejects(tmp_path):
    rag = make_rag(tmp_path)
    texts, ids, paths = rag.validate_documents("Ada met Charles.")
    assert texts == ["Ada met Charles."] and ids[0].startswith("doc-") and paths == ["unknown_source"]
    texts, ids, _ = rag.validate_documents(["same text", "same text", "other"])
    assert texts == ["same text", "other"] and len(ids) == 2
    assert rag.validate_documents([], None, None) == ([], [], [])
    assert len(rag.doc_status) == 0, "validation stores nothing"
    with pytest.raises(TypeError, match="document 1 is a int"):
        rag.validate_documents(["fine", 3])
    with pytest.raises(ValueError, match="document 0 is empty"):
        rag.validate_documents([" \n"])
    with pytest.raises(ValueError, match="2 ids for 1 documents"):
        rag.validate_documents(["a"], ids=["x", "y"])
    with pytest.raises(ValueError, match="unique"):
        rag.validate_documents(["a", "b"], ids=["x", "x"])
    with pytest.raises(ValueError, match="2 file paths for 1 documents"):
        rag.validate_documents(["a"], file_paths=["p", "q"])


def test_enqueue_then_insert_processes_the_queue(tmp_path):
    rag = make_rag(tmp_path)
    queued = rag.enqueue_documents(["NASA launched Voyager 1 in 1977."], ids=["v1"],
                                   file_paths=["voyager.md"])
    assert queued.doc_ids == ["v1"] and queued.track_id.startswith("insert-") and not queued.skipped
    assert rag.unfinished_document_ids() == ["v1"]
    assert make_rag(tmp_path).doc_status.get_by_id("v1")["status"] == "pending", "flushed"
    result = rag.insert([])  # an insert processes what is unfinished
    assert result.processed == ["v1"] and rag.unfinished_document_ids() == []
    again = rag.enqueue_documents("NASA launched Voyager 1 in 1977.", ids="v1")
    assert again.skipped == ["v1"] and rag.unfinished_document_ids() == []


def test_set_document_status_updates_and_stamps(tmp_path):
    rag = make_rag(tmp_path)
    rag.enqueue_documents("Ada met Charles.", ids="d")
    before = rag.doc_status.get_by_id("d")
    rag.set_document_status("d", status=DocStatus.FAILED, error_msg="boom")
    record = rag.doc_status.get_by_id("d")
    assert record["status"] == "failed" and record["error_msg"] == "boom"
    assert record["content_length"] == before["content_length"]
    assert record["updated_at"] >= before["updated_at"]
    assert rag.unfinished_document_ids() == ["d"], "FAILED documents are retried"
