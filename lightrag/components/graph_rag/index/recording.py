"""Writing documents into the index: :func:`record_document` (one document, or one part of a
large one, in one transaction), :func:`record_documents` (several whole documents in one
transaction) and :func:`embed_pending` (the entities and relations queued since the last call,
embedded once each). :class:`GraphIndex` calls them with itself: they use
its writer lock, status helpers and stores, never import it.

The write steps (merging extractions into the graph, writing vectors, the synonym search) are
seconds of CPU for a large batch, so they run in a worker thread (:func:`write_in_thread`): the
thread takes the writer lock and runs the whole transaction, and the event loop stays free for
other requests (a server's ``/health`` waited up to 2.3 s during a 300-document insert). A
transaction belongs to the thread that opened it (:class:`~lightrag.components.storage.sql_db.
SQLDatabase` checks the owner), so one thread does all of it; writers still take turns under
the one writer lock. A cancelled caller (a server draining its intake worker) waits for the
thread to commit or roll back before it is cancelled, so nothing writes while the store closes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional, Protocol, Sequence, Tuple, TypeVar

import numpy as np

from lightrag.components.graph_rag.index.statuses import set_status, still_current
from lightrag.components.graph_rag.index.vectors import (
    add_synonyms,
    embed_items,
    pending_items,
    queue_vectors,
    write_vectors,
)
from lightrag.components.graph_rag.insert_result import SUPERSEDED
from lightrag.components.graph_rag.merger import unify_case_variants
from lightrag.components.graph_rag.schemas import DocStatus, TextChunkSchema, relation_key
from lightrag.core.base_data_class import DataClass
from lightrag.utils.blas_threads import one_blas_thread
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class RecordResult(DataClass):
    """What recording one document wrote."""

    doc_id: str = field(default="", metadata={"desc": "The document"})
    status: str = field(default="", metadata={"desc": "processed, failed or superseded"})
    chunks: int = field(default=0, metadata={"desc": "Chunks written"})
    entities: List[str] = field(default_factory=list, metadata={"desc": "Entities touched"})
    relations: List[Tuple[str, str]] = field(default_factory=list, metadata={"desc": "Relations"})
    failed_chunks: Dict[str, str] = field(default_factory=dict, metadata={"desc": "Chunk -> error"})
    error: Optional[str] = field(default=None, metadata={"desc": "Why the document failed"})


class WholeDocument(Protocol):
    """A document prepared whole (its chunks, their vectors, one extraction per chunk), as
    :func:`record_documents` takes it (an insert pipeline's ``PreparedDocument``)."""

    doc_id: str
    content_hash: str
    chunks: Dict[str, TextChunkSchema]
    vectors: Optional[np.ndarray]
    extractions: List[Any]


async def finish_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, its result or exception. Cancelling the caller does not
    stop the thread (Python cannot): the caller waits for it to finish, then is cancelled; so a
    cancelled insert never leaves a transaction running while the store is closed. BLAS runs on
    one thread meanwhile (:func:`~lightrag.utils.blas_threads.one_blas_thread`: a write's small
    products kept a spinning helper thread on another core), set from the caller's thread."""
    with one_blas_thread():
        work = asyncio.ensure_future(asyncio.to_thread(fn, *args))
        cancelled = False
        while not work.done():
            try:
                await asyncio.wait([work])  # a cancelled wait leaves ``work`` running
            except asyncio.CancelledError:
                cancelled = True
    if cancelled:
        if not work.cancelled() and work.exception() is not None:
            log.warning("a write finished with %s after its caller was cancelled",
                        type(work.exception()).__name__)
        raise asyncio.CancelledError()
    return work.result()


async def write_in_thread(index: Any, work: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine ``work()`` in a worker thread (on an event loop of its own, for the
    merger's optional summary calls) inside one write transaction under ``index``'s writer
    lock; see the module docstring and :func:`finish_in_thread`."""
    def locked() -> T:
        with index.writing_sync():
            return asyncio.run(work())

    return await finish_in_thread(locked)


async def record_document(index: Any, doc_id: str, chunks: Dict[str, TextChunkSchema],
                          chunk_vectors: Optional[np.ndarray], extractions: Sequence[Any],
                          content_hash: Optional[str], part: int, final: bool,
                          all_chunks: Optional[Sequence[str]]) -> RecordResult:
    """:meth:`GraphIndex.record <lightrag.components.graph_rag.index.GraphIndex.record>` (in a
    worker thread: :func:`write_in_thread`)."""
    return await write_in_thread(index, lambda: _record(
        index, doc_id, chunks, chunk_vectors, extractions, content_hash, part, final, all_chunks))


async def record_documents(index: Any, documents: Sequence[WholeDocument],
                           max_seconds: float) -> List[RecordResult]:
    """:meth:`GraphIndex.record_many <lightrag.components.graph_rag.index.GraphIndex.record_many>`
    (in a worker thread: :func:`write_in_thread`)."""
    async def record_all() -> List[RecordResult]:
        results: List[RecordResult] = []
        started = time.perf_counter()
        for doc in documents:
            results.append(await _record(index, doc.doc_id, doc.chunks, doc.vectors,
                                         doc.extractions, doc.content_hash, 0, True, None))
            if time.perf_counter() - started >= max_seconds:
                break
        return results

    return await write_in_thread(index, record_all)


async def _record(index: Any, doc_id: str, chunks: Dict[str, TextChunkSchema],
                  chunk_vectors: Optional[np.ndarray], extractions: Sequence[Any],
                  content_hash: Optional[str], part: int, final: bool,
                  all_chunks: Optional[Sequence[str]]) -> RecordResult:
    """Write one document (or part) and its status inside the caller's write transaction."""
    good = [e for e in extractions if e.error is None]
    failed = {e.chunk_id: str(e.error) for e in extractions if e.error is not None}
    result = RecordResult(doc_id=doc_id, chunks=len(chunks), failed_chunks=failed)
    if not still_current(index.stores, doc_id, content_hash):
        log.info("%s changed or was deleted while it was processed: not recorded", doc_id)
        return RecordResult(doc_id=doc_id, status=SUPERSEDED)
    status = index.doc_status.get_by_id(doc_id) or {}
    earlier = ((status.get("metadata") or {}).get("failed_chunks") or []) if part else []
    replaced = (status.get("metadata") or {}).get("replaces_chunks")
    if replaced:
        await index._delete_document_data(doc_id, replaced)
    index.text_chunks.replace({cid: c.to_dict() for cid, c in chunks.items()})
    if chunks:
        index.chunks_vdb.upsert({
            cid: {"content": c.content, "full_doc_id": doc_id, "file_path": c.file_path,
                  "chunk_order_index": c.chunk_order_index} for cid, c in chunks.items()},
            vectors=chunk_vectors)
    unify_case_variants(index.graph, good)  # "Acmecorp" joins a stored "AcmeCorp"
    index.stores.extractions.add(good, chunks)
    stats = await index.merger.acall(good, index.graph)
    queue_vectors(index.stores, stats.changed_entities, stats.changed_relations)
    index.stores.doc_graph_items.add(  # rows added: a part never rewrites earlier ones
        doc_id, (x.entity_name for e in good for x in e.entities),
        (relation_key(r.src_id, r.tgt_id) for e in good for r in e.relations))
    result.entities, result.relations = stats.entities, stats.relations
    failed_ids = [*earlier, *failed]
    if not final:
        result.status = DocStatus.PROCESSING.value
        set_status(index.stores, doc_id, status=DocStatus.PROCESSING,
                   metadata={"failed_chunks": failed_ids})
        return result
    chunks_list = list(all_chunks) if all_chunks is not None else list(chunks)
    if failed_ids:
        result.status = DocStatus.FAILED.value
        result.error = redact_text(
            f"{len(failed_ids)} of {len(chunks_list)} chunks failed extraction: " + "; ".join(
                [f"{cid}: {err}" for cid, err in list(failed.items())[:3]]
                or [f"{cid}: see an earlier part" for cid in earlier[:3]]))
        set_status(index.stores, doc_id, status=DocStatus.FAILED, error_msg=result.error,
                   chunks_count=len(chunks_list), chunks_list=chunks_list,
                   metadata={"failed_chunks": failed_ids})
    else:
        result.status = DocStatus.PROCESSED.value
        items = index.stores.doc_graph_items.get_by_id(doc_id) or {"entities": [], "relations": []}
        set_status(index.stores, doc_id, status=DocStatus.PROCESSED, error_msg=None,
                   chunks_count=len(chunks_list), chunks_list=chunks_list,
                   metadata={"entities": len(items["entities"]),
                             "relations": len(items["relations"])})
    return result


async def embed_pending(index: Any, limit: int) -> int:
    """:meth:`GraphIndex.index_pending <lightrag.components.graph_rag.index.GraphIndex.index_pending>`.

    Reading the queued items and writing their vectors (with the synonym search of new names)
    run in worker threads; only the embedder is awaited on the caller's event loop."""
    done = 0
    while True:
        keys, token, items = await finish_in_thread(_read_pending, index, limit)
        if not keys:
            return done
        vectors, new_names = await embed_items(index.stores, items, index.embed_texts)
        finished = await finish_in_thread(_write_embedded, index, keys, token, items, vectors,
                                          new_names)
        done += len(finished)
        if not finished:
            return done


def _read_pending(index: Any, limit: int) -> Tuple[List[str], str, Dict[str, Any]]:
    """Up to ``limit`` queued keys, the commit token read before them, and their items."""
    index.refresh()
    keys = index.stores.pending_vectors.keys()[:limit]
    if not keys:
        return [], "", {}
    token = index.db.commit_token()  # read first: no commit after it predates the items
    return keys, token, pending_items(index.stores, keys)


def _write_embedded(index: Any, keys: List[str], token: str, items: Dict[str, Any],
                    vectors: Dict[str, np.ndarray], new_names: Dict[str, np.ndarray]) -> List[str]:
    """Write the vectors of the items still as embedded (one transaction under the writer
    lock), index the new names and their synonyms, unqueue what was written; the keys done."""
    with index.writing_sync():  # read again only if a writer committed meanwhile
        current = items if index.db.commit_token() == token else pending_items(index.stores, keys)
        entities, relations, finished = {}, {}, []
        for key, (kind, payload, record) in items.items():
            now = current.get(key)
            if now is not None and now[2] != record:
                continue  # changed since it was read: stays queued
            finished.append(key)
            if now is None:
                continue  # deleted meanwhile
            target = entities if kind == "e" else relations
            target[key] = (payload, vectors[key])
        write_vectors(index.stores, entities, relations)
        if new_names:
            add_synonyms(index.stores, list(new_names), np.stack(list(new_names.values())),
                         index.synonym_threshold)
        index.stores.pending_vectors.delete(finished)
    return finished
