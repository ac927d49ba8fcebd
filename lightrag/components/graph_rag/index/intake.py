"""Storing documents as PENDING (:meth:`GraphIndex.enqueue
<lightrag.components.graph_rag.index.GraphIndex.enqueue>`): what is skipped, what replaces an
earlier version, and the status record each gets. Runs inside the index's write transaction."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from lightrag.components.graph_rag.index.stores import IndexStores
from lightrag.components.graph_rag.schemas import DocProcessingStatus, DocStatus, compute_mdhash_id
from lightrag.components.storage.doc_status import now_iso


def enqueue(stores: IndexStores, texts: Sequence[str], doc_ids: Sequence[str],
            paths: Sequence[str], track_id: str) -> Tuple[List[str], List[str]]:
    """Store the texts and PENDING statuses; returns ``(queued, skipped)``. A PROCESSED document
    with the same text is skipped; one with another text keeps the chunks to replace in its
    status (``metadata.replaces_chunks``), deleted by the insert that indexes the new text.

    The documents of one call share one ``created_at`` (to the second), so the next insert
    takes them in one order whatever second each was read in (oldest call first, then by id:
    :meth:`GraphIndex.unfinished_document_ids`); a call that straddled a second was taken in
    another order, and its entities' descriptions were joined in another order."""
    queued: List[str] = []
    enqueued_at = now_iso()
    skipped: List[str] = []
    existing = dict(zip(doc_ids, stores.doc_status.get_by_ids(list(doc_ids))))
    docs, statuses = {}, {}
    for doc_id, text, path in zip(doc_ids, texts, paths):
        old = existing.get(doc_id)
        content_hash = compute_mdhash_id(text)
        if old and old.get("status") == DocStatus.PROCESSED.value:
            if old.get("content_hash") == content_hash:
                skipped.append(doc_id)
                continue
        docs[doc_id] = {"content": text, "file_path": path}
        record = DocProcessingStatus(
            content_summary=text[:100], content_length=len(text), file_path=path,
            status=DocStatus.PENDING, track_id=track_id, content_hash=content_hash,
            created_at=enqueued_at, updated_at=enqueued_at).to_dict()
        if old:
            record["created_at"] = old.get("created_at", record["created_at"])
            stale = list(dict.fromkeys([*((old.get("metadata") or {}).get("replaces_chunks") or []),
                                        *(old.get("chunks_list") or [])]))
            if stale and (old.get("content_hash") != content_hash
                          or (old.get("metadata") or {}).get("replaces_chunks")):
                record["metadata"] = {"replaces_chunks": stale}
            else:
                record["chunks_list"] = old.get("chunks_list") or []
        statuses[doc_id] = record
        queued.append(doc_id)
    stores.full_docs.replace(docs)
    stores.doc_status.replace(statuses)
    return queued, skipped
