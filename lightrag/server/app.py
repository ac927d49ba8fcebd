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
                             ``stream: true`` answers with Server-Sent Events (:mod:`.query_api`)
``GET /graph``               subgraph around ``label`` (``max_depth``, ``max_nodes``)
``GET /graph/labels``        all entity names
``GET /graph/search``, ``GET /graph/entity/{name}``, ``GET /chunks/{id}``, ``GET /info``: the
                             web UI's explorer endpoints (:mod:`.explore`)
``GET /workspaces``          the workspaces the caller's key may use
``GET /health``              liveness (never needs a key)
``GET /metrics``             Prometheus text
===========================  =====================================================================

Every route but ``/health`` and ``/workspaces`` works in the workspace the request names
(``LIGHTRAG-WORKSPACE`` header or ``/w/{name}/`` prefix, :mod:`.workspaces`; none: the default
one); each workspace has its own store, intake queue and background runner. API keys may be
limited to workspaces (:mod:`.auth`): 401 without a valid key, 403 on a workspace the key is not
limited to. Document routes are in :mod:`.documents`.

Writes are serialised by the store's own writer lock (``GraphIndex.writing``); queries never
wait for it: each runs in a thread of one pool (:data:`QUERY_THREADS`), with its own event loop,
so retrieval work never stalls the server, and ``ll_keywords``/``hl_keywords`` are bounded (64
of 200 characters).
Every response carries ``nosniff``, ``X-Frame-Options: DENY`` and a Content-Security-Policy; with
API keys set, ``/openapi.json``, ``/docs`` and ``/redoc`` need a key as the API does. An
insert stores its documents PENDING (durably) and then answers 202; one background worker
processes them (:mod:`.intake`), unless ``wait`` is true. Over ``max_pending`` unfinished
documents an insert gets 429 with ``Retry-After``. Document listings carry each running
document's ``progress``. On shutdown the app stops accepting inserts (503), finishes the queued
ones (up to ``drain_timeout`` seconds; the rest stay PENDING in the store), and flushes the
stores; after a stop or a hard kill the app resumes every unfinished document at its next start.

Example:
    >>> app = create_app(rag, api_keys=["secret", "acme-key:acme"],
    ...                  workspace_factory=lambda name: build_rag(workspace=name))  # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=9621)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Dict, List, Optional

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

import lightrag
from lightrag.server.auth import KeyRing, KeySpec
from lightrag.server.documents import router as documents_router
from lightrag.server.errors import UnhandledErrorMiddleware, add_error_handlers
from lightrag.server.explore import explore_router, public_properties
from lightrag.server.hku_api import router as hku_router
from lightrag.server.intake import DEFAULT_MAX_PENDING, IntakeQueue
from lightrag.server.metrics import CONTENT_TYPE, ServerMetrics
from lightrag.server.middleware import (
    BodyLimitMiddleware,
    ObservabilityMiddleware,
    SecurityHeadersMiddleware,
    api_keys_from_env,
)
from lightrag.server.ollama_api import ollama_router
from lightrag.server.query_api import router as query_router
from lightrag.server.ui import mount_ui
from lightrag.server.uploads import UploadReader
from lightrag.server.workspaces import (
    DEFAULT_MAX_WORKSPACES,
    WORKSPACE_HEADER,
    WorkspaceError,
    WorkspacePathMiddleware,
    WorkspacePool,
)

log = logging.getLogger(__name__)

__all__ = ["AppState", "ServerState", "create_app", "QUERY_THREADS"]

DEFAULT_MAX_REQUEST_BYTES = 10 * 1024 * 1024
QUERY_THREADS = 8  # queries answered at once, each in its own thread with its own event loop


