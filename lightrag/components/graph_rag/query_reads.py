"""What one query reads, read once: :class:`QueryReads` remembers a query's keyed reads and
vector searches so a row one retrieval step read is not read again by the next, and
:func:`collection_paused` keeps Python's cycle collector out of the query while it runs.

A store in a SQL database also keeps its keyed reads *between* queries (:class:`SharedReads`)
for as long as the database's :meth:`~lightrag.components.storage.sql_db.SQLDatabase.commit_token`
is the same: no writer has committed anything since, so every remembered row is still the
stored one. Questions about the same popular entities (hubs, cited by thousands of chunks) then
read their nodes, degrees and chunk citations once, not once per question. Any commit, by this
process or another, starts the shared reads over.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
import time
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag.context import GraphStores

_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = False
_paused_since = 0.0
#: while overlapping queries keep the collector paused longer than this, the end of each runs
#: a young-generation collection (cyclic garbage of the rest of the process is not left to grow)
MAX_PAUSE_S = 2.0


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cycle collector paused while the block runs (restored as it was when the last
    of the blocks running in any thread ends).

    A query allocates tens of thousands of short-lived, acyclic containers (a neighbourhood's
    entity lists, chunk records); a collection that runs while they are alive cannot free them
    but moves them to the oldest generation, and every few queries that triggers a full
    collection (about 100 ms in a process holding a 1M-chunk store's query path). Paused, they
    are freed by reference counting when the query ends and never promoted. A server whose
    queries overlap without a gap keeps it paused: past :data:`MAX_PAUSE_S` the end of a query
    collects the young generations meanwhile.
    """
    global _pauses, _was_enabled, _paused_since
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            _paused_since = time.monotonic()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
            elif _was_enabled and time.monotonic() - _paused_since > MAX_PAUSE_S:
                gc.collect(1)
                _paused_since = time.monotonic()


_ABSENT = object()


class QueryReads:
    """One store as one query sees it: the keyed reads of :data:`REMEMBERED` are remembered, so
    a row read by one step (hybrid's search, its chunk gathering, the PPR neighbourhood) is not
    read again by the next; other attributes pass through unchanged (a capability check such as
    ``getattr(graph, "chunk_entities", None)`` sees the store's own).

    Vector searches (``query`` / ``query_batch`` without ``ids_filter``) are remembered per
    query row: a search for a row already searched with at least ``top_k`` hits is answered
    with the first ``top_k`` of them (the ``mix`` and ``ppr`` seed matches reuse the entity
    search's rows).

    Example:
        >>> class Nodes:
        ...     reads = 0
        ...     def get_nodes_batch(self, ids):
        ...         self.reads += len(ids)
        ...         return {i: {"id": i} for i in ids if i != "x"}
        >>> store = Nodes()
        >>> seen = QueryReads(store)
        >>> seen.get_nodes_batch(["a", "x"]), seen.get_nodes_batch(["a", "b", "x"])
        ({'a': {'id': 'a'}}, {'a': {'id': 'a'}, 'b': {'id': 'b'}})
        >>> store.reads
        3
    """

    #: keyed reads remembered, by the shape of their answer
    REMEMBERED = {"get_nodes_batch": "dict", "get_edges_batch": "dict", "node_degrees_batch": "dict",
                  "chunk_entities": "dict",
                  "get_vectors_by_ids": "dict", "has_nodes_batch": "set", "get_by_ids": "list"}
    #: reads whose values are handed out shared, not copied (vectors and id lists: only read)
    SHARED = frozenset({"get_vectors_by_ids", "chunk_entities", "node_degrees_batch"})
    #: reads remembered for one query only (the mapped vector store keeps its own id -> row
    #: cache across queries; its rows are the most numerous reads of a query)
    PER_QUERY = frozenset({"get_vectors_by_ids"})

    def __init__(self, store: Any, shared: Optional[SharedReads] = None) -> None:
        self.store = store
        self._rows: Dict[str, Dict[Any, Any]] = {}
        self._shared = shared
        self._searched: Dict[bytes, Tuple[int, List[Dict[str, Any]]]] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.store, name)
        if name in self.REMEMBERED and callable(attr):
            return functools.partial(self._keyed, name, attr)
        if name == "query" and callable(attr):
            return functools.partial(self._query, attr)
        if name == "query_batch" and callable(attr):
            return functools.partial(self._query_batch, attr)
        return attr

    def _keyed(self, name: str, read: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if len(args) != 1 or kwargs:  # not the one-list call remembered here
            return read(*args, **kwargs)
        ids: Sequence[Any] = args[0]
        shared = self._shared is not None and name not in self.PER_QUERY
        known = (self._shared.rows if shared else self._rows).setdefault(name, {})  # type: ignore[union-attr]
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in known]
        shape = self.REMEMBERED[name]
        if missing:
            answer = read(missing)
            if shape == "list":
                answer = dict(zip(missing, answer))
            elif shape == "set":
                answer = {i: True for i in answer}
            known.update({i: answer.get(i, _ABSENT) for i in missing})
        if shape == "list":
            return [None if known[i] is _ABSENT else _copy(known[i]) for i in ids]
        if shape == "set":
            return {i for i in wanted if known[i] is not _ABSENT}
        if name in self.SHARED:
            return {i: known[i] for i in wanted if known[i] is not _ABSENT}
        return {i: _copy(known[i]) for i in wanted if known[i] is not _ABSENT}

    def _query(self, search: Callable[..., List[Dict[str, Any]]], query: Any, top_k: int,
               ids_filter: Any = None, **kwargs: Any) -> List[Dict[str, Any]]:
        if ids_filter is not None or kwargs or isinstance(query, str):
            extra = {"ids_filter": ids_filter} if ids_filter is not None else {}
            return search(query, top_k=top_k, **extra, **kwargs)
        return self._query_batch(lambda rows, top_k: [search(rows[0], top_k=top_k)],
                                 np.atleast_2d(query), top_k)[0]

    def _query_batch(self, search: Callable[..., List[List[Dict[str, Any]]]], matrix: Any,
                     top_k: int, **kwargs: Any) -> List[List[Dict[str, Any]]]:
        if kwargs:  # a search of its own kind (e.g. ``nprobe``): not remembered
            return search(matrix, top_k=top_k, **kwargs)
        rows = np.atleast_2d(np.asarray(matrix, dtype=np.float32))
        keys = [row.tobytes() for row in rows]
        fresh = [i for i, key in enumerate(keys)
                 if key not in self._searched or self._searched[key][0] < top_k]
        if fresh:
            unique = list(dict.fromkeys(keys[i] for i in fresh))
            at = {key: keys.index(key) for key in unique}
            for key, hits in zip(unique, search(rows[[at[k] for k in unique]], top_k=top_k)):
                self._searched[key] = (top_k, hits)
        return [[dict(h) for h in self._searched[key][1][:top_k]] for key in keys]


