"""The one insert pipeline: stored PENDING documents -> chunk -> embed -> extract -> record.

Two halves, so that the expensive one can run elsewhere:

* :class:`DocumentPreparer` chunks documents, embeds their chunks (one call per batch) and
  extracts entities and relations from every chunk (cached extractions are reused). It holds
  no store: it runs in this process for :meth:`GraphRAG.ainsert
  <lightrag.components.graph_rag.system.GraphRAG.ainsert>` and pickled on Ray workers for
  :func:`~lightrag.components.graph_rag.distributed.ray_insert`.
* :class:`InsertPipeline` reads the documents from the index, hands them to the preparer and
  records the prepared documents through :meth:`GraphIndex.record_many
  <lightrag.components.graph_rag.index.GraphIndex.record_many>` (several per transaction, up to
  :data:`COMMIT_SECONDS` of work; a large document part by part); the result's bookkeeping
  is :meth:`InsertResult.add <lightrag.components.graph_rag.insert_result.InsertResult.add>`,
  the same for both routes.

:meth:`InsertPipeline.run` reads top to bottom, as nano-graphrag's ``ainsert`` does. Its CPU-heavy
steps leave the event loop: chunking runs in a worker thread, and recording and vector writes
run in the index's writer thread (:func:`~lightrag.components.graph_rag.index.recording.
write_in_thread`), so a server answers other requests during a large insert.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag.embedding import embed_texts
from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.index import GraphIndex, RecordResult
from lightrag.components.graph_rag.insert_result import (
    SUPERSEDED,
    InsertProgress,
    InsertResult,
    ProgressCallback,
)
from lightrag.components.graph_rag.schemas import DocStatus, TextChunkSchema, compute_mdhash_id
from lightrag.components.graph_rag.usage import usage_since, usage_snapshot
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

#: Entities and relations embedded per round of the flush after each part: the synonym search of
#: a round's new entity names scores them against every stored name at once, so its memory is
#: this many rows times the names in the store.
PART_VECTOR_ROUND = 512

#: Seconds of recording one transaction takes documents for (:meth:`InsertPipeline.
#: commit_together`). A commit per document (123 per 100 documents of the scale probe) wrote
#: the pages the documents share (a hub's node, degree and index pages; the B-trees' inner
#: pages) once per document; with groups the probe's 10k store took 95-107 documents/s instead
#: of 68-91 (docs/benchmarks.md). A longer group makes other writers (a delete, another
#: process's insert) wait longer for the writer lock.
COMMIT_SECONDS = 1.0

CachedLookup = Callable[[str, TextChunkSchema], Optional[ExtractionResult]]
ChunkDone = Callable[[str], None]
ChunkStream = Iterator[Tuple[str, TextChunkSchema]]


@dataclass
class SourceDocument:
    """A stored document's text, as read for processing."""

    doc_id: str
    text: str
    file_path: str = "unknown_source"

    @property
    def content_hash(self) -> str:
        return compute_mdhash_id(self.text)


@dataclass
class PreparedDocument:
    """A document ready to record: its chunks, their vectors and one extraction per chunk, or
    the ``error`` that stopped it.

    A document chunked in parts (:meth:`DocumentPreparer.chunk` given ``part_chunks``) holds
    its first part in ``chunks`` and the chunks after it in ``rest``, not cut yet (``None``
    when ``chunks`` is the whole document); ``text_chars`` is its text's length."""

    doc_id: str
    content_hash: str
    chunks: Dict[str, TextChunkSchema] = field(default_factory=dict)
    vectors: Optional[np.ndarray] = None
    extractions: List[ExtractionResult] = field(default_factory=list)
    error: Optional[str] = None
    rest: Optional[ChunkStream] = None
    text_chars: int = 0

    def estimated_chunks(self) -> int:
        """How many chunks the whole document has: exact unless ``rest`` is still to be cut,
        then extrapolated from the characters of the chunks cut so far."""
        if self.rest is None or not self.chunks:
            return len(self.chunks)
        chars = sum(len(c.content) for c in self.chunks.values())
        return max(len(self.chunks) + 1, round(self.text_chars * len(self.chunks) / max(chars, 1)))


def _no_cache(chunk_id: str, chunk: TextChunkSchema) -> None:
    return None


def _ignore(doc_id: str) -> None:
    return None