class AppState:
    """One workspace as the routes see it: its GraphRAG and intake queue, with the server's
    metrics and query pool (a pool of its own when none is given)."""

    def __init__(self, rag: Any, metrics: ServerMetrics, max_pending: int = DEFAULT_MAX_PENDING,
                 query_pool: Optional[ThreadPoolExecutor] = None, name: str = "default") -> None:
        self.rag = rag
        self.name = name
        self.metrics = metrics
        self.intake = IntakeQueue(rag, max_pending=max_pending,
                                  on_failure=lambda: metrics.count_error("insert_failed"))
        # A pool of its own: a query waiting for a write transaction to commit must never hold
        # a thread of the default executor, which the writer itself may need (model calls).
        self.query_pool = query_pool or ThreadPoolExecutor(QUERY_THREADS,
                                                           thread_name_prefix="lightrag-query")
        self.users = 0  # requests using this workspace now (an open one is closed only at 0)

    async def in_query_thread(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` in the query pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.query_pool, functools.partial(fn, *args, **kwargs))

    @property
    def accepting(self) -> bool:
        return self.intake.accepting

    @property
    def inserting(self) -> bool:
        """A processing run is going or wanted."""
        return self.intake.busy

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
        index = getattr(self.rag, "index", None)
        if index is not None and hasattr(index, "index_pending"):
            await index.index_pending()  # under the store's writer lock
        else:
            await asyncio.to_thread(self.rag.flush)


def config_factory(rag: Any) -> Callable[[str], Any]:
    """Build the GraphRAG of a workspace from ``rag``'s own config with ``workspace`` replaced."""
    from lightrag.utils.config import build

    def open_workspace(name: str) -> Any:
        try:
            config = copy.deepcopy(rag.to_config())
        except Exception as e:
            raise RuntimeError(f"cannot rebuild {type(rag).__name__} from its config for workspace "
                               f"{name!r} ({e}); pass workspace_factory to create_app") from e
        config.setdefault("component_config", {})["workspace"] = name
        return build(config)

    return open_workspace


class ServerState:
    """What the whole app shares: keys, metrics, the query pool and the workspaces.

    Args:
        rag: the default workspace's GraphRAG.
        keys: the :class:`KeyRing`.
        metrics: the :class:`ServerMetrics`.
        max_pending: per workspace, most unfinished documents.
        workspace_factory: ``factory(name)`` builds a workspace's GraphRAG (default:
            :func:`config_factory`).
        max_workspaces / resume: see :class:`~lightrag.server.workspaces.WorkspacePool`.
    """

    def __init__(self, rag: Any, keys: KeyRing, metrics: ServerMetrics,
                 max_pending: int = DEFAULT_MAX_PENDING,
                 workspace_factory: Optional[Callable[[str], Any]] = None,
                 max_workspaces: int = DEFAULT_MAX_WORKSPACES, resume: bool = True) -> None:
        self.keys = keys
        self.metrics = metrics
        self.max_pending = max_pending
        self.default = AppState(rag, metrics, max_pending=max_pending)
        self.factory = workspace_factory or config_factory(rag)
        self.workspaces = WorkspacePool(self.default, self._open_state, max_workspaces, resume)
        self.uploads = UploadReader()  # archives and PDFs are read in child processes

    def _open_state(self, name: str) -> AppState:
        return AppState(self.factory(name), self.metrics, max_pending=self.max_pending,
                        query_pool=self.default.query_pool, name=name)

    async def enter(self, requested: Optional[str], key: Optional[str]) -> AppState:
        """The state of the requested workspace for a caller with ``key``; one more user.

        Raises:
            HTTPException: 400 a bad name, 403 a key not limited to it, 503 none can open.
        """
        try:
            name = self.workspaces.canonical(requested)
            if not any(self.keys.allows(key, alias) for alias in self.workspaces.names_of(name)):
                raise WorkspaceError(403, f"this API key may not use workspace {name!r}")
            state = await self.workspaces.get(name)
        except WorkspaceError as e:
            retry = {"Retry-After": str(e.retry_after)} if e.retry_after else None
            raise HTTPException(e.status, str(e), headers=retry) from None
        state.users += 1
        return state

    async def drain(self, timeout: Optional[float]) -> None:
        """Drain every workspace at once (each within ``timeout``) and stop the query pool."""
        await asyncio.gather(self.workspaces.drain(timeout), self.default.drain(timeout))
        self.default.query_pool.shutdown(wait=False, cancel_futures=True)


def _server(request: Request) -> ServerState:
    return request.app.state.lightrag


def key_dependency(keys: KeyRing) -> Callable[..., Any]:
    """The dependency that checks the caller's key (401) and keeps it as ``request.state.api_key``;
    a no-op without keys (then the API shows no security scheme)."""
    if not keys.enabled:
        async def no_key(request: Request) -> None:
            request.state.api_key = None
        return no_key
    header = APIKeyHeader(name="X-API-Key", auto_error=False)
    bearer = HTTPBearer(auto_error=False)

    async def require_key(request: Request, x_api_key: Optional[str] = Depends(header),
                          credentials: Optional[HTTPAuthorizationCredentials] = Depends(bearer)) -> None:
        token = f"Bearer {credentials.credentials}" if credentials else None
        key = keys.match(x_api_key, token)
        if key is None:
            raise HTTPException(401, "missing or invalid API key (X-API-Key or Authorization: Bearer)",
                                headers={"WWW-Authenticate": "Bearer"})
        request.state.api_key = key

    return require_key


async def use_workspace(
        request: Request,
        workspace: Optional[str] = Header(None, alias=WORKSPACE_HEADER, include_in_schema=True,
                                          description="The workspace (none: the default one); "
                                                      "or prefix the route with /w/{name}")
) -> AsyncIterator[AppState]:
    """Select the request's workspace (after the key dependency) as ``request.state.workspace``."""
    state = await _server(request).enter(workspace, getattr(request.state, "api_key", None))
    request.state.workspace = state
    try:
        yield state
    finally:
        state.users -= 1


graph_router = APIRouter(tags=["graph"])


@graph_router.get("/graph", summary="The subgraph around an entity")
async def graph(request: Request, label: str = Query("*", min_length=1),
                max_depth: int = Query(3, ge=0, le=10),
                max_nodes: int = Query(1000, ge=1, le=100_000)) -> Dict[str, Any]:
    """The subgraph around ``label`` (up to 100,000 nodes: built off the event loop)."""
    state = request.state.workspace
    kg = await state.in_query_thread(state.rag.get_knowledge_graph, label, max_depth=max_depth,
                                     max_nodes=max_nodes)
    data = kg.to_dict()
    for item in (*data.get("nodes", []), *data.get("edges", [])):
        item["properties"] = public_properties(item.get("properties") or {})
    return data


@graph_router.get("/graph/labels", summary="All entity names")
async def labels(request: Request) -> List[str]:
    """Every entity name of the workspace, sorted."""
    return sorted(request.state.workspace.rag.graph.get_all_labels())


async def metrics(request: Request) -> PlainTextResponse:
    """The server's counters and the workspace's store gauges, as Prometheus text."""
    state = request.state.workspace
    return PlainTextResponse(state.metrics.render(state.rag, inserting=state.inserting),
                             media_type=CONTENT_TYPE)


async def workspaces(request: Request) -> Dict[str, Any]:
    """``default``, the workspaces stored next to it and those open, as far as the key may see."""
    server = _server(request)
    pool = server.workspaces
    key = getattr(request.state, "api_key", None)
    names = [n for n in pool.names()
             if any(server.keys.allows(key, alias) for alias in pool.names_of(n))]
    return {"workspaces": [pool.describe(n) for n in names], "header": WORKSPACE_HEADER,
            "max_open": pool.max_open}


async def health(request: Request) -> Dict[str, Any]:
    """Liveness of the server (its default workspace); never needs a key."""
    server = _server(request)
    return {"status": "ok" if server.default.accepting else "shutting_down",
            "version": lightrag.__version__, "insert_in_progress": server.default.inserting,
            "auth": server.keys.enabled}


def _mount_routes(app: FastAPI, keyed: List[Any], ui: bool) -> None:
    in_workspace = [*keyed, Depends(use_workspace)]
    app.include_router(hku_router, dependencies=in_workspace)  # first: HKU's /documents/* names
    for router in (documents_router, query_router, graph_router, explore_router(), ollama_router()):
        app.include_router(router, dependencies=in_workspace)
    app.add_api_route("/metrics", metrics, methods=["GET"], tags=["ops"],
                      summary="Prometheus metrics", dependencies=in_workspace)
    app.add_api_route("/workspaces", workspaces, methods=["GET"], tags=["ops"],
                      summary="The workspaces this key may use", dependencies=keyed)
    app.add_api_route("/health", health, methods=["GET"], tags=["ops"], summary="Liveness")

    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    app.add_api_route("/openapi.json", openapi, methods=["GET"], include_in_schema=False,
                      dependencies=keyed)
    if ui:
        mount_ui(app, dependencies=keyed, openapi_url="/openapi.json")


def warm_up_models(state: AppState) -> None:
    """Load the local models of a workspace's first query (its embedder's, the keyword
    extractor's spaCy pipeline: ~2-8 s) on one of its query threads, in the background: the
    server answers ``/health`` at once, and a query that arrives meanwhile waits only for what
    is left of the load (each model loads once, under its own lock) instead of all of it."""
    warm_up = getattr(state.rag, "warm_up", None)
    if callable(warm_up):
        state.query_pool.submit(warm_up)


def create_app(rag: Any, api_keys: Optional[KeySpec] = None,
               max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
               resume_pending: bool = True, metrics: Optional[ServerMetrics] = None,
               max_pending: int = DEFAULT_MAX_PENDING, ui: bool = True,
               drain_timeout: Optional[float] = None,
               workspace_factory: Optional[Callable[[str], Any]] = None,
               max_workspaces: int = DEFAULT_MAX_WORKSPACES) -> FastAPI:
    """The FastAPI app serving ``rag`` (the default workspace) and, on request, other workspaces.

    Args:
        rag: a :class:`~lightrag.components.graph_rag.GraphRAG`.
        api_keys: accepted keys, each ``key`` or ``key:ws1,ws2`` (limited to those workspaces),
            or a mapping ``{key: None or [workspaces]}``; None reads ``LIGHTRAG_API_KEYS``;
            empty: no authentication (then bind to loopback only; ``lightrag serve`` enforces it).
        max_request_bytes: larger request bodies get 413.
        resume_pending: at startup (and when a workspace opens), process the documents left
            PENDING/PROCESSING by a crash.
        metrics: a :class:`ServerMetrics` to fill (a new one by default).
        max_pending: per workspace, most unfinished documents; inserts beyond get 429 with
            ``Retry-After``.
        ui: serve the web UI at ``/`` and the offline API docs at ``/docs`` and ``/redoc``.
        drain_timeout: at shutdown, seconds the queued documents get to finish (None: all of
            them); the rest stay PENDING in the store and resume at the next start.
        workspace_factory: ``factory(name)`` builds the GraphRAG of workspace ``name`` (default:
            ``rag``'s own config with ``workspace`` replaced).
        max_workspaces: most workspaces open at once besides the default one.

    Raises:
        ValueError: ``max_request_bytes``, ``max_pending`` or ``max_workspaces`` is not positive,
            or an API key entry is malformed.
    """
    if max_request_bytes < 1:
        raise ValueError(f"max_request_bytes must be positive, got {max_request_bytes}")
    keys = KeyRing(api_keys_from_env() if api_keys is None else api_keys)
    server = ServerState(rag, keys, metrics or ServerMetrics(), max_pending=max_pending,
                         workspace_factory=workspace_factory, max_workspaces=max_workspaces,
                         resume=resume_pending)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if resume_pending:
            server.default.intake.resume()
        warm_up_models(server.default)
        yield
        await server.drain(drain_timeout)
        log.info("shutdown: stores flushed (unfinished documents, if any, resume at the next start)")

    app = FastAPI(title="LightRAG", version=lightrag.__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None,
                  description="Graph RAG: insert documents, query them in several modes, explore "
                              "the graph. The web UI is at /. Send LIGHTRAG-WORKSPACE: name (or "
                              "prefix a route with /w/name) to use another workspace.")
    app.state.lightrag = server
    add_error_handlers(app)
    _mount_routes(app, [Depends(key_dependency(keys))], ui)
    app.add_middleware(UnhandledErrorMiddleware)  # innermost: JSON for what no route handled
    app.add_middleware(WorkspacePathMiddleware)  # the others see its answers
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_request_bytes)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(ObservabilityMiddleware, metrics=server.metrics)
    return app
