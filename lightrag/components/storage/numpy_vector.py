"""``NumpyVectorStorage``: exact cosine search over one contiguous float32 matrix.

Written here rather than on nano-vectordb (HKU LightRAG's default) because a single matrix with
capacity doubling, an ``id -> row`` map and swap-remove deletes makes a query one matrix-vector
product plus ``np.argpartition`` — no per-query copies, no JSON-encoded vectors. The file
``vdb_<namespace>.npz`` holds the matrix, the ids and the metadata (as a JSON string, never
pickled) and is written atomically.

Example:
    >>> import tempfile
    >>> from lightrag.core import Embedder
    >>> from lightrag.components.model_client import ScriptedClient
    >>> store = NumpyVectorStorage(namespace="chunks", working_dir=tempfile.mkdtemp(),
    ...     embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)), meta_fields=["src"])
    >>> store.upsert({"a": {"content": "grey seals in Halifax", "src": "x"},
    ...               "b": {"content": "bridges over rivers", "src": "y"}})
    >>> [h["id"] for h in store.query("seals of Halifax", top_k=1)]
    ['a']
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set

import numpy as np

from lightrag.components.storage.base import BaseVectorStorage
from lightrag.utils.file_io import atomic_write_bytes

log = logging.getLogger(__name__)


class NumpyVectorStorage(BaseVectorStorage):
    """Vectors in memory, exact top-k by cosine similarity."""

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
        super().__init__(namespace, embedder, cosine_threshold, meta_fields, embedding_batch_size,
                         workspace, working_dir)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._size = 0
        self._ids: List[str] = []
        self._rows: Dict[str, int] = {}
        self._meta: List[Dict[str, Any]] = []
        self._dirty = False
        self._load()

    _to_dict_exclude = ("_matrix", "_ids", "_rows", "_meta", "embedder")

    @property
    def file_path(self) -> Path:
        return self.storage_dir / f"vdb_{self.namespace}.npz"

    @property
    def dimension(self) -> Optional[int]:
        return self._matrix.shape[1] if self._matrix.shape[1] else None

    def __len__(self) -> int:
        return self._size

    # ------------------------------------------------------------------ storage
    def _load(self) -> None:
        if not self.file_path.exists():
            return
        try:
            with np.load(self.file_path, allow_pickle=False) as data:
                matrix = np.asarray(data["matrix"], dtype=np.float32)
                payload = json.loads(str(data["payload"]))
        except (OSError, ValueError, KeyError) as e:
            raise ValueError(f"cannot read vector store file {self.file_path}: {e}") from e
        self._matrix = np.ascontiguousarray(matrix)
        self._ids = list(payload["ids"])
        self._meta = list(payload["meta"])
        self._size = len(self._ids)
        self._rows = {i: r for r, i in enumerate(self._ids)}

    def index_done_callback(self) -> None:
        if not self._dirty and self.file_path.exists():
            return
        buffer = io.BytesIO()
        payload = json.dumps({"ids": self._ids, "meta": self._meta}, ensure_ascii=False)
        np.savez(buffer, matrix=self._matrix[: self._size], payload=np.array(payload))
        atomic_write_bytes(self.file_path, buffer.getvalue())
        self._dirty = False

    def drop(self) -> None:
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._size, self._ids, self._rows, self._meta = 0, [], {}, []
        self.file_path.unlink(missing_ok=True)
        self._dirty = False

    # ------------------------------------------------------------------ writes
    def _reserve(self, rows: int, dim: int) -> None:
        if self._matrix.shape[1] == 0:
            self._matrix = np.zeros((max(rows, 16), dim), dtype=np.float32)
            return
        if dim != self._matrix.shape[1]:
            raise ValueError(
                f"vector store {self.namespace!r} holds {self._matrix.shape[1]}-d vectors but got "
                f"{dim}-d ones: the embedding model changed; drop the store and re-index"
            )
        if rows > self._matrix.shape[0]:
            grown = np.zeros((max(rows, 2 * self._matrix.shape[0]), dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown

    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        if not data:
            return
        if vectors is None:
            vectors = self.embed([record.get("content", "") for record in data.values()])
        vectors = self._normalize(vectors)
        if len(vectors) != len(data):
            raise ValueError(f"{len(vectors)} vectors for {len(data)} records")
        self._reserve(self._size + len(data), vectors.shape[1])
        keep = {"content", *self.meta_fields}
        for (key, record), vector in zip(data.items(), vectors):
            meta = {k: v for k, v in record.items() if k in keep}
            row = self._rows.get(key)
            if row is None:
                row = self._size
                self._size += 1
                self._rows[key] = row
                self._ids.append(key)
                self._meta.append(meta)
            else:
                self._meta[row] = meta
            self._matrix[row] = vector
        self._dirty = True

    def delete(self, ids: Iterable[str]) -> None:
        for key in ids:
            row = self._rows.pop(key, None)
            if row is None:
                continue
            last = self._size - 1
            if row != last:
                moved = self._ids[last]
                self._matrix[row] = self._matrix[last]
                self._ids[row], self._meta[row] = moved, self._meta[last]
                self._rows[moved] = row
            self._ids.pop()
            self._meta.pop()
            self._size -= 1
            self._dirty = True

    # ------------------------------------------------------------------- reads
    def _as_vector(self, query: Any) -> np.ndarray:
        if isinstance(query, str):
            return self.embed([query])[0]
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def _hits(self, scores: np.ndarray, top_k: int, ids_filter: Optional[Set[str]]) -> List[Dict[str, Any]]:
        if ids_filter is not None:
            allowed = np.zeros(self._size, dtype=bool)
            allowed[[self._rows[i] for i in ids_filter if i in self._rows]] = True
            scores = np.where(allowed, scores, -np.inf)
        k = min(top_k, self._size)
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < self._size else np.arange(self._size)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [
            {"id": self._ids[r], "score": float(scores[r]), **self._meta[r]}
            for r in top if scores[r] >= self.cosine_threshold
        ]

    def query(self, query: Any, top_k: int, ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        if self._size == 0:
            return []
        vector = self._as_vector(query)
        if vector.shape[0] != self._matrix.shape[1]:
            raise ValueError(f"query has {vector.shape[0]} dimensions, the store {self._matrix.shape[1]}")
        return self._hits(self._matrix[: self._size] @ vector, top_k, ids_filter)

    def query_batch(self, matrix: np.ndarray, top_k: int) -> List[List[Dict[str, Any]]]:
        if self._size == 0:
            return [[] for _ in range(len(matrix))]
        queries = self._normalize(matrix)
        scores = queries @ self._matrix[: self._size].T
        return [self._hits(row, top_k, None) for row in scores]

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        row = self._rows.get(id)
        return {"id": id, **self._meta[row]} if row is not None else None

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        return {i: self._matrix[self._rows[i]].copy() for i in ids if i in self._rows}

    def _extra_repr(self) -> str:
        return super()._extra_repr() + f", cosine_threshold={self.cosine_threshold}"