def _copy(value: Any) -> Any:
    """A caller's own copy of a remembered dict or list (a record a caller may extend)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def store_of(store: Any) -> Any:
    """The store behind a :class:`QueryReads` (``store`` itself otherwise)."""
    return store.store if isinstance(store, QueryReads) else store


class SharedReads:
    """The keyed reads of one store kept across queries while ``token`` (its database's commit
    token) is unchanged; past ``capacity`` remembered rows they start over.

    Example:
        >>> shared = SharedReads("7")
        >>> shared.rows.setdefault("get_nodes_batch", {})["a"] = {"id": "a"}
        >>> shared.full()
        False
    """

    def __init__(self, token: str, capacity: int = 100_000) -> None:
        self.token = token
        self.capacity = capacity
        self.rows: Dict[str, Dict[Any, Any]] = {}

    def full(self) -> bool:
        return sum(len(rows) for rows in self.rows.values()) > self.capacity


_shared: Dict[int, Tuple[weakref.ref[Any], SharedReads]] = {}
_shared_lock = threading.Lock()


def shared_reads(store: Any, token: str) -> Optional[SharedReads]:
    """The :class:`SharedReads` of ``store`` under ``token`` (a new one when the token changed
    or the last one is full; forgotten with the store); None for a store that cannot be
    referenced weakly (nothing is shared for it)."""
    key = id(store)
    with _shared_lock:
        entry = _shared.get(key)
        current = entry[1] if entry is not None and entry[0]() is store else None
        if current is None or current.token != token or current.full():
            current = SharedReads(token)
            try:
                ref = weakref.ref(store, lambda _, key=key: _shared.pop(key, None))
            except TypeError:
                return None
            _shared[key] = (ref, current)
        return current


def _commit_token(store: Any, tokens: Dict[int, Optional[str]]) -> Optional[str]:
    """The commit token of the SQL database ``store`` reads from (read once per database and
    query), or None: not a SQL store, or read inside this thread's write transaction (its own
    uncommitted rows are not for other queries)."""
    db = getattr(store, "db", None)
    if db is None or not callable(getattr(db, "commit_token", None)):
        return None
    if id(db) not in tokens:
        tokens[id(db)] = None if db.in_transaction else db.commit_token()
    return tokens[id(db)]


def query_reads(stores: GraphStores) -> GraphStores:
    """``stores`` seen through one query (:class:`QueryReads` around each store, sharing the
    reads of earlier queries while nothing was committed since)."""
    tokens: Dict[int, Optional[str]] = {}

    def wrap(store: Any) -> Any:
        if store is None or isinstance(store, QueryReads):
            return store
        token = _commit_token(store, tokens)
        return QueryReads(store, shared_reads(store, token) if token is not None else None)

    return GraphStores(graph=wrap(stores.graph), entities_vdb=wrap(stores.entities_vdb),
                       relations_vdb=wrap(stores.relations_vdb), chunks_vdb=wrap(stores.chunks_vdb),
                       text_chunks=wrap(stores.text_chunks), synonym_pairs=stores.synonym_pairs)
