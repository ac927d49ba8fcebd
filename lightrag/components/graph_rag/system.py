"""``GraphRAG``: the whole graph-RAG system as one Component.

Insert: ``documents -> DocStatus(PENDING) -> Chunker -> chunk vectors (one embedder call per
batch of documents) -> extractor (per chunk, bounded concurrency, cached by chunk content) ->
GraphIndex.record (chunks, vectors, merged graph items and PROCESSED status in one transaction per
document) -> entity/relation vectors (queued, embedded once each)``. Query: ``question ->
keywords -> mode -> context under token budgets -> answer Generator -> QueryResult``.

Every store belongs to one :class:`~lightrag.components.graph_rag.index.GraphIndex`, the only
writer; this class chunks, extracts and answers, and reads the stores through the index.

Example:
    >>> rag = GraphRAG.from_yaml("graph_rag.yaml")  # doctest: +SKIP
    >>> rag.insert(["Alice founded Acme in Paris."], file_paths=["notes.txt"])  # doctest: +SKIP
    >>> rag.query("Who founded Acme?", mode="local").content  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any, Dict, List, Optional, Sequence, Union

from lightrag.components.graph_rag.chunking import Chunker
from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.extractive_answerer import ExtractiveAnswerer
from lightrag.components.graph_rag.index import SUPERSEDED, GraphIndex, RecordResult
from lightrag.components.graph_rag.insert_result import (
    InsertProgress,
    InsertResult,
    ProgressCallback,
    normalize_documents,
    run_sync,
)
from lightrag.components.graph_rag.merger import GraphMerger
from lightrag.components.graph_rag.ppr import PprSettings
from lightrag.components.graph_rag.query_engine import QueryEngine
from lightrag.components.graph_rag.schemas import (
    DocStatus,
    QueryParam,
    QueryResult,
    TextChunkSchema,
    compute_mdhash_id,
)
from lightrag.components.graph_rag.usage import usage_since, usage_snapshot
from lightrag.core.component import Component
from lightrag.core.embedder import Embedder
from lightrag.core.generator import Generator
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

class GraphRAG(Component):
    """Graph-based RAG over a working directory.

    Args:
        embedder: embeds chunks, entities, relations and queries.
        extractor: ``EntityExtractor`` (LLM) or ``SpacyEntityExtractor`` (offline).
        answer_generator: writes the answer: an ``ExtractiveAnswerer`` quotes the context (no
            model; the offline default), a ``Generator`` writes it (its template takes
            ``query``, ``context_data``, ``response_type``, ``user_prompt``, ``history`` and
            ``mode``) and each sentence is checked against the context.
        keyword_extractor: ``KeywordExtractor`` (LLM) or ``HeuristicKeywordExtractor``.
        merger / chunker / reranker: pipeline parts (defaults: ``GraphMerger()``, ``Chunker()``,
            none).
        working_dir / workspace: where the store lives (``lightrag.sqlite3``); a workspace
            isolates one tenant.
        storage / storage_kwargs: the database, ``"sqlite"`` (embedded, default) or
            ``"postgres"`` (shared by several processes or machines), and its arguments.
        vector_storage: None keeps vectors in the store's database (searched in memory); a
            registered class name such as ``"ChromaVectorStorage"`` puts them there.
        vector_storage_kwargs: more arguments of that vector storage.
        cosine_threshold: minimum similarity of vector hits.
        llm_max_async: concurrent extraction calls.
        insert_batch_size: documents chunked, embedded and extracted together; each document is
            still committed in a transaction of its own.
        embedding_batch_size: texts per embedder call.
        vector_flush_size: entity/relation vectors are embedded when this many are queued, and
            at the end of every insert.
        lock_timeout: seconds to wait for another process writing the same store.
        synonym_threshold: cosine of two entity names above which the ``ppr`` mode joins them.
        query_defaults: default :class:`QueryParam` fields.
        ppr_settings: fields of :class:`~lightrag.components.graph_rag.ppr.PprSettings` for
            the ``ppr`` and ``mix`` scorer (damping, fusion, …); unset fields keep the defaults.
    """

    def __init__(
        self,
        embedder: Embedder,
        extractor: Component,
        answer_generator: Union[Generator, ExtractiveAnswerer],
        keyword_extractor: Optional[Component] = None,
        merger: Optional[GraphMerger] = None,
        chunker: Optional[Chunker] = None,
        reranker: Optional[Component] = None,
        working_dir: str = "./lightrag_storage",
        workspace: str = "",
        storage: str = "sqlite",
        storage_kwargs: Optional[Dict[str, Any]] = None,
        vector_storage: Optional[str] = None,
        vector_storage_kwargs: Optional[Dict[str, Any]] = None,
        cosine_threshold: float = 0.2,
        llm_max_async: int = 4,
        insert_batch_size: int = 32,
        embedding_batch_size: int = 64,
        vector_flush_size: int = 20_000,
        lock_timeout: float = 120.0,
        synonym_threshold: float = 0.9,
        query_defaults: Optional[Dict[str, Any]] = None,
        ppr_settings: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__()
        from lightrag.components.graph_rag.keyword_extractor import HeuristicKeywordExtractor

        for name, value in (("llm_max_async", llm_max_async), ("insert_batch_size", insert_batch_size),
                            ("vector_flush_size", vector_flush_size)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.working_dir = working_dir
        self.workspace = workspace
        self.storage = storage
        self.storage_kwargs = dict(storage_kwargs or {})
        self.vector_storage = vector_storage
        self.vector_storage_kwargs = dict(vector_storage_kwargs or {})
        self.cosine_threshold = cosine_threshold
        self.llm_max_async = llm_max_async
        self.insert_batch_size = insert_batch_size
        self.embedding_batch_size = embedding_batch_size
        self.vector_flush_size = vector_flush_size
        self.lock_timeout = lock_timeout
        self.synonym_threshold = synonym_threshold
        self.query_defaults = QueryParam.from_dict(dict(query_defaults or {})).to_dict()
        self.ppr_settings = dict(ppr_settings or {})
        self.chunker = chunker or Chunker()
        self.extractor = extractor
        self.embedder = embedder
        self.index = GraphIndex(
            embedder, merger or GraphMerger(), working_dir=working_dir, workspace=workspace,
            storage=storage, storage_kwargs=storage_kwargs, vector_storage=vector_storage, vector_storage_kwargs=vector_storage_kwargs,
            cosine_threshold=cosine_threshold, embedding_batch_size=embedding_batch_size,
            lock_timeout=lock_timeout, extractor_name=type(extractor).__name__,
            synonym_threshold=synonym_threshold)
        self.engine = QueryEngine(
            keyword_extractor=keyword_extractor or HeuristicKeywordExtractor(),
            answer_generator=answer_generator,
            reranker=reranker,
            ppr_settings=PprSettings.from_dict(self.ppr_settings) if self.ppr_settings else None,
        )
        self.insert_progress: Dict[str, Dict[str, Any]] = {}

    _to_dict_exclude = ("insert_progress",)

    @classmethod
    def from_yaml(cls, source: Any) -> GraphRAG:
        """Build from a YAML file, YAML text or dict (``component_name: GraphRAG``)."""
        from lightrag.utils.config import build

        built = build(source)
        if not isinstance(built, cls):
            raise ValueError(f"the config builds a {type(built).__name__}, not a {cls.__name__}")
        return built

    # --------------------------------------------------------- store access
    @property
    def merger(self) -> GraphMerger:
        return self.index.merger

    @property
    def graph(self) -> Any:
        return self.index.graph

    @property
    def full_docs(self) -> Any:
        return self.index.full_docs

    @property
    def text_chunks(self) -> Any:
        return self.index.text_chunks

    @property
    def doc_status(self) -> Any:
        return self.index.doc_status

    @property
    def chunks_vdb(self) -> Any:
        return self.index.chunks_vdb

    @property
    def entities_vdb(self) -> Any:
        return self.index.entities_vdb

    @property
    def relations_vdb(self) -> Any:
        return self.index.relations_vdb

    @property
    def stores(self) -> GraphStores:
        """The read view of the stores (what the query modes get)."""
        return self.index.view

    def flush(self) -> None:
        """Embed queued entity and relation vectors now (every write is already committed)."""
        run_sync(self.index.index_pending())

    def _extra_repr(self) -> str:
        return f"llm_max_async={self.llm_max_async}, insert_batch_size={self.insert_batch_size}"

    # ------------------------------------------------------------------- insert
    def insert(self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
               file_paths: Optional[Union[str, Sequence[str]]] = None,
               progress: Optional[ProgressCallback] = None) -> InsertResult:
        """Insert documents (see :meth:`ainsert`)."""
        return run_sync(self.ainsert(input, ids, file_paths, progress))

    async def ainsert(self, input: Union[str, Sequence[str]],
                      ids: Optional[Union[str, Sequence[str]]] = None,
                      file_paths: Optional[Union[str, Sequence[str]]] = None,
                      progress: Optional[ProgressCallback] = None) -> InsertResult:
        """Insert documents; already processed ones are skipped, unfinished ones retried.

        Args:
            input: a text or a list of texts.
            ids: document ids (default ``"doc-" + md5(text)``). A processed id given another text
                is re-indexed with the new text.
            file_paths: source names used in references.
            progress: called with an :class:`InsertProgress` after each document.
        """
        result = await self.aenqueue_documents(input, ids, file_paths)
        await self._process(self.unfinished_document_ids(), result, progress)
        return result

    async def aprocess_pending(self, progress: Optional[ProgressCallback] = None) -> InsertResult:
        """Process every PENDING, PROCESSING or FAILED document (e.g. after a restart)."""
        result = InsertResult(track_id=f"resume-{uuid.uuid4().hex[:12]}")
        await self._process(self.unfinished_document_ids(), result, progress)
        return result

    def process_pending(self, progress: Optional[ProgressCallback] = None) -> InsertResult:
        """Synchronous :meth:`aprocess_pending`."""
        return run_sync(self.aprocess_pending(progress))

    def validate_documents(
        self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
        file_paths: Optional[Union[str, Sequence[str]]] = None,
    ) -> tuple[List[str], List[str], List[str]]:
        """Check and normalise the arguments of :meth:`insert` without storing anything.

        Args:
            input / ids / file_paths: as in :meth:`ainsert`.

        Returns:
            ``(texts, doc_ids, file_paths)``, three lists of equal length; identical texts
            without explicit ids collapse into one document.

        Raises:
            TypeError: a document, id or file path is not a ``str``.
            ValueError: an empty document or id, or ids / file paths not matching the texts.

        Example:
            >>> rag.validate_documents("Alice met Bob.", file_paths="a.txt")  # doctest: +SKIP
            (['Alice met Bob.'], ['doc-...'], ['a.txt'])
        """
        return normalize_documents(input, ids, file_paths)

    def enqueue_documents(
        self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
        file_paths: Optional[Union[str, Sequence[str]]] = None,
    ) -> InsertResult:
        """The first step of an insert: validate (:meth:`validate_documents`), then store the
        texts as PENDING in one committed transaction (durable when this returns). Already
        PROCESSED documents with the same text are skipped.

        :meth:`ainsert` and other ingestion paths (the server, :func:`~lightrag.components.
        graph_rag.distributed.ray_insert`) start with it, then process
        :meth:`unfinished_document_ids`.

        Returns:
            An :class:`InsertResult` with a new ``track_id``, the ``doc_ids`` and the ``skipped``.
        """
        texts, doc_ids, paths = self.validate_documents(input, ids, file_paths)
        result = InsertResult(track_id=f"insert-{uuid.uuid4().hex[:12]}", doc_ids=doc_ids)
        _, result.skipped = self.index.enqueue(texts, doc_ids, paths, result.track_id)
        return result

    async def aenqueue_documents(
        self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
        file_paths: Optional[Union[str, Sequence[str]]] = None,
    ) -> InsertResult:
        """:meth:`enqueue_documents` for coroutines (never blocks the event loop on the lock)."""
        texts, doc_ids, paths = self.validate_documents(input, ids, file_paths)
        result = InsertResult(track_id=f"insert-{uuid.uuid4().hex[:12]}", doc_ids=doc_ids)
        _, result.skipped = await self.index.aenqueue(texts, doc_ids, paths, result.track_id)
        return result

    def unfinished_document_ids(self) -> List[str]:
        """Ids of the PENDING, PROCESSING and FAILED documents: what the next insert processes."""
        return self.index.unfinished_document_ids()

    def set_document_status(self, doc_id: str, **changes: Any) -> None:
        """Update fields of a document's status record (committed at once) and stamp
        ``updated_at``; a :class:`DocStatus` is stored as its value."""
        self.index.set_status(doc_id, **changes)

    async def _extract(self, chunk_id: str, chunk: TextChunkSchema, llm_limit: asyncio.Semaphore,
                       doc_id: str) -> Any:
        from lightrag.components.graph_rag.entity_extractor import ExtractionResult

        extracted = self.index.cached_extraction(chunk_id, chunk)
        if extracted is None:
            async with llm_limit:
                try:
                    extracted = await self.extractor.acall(chunk.content, chunk_id, chunk.file_path)
                except Exception as e:  # an extractor bug must fail the chunk, not the batch
                    log.exception("extraction of %s failed", chunk_id)
                    extracted = ExtractionResult(chunk_id=chunk_id, error=f"{type(e).__name__}: {e}")
        state = self.insert_progress.get(doc_id)
        if state is not None:
            state["chunks_done"] += 1
        return extracted

    async def _extract_all(self, flat: Sequence[tuple], llm_limit: asyncio.Semaphore) -> List[Any]:
        """One extraction per chunk: cached ones by content, the rest in one ``aextract_many``
        call when the extractor batches (spaCy's ``nlp.pipe``), else concurrently."""
        if not hasattr(self.extractor, "aextract_many"):
            return list(await asyncio.gather(
                *(self._extract(cid, chunk, llm_limit, doc_id) for doc_id, cid, chunk in flat)))
        found: List[Any] = [self.index.cached_extraction(cid, chunk) for _, cid, chunk in flat]
        todo = [i for i, e in enumerate(found) if e is None]
        if todo:
            fresh = await self.extractor.aextract_many(
                [(flat[i][2].content, flat[i][1], flat[i][2].file_path) for i in todo])
            for i, extracted in zip(todo, fresh):
                found[i] = extracted
        for doc_id, _, _ in flat:
            state = self.insert_progress.get(doc_id)
            if state is not None:
                state["chunks_done"] += 1
        return found

    async def _process(self, doc_ids: Sequence[str], result: InsertResult,
                       progress: Optional[ProgressCallback]) -> None:
        tracker = InsertProgress(docs_total=len(doc_ids))
        started = time.perf_counter()
        spent_before = usage_snapshot(self.extractor, self.index)
        llm_limit = asyncio.Semaphore(self.llm_max_async)
        try:
            for start in range(0, len(doc_ids), self.insert_batch_size):
                batch = list(doc_ids[start:start + self.insert_batch_size])
                for done in await self._process_batch(batch, result, llm_limit):
                    tracker.docs_done += 1
                    tracker.doc_id, tracker.status = done.doc_id, done.status
                    tracker.chunks_done += done.chunks
                    tracker.entities += len(done.entities)
                    tracker.relations += len(done.relations)
                    tracker.elapsed_s = time.perf_counter() - started
                    if progress is not None:
                        progress(InsertProgress(**tracker.to_dict()))
                if len(self.index.pending_vectors) >= self.vector_flush_size:
                    await self.index.index_pending()
            await self.index.index_pending()
        finally:
            for doc_id in doc_ids:
                self.insert_progress.pop(doc_id, None)
            for model, row in usage_since(spent_before, usage_snapshot(self.extractor, self.index)).items():
                total = result.usage.setdefault(model, dict.fromkeys(row, 0))
                for key, value in row.items():
                    total[key] = total.get(key, 0) + value
        log.info("insert %s: %d processed, %d failed, %d skipped", result.track_id,
                 len(result.processed), len(result.failed), len(result.skipped))

    async def _fail(self, doc_id: str, message: str, result: InsertResult,
                    content_hash: Optional[str] = None) -> RecordResult:
        """Mark a document FAILED, unless it was deleted or re-sent meanwhile (superseded)."""
        message = redact_text(message)
        if not await self.index.aset_statuses(
                {doc_id: {"status": DocStatus.FAILED, "error_msg": message}},
                None if content_hash is None else {doc_id: content_hash}):
            return self._superseded(doc_id, result)
        result.failed[doc_id] = message
        return RecordResult(doc_id=doc_id, status=DocStatus.FAILED.value, error=message)

    @staticmethod
    def _superseded(doc_id: str, result: InsertResult) -> RecordResult:
        log.info("%s was deleted or re-sent while this insert processed it: left to the newer "
                 "request", doc_id)
        result.skipped.append(doc_id)
        return RecordResult(doc_id=doc_id, status=SUPERSEDED)

    async def _process_batch(self, batch: List[str], result: InsertResult,
                             llm_limit: asyncio.Semaphore) -> List[RecordResult]:
        """Chunk, embed (one call) and extract a batch of documents, then commit each one."""
        finished: List[RecordResult] = []
        prepared: List[tuple[str, Dict[str, TextChunkSchema]]] = []
        hashes: Dict[str, str] = {}
        for doc_id, doc in zip(batch, self.index.full_docs.get_by_ids(batch)):
            if doc is None:
                finished.append(await self._fail(doc_id, "document text is missing", result))
                continue
            hashes[doc_id] = compute_mdhash_id(doc["content"])
            try:
                chunks = self.chunker(doc_id, doc["content"], doc.get("file_path", "unknown_source"))
            except Exception as e:
                log.exception("chunking %s failed", doc_id)
                finished.append(await self._fail(doc_id, f"chunking failed: {type(e).__name__}: {e}",
                                                 result, hashes[doc_id]))
                continue
            prepared.append((doc_id, chunks))
            self.insert_progress[doc_id] = {"stage": "extracting", "chunks_total": len(chunks),
                                            "chunks_done": 0}
        if not prepared:
            return finished
        await self.index.aset_statuses({d: {"status": DocStatus.PROCESSING, "error_msg": None,
                                            "chunks_count": len(c)} for d, c in prepared}, hashes)
        flat = [(doc_id, cid, chunk) for doc_id, chunks in prepared for cid, chunk in chunks.items()]
        try:
            vectors = await self.index.embed_texts([c.content for _, _, c in flat])
        except Exception as e:
            log.exception("embedding the chunks of %d documents failed", len(prepared))
            for doc_id, _ in prepared:
                finished.append(await self._fail(doc_id, f"embedding failed: {type(e).__name__}: {e}",
                                                 result, hashes[doc_id]))
            return finished
        extractions = await self._extract_all(flat, llm_limit)
        row = 0
        for doc_id, chunks in prepared:
            count = len(chunks)
            self.insert_progress[doc_id]["stage"] = "merging"
            try:
                recorded = await self.index.record(doc_id, chunks, vectors[row:row + count] if count else None,
                                                   extractions[row:row + count], hashes[doc_id])
            except Exception as e:
                log.exception("recording %s failed", doc_id)
                recorded = await self._fail(doc_id, f"{type(e).__name__}: {e}", result, hashes[doc_id])
            row += count
            finished.append(recorded)
            self.insert_progress.pop(doc_id, None)
            if recorded.status == SUPERSEDED:
                if doc_id not in result.skipped:
                    self._superseded(doc_id, result)
            elif recorded.status == DocStatus.PROCESSED.value:
                result.processed.append(doc_id)
            elif recorded.error is not None:
                result.failed[doc_id] = recorded.error
                result.failed_chunks.extend(recorded.failed_chunks)
            result.chunks += recorded.chunks
            result.entities += len(recorded.entities)
            result.relations += len(recorded.relations)
        return finished

    # -------------------------------------------------------------------- query
    def query(self, query: str, param: Optional[QueryParam] = None, **overrides: Any) -> QueryResult:
        """Answer ``query`` (see :meth:`aquery`); ``overrides`` set QueryParam fields."""
        return run_sync(self._aquery(query, param, overrides, sync_stream=True))

    async def aquery(self, query: str, param: Optional[QueryParam] = None, **overrides: Any) -> QueryResult:
        """Answer ``query`` in ``param.mode`` (default from ``query_defaults``)."""
        return await self._aquery(query, param, overrides, sync_stream=False)

    async def _aquery(self, query: str, param: Optional[QueryParam], overrides: Dict[str, Any],
                      sync_stream: bool) -> QueryResult:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        resolved = self.resolve_query_param(param, **overrides)
        return await self.engine.acall(query, resolved, self.index.view, sync_stream=sync_stream)

    def resolve_query_param(self, param: Optional[QueryParam] = None, **overrides: Any) -> QueryParam:
        """The one place where query settings are merged: the config's ``query_defaults``, then
        the fields of ``param`` that differ from :class:`QueryParam`'s own defaults, then the
        keyword ``overrides``. ``query(q, param=QueryParam(mode="local"))`` and
        ``query(q, mode="local")`` therefore resolve alike."""
        defaults = QueryParam().to_dict()
        unknown = set(overrides) - set(defaults)
        if unknown:
            raise ValueError(f"unknown query parameters {sorted(unknown)}; known: {sorted(defaults)}")
        explicit = {}
        if param is not None:
            if not isinstance(param, QueryParam):
                raise TypeError(f"param must be a QueryParam, got {type(param).__name__}")
            explicit = {k: v for k, v in param.to_dict().items() if v != defaults.get(k)}
        return QueryParam.from_dict({**self.query_defaults, **explicit, **overrides})

    # -------------------------------------------------------------- maintenance
    def delete_by_doc_id(self, doc_id: str) -> Any:
        """Delete a document (see :meth:`adelete_by_doc_id`)."""
        return run_sync(self.adelete_by_doc_id(doc_id))

    async def adelete_by_doc_id(self, doc_id: str) -> Any:
        """Remove a document, its chunks and what only it supported; shared entities and
        relations are rebuilt from their other chunks' cached extractions. One transaction: a
        crash leaves the document either fully there or fully gone."""
        deleted = await self.index.delete_document(doc_id)
        await self.index.index_pending()
        return deleted

    def delete_entity(self, name: str) -> None:
        self.index.delete_entity(name)

    def edit_entity(self, name: str, updates: Dict[str, Any], rename_to: Optional[str] = None) -> Dict[str, Any]:
        edited = self.index.edit_entity(name, updates, rename_to)
        self.flush()
        return edited

    def merge_entities(self, sources: Sequence[str], target: str) -> Dict[str, Any]:
        merged = self.index.merge_entities(sources, target)
        self.flush()
        return merged

    def export(self, path: str, format: Optional[str] = None) -> List[Any]:
        """Write the graph as ``graphml``, ``json`` or ``csv`` (default: from the file
        extension, else GraphML); returns the files written."""
        return self.index.export(path, format=format)

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3, max_nodes: int = 1000) -> Any:
        self.index.refresh()
        return self.graph.get_knowledge_graph(node_label, max_depth=max_depth, max_nodes=max_nodes)

    # ------------------------------------------------------------------- status
    def status(self) -> Dict[str, Any]:
        """Counts of documents by status, chunks, entities and relations."""
        return self.index.status()