def iter_chunks(chunker: Any, doc: SourceDocument) -> ChunkStream:
    """``(chunk id, chunk)`` pairs of ``doc``: cut as they are consumed when the chunker has
    ``iter_chunks`` (:meth:`Chunker.iter_chunks <lightrag.components.graph_rag.chunking.Chunker.
    iter_chunks>`), else from the dict ``chunker(doc_id, text, file_path)`` returns."""
    stream = getattr(chunker, "iter_chunks", None)
    if stream is not None:
        return iter(stream(doc.doc_id, doc.text, doc.file_path))
    return iter(chunker(doc.doc_id, doc.text, doc.file_path).items())


class DocumentPreparer:
    """Chunk, embed and extract documents; holds no store (picklable with its components).

    Args:
        chunker: splits a document into chunks (``chunker(doc_id, text, file_path)``).
        extractor: ``acall(text, chunk_id, file_path) -> ExtractionResult``; an extractor with
            ``aextract_many`` (spaCy's ``nlp.pipe``) gets all uncached chunks in one call.
        embedder: embeds the chunks.
        embedding_batch_size: texts per embedder call.
    """

    def __init__(self, chunker: Any, extractor: Any, embedder: Any,
                 embedding_batch_size: int = 64) -> None:
        self.chunker = chunker
        self.extractor = extractor
        self.embedder = embedder
        self.embedding_batch_size = embedding_batch_size

    async def prepare(self, docs: Sequence[SourceDocument], llm_limit: asyncio.Semaphore,
                      cached: CachedLookup = _no_cache,
                      chunk_done: ChunkDone = _ignore) -> List[PreparedDocument]:
        """:meth:`chunk` then :meth:`complete` ``docs``."""
        return await self.complete(self.chunk(docs), llm_limit, cached, chunk_done)

    def chunk(self, docs: Sequence[SourceDocument],
              part_chunks: Optional[int] = None) -> List[PreparedDocument]:
        """Cut each document into chunks; one whose chunking fails gets ``error`` set. Given
        ``part_chunks``, a document of more chunks is cut only that far: the rest is left in
        its ``rest`` stream, cut as it is read."""
        return [self._chunk(doc, part_chunks) for doc in docs]

    async def complete(self, prepared: List[PreparedDocument], llm_limit: asyncio.Semaphore,
                       cached: CachedLookup = _no_cache,
                       chunk_done: ChunkDone = _ignore) -> List[PreparedDocument]:
        """Embed and extract the chunks of ``prepared`` documents together: every chunk embedded
        in one call, extracted with at most ``llm_limit`` concurrent model calls; ``cached``
        returns a chunk's stored extraction, ``chunk_done(doc_id)`` is told of every chunk
        extracted. When the embedding fails every document gets ``error`` set."""
        ready = [p for p in prepared if p.error is None]
        flat = [(p.doc_id, cid, chunk) for p in ready for cid, chunk in p.chunks.items()]
        try:
            vectors = await embed_texts(self.embedder, [c.content for _, _, c in flat],
                                        self.embedding_batch_size)
        except Exception as e:
            why = redact_text(f"{type(e).__name__}: {e}")
            log.error("embedding the chunks of %d documents failed: %s", len(ready), why,
                      exc_info=log.isEnabledFor(logging.DEBUG))
            for p in ready:
                p.error = f"embedding failed: {why}"
            return prepared
        extractions = await self._extract_all(flat, llm_limit, cached, chunk_done)
        row = 0
        for p in ready:
            count = len(p.chunks)
            p.vectors = vectors[row:row + count] if count else None
            p.extractions = extractions[row:row + count]
            row += count
        return prepared

    def _chunk(self, doc: SourceDocument, part_chunks: Optional[int]) -> PreparedDocument:
        prepared = PreparedDocument(doc.doc_id, doc.content_hash, text_chars=len(doc.text))
        try:
            stream = iter_chunks(self.chunker, doc)
            if part_chunks is None:
                prepared.chunks = dict(stream)
                return prepared
            head = list(itertools.islice(stream, part_chunks + 1))
            if len(head) > part_chunks:
                prepared.rest = itertools.chain(head[part_chunks:], stream)
            prepared.chunks = dict(head[:part_chunks])
        except Exception as e:
            log.exception("chunking %s failed", doc.doc_id)
            prepared.error = f"chunking failed: {type(e).__name__}: {e}"
        return prepared

    async def _extract_all(self, flat: Sequence[Tuple[str, str, TextChunkSchema]],
                           llm_limit: asyncio.Semaphore, cached: CachedLookup,
                           chunk_done: ChunkDone) -> List[ExtractionResult]:
        """One extraction per chunk: cached ones by content, the rest in one ``aextract_many``
        call when the extractor batches, else concurrently."""
        found: List[Optional[ExtractionResult]] = [cached(cid, chunk) for _, cid, chunk in flat]
        todo = [i for i, e in enumerate(found) if e is None]
        if todo and hasattr(self.extractor, "aextract_many"):
            fresh = await self.extractor.aextract_many(
                [(flat[i][2].content, flat[i][1], flat[i][2].file_path) for i in todo])
            for i, extracted in zip(todo, fresh):
                found[i] = extracted
        elif todo:
            fresh = await asyncio.gather(*(self._extract(flat[i][1], flat[i][2], llm_limit)
                                           for i in todo))
            for i, extracted in zip(todo, fresh):
                found[i] = extracted
        for doc_id, _, _ in flat:
            chunk_done(doc_id)
        return [e for e in found if e is not None]

    async def _extract(self, chunk_id: str, chunk: TextChunkSchema,
                       llm_limit: asyncio.Semaphore) -> ExtractionResult:
        async with llm_limit:
            try:
                return await self.extractor.acall(chunk.content, chunk_id, chunk.file_path)
            except Exception as e:  # a provider's failure or an extractor bug fails the chunk
                why = redact_text(f"{type(e).__name__}: {e}")
                # one line each (a missing key failed every chunk with a traceback each); the
                # traceback at DEBUG
                log.error("extraction of %s failed: %s", chunk_id, why,
                          exc_info=log.isEnabledFor(logging.DEBUG))
                return ExtractionResult(chunk_id=chunk_id, error=why)


