"""``GraphRAG``: the whole graph-RAG system as one Component.

Insert: ``documents -> DocStatus(PENDING) -> Chunker -> chunks (KV + vectors) -> extractor (per
chunk, bounded concurrency, results kept per chunk) -> GraphMerger -> graph + entity/relation
vectors -> DocStatus(PROCESSED)``. Query: ``question -> keywords -> mode -> context under token
budgets -> answer Generator -> QueryResult``. Maintenance (delete, edit, merge, export) lives in
:mod:`lightrag.components.graph_rag.maintenance`.

Every store writes its file atomically in ``index_done_callback``; a document is marked
PROCESSED only after all stores are flushed, and merging is idempotent per chunk, so a crash
mid-insert leaves stores that reload and the interrupted documents are retried by the next insert.

Example:
    >>> rag = GraphRAG.from_yaml("graph_rag.yaml")  # doctest: +SKIP
    >>> rag.insert(["Alice founded Acme in Paris."], file_paths=["notes.txt"])  # doctest: +SKIP
    >>> rag.query("Who founded Acme?", mode="local").content  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Coroutine, Dict, List, Optional, Sequence, TypeVar, Union

from lightrag.components.graph_rag.chunking import Chunker
from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.merger import GraphMerger
from lightrag.components.graph_rag.query_engine import QueryEngine
from lightrag.components.graph_rag.schemas import (
    DocProcessingStatus,
    DocStatus,
    QueryParam,
    QueryResult,
    compute_mdhash_id,
    now_iso,
)
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.embedder import Embedder
from lightrag.core.generator import Generator
from lightrag.utils.registry import EntityMapping

log = logging.getLogger(__name__)

T = TypeVar("T")

ENTITY_META = ["entity_name", "entity_type", "source_id", "file_path"]
RELATION_META = ["src_id", "tgt_id", "keywords", "weight", "source_id", "file_path"]
CHUNK_META = ["full_doc_id", "file_path", "chunk_order_index"]


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when an event loop is already running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: Dict[str, Any] = {}

    def runner() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            result["error"] = e

    thread = threading.Thread(target=runner)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


@dataclass
class InsertResult(DataClass):
    """What one insert did."""

    track_id: str = field(default="", metadata={"desc": "Id of this insert call"})
    doc_ids: List[str] = field(default_factory=list, metadata={"desc": "Ids of the given documents"})
    skipped: List[str] = field(default_factory=list, metadata={"desc": "Already processed"})
    processed: List[str] = field(default_factory=list, metadata={"desc": "Processed now"})
    failed: Dict[str, str] = field(default_factory=dict, metadata={"desc": "Failed: id -> error"})
    chunks: int = field(default=0, metadata={"desc": "Chunks written"})
    entities: int = field(default=0, metadata={"desc": "Entities touched"})
    relations: int = field(default=0, metadata={"desc": "Relations touched"})
    failed_chunks: List[str] = field(default_factory=list, metadata={"desc": "Chunks to retry"})


def _storage(name: str, kind: str) -> type:
    cls = EntityMapping.get(name)
    if cls is None:
        raise ValueError(f"unknown {kind} storage {name!r}: register it or use a built-in one")
    return cls


class GraphRAG(Component):
    """Graph-based RAG over a working directory.

    Args:
        embedder: embeds chunks, entities, relations and queries.
        extractor: ``EntityExtractor`` (LLM) or ``SpacyEntityExtractor`` (offline).
        answer_generator: writes the answer; its template takes ``query``, ``context_data``,
            ``response_type``, ``user_prompt``, ``history`` and ``mode``.
        keyword_extractor: ``KeywordExtractor`` (LLM) or ``HeuristicKeywordExtractor``.
        merger / chunker / reranker: pipeline parts (defaults: ``GraphMerger()``, ``Chunker()``,
            none).
        working_dir / workspace: where the stores live; a workspace isolates one tenant.
        kv_storage / vector_storage / graph_storage / doc_status_storage: registered class names.
        cosine_threshold: minimum similarity of vector hits.
        llm_max_async: concurrent extraction calls; embedding_max_async: concurrent embeddings.
        max_parallel_insert: documents processed at once.
        flush_every: documents merged between two flushes of the stores (and at the end of every
            insert). A document is marked PROCESSED on disk only after the flush that holds its
            data, so a crash in between leaves it to be retried, never half-stored.
        query_defaults: default :class:`QueryParam` fields.
    """

    def __init__(
        self,
        embedder: Embedder,
        extractor: Component,
        answer_generator: Generator,
        keyword_extractor: Optional[Component] = None,
        merger: Optional[GraphMerger] = None,
        chunker: Optional[Chunker] = None,
        reranker: Optional[Component] = None,
        working_dir: str = "./lightrag_storage",
        workspace: str = "",
        kv_storage: str = "JsonKVStorage",
        vector_storage: str = "NumpyVectorStorage",
        graph_storage: str = "NetworkXGraphStorage",
        doc_status_storage: str = "JsonDocStatusStorage",
        vector_storage_kwargs: Optional[Dict[str, Any]] = None,
        cosine_threshold: float = 0.2,
        llm_max_async: int = 4,
        embedding_max_async: int = 8,
        max_parallel_insert: int = 2,
        flush_every: int = 8,
        query_defaults: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__()
        from lightrag.components.graph_rag.keyword_extractor import HeuristicKeywordExtractor

        self.working_dir = working_dir
        self.workspace = workspace
        self.llm_max_async = llm_max_async
        self.embedding_max_async = embedding_max_async
        self.max_parallel_insert = max_parallel_insert
        if flush_every < 1:
            raise ValueError(f"flush_every must be at least 1, got {flush_every}")
        self.flush_every = flush_every
        self._unflushed: Dict[str, Dict[str, Any]] = {}
        self.query_defaults = QueryParam.from_dict(dict(query_defaults or {})).to_dict()
        self.chunker = chunker or Chunker()
        self.extractor = extractor
        self.merger = merger or GraphMerger()
        self.embedder = embedder
        where = {"workspace": workspace, "working_dir": working_dir}
        kv, vec = _storage(kv_storage, "KV"), _storage(vector_storage, "vector")
        vec_kwargs = {"embedder": embedder, "cosine_threshold": cosine_threshold,
                      **(vector_storage_kwargs or {}), **where}
        self.full_docs = kv(namespace="full_docs", **where)
        self.text_chunks = kv(namespace="text_chunks", **where)
        self.chunk_extractions = kv(namespace="chunk_extractions", **where)
        self.doc_graph_items = kv(namespace="doc_graph_items", **where)
        self.chunks_vdb = vec(namespace="chunks", meta_fields=CHUNK_META, **vec_kwargs)
        self.entities_vdb = vec(namespace="entities", meta_fields=ENTITY_META, **vec_kwargs)
        self.relations_vdb = vec(namespace="relationships", meta_fields=RELATION_META, **vec_kwargs)
        self.graph = _storage(graph_storage, "graph")(namespace="chunk_entity_relation", **where)
        self.doc_status = _storage(doc_status_storage, "doc status")(namespace="doc_status", **where)
        self.engine = QueryEngine(
            keyword_extractor=keyword_extractor or HeuristicKeywordExtractor(),
            answer_generator=answer_generator,
            reranker=reranker,
        )
        self._merge_lock: Optional[asyncio.Lock] = None

    _to_dict_exclude = ("_merge_lock", "_unflushed")

    @classmethod
    def from_yaml(cls, source: Any) -> GraphRAG:
        """Build from a YAML file, YAML text or dict (``component_name: GraphRAG``)."""
        from lightrag.utils.config import build

        built = build(source)
        if not isinstance(built, cls):
            raise ValueError(f"the config builds a {type(built).__name__}, not a {cls.__name__}")
        return built

    @property
    def stores(self) -> GraphStores:
        return GraphStores(graph=self.graph, entities_vdb=self.entities_vdb,
                           relations_vdb=self.relations_vdb, chunks_vdb=self.chunks_vdb,
                           text_chunks=self.text_chunks)

    def storages(self) -> List[Component]:
        return [self.full_docs, self.text_chunks, self.chunk_extractions, self.doc_graph_items,
                self.chunks_vdb, self.entities_vdb, self.relations_vdb, self.graph, self.doc_status]

    def flush(self) -> None:
        """Write every store to disk (atomically), the document status last."""
        self.merger.index_pending(self.graph, self.entities_vdb, self.relations_vdb)
        for storage in self.storages():
            storage.index_done_callback()

    def _extra_repr(self) -> str:
        where = f"{self.working_dir}/{self.workspace}" if self.workspace else self.working_dir
        return f"working_dir={where!r}, llm_max_async={self.llm_max_async}"

    # ------------------------------------------------------------------- insert
    def insert(self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
               file_paths: Optional[Union[str, Sequence[str]]] = None) -> InsertResult:
        """Insert documents (see :meth:`ainsert`)."""
        return run_sync(self.ainsert(input, ids, file_paths))

    async def ainsert(self, input: Union[str, Sequence[str]],
                      ids: Optional[Union[str, Sequence[str]]] = None,
                      file_paths: Optional[Union[str, Sequence[str]]] = None) -> InsertResult:
        """Insert documents; already processed ones are skipped, unfinished ones retried.

        Args:
            input: a text or a list of texts.
            ids: document ids (default ``"doc-" + md5(text)``).
            file_paths: source names used in references.
        """
        result = self.enqueue_documents(input, ids, file_paths)
        pending = self.unfinished_document_ids()
        semaphore = asyncio.Semaphore(self.max_parallel_insert)
        llm_limit = asyncio.Semaphore(self.llm_max_async)
        embed_limit = asyncio.Semaphore(self.embedding_max_async)
        self._merge_lock = asyncio.Lock()

        async def process(doc_id: str) -> None:
            async with semaphore:
                await self._process_document(doc_id, result, llm_limit, embed_limit)

        await asyncio.gather(*(process(d) for d in pending))
        self._commit()
        log.info("insert %s: %d processed, %d failed, %d skipped", result.track_id,
                 len(result.processed), len(result.failed), len(result.skipped))
        return result

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
            TypeError: a document is not a ``str``.
            ValueError: an empty document, or ids / file paths not matching the texts.

        Example:
            >>> rag.validate_documents("Alice met Bob.", file_paths="a.txt")  # doctest: +SKIP
            (['Alice met Bob.'], ['doc-...'], ['a.txt'])
        """
        texts = [input] if isinstance(input, str) else list(input)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"document {i} is a {type(text).__name__}, not a str")
            if not text.strip():
                raise ValueError(f"document {i} is empty")
        if ids is None:
            doc_ids = [compute_mdhash_id(t.strip(), prefix="doc-") for t in texts]
        else:
            doc_ids = [ids] if isinstance(ids, str) else list(ids)
            if len(doc_ids) != len(texts):
                raise ValueError(f"{len(doc_ids)} ids for {len(texts)} documents")
            if len(set(doc_ids)) != len(doc_ids):
                raise ValueError("document ids must be unique")
        if file_paths is None:
            paths = ["unknown_source"] * len(texts)
        else:
            paths = [file_paths] if isinstance(file_paths, str) else list(file_paths)
            if len(paths) != len(texts):
                raise ValueError(f"{len(paths)} file paths for {len(texts)} documents")
        unique: Dict[str, tuple[str, str]] = {}
        for doc_id, text, path in zip(doc_ids, texts, paths):
            unique.setdefault(doc_id, (text, path))  # identical texts share one id
        return [t for t, _ in unique.values()], list(unique), [p for _, p in unique.values()]

    def enqueue_documents(
        self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
        file_paths: Optional[Union[str, Sequence[str]]] = None,
    ) -> InsertResult:
        """The first step of an insert: validate (:meth:`validate_documents`), store the texts
        and mark them PENDING, then flush the document stores. Already PROCESSED ids are skipped.

        :meth:`ainsert` and other ingestion paths (e.g. :func:`~lightrag.components.graph_rag.
        distributed.ray_insert`) start with it, then process :meth:`unfinished_document_ids`.

        Returns:
            An :class:`InsertResult` with a new ``track_id``, the ``doc_ids`` and the ``skipped``.
        """
        texts, doc_ids, paths = self.validate_documents(input, ids, file_paths)
        result = InsertResult(track_id=f"insert-{uuid.uuid4().hex[:12]}", doc_ids=doc_ids)
        for doc_id, text, path in zip(doc_ids, texts, paths):
            existing = self.doc_status.get_by_id(doc_id)
            if existing and existing.get("status") == DocStatus.PROCESSED.value:
                result.skipped.append(doc_id)
                continue
            self.full_docs.upsert({doc_id: {"content": text, "file_path": path}})
            self.doc_status.upsert({doc_id: DocProcessingStatus(
                content_summary=text[:100], content_length=len(text), file_path=path,
                status=DocStatus.PENDING, track_id=result.track_id,
                content_hash=compute_mdhash_id(text)).to_dict()})
        self.full_docs.index_done_callback()
        self.doc_status.index_done_callback()
        return result

    def unfinished_document_ids(self) -> List[str]:
        """Ids of the PENDING, PROCESSING and FAILED documents: what the next insert processes."""
        return list(self.doc_status.get_by_statuses(
            [DocStatus.PENDING, DocStatus.PROCESSING, DocStatus.FAILED]))

    def set_document_status(self, doc_id: str, **changes: Any) -> None:
        """Update fields of a document's status record (in memory; the next flush of
        ``doc_status`` writes it) and stamp ``updated_at``.

        Args:
            doc_id: the document; a missing record is created from ``changes``.
            **changes: :class:`DocProcessingStatus` fields, e.g. ``status=DocStatus.FAILED,
                error_msg="..."``; a :class:`DocStatus` is stored as its value.
        """
        record = dict(self.doc_status.get_by_id(doc_id) or {})
        record.update({k: (v.value if isinstance(v, DocStatus) else v) for k, v in changes.items()})
        record["updated_at"] = now_iso()
        self.doc_status.upsert({doc_id: record})

    async def _extract(self, chunk_id: str, chunk: Any, llm_limit: asyncio.Semaphore) -> Any:
        from lightrag.components.graph_rag.entity_extractor import ExtractionResult

        cached = self.chunk_extractions.get_by_id(chunk_id)
        if cached is not None:
            return ExtractionResult.from_dict(cached)
        async with llm_limit:
            extracted = await self.extractor.acall(chunk.content, chunk_id, chunk.file_path)
        if extracted.error is None:
            self.chunk_extractions.upsert({chunk_id: extracted.to_dict()})
        return extracted

    async def _process_document(self, doc_id: str, result: InsertResult,
                                llm_limit: asyncio.Semaphore, embed_limit: asyncio.Semaphore) -> None:
        doc = self.full_docs.get_by_id(doc_id)
        if doc is None:
            self.set_document_status(doc_id, status=DocStatus.FAILED, error_msg="document text is missing")
            result.failed[doc_id] = "document text is missing"
            return
        try:
            chunks = self.chunker(doc_id, doc["content"], doc.get("file_path", "unknown_source"))
            self.set_document_status(doc_id, status=DocStatus.PROCESSING, chunks_count=len(chunks),
                             chunks_list=list(chunks), error_msg=None)
            self.text_chunks.upsert({cid: c.to_dict() for cid, c in chunks.items()})
            async with embed_limit:
                await self.chunks_vdb.aupsert({
                    cid: {"content": c.content, "full_doc_id": doc_id, "file_path": c.file_path,
                          "chunk_order_index": c.chunk_order_index} for cid, c in chunks.items()})
            extractions = await asyncio.gather(
                *(self._extract(cid, c, llm_limit) for cid, c in chunks.items()))
            good = [e for e in extractions if e.error is None]
            failed = {e.chunk_id: e.error for e in extractions if e.error is not None}
            async with self._merge_lock:  # type: ignore[union-attr]
                stats = await self.merger.acall(good, self.graph, self.entities_vdb,
                                                self.relations_vdb, defer_index=True)
                items = self.doc_graph_items.get_by_id(doc_id) or {"entities": [], "relations": []}
                items["entities"] = sorted({*items["entities"], *(n for e in good for n in
                                                                  (x.entity_name for x in e.entities))})
                items["relations"] = sorted({*map(tuple, items["relations"]), *(
                    tuple(sorted((r.src_id, r.tgt_id))) for e in good for r in e.relations)})
                self.doc_graph_items.upsert({doc_id: items})
            result.chunks += len(chunks)
            result.entities += len(stats.entities)
            result.relations += len(stats.relations)
            if failed:
                message = f"{len(failed)} of {len(chunks)} chunks failed extraction: " + "; ".join(
                    f"{cid}: {err}" for cid, err in list(failed.items())[:3])
                result.failed[doc_id] = message
                result.failed_chunks.extend(failed)
                self._unflushed[doc_id] = {"status": DocStatus.FAILED, "error_msg": message,
                                           "metadata": {"failed_chunks": list(failed)}}
            else:
                self._unflushed[doc_id] = {"status": DocStatus.PROCESSED, "metadata": {
                    "entities": len(items["entities"]), "relations": len(items["relations"])}}
                result.processed.append(doc_id)
            if len(self._unflushed) >= self.flush_every:
                self._commit()
        except Exception as e:
            log.exception("processing %s failed", doc_id)
            self.set_document_status(doc_id, status=DocStatus.FAILED, error_msg=f"{type(e).__name__}: {e}")
            result.failed[doc_id] = f"{type(e).__name__}: {e}"
            self.doc_status.index_done_callback()

    def _commit(self) -> None:
        """Flush every store, then record the final status of the documents merged since the
        last commit (so the status on disk never runs ahead of the data). Entities and
        relations merged since then are embedded first, once each."""
        self.merger.index_pending(self.graph, self.entities_vdb, self.relations_vdb)
        for storage in self.storages():
            if storage is not self.doc_status:
                storage.index_done_callback()
        for doc_id, changes in self._unflushed.items():
            self.set_document_status(doc_id, **changes)
        self._unflushed = {}
        self.doc_status.index_done_callback()

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
        base = param.to_dict() if param is not None else dict(self.query_defaults)
        unknown = set(overrides) - set(base)
        if unknown:
            raise ValueError(f"unknown query parameters {sorted(unknown)}")
        resolved = QueryParam.from_dict({**base, **overrides})
        return await self.engine.acall(query, resolved, self.stores, sync_stream=sync_stream)

    # -------------------------------------------------------------- maintenance
    def delete_by_doc_id(self, doc_id: str) -> Any:
        """Delete a document; see :func:`maintenance.adelete_by_doc_id`."""
        return run_sync(self.adelete_by_doc_id(doc_id))

    async def adelete_by_doc_id(self, doc_id: str) -> Any:
        from lightrag.components.graph_rag.maintenance import adelete_by_doc_id

        return await adelete_by_doc_id(self, doc_id)

    def delete_entity(self, name: str) -> None:
        from lightrag.components.graph_rag.maintenance import delete_entity

        delete_entity(self, name)

    def edit_entity(self, name: str, updates: Dict[str, Any], rename_to: Optional[str] = None) -> Dict[str, Any]:
        from lightrag.components.graph_rag.maintenance import edit_entity

        return edit_entity(self, name, updates, rename_to)

    def merge_entities(self, sources: Sequence[str], target: str) -> Dict[str, Any]:
        from lightrag.components.graph_rag.maintenance import merge_entities

        return merge_entities(self, sources, target)

    def export(self, path: str, format: str = "graphml") -> None:
        """Write the graph as ``graphml``, ``json`` or ``csv``."""
        self.graph.export(path, format=format)

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3, max_nodes: int = 1000) -> Any:
        return self.graph.get_knowledge_graph(node_label, max_depth=max_depth, max_nodes=max_nodes)

    # ------------------------------------------------------------------- status
    def status(self) -> Dict[str, Any]:
        """Counts of documents by status, chunks, entities and relations."""
        return {
            "documents": self.doc_status.get_status_counts(),
            "chunks": len(self.text_chunks),
            "entities": len(self.graph.get_all_labels()),
            "relations": len(self.graph.get_all_edges()),
            "working_dir": self.working_dir,
            "workspace": self.workspace,
        }
