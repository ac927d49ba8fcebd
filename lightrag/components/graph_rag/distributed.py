"""Distributed ingestion on Ray (extra ``ray``): :func:`ray_insert`.

The expensive steps of an insert run on a Ray cluster; the graph is still written by one process:

1. **driver**: documents are validated, stored and marked PENDING by
   :meth:`GraphRAG.enqueue_documents`, the same first step as :meth:`GraphRAG.ainsert` (already
   PROCESSED ids are skipped; PENDING, PROCESSING and FAILED ones from earlier inserts are
   retried, see :meth:`GraphRAG.unfinished_document_ids`).
2. **Ray actors** (a fixed pool of ``num_workers``): per document, chunking, chunk embedding and
   LLM extraction of every chunk: the :class:`~lightrag.components.graph_rag.insert_pipeline.
   DocumentPreparer` that a single-process insert uses. The pool shares ``max_llm_concurrency``
   LLM calls between its actors (an ``asyncio.Semaphore`` in each, the shares adding up to the
   total), so the provider never sees more concurrent requests than that, however large the
   cluster. Extractions cached by an earlier, interrupted insert are sent along and not repeated.
3. **driver**: at most ``max_in_flight`` documents are out at once (backpressure: the next one is
   submitted only when the oldest result has been merged) and results are recorded **in document
   order** by :meth:`InsertPipeline.commit <lightrag.components.graph_rag.insert_pipeline.
   InsertPipeline.commit>` (one transaction per document, as they arrive one at a time; the
   same recording as a single-process insert, which shares transactions within a batch);
   entity and relation vectors are embedded at the end. Recording in order makes the graph
   equal to the one a single-process insert builds.

The pipeline components (chunker, extractor, embedder) travel to the actors pickled with Ray's
cloudpickle; thread locks inside them are recreated on arrival and an on-disk response cache is
used in memory by the workers. Model clients must be picklable (SDK clients drop their
connections and reconnect) and the workers need the providers' keys in their environment (e.g.
``worker_options={"runtime_env": {"env_vars": {...}}}``).

``ray.init()`` is called when Ray is not initialised yet: with ``address=None`` it starts a local
cluster, with ``"auto"`` or ``"ray://head:10001"`` it joins a running one. See
``docs/scale_and_serve.md`` for a multi-machine setup.

Example:
    >>> from lightrag.components.graph_rag.distributed import ray_insert
    >>> result = ray_insert(rag, texts, num_workers=4, max_llm_concurrency=16)  # doctest: +SKIP
    >>> result.processed  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import io
import logging
import pickle
import sqlite3
import threading
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Sequence, Tuple, Union

from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.insert_pipeline import (
    DocumentPreparer,
    InsertPipeline,
    PreparedDocument,
    SourceDocument,
)
from lightrag.components.graph_rag.insert_result import InsertResult
from lightrag.components.graph_rag.schemas import TextChunkSchema
from lightrag.components.graph_rag.system import GraphRAG
from lightrag.utils.run_sync import run_sync

log = logging.getLogger(__name__)

_LOCK_FACTORIES = {type(threading.Lock()): threading.Lock, type(threading.RLock()): threading.RLock}


def _dropped() -> None:
    return None


def dumps_components(obj: Any) -> bytes:
    """cloudpickle ``obj`` for :func:`loads_components`: thread locks come back as fresh locks,
    compiled Jinja2 templates are dropped (and recompiled from the Prompt's text on load), SQLite
    connections are dropped (a Generator's on-disk response cache works in memory there).

    >>> import threading
    >>> restored = loads_components(dumps_components({"lock": threading.Lock()}))
    >>> restored["lock"].acquire(blocking=False)
    True
    """
    import jinja2
    from ray import cloudpickle

    class _Pickler(cloudpickle.CloudPickler):
        def reducer_override(self, item: Any) -> Any:
            factory = _LOCK_FACTORIES.get(type(item))
            if factory is not None:
                return factory, ()
            if isinstance(item, (jinja2.Template, sqlite3.Connection)):
                return _dropped, ()
            return super().reducer_override(item)

    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def loads_components(blob: bytes) -> Any:
    """Unpickle :func:`dumps_components` output; recompile the templates of every Prompt."""
    from lightrag.core.component import Component
    from lightrag.core.prompt_builder import Prompt, _compile

    obj = pickle.loads(blob)
    roots = obj if isinstance(obj, (tuple, list)) else [obj]
    for root in roots:
        if isinstance(root, Component):
            for _, component in root.named_components():
                if isinstance(component, Prompt) and component._template is None:
                    component._template = _compile(component.template)[0]
    return obj


def split_llm_limit(max_llm_concurrency: int, num_workers: int) -> List[int]:
    """Each worker's share of the LLM concurrency; the shares add up to the total.

    >>> split_llm_limit(5, 2), split_llm_limit(2, 2)
    ([3, 2], [1, 1])
    """
    if max_llm_concurrency < 1 or num_workers < 1:
        raise ValueError("max_llm_concurrency and num_workers must be at least 1")
    if num_workers > max_llm_concurrency:
        raise ValueError(f"num_workers ({num_workers}) must not exceed max_llm_concurrency "
                         f"({max_llm_concurrency}): every worker needs at least one LLM slot")
    base, extra = divmod(max_llm_concurrency, num_workers)
    return [base + (1 if i < extra else 0) for i in range(num_workers)]


class ExtractionWorker:
    """A Ray actor (async): chunk, embed and extract one document per call, with the
    :class:`DocumentPreparer` of a single-process insert.

    Args:
        blob: :func:`dumps_components` of ``(chunker, extractor, embedder, embedding_batch_size)``.
        llm_limit: concurrent extraction calls this actor may make.
    """

    def __init__(self, blob: bytes, llm_limit: int) -> None:
        self.preparer = DocumentPreparer(*loads_components(blob))
        self.llm_limit = llm_limit
        self._semaphore: Optional[asyncio.Semaphore] = None

    async def process(self, doc_id: str, text: str, file_path: str,
                      cached: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
        """Chunks, their vectors and one extraction (as a dict) per chunk, in chunk order;
        ``cached`` holds the stored extractions by chunk id (not extracted again)."""
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.llm_limit)

        def lookup(chunk_id: str, chunk: TextChunkSchema) -> Optional[ExtractionResult]:
            found = cached.get(chunk_id)
            return None if found is None else ExtractionResult.from_dict(found)

        done = (await self.preparer.prepare([SourceDocument(doc_id, text, file_path)],
                                            self._semaphore, lookup))[0]
        return {"doc_id": doc_id, "error": done.error,
                "chunks": {cid: c.to_dict() for cid, c in done.chunks.items()},
                "vectors": done.vectors, "extractions": [e.to_dict() for e in done.extractions]}


def _prepared(out: Dict[str, Any], content_hash: str) -> PreparedDocument:
    """A worker's output as the :class:`PreparedDocument` the pipeline records."""
    return PreparedDocument(
        doc_id=out["doc_id"], content_hash=content_hash,
        chunks={cid: TextChunkSchema.from_dict(c) for cid, c in out["chunks"].items()},
        vectors=out["vectors"] if out["chunks"] else None,
        extractions=[ExtractionResult.from_dict(e) for e in out["extractions"]],
        error=out.get("error"))


def _cached_extractions(pipeline: InsertPipeline, doc: SourceDocument) -> Dict[str, Dict[str, Any]]:
    """Extractions already cached for this document's chunks (by chunk content)."""
    cached = {}
    for chunk_id, chunk in pipeline.preparer.chunker(doc.doc_id, doc.text, doc.file_path).items():
        found = pipeline.index.cached_extraction(chunk_id, chunk)
        if found is not None:
            cached[chunk_id] = found.to_dict()
    return cached


def ray_insert(
    rag: GraphRAG,
    texts: Union[str, Sequence[str]],
    ids: Optional[Union[str, Sequence[str]]] = None,
    file_paths: Optional[Union[str, Sequence[str]]] = None,
    num_workers: int = 2,
    max_llm_concurrency: int = 4,
    max_in_flight: Optional[int] = None,
    address: Optional[str] = None,
    worker_options: Optional[Dict[str, Any]] = None,
    init_kwargs: Optional[Dict[str, Any]] = None,
) -> InsertResult:
    """Insert documents into ``rag`` with chunking, chunk embedding and extraction on Ray.

    Args:
        rag: the GraphRAG whose stores receive the result (on this process, the driver).
        texts / ids / file_paths: as in :meth:`GraphRAG.insert`.
        num_workers: extraction actors in the pool.
        max_llm_concurrency: concurrent LLM calls of the whole pool (at least ``num_workers``).
        max_in_flight: documents submitted but not merged yet (default ``2 * num_workers``).
        address: cluster to join when Ray is not initialised (None: start a local one).
        worker_options: Ray actor options (``num_cpus`` default 1, ``resources``,
            ``runtime_env``...).
        init_kwargs: more ``ray.init`` arguments when this call initialises Ray.

    Returns:
        An :class:`InsertResult`, as from :meth:`GraphRAG.insert`.
    """
    try:
        import ray
    except ImportError as e:
        raise ImportError("ray_insert needs Ray: pip install -e '.[ray]'") from e
    limits = split_llm_limit(max_llm_concurrency, num_workers)
    window = 2 * num_workers if max_in_flight is None else max_in_flight
    if window < 1:
        raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
    result = rag.enqueue_documents(texts, ids, file_paths)
    todo = rag.unfinished_document_ids()
    if not todo:
        return result
    if not ray.is_initialized():
        ray.init(address=address, **(init_kwargs or {}))
    elif address is not None:
        log.warning("Ray is already initialised; address=%r is ignored", address)
    blob = ray.put(dumps_components((rag.chunker, rag.extractor, rag.embedder,
                                     rag.embedding_batch_size)))
    options = {"num_cpus": 1, **(worker_options or {}),
               "max_concurrency": max(1, -(-window // num_workers))}
    actor_class = ray.remote(ExtractionWorker)
    actors = [actor_class.options(**options).remote(blob, limit) for limit in limits]
    pipeline = rag.insert_pipeline()
    in_flight: Deque[Tuple[SourceDocument, Any]] = deque()
    queue = deque(todo)
    submitted = 0
    try:
        while queue or in_flight:
            while queue and len(in_flight) < window:
                docs = run_sync(pipeline.read([queue.popleft()], result))
                if not docs:
                    continue  # its text is missing: failed by read()
                doc = docs[0]
                actor = actors[submitted % num_workers]
                submitted += 1
                in_flight.append((doc, actor.process.remote(
                    doc.doc_id, doc.text, doc.file_path, _cached_extractions(pipeline, doc))))
            if not in_flight:
                continue
            doc, ref = in_flight.popleft()
            try:
                prepared = _prepared(ray.get(ref), doc.content_hash)
            except Exception as e:
                log.exception("distributed processing of %s failed", doc.doc_id)
                cause = getattr(e, "cause", None) or e  # a RayTaskError wraps the worker's error
                prepared = PreparedDocument(doc.doc_id, doc.content_hash,
                                            error=f"{type(cause).__name__}: {cause}")
            run_sync(pipeline.commit(prepared, result))
    finally:
        for actor in actors:
            ray.kill(actor)
        rag.flush()
    log.info("ray insert %s: %d processed, %d failed, %d skipped on %d workers", result.track_id,
             len(result.processed), len(result.failed), len(result.skipped), num_workers)
    return result
