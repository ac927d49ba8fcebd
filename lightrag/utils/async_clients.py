"""One async SDK client per event loop, closed when that loop shuts down.

An async SDK client (``AsyncOpenAI``, ``AsyncGroq``...: httpx underneath) holds connections bound
to the loop that opened them, so each loop needs its own client. Each sync call of lightrag
(``rag.query``, ``rag.insert``, a server query in its worker thread) runs a short-lived loop
(``asyncio.run``), so a long-running process sees thousands of loops. A client kept per loop in a
``WeakKeyDictionary`` never left it (the client's connections refer to the loop, so the loop
stayed alive), and every call left a client with its open sockets behind: a server ran out of
file descriptors after a few hundred queries.

:class:`LoopClients` closes the client it made for a loop when the loop shuts down
(``asyncio.run`` and ``asyncio.Runner`` call ``loop.shutdown_asyncgens()`` before closing it: the
client is tied to an async generator of that loop whose ``finally`` closes it), and forgets the
client of any loop found closed without that step (its sockets are then closed by the garbage
collector). A client assigned by hand (``model_client.async_client = AsyncOpenAI(...)``) is
adopted by the next loop that needs one and never closed here: its owner closes it.

Example:
    >>> import asyncio
    >>> class Client:
    ...     closed = False
    ...     async def close(self):
    ...         self.closed = True
    >>> clients = LoopClients()
    >>> async def use():
    ...     return clients.get(Client)
    >>> client = asyncio.run(use())
    >>> client.closed, len(clients)
    (True, 0)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import threading
import weakref
from typing import Any, AsyncIterator, Callable, Dict, Optional, Tuple

__all__ = ["LoopClients", "aclose_client"]

log = logging.getLogger(__name__)


async def aclose_client(client: Any) -> None:
    """Close an SDK client (``await client.close()``, or ``aclose()``); errors are logged."""
    for name in ("close", "aclose"):
        close = getattr(client, name, None)
        if callable(close):
            try:
                result = close()
                if inspect.isawaitable(result):
                    await result
            except Exception as e:  # noqa: BLE001 - closing is best effort
                log.debug("closing %s failed: %s", type(client).__name__, e)
            return


class LoopClients:
    """The async clients of one model client, one per running event loop (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: id(loop) -> (weak ref to the loop, client, closer generator or None)
        self._entries: Dict[int, Tuple[Any, Any, Any]] = {}
        #: every client handed out (made or adopted): a client is adopted once, never again
        self._seen: Any = weakref.WeakSet()

    def __len__(self) -> int:
        with self._lock:
            self._prune()
            return len(self._entries)

    def __deepcopy__(self, memo: Any) -> LoopClients:
        return LoopClients()  # clients hold sockets: a copy makes its own

    def __reduce__(self) -> Any:
        return (LoopClients, ())

    def _prune(self) -> None:
        """Forget the clients of dead or closed loops (lock held)."""
        for key, (ref, _client, _closer) in list(self._entries.items()):
            loop = ref()
            if loop is None or loop.is_closed():
                del self._entries[key]

    def _forget(self, key: int, client: Any) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[1] is client:
                del self._entries[key]

    def get(self, make: Callable[[], Any], assigned: Optional[Any] = None) -> Any:
        """This loop's client: the one it got before, else ``assigned`` when no loop had it yet
        (a client assigned by hand: not closed here), else ``make()`` (closed with the loop)."""
        loop = asyncio.get_running_loop()
        key = id(loop)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is loop:
                return entry[1]
            self._prune()
            adopt = assigned is not None and not self._was_seen(assigned)
            client = assigned if adopt else make()
            # a loop that tracks async generators (asyncio's do) closes the client at shutdown;
            # with another loop, the client is forgotten once its loop is found closed
            hooked = sys.get_asyncgen_hooks().firstiter is not None
            closer = self._closer(key, client) if hooked and not adopt else None
            self._entries[key] = (weakref.ref(loop), client, closer)
            try:
                self._seen.add(client)
            except TypeError:  # not weak-referenceable: it may be adopted again, as before
                pass
        if closer is not None:
            _start(closer)
        return client

    def _was_seen(self, client: Any) -> bool:
        try:
            return client in self._seen
        except TypeError:
            return False

    async def _closer(self, key: int, client: Any) -> AsyncIterator[None]:
        """Suspended until the loop shuts its async generators down, then closes ``client``."""
        try:
            yield
        finally:
            self._forget(key, client)
            await aclose_client(client)


def _start(closer: Any) -> None:
    """Run ``closer`` to its first ``yield`` now: the running loop registers it (its firstiter
    hook) and closes it in ``shutdown_asyncgens``."""
    step = closer.asend(None)
    try:
        step.send(None)
    except StopIteration:
        return
    step.close()  # the generator awaited something before its yield: not expected
