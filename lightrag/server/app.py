"""The FastAPI application of ``lightrag serve``.

Endpoints (all JSON; the schema is served at ``/openapi.json``, Swagger UI at ``/docs``, ReDoc
at ``/redoc`` and the web UI at ``/``, all from assets inside the package, see :mod:`.ui`):

===========================  =====================================================================
``POST /documents``          insert text(s) ``{"texts", "ids"?, "file_paths"?, "wait"?}``
``POST /documents/upload``   insert uploaded files (multipart ``files``): PDF, DOCX, HTML,
                             Markdown or text, read by :func:`~lightrag.components.loaders.
                             load_document` (415 names the file and why it cannot be read)
``GET /documents``           status counts and one page of documents (``page``, ``page_size``,
                             ``status``)
``GET /documents/{doc_id}``  one document's status
``POST /documents/retry``    process the FAILED documents again (in the background)
``DELETE /documents/{id}``   delete a document (its exclusive entities go, shared ones rebuilt)
``POST /query``              answer ``{"query", "mode"?, "stream"?, ...QueryParam fields}``;
                             ``stream: true`` answers with Server-Sent Events
``GET /graph``               subgraph around ``label`` (``max_depth``, ``max_nodes``)
``GET /graph/labels``        all entity names
``GET /graph/search``, ``GET /graph/entity/{name}``, ``GET /chunks/{id}``, ``GET /info``: the
                             web UI's explorer endpoints (:mod:`.explore`)
``GET /health``              liveness (never needs a key)
``GET /metrics``             Prometheus text
===========================  =====================================================================

Inserts and deletes are serialised by one ``asyncio.Lock``; queries never wait for it: each runs
in a thread of its own pool (:data:`QUERY_THREADS`), with its own event loop, so retrieval work
never stalls the server, and ``ll_keywords``/``hl_keywords`` are bounded (64 of 200 characters).
Every response carries ``nosniff``, ``X-Frame-Options: DENY`` and a Content-Security-Policy; with
API keys set, ``/openapi.json``, ``/docs`` and ``/redoc`` need a key as the API does. An
insert stores its documents PENDING (durably) and then answers 202; one background worker
processes them (:mod:`.intake`), unless ``wait`` is true. Over ``max_pending`` unfinished
documents an insert gets 429 with ``Retry-After``. Document listings carry each running
document's ``progress``. On shutdown the app stops accepting inserts (503), finishes the queued
ones (up to ``drain_timeout`` seconds; the rest stay PENDING in the store), and flushes the
stores; after a stop or a hard kill the app resumes every unfinished document at its next start.

Example:
    >>> app = create_app(rag, api_keys=["secret"])  # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=9621)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Dict, List, Literal, Optional, Sequence, Union

from fastapi import (
    APIRouter,
    Depends,
    FastAPI,
    File,
    Form,
    HTTPException,
    Query,
    Request,
    UploadFile,
)
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from typing_extensions import Annotated

import lightrag
from lightrag.components.graph_rag.schemas import (
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    DocStatus,
    QueryParam,
)
from lightrag.components.loaders import DocumentLoadError, load_document
from lightrag.components.storage.sql_db import StoreFullError
from lightrag.server.explore import explore_router, public_properties, query_modes
from lightrag.server.intake import DEFAULT_MAX_PENDING, IntakeQueue, QueueFull
from lightrag.server.metrics import CONTENT_TYPE, ServerMetrics
from lightrag.server.middleware import (
    BodyLimitMiddleware,
    ObservabilityMiddleware,
    SecurityHeadersMiddleware,
    api_keys_from_env,
    check_api_key,
)
from lightrag.server.ollama_api import ollama_router
from lightrag.server.ui import mount_ui

log = logging.getLogger(__name__)

DEFAULT_MAX_REQUEST_BYTES = 10 * 1024 * 1024
MAX_PAGE = 1_000_000_000  # page * page_size must fit the database's 64-bit OFFSET
DELETE_LOCK_WAIT = 2.0  # seconds a delete waits for a running insert before 503
QUERY_THREADS = 8  # queries answered at once, each in its own thread with its own event loop
QUERY_FIELDS = set(QueryParam().to_dict())


class InsertRequest(BaseModel):
    """Documents to insert."""

    model_config = ConfigDict(extra="forbid")
    texts: Union[str, List[str]] = Field(..., description="A text or a list of texts")
    ids: Optional[Union[str, List[str]]] = Field(None, description="Document ids")
    file_paths: Optional[Union[str, List[str]]] = Field(None, description="Source names")
    wait: bool = Field(False, description="Answer after processing (200) instead of at once (202)")


Keyword = Annotated[str, StringConstraints(max_length=MAX_KEYWORD_CHARS)]


class QueryRequest(BaseModel):
    """A question and optional QueryParam fields (unset fields use the server's defaults).

    Strict, as :class:`QueryParam` is in Python: ``"top_k": "10"`` or ``"stream": "true"`` is 422,
    not converted; at most :data:`MAX_KEYWORDS` keywords of :data:`MAX_KEYWORD_CHARS` characters
    per list."""

    model_config = ConfigDict(extra="forbid", strict=True)
    query: str = Field(..., min_length=1, description="The question")
    mode: Optional[str] = Field(None, description="A query mode (GET /info lists them)")
    stream: bool = Field(False, description="Answer with Server-Sent Events")
    only_need_context: Optional[bool] = None
    only_need_prompt: Optional[bool] = None
    response_type: Optional[str] = None
    top_k: Optional[int] = Field(None, ge=1, le=1000)
    chunk_top_k: Optional[int] = Field(None, ge=1, le=1000)
    max_entity_tokens: Optional[int] = Field(None, ge=1)
    max_relation_tokens: Optional[int] = Field(None, ge=1)
    max_total_tokens: Optional[int] = Field(None, ge=1)
    hl_keywords: Optional[List[Keyword]] = Field(None, max_length=MAX_KEYWORDS)
    ll_keywords: Optional[List[Keyword]] = Field(None, max_length=MAX_KEYWORDS)
    conversation_history: Optional[List[Dict[str, str]]] = None
    user_prompt: Optional[str] = None
    enable_rerank: Optional[bool] = None
    chunk_pick_method: Optional[Literal["VECTOR", "WEIGHT"]] = None
    related_chunk_number: Optional[int] = Field(None, ge=1)
    chunk_merge_method: Optional[Literal["RELEVANCE", "ROUND_ROBIN"]] = None
    include_references: Optional[bool] = None
    include_raw_data: bool = Field(False, description="Add entities, relations and chunks")

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, mode: Optional[str]) -> Optional[str]:
        if mode is not None and mode not in query_modes():
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(query_modes())}")
        return mode


class AppState:
    """What the routes share: the GraphRAG, the write lock, the intake queue, metrics."""

    def __init__(self, rag: Any, metrics: ServerMetrics, max_pending: int = DEFAULT_MAX_PENDING) -> None:
        self.rag = rag
        self.metrics = metrics
        self.lock = asyncio.Lock()
        self.intake = IntakeQueue(rag, self.lock, max_pending=max_pending,
                                  on_failure=lambda: metrics.count_error("insert_failed"))
        # A pool of its own: a query waiting for a write transaction to commit must never hold
        # a thread of the default executor, which the writer itself may need (model calls).
        self.query_pool = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="lightrag-query")

    async def in_query_thread(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` in the query pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.query_pool, functools.partial(fn, *args, **kwargs))

    @property
    def accepting(self) -> bool:
        return self.intake.accepting

    @property
    def inserting(self) -> bool:
        """A background run is going or wanted, or a write holds the lock."""
        return self.intake.busy or self.lock.locked()

    async def drain(self, timeout: Optional[float] = None) -> None:
        """Stop taking inserts, finish the queued ones and embed the queued vectors, all within
        ``timeout`` seconds (None: as long as it takes). What is left stays queued in the store
        (durably) for the next run."""
        deadline = None if timeout is None else time.monotonic() + timeout
        await self.intake.drain(timeout)
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            await asyncio.wait_for(self._flush(), left)
        except asyncio.TimeoutError:
            log.warning("shutdown: graceful timeout reached; queued vectors are embedded by the "
                        "next insert")

    async def _flush(self) -> None:
        async with self.lock:
            index = getattr(self.rag, "index", None)
            if index is not None and hasattr(index, "index_pending"):
                await index.index_pending()
            else:
                await asyncio.to_thread(self.rag.flush)


def _state(request: Request) -> AppState:
    return request.app.state.lightrag


def _auth_dependency(keys: Sequence[str]) -> Any:
    header = APIKeyHeader(name="X-API-Key", auto_error=False)
    bearer = HTTPBearer(auto_error=False)

    async def require_key(x_api_key: Optional[str] = Depends(header),
                          credentials: Optional[HTTPAuthorizationCredentials] = Depends(bearer)) -> None:
        token = f"Bearer {credentials.credentials}" if credentials else None
        if not check_api_key(keys, x_api_key, token):
            raise HTTPException(401, "missing or invalid API key (X-API-Key or Authorization: Bearer)",
                                headers={"WWW-Authenticate": "Bearer"})

    return require_key


def _sse(data: Dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _reference_chunks(result: Any) -> List[Dict[str, Any]]:
    """The answer's chunks as ``{chunk_id, reference_id, file_path}`` (the UI opens them)."""
    return [{"chunk_id": c.get("chunk_id"), "reference_id": c.get("reference_id"),
             "file_path": c.get("file_path")} for c in result.raw_data.get("chunks", [])
            if c.get("chunk_id")]


_END = object()


async def _pieces(state: AppState, iterator: Any) -> AsyncIterator[Any]:
    """The pieces of an async iterator, or of a sync one read in a worker thread (the sync
    stream of a query run off the event loop)."""
    if hasattr(iterator, "__aiter__"):
        async for piece in iterator:
            yield piece
        return
    iterator = iter(iterator)
    while (piece := await state.in_query_thread(next, iterator, _END)) is not _END:
        yield piece


async def _stream_answer(state: AppState, result: Any) -> AsyncIterator[str]:
    yield _sse({"references": result.references, "chunks": _reference_chunks(result)})
    try:
        if result.is_streaming:
            async for piece in _pieces(state, result.response_iterator):
                yield _sse({"response": piece})
        else:
            yield _sse({"response": result.content})
    except Exception as e:
        log.exception("answer stream failed")
        state.metrics.count_error("stream_failed")
        yield _sse({"error": f"{type(e).__name__}: {e}"})
        return
    error = getattr(result.response_iterator, "error", None) if result.is_streaming else None
    if error:  # a GeneratorStream reports a failed request as data, not by raising
        state.metrics.count_error("stream_failed")
        yield _sse({"error": str(error)})
        return
    yield _sse({"done": True})


def _documents_router() -> APIRouter:
    router = APIRouter(tags=["documents"])

    async def _insert(state: AppState, texts: Any, ids: Any, paths: Any, wait: bool) -> Any:
        if not state.accepting:
            raise HTTPException(503, "the server is shutting down; retry later")
        try:
            texts, ids, paths = state.rag.validate_documents(texts, ids, paths)
        except (TypeError, ValueError) as e:
            raise HTTPException(400, str(e)) from None
        if not texts:
            raise HTTPException(400, "no documents given: texts is empty")
        try:
            if wait:
                result = await state.intake.insert_now(texts, ids, paths)
                if result.failed:
                    state.metrics.count_error("insert_failed")
                return result.to_dict()
            result = await state.intake.enqueue(texts, ids, paths)
        except QueueFull as e:
            raise HTTPException(429, str(e), headers={"Retry-After": str(e.retry_after)}) from None
        except RuntimeError as e:  # shutting down, or the store locked by another writer
            raise HTTPException(503, str(e), headers={"Retry-After": "5"}) from None
        return JSONResponse({"status": "accepted", "doc_ids": ids, "track_id": result.track_id,
                             "skipped": result.skipped}, status_code=202)

    @router.post("/documents", summary="Insert text documents")
    async def insert_documents(body: InsertRequest, request: Request) -> Any:
        return await _insert(_state(request), body.texts, body.ids, body.file_paths, body.wait)

    @router.post("/documents/upload",
                 summary="Insert uploaded files (PDF, DOCX, HTML, Markdown, text)")
    async def upload_documents(request: Request, files: List[UploadFile] = File(...),
                               wait: bool = Form(False)) -> Any:
        texts, names = [], []
        for upload in files:
            name = upload.filename or "upload"
            raw = await upload.read()
            try:
                document = await asyncio.to_thread(load_document, name, data=raw)
            except DocumentLoadError as e:
                raise HTTPException(400 if e.reason == "empty" else 415, str(e)) from None
            texts.append(document.text)
            names.append(name)
        return await _insert(_state(request), texts, None, names, wait)

    @router.post("/documents/retry", summary="Process the FAILED documents again", status_code=202)
    async def retry_documents(request: Request) -> Dict[str, Any]:
        state = _state(request)
        if not state.accepting:
            raise HTTPException(503, "the server is shutting down; retry later",
                                headers={"Retry-After": "5"})
        failed = state.rag.doc_status.get_status_counts().get(DocStatus.FAILED.value, 0)
        if failed:
            state.intake.kick()
        return {"status": "accepted" if failed else "nothing to retry", "failed": failed}

    @router.get("/documents", summary="Status counts and a page of documents")
    async def list_documents(request: Request, page: int = Query(1, ge=1, le=MAX_PAGE),
                             page_size: int = Query(50, ge=1, le=1000),
                             status: Optional[DocStatus] = None) -> Dict[str, Any]:
        state = _state(request)
        counts = state.rag.doc_status.get_status_counts()
        rows = state.rag.doc_status.get_docs_paginated(page, page_size, status)
        progress = state.intake.progress()
        return {"counts": {**counts, "queued": state.intake.unfinished()},
                "total": counts.get(status.value, 0) if status else sum(counts.values()),
                "page": page, "page_size": page_size, "max_pending": state.intake.max_pending,
                "documents": [{"id": k, **v.to_dict(), "progress": progress.get(k)}
                              for k, v in rows]}

    @router.get("/documents/{doc_id:path}", summary="One document's status")
    async def get_document(doc_id: str, request: Request) -> Dict[str, Any]:
        state = _state(request)
        record = state.rag.doc_status.get_by_id(doc_id)
        if record is None:
            raise HTTPException(404, f"no document with id {doc_id!r}")
        return {"id": doc_id, **record, "progress": state.intake.progress().get(doc_id)}

    @router.delete("/documents/{doc_id:path}", summary="Delete a document")
    async def delete_document(doc_id: str, request: Request) -> Dict[str, Any]:
        """Delete a document; 503 with ``Retry-After`` while an insert holds the write lock
        for longer than :data:`DELETE_LOCK_WAIT` seconds (instead of a client timeout)."""
        state = _state(request)
        try:
            await asyncio.wait_for(state.lock.acquire(), DELETE_LOCK_WAIT)
        except asyncio.TimeoutError:
            retry = max(1, state.intake.retry_after(state.intake.unfinished()))
            raise HTTPException(503, "an insert is running; retry the delete later",
                                headers={"Retry-After": str(retry)}) from None
        try:
            return (await state.rag.adelete_by_doc_id(doc_id)).to_dict()
        except KeyError:
            raise HTTPException(404, f"no document with id {doc_id!r}") from None
        finally:
            state.lock.release()

    return router


def _query_router() -> APIRouter:
    router = APIRouter(tags=["query"])

    @router.post("/query", summary="Answer a question (JSON, or SSE with stream: true)")
    async def query(body: QueryRequest, request: Request) -> Any:
        state = _state(request)
        fields = body.model_dump(exclude_none=True, exclude={"query", "include_raw_data"})
        overrides = {k: v for k, v in fields.items() if k in QUERY_FIELDS}
        # Retrieval (graph walks, PPR, re-ranking) is CPU work: it runs in a worker thread with
        # its own event loop, so one heavy query never stalls /health or the other requests.
        result = await state.in_query_thread(state.rag.query, body.query, **overrides)
        if body.stream:
            return StreamingResponse(_stream_answer(state, result), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        if result.raw_data.get("processing_info", {}).get("answer_failed"):
            state.metrics.count_error("llm_failed")
            raise HTTPException(502, f"the answer model failed: {result.raw_data.get('error')}")
        answer: Dict[str, Any] = {"response": result.content, "references": result.references,
                                  "usage": result.raw_data.get("processing_info", {}).get("usage", {})}
        if body.include_raw_data:
            answer["raw_data"] = result.raw_data
        return answer

    @router.get("/graph", summary="The subgraph around an entity", tags=["graph"])
    async def graph(request: Request, label: str = Query("*", min_length=1),
                    max_depth: int = Query(3, ge=0, le=10),
                    max_nodes: int = Query(1000, ge=1, le=100_000)) -> Dict[str, Any]:
        state = _state(request)  # up to 100,000 nodes: built off the event loop
        kg = await state.in_query_thread(state.rag.get_knowledge_graph, label, max_depth=max_depth,
                                         max_nodes=max_nodes)
        data = kg.to_dict()
        for item in (*data.get("nodes", []), *data.get("edges", [])):
            item["properties"] = public_properties(item.get("properties") or {})
        return data

    @router.get("/graph/labels", summary="All entity names", tags=["graph"])
    async def labels(request: Request) -> List[str]:
        return sorted(_state(request).rag.graph.get_all_labels())

    @router.get("/metrics", summary="Prometheus metrics", tags=["ops"])
    async def metrics(request: Request) -> PlainTextResponse:
        state = _state(request)
        return PlainTextResponse(state.metrics.render(state.rag, inserting=state.inserting),
                                 media_type=CONTENT_TYPE)

    return router


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ValueError)
    async def bad_value(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(StoreFullError)
    async def store_full(request: Request, exc: StoreFullError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=507)


def create_app(rag: Any, api_keys: Optional[Sequence[str]] = None,
               max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
               resume_pending: bool = True, metrics: Optional[ServerMetrics] = None,
               max_pending: int = DEFAULT_MAX_PENDING, ui: bool = True,
               drain_timeout: Optional[float] = None) -> FastAPI:
    """The FastAPI app serving ``rag``.

    Args:
        rag: a :class:`~lightrag.components.graph_rag.GraphRAG`.
        api_keys: accepted keys; None reads ``LIGHTRAG_API_KEYS``; empty: no authentication
            (then bind to loopback only; ``lightrag serve`` enforces it).
        max_request_bytes: larger request bodies get 413.
        resume_pending: at startup, process documents left PENDING/PROCESSING by a crash.
        metrics: a :class:`ServerMetrics` to fill (a new one by default).
        max_pending: most unfinished documents; inserts beyond get 429 with ``Retry-After``.
        ui: serve the web UI at ``/`` and the offline API docs at ``/docs`` and ``/redoc``.
        drain_timeout: at shutdown, seconds the queued documents get to finish (None: all of
            them); the rest stay PENDING in the store and resume at the next start.

    Raises:
        ValueError: ``max_request_bytes`` or ``max_pending`` is not positive.
    """
    if max_request_bytes < 1:
        raise ValueError(f"max_request_bytes must be positive, got {max_request_bytes}")
    keys = list(api_keys_from_env() if api_keys is None else api_keys)
    state = AppState(rag, metrics or ServerMetrics(), max_pending=max_pending)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if resume_pending:
            state.intake.resume()
        yield
        await state.drain(drain_timeout)
        state.query_pool.shutdown(wait=False, cancel_futures=True)
        log.info("shutdown: all inserts finished and stores flushed")

    app = FastAPI(title="LightRAG", version=lightrag.__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None,
                  description="Graph RAG: insert documents, query them in several modes, explore "
                              "the graph. The web UI is at /.")
    app.state.lightrag = state
    _add_error_handlers(app)
    protected = [Depends(_auth_dependency(keys))] if keys else []
    app.include_router(_documents_router(), dependencies=protected)
    app.include_router(_query_router(), dependencies=protected)
    app.include_router(explore_router(), dependencies=protected)
    app.include_router(ollama_router(), dependencies=protected)  # /api/*: Ollama clients

    @app.get("/openapi.json", include_in_schema=False, dependencies=protected)
    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    if ui:
        mount_ui(app, dependencies=protected, openapi_url="/openapi.json")

    @app.get("/health", tags=["ops"], summary="Liveness")
    async def health() -> Dict[str, Any]:
        return {"status": "ok" if state.accepting else "shutting_down",
                "version": lightrag.__version__, "insert_in_progress": state.inserting,
                "auth": bool(keys)}

    app.add_middleware(BodyLimitMiddleware, max_bytes=max_request_bytes)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(ObservabilityMiddleware, metrics=state.metrics)
    return app
