"""Several isolated workspaces in one server: each request picks one.

A request names its workspace with the header ``LIGHTRAG-WORKSPACE: name`` or the path prefix
``/w/{name}/`` before any API route (``/w/acme/query``, ``/w/acme/documents``); neither (or the
name ``default``) is the server's default workspace, the GraphRAG the app was made with. Names
are 1 to 64 of ``A-Z a-z 0-9 _ -`` (anything else is 400).

Each other workspace gets its own GraphRAG, built on first use by the app's ``workspace_factory``
(the server's config with ``workspace`` replaced: its own documents, graph, vectors and status in
``working_dir/<name>/``), with its own intake queue and background runner; the app keeps at most
``max_workspaces`` of them open. To open another it closes the least recently used one that no
request is using: an idle one first, else one still processing inserts (it stops taking them;
its run going gets :data:`EVICT_GRACE_S` to end, then is cancelled once its write in progress
has committed; the documents it had not finished and those queued after it stay in the store
and are processed when it opens again), so neither a steady stream of inserts nor one long run
can keep the others out. A request
waits up to ``open_wait`` seconds for that; past it (or when every open workspace is in use by
a request) it gets 503 with ``Retry-After``, and its retry finds the close under way.

Example:
    >>> pool = WorkspacePool.__new__(WorkspacePool)
    >>> pool.default_aliases = {"", "default"}
    >>> pool.canonical(None), pool.canonical("default"), pool.canonical("acme")
    ('default', 'default', 'acme')
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Set

from lightrag.components.storage.databases import WorkspaceCaseConflict
from lightrag.server.auth import DEFAULT_WORKSPACE, WORKSPACE_NAME, check_workspace_name
from lightrag.server.middleware import Receive, Scope, Send, send_json
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

WORKSPACE_HEADER = "LIGHTRAG-WORKSPACE"
PATH_PREFIX = "/w/"
DEFAULT_MAX_WORKSPACES = 32
#: seconds a request waits for a workspace to be closed to make room for its own
DEFAULT_OPEN_WAIT = 10.0
#: seconds a run of inserts in a workspace closed to make room may go on before it is cancelled
#: (after its write in progress; the documents it had not finished are processed at reopening)
EVICT_GRACE_S = 1.0
#: ``Retry-After`` of a 503 when no workspace could be closed in time
RETRY_AFTER_S = 5
STORE_FILE = "lightrag.sqlite3"

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class WorkspaceError(Exception):
    """A workspace that cannot be served: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str, retry_after: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def stored_workspaces(rag: Any) -> List[str]:
    """The workspaces with an embedded store next to ``rag``'s (folders of its working dir
    holding a ``lightrag.sqlite3``); none for a PostgreSQL store (they are listed once open)."""
    if getattr(rag, "storage", "sqlite") != "sqlite":
        return []
    root = Path(getattr(rag, "working_dir", "") or ".")
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and WORKSPACE_NAME.match(p.name) and (p / STORE_FILE).is_file())


def close_rag(rag: Any) -> None:
    """Close a GraphRAG's store (its index's database), when it can be closed."""
    closer = getattr(getattr(rag, "index", None), "close", None) or getattr(rag, "close", None)
    if callable(closer):
        closer()


