"""HKU LightRAG's storage attributes on the ``LightRAG`` facade, read-only and async.

HKU programs (and its API server) reach past the ``LightRAG`` methods into its storages:
``await rag.chunk_entity_relation_graph.get_node(name)``, ``await rag.full_docs.get_by_id(id)``,
``await rag.doc_status.get_docs_by_statuses([DocStatus.PROCESSED])``,
``await rag.entities_vdb.query(text, top_k=5)``. :func:`hku_storage` gives each of these names an
:class:`HKUStorageView` over this package's store: every read method is a coroutine function as
in HKU, with HKU's names where they differ (``get_docs_by_statuses``, ``get_docs_by_status``,
``get_docs_by_track_id``); writes are refused, since the index is the stores' only writer (use
the facade's ``insert``, ``delete_by_*``, ``create_entity``, ``edit_*``). Vectors are not
returned by ``query``.

Example:
    >>> import asyncio
    >>> class Store:
    ...     def get_by_id(self, key):
    ...         return {"content": "x"} if key == "a" else None
    >>> asyncio.run(HKUStorageView("full_docs", Store()).get_by_id("a"))
    {'content': 'x'}
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

from lightrag.components.graph_rag.schemas import DocStatus

#: HKU's storage attribute -> this package's GraphRAG attribute
HKU_STORAGE_NAMES: Dict[str, str] = {
    "chunk_entity_relation_graph": "graph",
    "full_docs": "full_docs",
    "text_chunks": "text_chunks",
    "doc_status": "doc_status",
    "entities_vdb": "entities_vdb",
    "relationships_vdb": "relations_vdb",
    "chunks_vdb": "chunks_vdb",
}

#: HKU's document statuses, in HKU's order (a status count has each)
HKU_STATUSES = ("pending", "parsing", "analyzing", "processing", "preprocessed", "processed", "failed")

_WRITES = frozenset({
    "upsert", "upsert_node", "upsert_edge", "upsert_nodes_batch", "upsert_edges_batch", "delete",
    "delete_node", "remove_nodes", "remove_edges", "delete_entity", "delete_entity_relation",
    "drop", "index_done_callback", "replace",
})


def status_counts(counts: Mapping[str, int]) -> Dict[str, int]:
    """``counts`` with a number for each of HKU's statuses (0 for those never set here) and
    for this package's other statuses."""
    names = list(HKU_STATUSES) + [s.value for s in DocStatus if s.value not in HKU_STATUSES]
    return {name: int(counts.get(name, 0)) for name in names}


def _status_value(status: Any) -> str:
    return str(getattr(status, "value", status))


class HKUStorageView:
    """An HKU storage's async read API over ``store`` (a read-only view of this package's).

    Args:
        name: HKU's attribute name (``"doc_status"``, ``"entities_vdb"``, ...), for messages.
        store: the store to read; its sync read methods become coroutine functions.
    """

    def __init__(self, name: str, store: Any) -> None:
        self._name = name
        self._store = store

    def __repr__(self) -> str:
        return f"HKUStorageView({self._name!r}, {type(self._store).__name__})"

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr in _WRITES:
            raise PermissionError(
                f"rag.{self._name}.{attr}: the storages are read-only here; change the data "
                "with LightRAG's insert, delete_by_doc_id, delete_by_entity, create_entity, "
                "edit_entity, ... (docs/compat.md, 'Coming from HKU LightRAG')")
        value = getattr(self._store, attr)
        if not callable(value):
            return value
        return self._async(value)

    @staticmethod
    def _async(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)
        return call

    # ------------------------------------------------------ HKU names of doc_status
    async def get_docs_by_statuses(self, statuses: Iterable[Any]) -> Dict[str, Any]:
        """``doc_id -> record`` of the documents in any of ``statuses`` (``DocStatus`` or str)."""
        return dict(self._store.get_by_statuses([_status_value(s) for s in statuses]))

    async def get_docs_by_status(self, status: Any) -> Dict[str, Any]:
        """``doc_id -> record`` of the documents in ``status``."""
        return await self.get_docs_by_statuses([status])

    async def get_status_counts(self) -> Dict[str, int]:
        """Documents by status, a count for each of HKU's statuses."""
        return status_counts(self._store.get_status_counts())

    async def get_docs_by_track_id(self, track_id: str) -> Dict[str, Any]:
        """``doc_id -> record`` of the documents inserted under ``track_id``."""
        return dict(self._store.get_by_track_id(track_id))

    # --------------------------------------------------------- vector storages
    async def query(self, query: str, top_k: int, query_embedding: Any = None,
                    ids: Optional[List[str]] = None) -> List[Dict[str, Any]]:
        """The ``top_k`` records nearest to ``query`` (or to ``query_embedding``), best first;
        ``ids`` restricts the candidates (HKU's chunk filter)."""
        if not hasattr(self._store, "aembed"):
            raise AttributeError(f"rag.{self._name} has no query: it is not a vector storage")
        vector = query_embedding
        if vector is None:
            vector = (await self._store.aembed([query]))[0]
        return self._store.query(vector, top_k, set(ids) if ids is not None else None)


def hku_storage(graph_rag: Any, name: str) -> HKUStorageView:
    """The :class:`HKUStorageView` of HKU's storage attribute ``name`` on ``graph_rag``."""
    return HKUStorageView(name, getattr(graph_rag, HKU_STORAGE_NAMES[name]))
