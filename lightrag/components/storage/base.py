"""Storage interfaces of graph RAG: key-value, vector, graph and document-status stores.

Every store is a Component bound to a ``namespace`` inside ``working_dir/workspace``; a
workspace isolates one tenant's data. Stores keep their data in memory and write it to disk in
``index_done_callback()``, always atomically (temp file + rename), so a crash leaves the previous
file intact and reloadable.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np

from lightrag.components.graph_rag.schemas import DocProcessingStatus, DocStatus
from lightrag.core.component import Component

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]*$")


class StorageNameSpace(Component):
    """Base of all stores: where the data lives and how it is flushed."""

    def __init__(self, namespace: str, workspace: str = "", working_dir: str = "./lightrag_storage") -> None:
        super().__init__()
        for label, value in (("namespace", namespace), ("workspace", workspace)):
            if not isinstance(value, str) or not _SAFE_NAME.match(value) or value in (".", ".."):
                raise ValueError(f"{label} {value!r} must contain only letters, digits, '_', '-', '.'")
        if not namespace:
            raise ValueError("namespace must not be empty")
        self.namespace = namespace
        self.workspace = workspace
        self.working_dir = working_dir

    @property
    def storage_dir(self) -> Path:
        return Path(self.working_dir) / self.workspace if self.workspace else Path(self.working_dir)

    def index_done_callback(self) -> None:
        """Write the in-memory data to disk atomically."""

    def drop(self) -> None:
        """Remove all data, in memory and on disk."""

    def _extra_repr(self) -> str:
        return f"namespace={self.namespace!r}" + (f", workspace={self.workspace!r}" if self.workspace else "")


class BaseKVStorage(StorageNameSpace):
    """A map from string ids to JSON records."""

    @abstractmethod
    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]: ...

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        return [self.get_by_id(i) for i in ids]

    def filter_keys(self, keys: Iterable[str]) -> Set[str]:
        """The keys that are *not* stored."""
        return {k for k in keys if self.get_by_id(k) is None}

    @abstractmethod
    def upsert(self, data: Dict[str, Dict[str, Any]]) -> None:
        """Insert records, or merge their fields into existing ones."""

    @abstractmethod
    def delete(self, ids: Iterable[str]) -> None: ...

    @abstractmethod
    def keys(self) -> List[str]: ...

    def items(self) -> List[Tuple[str, Dict[str, Any]]]:
        return [(k, self.get_by_id(k)) for k in self.keys()]  # type: ignore[misc]

    def is_empty(self) -> bool:
        return len(self) == 0

    def __len__(self) -> int:
        return len(self.keys())


class BaseVectorStorage(StorageNameSpace):
    """Vectors with metadata, searched by cosine similarity (results under the threshold dropped)."""

    def __init__(
        self,
        namespace: str,
        embedder: Any = None,
        cosine_threshold: float = 0.2,
        meta_fields: Optional[Sequence[str]] = None,
        embedding_batch_size: int = 32,
        workspace: str = "",
        working_dir: str = "./lightrag_storage",
    ) -> None:
        super().__init__(namespace, workspace, working_dir)
        # Not a registered child: the GraphRAG system shares one embedder between its three vector
        # stores and prints it once, as its own child.
        object.__setattr__(self, "embedder", embedder)
        self.cosine_threshold = cosine_threshold
        self.meta_fields = list(meta_fields or [])
        self.embedding_batch_size = embedding_batch_size

    def _check_embedder(self) -> None:
        if self.embedder is None:
            raise ValueError(f"vector store {self.namespace!r} has no embedder: pass vectors instead")

    @staticmethod
    def _normalize(matrix: np.ndarray) -> np.ndarray:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim == 1:
            matrix = matrix[None, :]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return matrix / norms

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (in batches) into a float32 matrix of unit rows."""
        self._check_embedder()
        rows: List[List[float]] = []
        for start in range(0, len(texts), self.embedding_batch_size):
            out = self.embedder(list(texts[start:start + self.embedding_batch_size]))
            if out.error is not None:
                raise RuntimeError(f"embedding failed in store {self.namespace!r}: {out.error}")
            rows.extend(e.embedding for e in out.data)
        return self._normalize(np.array(rows, dtype=np.float32)) if rows else np.zeros((0, 0), np.float32)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Async :meth:`embed`."""
        self._check_embedder()
        rows: List[List[float]] = []
        for start in range(0, len(texts), self.embedding_batch_size):
            out = await self.embedder.acall(list(texts[start:start + self.embedding_batch_size]))
            if out.error is not None:
                raise RuntimeError(f"embedding failed in store {self.namespace!r}: {out.error}")
            rows.extend(e.embedding for e in out.data)
        return self._normalize(np.array(rows, dtype=np.float32)) if rows else np.zeros((0, 0), np.float32)

    @abstractmethod
    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        """Insert or replace records ``{id: {"content": text, **meta}}``; embeds the contents
        unless ``vectors`` (rows aligned with ``data``) are given."""

    async def aupsert(self, data: Dict[str, Dict[str, Any]]) -> None:
        """Async upsert: embeds with ``embedder.acall``."""
        if not data:
            return
        vectors = await self.aembed([record.get("content", "") for record in data.values()])
        self.upsert(data, vectors=vectors)

    @abstractmethod
    def query(self, query: Any, top_k: int, ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        """Best matches of a text or vector: ``{"id", "score", "content", **meta}``."""

    def query_batch(self, matrix: np.ndarray, top_k: int) -> List[List[Dict[str, Any]]]:
        return [self.query(row, top_k) for row in np.asarray(matrix)]

    @abstractmethod
    def delete(self, ids: Iterable[str]) -> None: ...

    @abstractmethod
    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]: ...

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        return [self.get_by_id(i) for i in ids]

    @abstractmethod
    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]: ...

    @abstractmethod
    def __len__(self) -> int: ...


class BaseGraphStorage(StorageNameSpace):
    """An undirected property graph of entities (nodes) and relations (edges)."""

    @abstractmethod
    def has_node(self, node_id: str) -> bool: ...
    @abstractmethod
    def has_edge(self, src: str, tgt: str) -> bool: ...
    @abstractmethod
    def node_degree(self, node_id: str) -> int: ...

    def edge_degree(self, src: str, tgt: str) -> int:
        return self.node_degree(src) + self.node_degree(tgt)

    @abstractmethod
    def get_node(self, node_id: str) -> Optional[Dict[str, Any]]: ...
    @abstractmethod
    def get_edge(self, src: str, tgt: str) -> Optional[Dict[str, Any]]: ...
    @abstractmethod
    def get_node_edges(self, node_id: str) -> Optional[List[Tuple[str, str]]]: ...
    @abstractmethod
    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None: ...
    @abstractmethod
    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None: ...
    @abstractmethod
    def delete_node(self, node_id: str) -> None: ...
    @abstractmethod
    def remove_edges(self, pairs: Iterable[Tuple[str, str]]) -> None: ...
    @abstractmethod
    def get_all_labels(self) -> List[str]: ...
    @abstractmethod
    def get_all_edges(self) -> List[Dict[str, Any]]: ...

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        for node_id in node_ids:
            self.delete_node(node_id)

    def get_nodes_batch(self, node_ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        return {n: d for n in node_ids if (d := self.get_node(n)) is not None}

    def node_degrees_batch(self, node_ids: Sequence[str]) -> Dict[str, int]:
        return {n: self.node_degree(n) for n in node_ids}

    def get_edges_batch(self, pairs: Sequence[Tuple[str, str]]) -> Dict[Tuple[str, str], Dict[str, Any]]:
        return {p: d for p in pairs if (d := self.get_edge(*p)) is not None}

    def get_nodes_edges_batch(self, node_ids: Sequence[str]) -> Dict[str, List[Tuple[str, str]]]:
        return {n: self.get_node_edges(n) or [] for n in node_ids}


class DocStatusStorage(BaseKVStorage):
    """Document status records, queried by status and by the insert call that enqueued them."""

    def _as_status(self, record: Dict[str, Any]) -> DocProcessingStatus:
        return DocProcessingStatus.from_dict(record)

    def get_by_statuses(self, statuses: Sequence[DocStatus]) -> Dict[str, DocProcessingStatus]:
        wanted = {DocStatus(s).value for s in statuses}
        return {k: self._as_status(v) for k, v in self.items() if v.get("status") in wanted}

    def get_by_status(self, status: DocStatus) -> Dict[str, DocProcessingStatus]:
        return self.get_by_statuses([status])

    def get_by_track_id(self, track_id: str) -> Dict[str, DocProcessingStatus]:
        return {k: self._as_status(v) for k, v in self.items() if v.get("track_id") == track_id}

    def get_status_counts(self) -> Dict[str, int]:
        counts = {s.value: 0 for s in DocStatus}
        for _, record in self.items():
            status = record.get("status", DocStatus.PENDING.value)
            counts[status] = counts.get(status, 0) + 1
        return counts

    def get_doc_by_content_hash(self, content_hash: str) -> Optional[Tuple[str, DocProcessingStatus]]:
        for key, record in self.items():
            if record.get("content_hash") == content_hash:
                return key, self._as_status(record)
        return None

    def get_docs_paginated(self, page: int = 1, page_size: int = 50,
                           status: Optional[DocStatus] = None) -> List[Tuple[str, DocProcessingStatus]]:
        if page < 1 or page_size < 1:
            raise ValueError("page and page_size must be positive")
        rows = [(k, v) for k, v in sorted(self.items(), key=lambda kv: kv[1].get("updated_at", ""),
                                          reverse=True)
                if status is None or v.get("status") == DocStatus(status).value]
        start = (page - 1) * page_size
        return [(k, self._as_status(v)) for k, v in rows[start:start + page_size]]
