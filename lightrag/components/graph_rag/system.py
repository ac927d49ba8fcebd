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

import uuid
from typing import Any, Dict, List, Optional, Sequence, Union

from lightrag.components.graph_rag.chunking import Chunker
from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.extractive_answerer import ExtractiveAnswerer
from lightrag.components.graph_rag.index import GraphIndex, ReadOnly
from lightrag.components.graph_rag.insert_pipeline import DocumentPreparer, InsertPipeline
from lightrag.components.graph_rag.insert_result import (
    InsertResult,
    ProgressCallback,
    normalize_documents,
)
from lightrag.components.graph_rag.merger import GraphMerger
from lightrag.components.graph_rag.ppr import PprSettings
from lightrag.components.graph_rag.query_engine import QueryEngine
from lightrag.components.graph_rag.schemas import QueryParam, QueryResult
from lightrag.components.graph_rag.warm_up import warm_up
from lightrag.core.component import Component
from lightrag.core.embedder import Embedder
from lightrag.core.generator import Generator
from lightrag.utils.run_sync import run_sync


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
        index: the :class:`~lightrag.components.graph_rag.index.GraphIndex` to use (built
            from ``index_options`` when None).
        llm_max_async: concurrent extraction calls.
        insert_batch_size: documents chunked, embedded and extracted together, then recorded
            several per transaction (up to ~1 s of recording each; a document that fails to
            record fails alone).
        vector_flush_size: entity/relation vectors are embedded when this many are queued, and
            at the end of every insert.
        query_defaults: default :class:`QueryParam` fields.
        ppr_settings: fields of :class:`~lightrag.components.graph_rag.ppr.PprSettings` for
            the ``ppr`` and ``mix`` scorer (damping, fusion, …); unset fields keep the defaults.
        **index_options: arguments of :class:`GraphIndex` when ``index`` is None:
            ``working_dir``, ``workspace``, ``storage`` (``"sqlite"`` or ``"postgres"``),
            ``storage_kwargs``, ``vector_storage``, ``vector_storage_kwargs``,
            ``cosine_threshold``, ``embedding_batch_size``, ``lock_timeout``,
            ``synonym_threshold``.
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
        index: Optional[GraphIndex] = None,
        llm_max_async: int = 4,
        insert_batch_size: int = 32,
        vector_flush_size: int = 20_000,
        query_defaults: Optional[Dict[str, Any]] = None,
        ppr_settings: Optional[Dict[str, Any]] = None,
        **index_options: Any,
    ) -> None:
        super().__init__()
        from lightrag.components.graph_rag.keyword_extractor import HeuristicKeywordExtractor

        for name, value in (("llm_max_async", llm_max_async), ("insert_batch_size", insert_batch_size),
                            ("vector_flush_size", vector_flush_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.llm_max_async = llm_max_async
        self.insert_batch_size = insert_batch_size
        self.vector_flush_size = vector_flush_size
        self.query_defaults = QueryParam.from_dict(dict(query_defaults or {})).to_dict()
        self.ppr_settings = dict(ppr_settings or {})
        self.chunker = chunker or Chunker()
        self.extractor = extractor
        self.embedder = embedder
        self.index = index if index is not None else _build_index(
            embedder, merger, type(extractor).__name__, index_options)
        if index is not None and (merger is not None or index_options):
            raise ValueError("give either an index or the options to build one "
                             f"(merger, {', '.join(sorted(index_options)) or '...'}), not both")
        self.engine = QueryEngine(
            keyword_extractor=keyword_extractor or HeuristicKeywordExtractor(),
            answer_generator=answer_generator,
            reranker=reranker,
            ppr_settings=PprSettings.from_dict(self.ppr_settings) if self.ppr_settings else None,
        )
        self.insert_progress: Dict[str, Dict[str, Any]] = {}

    _to_dict_exclude = ("insert_progress",)

    def _after_from_dict(self) -> None:
        object.__setattr__(self, "insert_progress", {})

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
    def working_dir(self) -> str:
        return self.index.working_dir

    @property
    def workspace(self) -> str:
        return self.index.workspace

    @property
    def embedding_batch_size(self) -> int:
        return self.index.embedding_batch_size

    @property
    def merger(self) -> GraphMerger:
        return self.index.merger

    @property
    def graph(self) -> ReadOnly:
        """The knowledge graph, read-only (the index is its only writer)."""
        return self.index.readers["graph"]

    @property
    def full_docs(self) -> ReadOnly:
        return self.index.readers["full_docs"]

    @property
    def text_chunks(self) -> ReadOnly:
        return self.index.readers["text_chunks"]

    @property
    def doc_status(self) -> ReadOnly:
        return self.index.readers["doc_status"]

    @property
    def chunks_vdb(self) -> ReadOnly:
        return self.index.readers["chunks_vdb"]

    @property
    def entities_vdb(self) -> ReadOnly:
        return self.index.readers["entities_vdb"]

    @property
    def relations_vdb(self) -> ReadOnly:
        return self.index.readers["relations_vdb"]

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
               progress: Optional[ProgressCallback] = None,
               track_id: Optional[str] = None) -> InsertResult:
        """Insert documents (see :meth:`ainsert`)."""
        return run_sync(self.ainsert(input, ids, file_paths, progress, track_id))

    async def ainsert(self, input: Union[str, Sequence[str]],
                      ids: Optional[Union[str, Sequence[str]]] = None,
                      file_paths: Optional[Union[str, Sequence[str]]] = None,
                      progress: Optional[ProgressCallback] = None,
                      track_id: Optional[str] = None) -> InsertResult:
        """Insert documents; already processed ones are skipped, unfinished ones retried.

        Stored as PENDING first (durable), then chunked, embedded, extracted and recorded by
        the :meth:`insert_pipeline` (a document's data and status commit together, in a
        transaction shared with other documents of its batch).

        Args:
            input: a text or a list of texts.
            ids: document ids (default ``"doc-" + md5(text)``). A processed id given another text
                is re-indexed with the new text.
            file_paths: source names used in references.
            progress: called with an :class:`InsertProgress` after each document.
            track_id: the id the documents' statuses record for this call (default: a new
                ``insert-...`` id); ``doc_status.get_by_track_id`` finds them by it.
        """
        result = await self.aenqueue_documents(input, ids, file_paths, track_id)
        return await self.insert_pipeline().run(self.unfinished_document_ids(), result, progress)

    def insert_pipeline(self) -> InsertPipeline:
        """The pipeline an insert runs (chunk -> embed -> extract -> record), on this system's
        components and index."""
        preparer = DocumentPreparer(self.chunker, self.extractor, self.embedder,
                                    self.embedding_batch_size)
        return InsertPipeline(preparer, self.index, self.llm_max_async, self.insert_batch_size,
                              self.vector_flush_size, progress_state=self.insert_progress)

    async def aprocess_pending(self, progress: Optional[ProgressCallback] = None) -> InsertResult:
        """Process every PENDING, PROCESSING or FAILED document (e.g. after a restart)."""
        result = InsertResult(track_id=f"resume-{uuid.uuid4().hex[:12]}")
        return await self.insert_pipeline().run(self.unfinished_document_ids(), result, progress)

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
        file_paths: Optional[Union[str, Sequence[str]]] = None, track_id: Optional[str] = None,
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
        result = InsertResult(track_id=_track_id(track_id), doc_ids=doc_ids)
        _, result.skipped = self.index.enqueue(texts, doc_ids, paths, result.track_id)
        return result

    async def aenqueue_documents(
        self, input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
        file_paths: Optional[Union[str, Sequence[str]]] = None, track_id: Optional[str] = None,
    ) -> InsertResult:
        """:meth:`enqueue_documents` for coroutines (never blocks the event loop on the lock)."""
        texts, doc_ids, paths = self.validate_documents(input, ids, file_paths)
        result = InsertResult(track_id=_track_id(track_id), doc_ids=doc_ids)
        _, result.skipped = await self.index.aenqueue(texts, doc_ids, paths, result.track_id)
        return result

    def unfinished_document_ids(self) -> List[str]:
        """Ids of the PENDING, PROCESSING and FAILED documents: what the next insert processes."""
        return self.index.unfinished_document_ids()

    def set_document_status(self, doc_id: str, **changes: Any) -> None:
        """Update fields of a document's status record (committed at once) and stamp
        ``updated_at``; a :class:`DocStatus` is stored as its value."""
        self.index.set_status(doc_id, **changes)

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
        the fields of ``param`` its caller set (:meth:`QueryParam.explicit_fields`, even to the
        class default), then the keyword ``overrides``. ``query(q, param=QueryParam(mode="local"))`` and
        ``query(q, mode="local")`` therefore resolve alike."""
        defaults = QueryParam().to_dict()
        unknown = set(overrides) - set(defaults)
        if unknown:
            raise ValueError(f"unknown query parameters {sorted(unknown)}; known: {sorted(defaults)}")
        explicit = {}
        if param is not None:
            if not isinstance(param, QueryParam):
                raise TypeError(f"param must be a QueryParam, got {type(param).__name__}")
            chosen = param.explicit_fields()
            explicit = {k: v for k, v in param.to_dict().items()
                        if (k in chosen if chosen is not None else v != defaults.get(k))}
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

    def edit_entity(self, name: str, updates: Dict[str, Any],
                    rename_to: Optional[str] = None) -> Dict[str, Any]:
        edited = self.index.edit_entity(name, updates, rename_to)
        self.flush()
        return edited

    def merge_entities(self, sources: Sequence[str], target: str) -> Dict[str, Any]:
        merged = self.index.merge_entities(sources, target)
        self.flush()
        return merged

    def insert_custom_kg(self, custom_kg: Any, doc_id: Optional[str] = None) -> Any:
        """Import a knowledge graph built elsewhere (see :meth:`ainsert_custom_kg`)."""
        return run_sync(self.ainsert_custom_kg(custom_kg, doc_id))

    async def ainsert_custom_kg(self, custom_kg: Any, doc_id: Optional[str] = None) -> Any:
        """Import ``{"chunks", "entities", "relationships"}`` (HKU LightRAG's format: a dict,
        JSON text or file, or a folder of CSV files) as one document, without extraction;
        vectors are embedded before it returns, and ``delete_by_doc_id(result.doc_id)`` removes
        it (``docs/custom_kg.md``)."""
        return await self.index.insert_custom_kg(custom_kg, doc_id)

    def create_relation(self, src: str, tgt: str,
                        fields: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Add a relation between two existing entities (embedded before it returns)."""
        created = self.index.create_relation(src, tgt, fields)
        self.flush()
        return created

    def edit_relation(self, src: str, tgt: str, updates: Dict[str, Any]) -> Dict[str, Any]:
        """Change a relation's description, keywords, weight or file_path."""
        edited = self.index.edit_relation(src, tgt, updates)
        self.flush()
        return edited

    def delete_relation(self, src: str, tgt: str) -> None:
        """Remove a relation and its vector; its entities stay."""
        self.index.delete_relation(src, tgt)

    def export(self, path: str, format: Optional[str] = None) -> List[Any]:
        """Write the graph as ``graphml``, ``json`` or ``csv`` (default: from the file
        extension, else GraphML); returns the files written."""
        return self.index.export(path, format=format)

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3, max_nodes: int = 1000) -> Any:
        self.index.refresh()
        return self.graph.get_knowledge_graph(node_label, max_depth=max_depth, max_nodes=max_nodes)

    def warm_up(self) -> float:
        """Load the local models a first query needs (the embedder's model, the keyword
        extractor's spaCy pipeline) side by side, now; returns the seconds taken. A fresh
        process that is about to query saves the time one load would wait for the other.

        Example:
            >>> rag.warm_up()  # doctest: +SKIP
            2.1
        """
        return warm_up(self.embedder, self.engine.keyword_extractor)

    def close(self) -> None:
        """Close the store's database connections (the object is unusable afterwards)."""
        self.index.close()

    # ------------------------------------------------------------------- status
    def status(self) -> Dict[str, Any]:
        """Counts of documents by status, chunks, entities and relations."""
        return self.index.status()


def _track_id(given: Optional[str]) -> str:
    """The caller's track id (a non-empty string), else a new ``insert-...`` one."""
    if given is None:
        return f"insert-{uuid.uuid4().hex[:12]}"
    if not isinstance(given, str) or not given.strip() or len(given) > 200:
        raise ValueError(f"track_id must be a non-empty string of at most 200 characters, got {given!r}")
    return given


def _build_index(embedder: Any, merger: Optional[GraphMerger], extractor_name: str,
                 options: Dict[str, Any]) -> GraphIndex:
    """The GraphIndex of ``GraphRAG(**index_options)``; an unknown option is named."""
    import inspect

    known = set(inspect.signature(GraphIndex.__init__).parameters) - {
        "self", "embedder", "merger", "database", "extractor_name"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"GraphRAG got unknown argument(s) {unknown}; index options are "
                        f"{sorted(known)}")
    return GraphIndex(embedder, merger or GraphMerger(), extractor_name=extractor_name, **options)
