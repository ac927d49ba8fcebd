"""Read-only views of the index's stores: what GraphRAG, the query modes and the server get.

:class:`GraphIndex` is the only writer of its stores. Everything else reads them through
:class:`ReadOnly` proxies, typed with the Protocols below: the proxy forwards reads and refuses
every method that changes a store with a :class:`PermissionError` naming the index method to
use instead, so "one owner writes each store" is enforced, not a convention.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_kv import SQLKVStorage
    >>> docs = ReadOnly(SQLKVStorage(SQLiteDatabase(":memory:"), namespace="full_docs"))
    >>> docs.get_by_id("doc-1") is None
    True
    >>> docs.upsert({"doc-1": {}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    PermissionError: full_docs is read-only here: GraphIndex is its only writer ...
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Protocol, Sequence, Tuple

import numpy as np

#: methods that change a store (refused by :class:`ReadOnly`)
WRITE_METHODS = frozenset({
    "upsert", "aupsert", "replace", "delete", "drop", "index_done_callback", "upsert_node",
    "upsert_edge", "upsert_nodes_batch", "upsert_edges_batch", "delete_node", "remove_nodes",
    "remove_edges", "add_node_sources", "clear", "rows_for_write",
})


class KVReader(Protocol):
    """Reads of a key-value store (documents, chunks, status)."""

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]: ...
    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]: ...
    def keys(self) -> List[str]: ...
    def items(self) -> Iterable[Tuple[str, Dict[str, Any]]]: ...
    def __len__(self) -> int: ...


class GraphReader(Protocol):
    """Reads of the knowledge graph."""

    version: Any

    def has_node(self, node_id: str) -> bool: ...
    def get_node(self, node_id: str) -> Optional[Dict[str, Any]]: ...
    def get_edge(self, src: str, tgt: str) -> Optional[Dict[str, Any]]: ...
    def get_node_edges(self, node_id: str) -> Optional[List[Tuple[str, str]]]: ...
    def get_nodes_batch(self, ids: Sequence[str]) -> Dict[str, Dict[str, Any]]: ...
    def get_edges_batch(self, pairs: Sequence[Tuple[str, str]]) -> Dict[Tuple[str, str], Dict[str, Any]]: ...
    def get_nodes_edges_bounded(
        self, ids: Sequence[str], limit: int, prefer: Sequence[str] = ...,
        degrees: Optional[Dict[str, int]] = ...) -> Dict[str, List[Tuple[str, str]]]: ...
    def node_count(self) -> int: ...
    def edge_count(self) -> int: ...
    def chunk_entities(self, chunk_ids: Sequence[str]) -> Dict[str, List[str]]: ...
    def count_citations(self, at_most: int) -> int: ...


class VectorReader(Protocol):
    """Searches and reads of a vector store."""

    def query(self, query: Any, top_k: int = ...) -> List[Dict[str, Any]]: ...
    def query_batch(self, queries: np.ndarray, top_k: int = ...) -> List[List[Dict[str, Any]]]: ...
    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]: ...
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class ReadOnly:
    """A view of ``store`` that reads like it and refuses :data:`WRITE_METHODS`.

    The proxy is one object per store (the index keeps it), so caches keyed by the view's
    identity stay valid. ``isinstance`` checks see the proxy, not the store: compare with
    :attr:`wrapped` where the class matters.
    """

    __slots__ = ("wrapped", "__weakref__")

    def __init__(self, store: Any) -> None:
        object.__setattr__(self, "wrapped", store)

    def __getattr__(self, name: str) -> Any:
        if name in WRITE_METHODS:
            where = getattr(self.wrapped, "namespace", type(self.wrapped).__name__)
            raise PermissionError(
                f"{where} is read-only here: GraphIndex is its only writer (use GraphRAG.insert, "
                "delete_by_doc_id, edit_entity, ... or GraphIndex's methods)")
        return getattr(self.wrapped, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise PermissionError(f"cannot set {name!r} on a read-only view of a store")

    def __len__(self) -> int:
        return len(self.wrapped)

    def __contains__(self, key: Any) -> bool:
        return key in self.wrapped

    def __iter__(self) -> Any:
        return iter(self.wrapped)

    def __repr__(self) -> str:
        return f"ReadOnly({self.wrapped!r})"