class WorkspacePool:
    """The default workspace's state and the other workspaces' states, opened on first use.

    Args:
        default: the state (:class:`~lightrag.server.app.AppState`) of the default workspace.
        open_state: ``open_state(name)`` makes a started state for a workspace (it may block:
            it runs in a worker thread).
        max_open: most workspaces open besides the default one.
        resume: at opening, process the documents a workspace left unfinished.
        open_wait: seconds a request waits for room (a workspace being closed) before 503.
    """

    def __init__(self, default: Any, open_state: Callable[[str], Any],
                 max_open: int = DEFAULT_MAX_WORKSPACES, resume: bool = True,
                 open_wait: float = DEFAULT_OPEN_WAIT) -> None:
        if max_open < 1:
            raise ValueError(f"max_workspaces must be at least 1, got {max_open}")
        self.default = default
        self.open_state = open_state
        self.max_open = max_open
        self.resume = resume
        own = getattr(default.rag, "workspace", "") or ""
        self.default_aliases = {"", DEFAULT_WORKSPACE, own}
        self.open_wait = open_wait
        self.states: OrderedDict[str, Any] = OrderedDict()
        self.closing: Dict[str, asyncio.Task] = {}  # closed to make room, not yet shut
        self._opening = asyncio.Lock()
        self.accepting = True

    def canonical(self, name: Optional[str]) -> str:
        """``default`` for no name, ``default`` or the default GraphRAG's own workspace; else the
        name itself, checked (:class:`WorkspaceError` 400 when it is not valid)."""
        name = (name or "").strip()
        if name in self.default_aliases:
            return DEFAULT_WORKSPACE
        try:
            return check_workspace_name(name)
        except ValueError as e:
            raise WorkspaceError(400, str(e)) from None

    def names_of(self, name: str) -> Set[str]:
        """Every name a canonical workspace answers to: the default one is ``default`` and the
        default GraphRAG's own workspace (``lightrag serve --workspace acme``: ``acme``)."""
        if name != DEFAULT_WORKSPACE:
            return {name}
        return {n for n in self.default_aliases if n}

    async def get(self, name: str) -> Any:
        """The state of the workspace ``name`` (canonical), opened when needed (see the module
        doc; :class:`WorkspaceError` 503 with ``retry_after`` when no room is made in time)."""
        if name == DEFAULT_WORKSPACE:
            return self.default
        state = self.states.get(name)
        if state is not None:
            self.states.move_to_end(name)
            return state
        deadline = time.monotonic() + self.open_wait
        async with self._opening:  # each holder waits until its own deadline at most
            if name not in self.states:
                if not self.accepting:
                    raise WorkspaceError(503, "the server is shutting down; retry later")
                if name in self.closing:  # closed to make room: shut it before opening it again
                    await self._wait_closed(deadline)
                await self._make_room(deadline)
                self.states[name] = await self._open(name)
            self.states.move_to_end(name)
            return self.states[name]

    async def _open(self, name: str) -> Any:
        try:
            state = await asyncio.to_thread(self.open_state, name)
        except WorkspaceCaseConflict as e:
            raise WorkspaceError(409, str(e)) from None
        except Exception as e:
            log.exception("opening workspace %s failed", name)
            raise WorkspaceError(500, redact_text(f"cannot open workspace {name!r}: "
                                                  f"{type(e).__name__}: {e}")) from e
        if self.resume:
            state.intake.resume()
        log.info("workspace %s opened (%d open)", name, len(self.states) + 1)
        return state

    def _no_room(self) -> WorkspaceError:
        return WorkspaceError(
            503, f"{self.max_open} workspaces are open and in use; one is being closed to make "
                 "room: retry later (or start the server with a larger --max-workspaces)",
            retry_after=RETRY_AFTER_S)

    def _victim(self) -> Optional[str]:
        """The workspace to close: the least recently used that no request is using, an idle
        one before one still processing inserts; None when every open one is in use."""
        free = [n for n, s in self.states.items() if s.users == 0]  # least recently used first
        idle = [n for n in free if not self.states[n].intake.busy]
        return (idle or free or [None])[0]

    async def _make_room(self, deadline: float) -> None:
        """Close workspaces until one more fits (counting those still closing), waiting for
        them until ``deadline``."""
        while len(self.states) + len(self.closing) >= self.max_open:
            if self.closing:
                await self._wait_closed(deadline)
                continue
            name = self._victim()
            if name is None:  # every open one is serving a request: wait for one to end
                if time.monotonic() >= deadline:
                    raise self._no_room()
                await asyncio.sleep(0.05)
                continue
            state = self.states.pop(name)
            if state.intake.busy:
                log.info("workspace %s is closed to make room while it processes inserts; its "
                         "unfinished documents resume when it opens again", name)
                state.intake.stop()
            task = asyncio.get_running_loop().create_task(self._shut(name, state))
            self.closing[name] = task
            task.add_done_callback(lambda _, n=name: self.closing.pop(n, None))

    async def _shut(self, name: str, state: Any) -> None:
        """Close a workspace evicted to make room (its run going is cancelled past
        :data:`EVICT_GRACE_S`, once its write in progress has committed)."""
        try:
            await self._close(name, state, timeout=EVICT_GRACE_S)
        except Exception:
            log.exception("closing workspace %s failed", name)

    async def _wait_closed(self, deadline: float) -> None:
        """Wait for the workspaces being closed, until ``deadline`` (then 503; the closes go
        on, and a retry finds them under way)."""
        pending = list(self.closing.values())
        left = deadline - time.monotonic()
        if pending and left > 0:
            await asyncio.wait(pending, timeout=left)
        for name, task in list(self.closing.items()):
            if task.done():
                self.closing.pop(name, None)
        if any(not t.done() for t in pending):
            raise self._no_room()

    @staticmethod
    async def _close(name: str, state: Any, timeout: Optional[float]) -> None:
        await state.drain(timeout)
        await asyncio.to_thread(close_rag, state.rag)
        log.info("workspace %s closed", name)

    def names(self) -> List[str]:
        """Every workspace this server can list: ``default``, the stored and the open ones."""
        own = getattr(self.default.rag, "workspace", "") or ""
        stored = [n for n in stored_workspaces(self.default.rag) if n != own]
        return [DEFAULT_WORKSPACE] + sorted(set(stored) | set(self.states) - {DEFAULT_WORKSPACE})

    def describe(self, name: str) -> Dict[str, Any]:
        """``{name, open, default}`` of one workspace."""
        return {"name": name, "default": name == DEFAULT_WORKSPACE,
                "open": name == DEFAULT_WORKSPACE or name in self.states}

    async def drain(self, timeout: Optional[float]) -> None:
        """Stop opening workspaces; drain the open ones (not the default) and close them."""
        self.accepting = False
        states = list(self.states.items())
        self.states.clear()
        closing = list(self.closing.values())
        await asyncio.gather(*(self._close(n, s, timeout) for n, s in states), *closing,
                             return_exceptions=True)


