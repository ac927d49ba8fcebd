"""``NumpyVectorStorage``: exact cosine search over one contiguous float32 matrix.

Written here rather than on nano-vectordb (HKU LightRAG's default) because one matrix with
capacity doubling, an ``id -> row`` map and swap-remove deletes makes a query one matrix-vector
product plus ``np.argpartition``: no per-query copies, no JSON-encoded vectors. The file
``vdb_<namespace>.npz`` holds the matrix, the embedding dimension and a JSON string with the ids
and metadata (never pickled); it is written atomically.

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
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Union

import numpy as np

from lightrag.components.storage.base import BaseVectorStorage, at_least
from lightrag.utils.file_io import atomic_write_bytes

log = logging.getLogger(__name__)

_FORMAT_VERSION = 1


class NumpyVectorStorage(BaseVectorStorage):
    """Vectors in memory, exact top-k by cosine similarity (rows are stored unit-length).

    Records keep ``content`` plus the ``meta_fields``; other fields are dropped. Upserting an
    existing id replaces its vector and metadata. A store holds one dimension: vectors of
    another size (another embedding model) raise ValueError naming both sizes.

    Example:
        >>> import numpy as np
        >>> store = NumpyVectorStorage(namespace="v", working_dir="/tmp/unused")
        >>> store.upsert({"x": {"content": "x"}, "y": {"content": "y"}},
        ...              vectors=np.array([[1.0, 0.0], [0.0, 1.0]]))
        >>> [(h["id"], round(h["score"], 2)) for h in store.query(np.array([1.0, 0.2]), top_k=5)]
        [('x', 0.98)]
    """

    _to_dict_exclude = ("_matrix", "_ids", "_rows", "_meta", "_size", "_dirty", "version")

    def _after_from_dict(self) -> None:
        """Read the file (a rebuilt store too: the vectors are not in the saved dict)."""
        self.version = 0
        self._forget_vectors()
        self._load()

    def _forget_vectors(self) -> None:
        """No vectors in memory (the file stays)."""
        self._matrix = np.zeros((0, self.embedding_dim or 0), dtype=np.float32)
        self._size = 0
        self._ids: List[str] = []
        self._rows: Dict[str, int] = {}
        self._meta: List[Dict[str, Any]] = []
        self._dirty = False

    def __init__(
        self,
        namespace: str,
        embedder: Any = None,
        cosine_threshold: float = 0.2,
        meta_fields: Optional[Sequence[str]] = None,
        embedding_batch_size: int = 32,
        workspace: str = "",
        working_dir: str = "./lightrag_storage",
        embedding_dim: Optional[int] = None,
    ) -> None:
        super().__init__(namespace, embedder, cosine_threshold, meta_fields, embedding_batch_size,
                         workspace, working_dir, embedding_dim)
        self._after_from_dict()

    @property
    def file_path(self) -> Path:
        return self.storage_dir / f"vdb_{self.namespace}.npz"

    @property
    def dimension(self) -> Optional[int]:
        """The vector size held (None until the first vector arrives)."""
        return int(self._matrix.shape[1]) or None

    def __len__(self) -> int:
        return self._size

    def __contains__(self, id: object) -> bool:
        return id in self._rows

    def _dim_error(self, got: int, what: str) -> ValueError:
        return ValueError(
            f"vector store {self.namespace!r} holds {self.dimension}-d vectors but {what} {got}-d "
            "ones: the embedding model changed; drop the store (or use another working_dir) and re-index"
        )

    # ---------------------------------------------------------------- storage
    def _load(self) -> None:
        if not self.file_path.exists():
            return
        try:
            with np.load(self.file_path, allow_pickle=False) as data:
                matrix = np.asarray(data["matrix"], dtype=np.float32)
                dim = int(data["dim"]) if "dim" in data.files else int(matrix.shape[-1])
                payload = json.loads(str(data["payload"]))
            ids, meta = list(payload["ids"]), list(payload["meta"])
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as e:
            raise ValueError(f"cannot read vector store file {self.file_path}: {e}") from e
        if matrix.ndim != 2 or matrix.shape[0] != len(ids) or len(meta) != len(ids) or (
                len(ids) and matrix.shape[1] != dim):
            raise ValueError(f"vector store file {self.file_path} is inconsistent: matrix "
                             f"{matrix.shape}, dim {dim}, {len(ids)} ids, {len(meta)} metadata rows")
        if self.embedding_dim and dim and dim != self.embedding_dim:
            raise ValueError(
                f"vector store file {self.file_path} holds {dim}-d vectors but the embedder makes "
                f"{self.embedding_dim}-d ones: the embedding model changed; drop the store and re-index"
            )
        self._matrix = np.ascontiguousarray(matrix.reshape(len(ids), dim))
        self._ids, self._meta, self._size = ids, meta, len(ids)
        self._rows = {i: r for r, i in enumerate(ids)}
        log.debug("%s: loaded %d %d-d vectors", self.file_path, self._size, dim)

    def index_done_callback(self) -> None:
        """Write the live rows atomically; skipped when nothing changed since the last flush."""
        if not self._dirty and self.file_path.exists():
            return
        payload = json.dumps({"version": _FORMAT_VERSION, "ids": self._ids, "meta": self._meta},
                             ensure_ascii=False)
        buffer = io.BytesIO()
        np.savez(buffer, matrix=self._matrix[: self._size], dim=np.array(self._matrix.shape[1]),
                 payload=np.array(payload))
        atomic_write_bytes(self.file_path, buffer.getvalue())
        self._dirty = False

    def drop(self) -> None:
        self._forget_vectors()
        self.file_path.unlink(missing_ok=True)

    # ----------------------------------------------------------------- writes
    def _reserve(self, rows: int, dim: int) -> None:
        """Make room for ``rows`` rows of ``dim`` columns (capacity doubles)."""
        if self._matrix.shape[1] == 0:
            self._matrix = np.zeros((max(rows, 16), dim), dtype=np.float32)
            return
        if dim != self._matrix.shape[1]:
            raise self._dim_error(dim, "got")
        if rows > self._matrix.shape[0]:
            grown = np.zeros((max(rows, 2 * self._matrix.shape[0], 16), dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown

    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        if not data:
            return
        keep = {"content", *self.meta_fields}
        metas: List[Dict[str, Any]] = []
        for key, record in data.items():
            if not isinstance(key, str) or not isinstance(record, dict):
                raise TypeError(f"upsert wants {{str id: dict record}}, got {key!r}: {type(record).__name__}")
            meta = {k: v for k, v in record.items() if k in keep}
            try:
                json.dumps(meta)
            except (TypeError, ValueError) as e:
                raise TypeError(f"metadata of {key!r} is not JSON-serialisable: {e}") from e
            metas.append(meta)
        if vectors is None:
            vectors = self.embed([record.get("content", "") for record in data.values()])
        vectors = self._normalize(vectors)
        if len(vectors) != len(data):
            raise ValueError(f"{len(vectors)} vectors for {len(data)} records")
        self._reserve(self._size + len(data), vectors.shape[1])
        for key, meta, vector in zip(data, metas, vectors):
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
        self.version += 1

    def delete(self, ids: Iterable[str]) -> None:
        """Swap-remove: the last row moves into the freed one (O(dim) per delete)."""
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
            self.version += 1

    # ------------------------------------------------------------------ reads
    def _as_vector(self, query: Union[str, np.ndarray]) -> np.ndarray:
        if isinstance(query, str):
            vector = self.embed([query])[0]
        else:
            vector = np.asarray(query, dtype=np.float32).reshape(-1)
            norm = float(np.linalg.norm(vector))
            vector = vector / norm if norm else vector
        if vector.shape[0] != self._matrix.shape[1]:
            raise self._dim_error(vector.shape[0], "the query has")
        return vector

    def _top(self, scores: np.ndarray, top_k: int, rows: Optional[np.ndarray] = None) -> List[Dict[str, Any]]:
        """Hits from ``scores`` (one per live row, or per entry of ``rows``)."""
        n = scores.shape[0]
        k = min(top_k, n)
        if k <= 0:
            return []
        top = np.argpartition(scores, n - k)[n - k:] if k < n else np.arange(n)
        top = top[scores[top] >= self.cosine_threshold]
        top = top[np.argsort(-scores[top], kind="stable")]
        picked = top if rows is None else rows[top]
        return [{"id": self._ids[r], "score": float(s), **self._meta[r]}
                for r, s in zip(picked.tolist(), scores[top].tolist())]

    def query(self, query: Union[str, np.ndarray], top_k: int,
              ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        """Top ``top_k`` by cosine, best first, scores >= ``cosine_threshold``; ``ids_filter``
        restricts the candidates."""
        if self._size == 0 or top_k <= 0:
            return []
        vector = self._as_vector(query)
        live = self._matrix[: self._size]
        if ids_filter is None:
            return self._top(live @ vector, top_k)
        rows = np.fromiter((self._rows[i] for i in ids_filter if i in self._rows), dtype=np.int64)
        if rows.size == 0:
            return []
        scores = live[rows] @ vector if rows.size * 4 < self._size else (live @ vector)[rows]
        return self._top(scores, top_k, rows)

    def query_batch(self, matrix: np.ndarray, top_k: int, nprobe: Optional[int] = None,
                    min_score: Optional[float] = None) -> List[List[Dict[str, Any]]]:
        """:meth:`query` for each row of ``matrix``, as one matrix-matrix product."""
        queries = self._normalize(matrix)
        if self._size == 0 or top_k <= 0:
            return [[] for _ in range(len(queries))]
        if queries.shape[1] != self._matrix.shape[1]:
            raise self._dim_error(queries.shape[1], "the queries have")
        scores = queries @ self._matrix[: self._size].T
        return at_least([self._top(row, top_k) for row in scores], min_score)

    def rows(self) -> tuple:
        """``(ids, matrix)``: every id in row order and the live rows (a view: do not modify)."""
        return list(self._ids), self._matrix[: self._size]

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        row = self._rows.get(id)
        return {"id": id, **self._meta[row]} if row is not None else None

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        return {i: self._matrix[self._rows[i]].copy() for i in ids if i in self._rows}

    def _extra_repr(self) -> str:
        return super()._extra_repr() + f", cosine_threshold={self.cosine_threshold}"