class InsertPipeline:
    """Process stored documents into the index (see the module docstring).

    Args:
        preparer: chunks, embeds and extracts.
        index: reads the documents and records the results.
        llm_max_async: concurrent extraction calls.
        batch_size: documents prepared together (and recorded together, see
            ``commit_seconds``).
        vector_flush_size: entity/relation vectors are embedded when this many are queued, and
            at the end.
        part_chunks: a document of more chunks is cut, embedded, extracted and committed
            this many chunks at a time (one transaction each), its entity and relation vectors
            written after each part, so a huge document needs memory for one part, not for all
            of it (:meth:`commit_in_parts`).
        progress_state: ``doc_id -> {"stage", "chunks_total", "chunks_done"}`` kept up to date
            while a document is processed (the server shows it).
        commit_seconds: the prepared documents of a batch are recorded in one transaction
            until this much time has passed, then in the next one (0: one transaction per
            document).
    """

    def __init__(self, preparer: DocumentPreparer, index: GraphIndex, llm_max_async: int = 4,
                 batch_size: int = 32, vector_flush_size: int = 20_000, part_chunks: int = 256,
                 progress_state: Optional[Dict[str, Dict[str, Any]]] = None,
                 commit_seconds: float = COMMIT_SECONDS) -> None:
        if part_chunks < 1:
            raise ValueError(f"part_chunks must be at least 1, got {part_chunks}")
        if not commit_seconds >= 0:
            raise ValueError(f"commit_seconds must be at least 0, got {commit_seconds}")
        self.commit_seconds = commit_seconds
        self.part_chunks = part_chunks
        self.preparer = preparer
        self.index = index
        self.llm_max_async = llm_max_async
        self.batch_size = batch_size
        self.vector_flush_size = vector_flush_size
        self.progress_state = {} if progress_state is None else progress_state

    async def run(self, doc_ids: Sequence[str], result: InsertResult,
                  progress: Optional[ProgressCallback] = None) -> InsertResult:
        """Process ``doc_ids`` (stored before, e.g. by ``GraphIndex.enqueue``) into ``result``."""
        tracker = InsertProgress(docs_total=len(doc_ids))
        started = time.perf_counter()
        spent_before = usage_snapshot(self.preparer.extractor, self.index)
        llm_limit = asyncio.Semaphore(self.llm_max_async)
        try:
            for start in range(0, len(doc_ids), self.batch_size):
                docs = await self.read(doc_ids[start:start + self.batch_size], result)
                # chunking (tokenising every text) and recording (merging, in GraphIndex) run
                # in worker threads: on the event loop they stalled a server's other requests
                chunked = await asyncio.to_thread(self.preparer.chunk, docs, self.part_chunks)
                await self.mark_processing(chunked)
                large = [d for d in chunked if d.error is None and d.rest is not None]
                small = [d for d in chunked if all(d is not x for x in large)]
                prepared = await self.preparer.complete(
                    small, llm_limit, self.index.cached_extraction, self._chunk_done)

                def advance(recorded: RecordResult) -> None:
                    tracker.advance(recorded, time.perf_counter() - started)
                    if progress is not None:
                        progress(InsertProgress(**tracker.to_dict()))

                await self.commit_together(prepared, result, advance)
                for doc in large:
                    advance(await self.commit_in_parts(doc, result, llm_limit))
                await self._flush_vectors()
            await self.index.index_pending()
        finally:
            for doc_id in doc_ids:
                self.progress_state.pop(doc_id, None)
            result.add_usage(usage_since(spent_before,
                                         usage_snapshot(self.preparer.extractor, self.index)))
        log.info("insert %s: %d processed, %d failed, %d skipped", result.track_id,
                 len(result.processed), len(result.failed), len(result.skipped))
        return result

    async def _flush_vectors(self) -> None:
        if self.index.pending_vector_count() >= self.vector_flush_size:
            await self.index.index_pending()

    async def commit_in_parts(self, doc: PreparedDocument, result: InsertResult,
                              llm_limit: asyncio.Semaphore) -> RecordResult:
        """Cut, embed, extract and record a large document ``part_chunks`` chunks at a time.

        Each part is one transaction (:meth:`GraphIndex.record
        <lightrag.components.graph_rag.index.GraphIndex.record>` with ``part``/``final``) and
        its entity and relation vectors are written right after it; what is kept from part to
        part is the chunk ids (for the last part's ``all_chunks``) and the names of the
        entities and relations touched, never the texts, vectors or extractions of an earlier
        part. A document whose chunking or recording fails in a later part is failed (its
        committed parts stay; inserting it again redoes it).
        """
        stream, piece = doc.rest, PreparedDocument(doc.doc_id, doc.content_hash, doc.chunks)
        doc.chunks, doc.rest = {}, None
        ids: List[str] = []
        touched: Dict[str, None] = {}
        related: Dict[Tuple[str, str], None] = {}
        recorded = RecordResult(doc_id=doc.doc_id)
        for part in itertools.count():
            ids.extend(piece.chunks)
            following = await asyncio.to_thread(self._next_part, doc, stream)
            self._track_total(doc.doc_id, len(ids) + len(following.chunks), not following.chunks)
            if following.error is not None:
                return await self.commit(following, result)
            await self.preparer.complete([piece], llm_limit, self.index.cached_extraction,
                                         self._chunk_done)
            if piece.error is not None:
                return await self.commit(piece, result)
            final = not following.chunks
            try:
                recorded = await self.index.record(doc.doc_id, piece.chunks, piece.vectors,
                                                   piece.extractions, doc.content_hash,
                                                   part=part, final=final, all_chunks=ids)
            except Exception as e:
                log.exception("recording part %d of %s failed", part, doc.doc_id)
                piece.error = f"part {part}: {type(e).__name__}: {e}"
                return await self.commit(piece, result)
            touched.update(dict.fromkeys(recorded.entities))
            related.update(dict.fromkeys(recorded.relations))
            if recorded.status == SUPERSEDED or final:
                break
            await self.index.index_pending(limit=PART_VECTOR_ROUND)
            piece = following
        recorded.chunks, recorded.entities, recorded.relations = len(ids), list(touched), list(related)
        self.progress_state.pop(doc.doc_id, None)
        result.add(recorded)
        return recorded

    def _next_part(self, doc: PreparedDocument, stream: Optional[ChunkStream]) -> PreparedDocument:
        """The next ``part_chunks`` chunks of ``stream`` (none: the document is done), or the
        ``error`` that cutting them raised."""
        following = PreparedDocument(doc.doc_id, doc.content_hash)
        try:
            following.chunks = dict(itertools.islice(stream or iter(()), self.part_chunks))
        except Exception as e:
            log.exception("chunking %s failed", doc.doc_id)
            following.error = f"chunking failed: {type(e).__name__}: {e}"
        return following

    def _track_total(self, doc_id: str, cut: int, finished: bool) -> None:
        """Correct the estimated progress total of a document cut in parts: ``cut`` chunks so
        far, all of them when ``finished``."""
        state = self.progress_state.get(doc_id)
        if state is not None:
            state["chunks_total"] = cut if finished else max(state["chunks_total"], cut)

    async def read(self, doc_ids: Sequence[str], result: InsertResult) -> List[SourceDocument]:
        """The stored texts of ``doc_ids``; a missing one is failed at once."""
        docs = []
        for doc_id, doc in zip(doc_ids, self.index.read_documents(doc_ids)):
            if doc is None:
                result.add(await self.index.fail_document(doc_id, "document text is missing"))
                continue
            docs.append(SourceDocument(doc_id, doc["content"],
                                       doc.get("file_path", "unknown_source")))
        return docs

    async def mark_processing(self, docs: Sequence[PreparedDocument]) -> None:
        """Set the chunked documents PROCESSING (one transaction) and track their progress (a
        document still being cut gets its chunk count when it is recorded, and an estimated
        progress total until then)."""
        ready = [d for d in docs if d.error is None]
        for doc in ready:
            self.progress_state[doc.doc_id] = {"stage": "extracting",
                                               "chunks_total": doc.estimated_chunks(),
                                               "chunks_done": 0}
        if ready:
            await self.index.aset_statuses(
                {d.doc_id: {"status": DocStatus.PROCESSING, "error_msg": None,
                            "chunks_count": None if d.rest is not None else len(d.chunks)}
                 for d in ready},
                {d.doc_id: d.content_hash for d in ready})

    async def commit_together(self, docs: Sequence[PreparedDocument], result: InsertResult,
                              recorded: Optional[Callable[[RecordResult], None]] = None) -> None:
        """Record documents prepared whole, in order, as many per transaction as
        ``commit_seconds`` allows (:meth:`GraphIndex.record_many
        <lightrag.components.graph_rag.index.GraphIndex.record_many>`), and add them to
        ``result``; ``recorded`` is told of each once it is committed. A document that failed
        before recording gets its FAILED status on its own. When recording a group raises, nothing
        of it was written: its documents are recorded again one by one (:meth:`commit`), so one
        bad document fails alone."""
        recorded = recorded or (lambda one: None)
        queue = list(docs)
        while queue:
            group = list(itertools.takewhile(lambda d: d.error is None, queue))
            if len(group) < 2 or self.commit_seconds <= 0:
                recorded(await self.commit(queue.pop(0), result))
                continue
            for doc in group:
                if doc.doc_id in self.progress_state:
                    self.progress_state[doc.doc_id]["stage"] = "merging"
            try:
                done = await self.index.record_many(group, self.commit_seconds)
            except Exception as e:
                log.warning("recording %d documents in one transaction failed (%s: %s), nothing "
                            "of them was written: recording them one by one", len(group),
                            type(e).__name__, e)
                done = [await self.commit(doc, result) for doc in group]
                del queue[:len(group)]
                for one in done:
                    recorded(one)
                continue
            for doc, one in zip(group, done):
                self.progress_state.pop(doc.doc_id, None)
                result.add(one)
                recorded(one)
            del queue[:len(done)]

    async def commit(self, doc: PreparedDocument, result: InsertResult) -> RecordResult:
        """Record one prepared document (or its failure) and add it to ``result``."""
        state = self.progress_state.get(doc.doc_id)
        if state is not None:
            state["stage"] = "merging"
        if doc.error is not None:
            recorded = await self.index.fail_document(doc.doc_id, doc.error, doc.content_hash)
        else:
            try:
                recorded = await self.index.record(doc.doc_id, doc.chunks, doc.vectors,
                                                   doc.extractions, doc.content_hash)
            except Exception as e:
                log.exception("recording %s failed", doc.doc_id)
                recorded = await self.index.fail_document(
                    doc.doc_id, f"{type(e).__name__}: {e}", doc.content_hash)
        self.progress_state.pop(doc.doc_id, None)
        result.add(recorded)
        return recorded

    def _chunk_done(self, doc_id: str) -> None:
        state = self.progress_state.get(doc_id)
        if state is not None:
            state["chunks_done"] += 1