class WorkspacePathMiddleware:
    """``/w/{name}/rest`` is ``/rest`` with ``LIGHTRAG-WORKSPACE: name`` (400 when the name is not
    valid or a header names another workspace)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(PATH_PREFIX):
            await self.app(scope, receive, send)
            return
        name, _, rest = path[len(PATH_PREFIX):].partition("/")
        header = WORKSPACE_HEADER.lower().encode()
        given = [v.decode("latin-1").strip() for k, v in scope.get("headers") or [] if k == header]
        problem = None
        if not WORKSPACE_NAME.match(name):
            problem = f"invalid workspace name {name!r}: use 1 to 64 letters, digits, '_' or '-'"
        elif any(g != name for g in given):
            problem = f"the path names workspace {name!r} but {WORKSPACE_HEADER} names {given[0]!r}"
        if problem:
            await send_json(send, 400, {"detail": problem})
            return
        scope["path"] = "/" + rest  # in place: the outer middleware read the route from it
        raw, prefix = scope.get("raw_path") or b"", (PATH_PREFIX + name).encode()
        scope["raw_path"] = (raw[len(prefix):] or b"/") if raw.startswith(prefix) else scope["path"].encode()
        scope["headers"] = [*(h for h in scope.get("headers") or [] if h[0] != header),
                            (header, name.encode())]
        await self.app(scope, receive, send)


