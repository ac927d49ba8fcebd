"""``PgVectorStorage``: vectors searched in the PostgreSQL server by pgvector; nothing in memory.

Used (through :class:`~lightrag.components.storage.sql_vector.SQLVectorStorage`) when the
:class:`~lightrag.components.storage.postgres_db.PostgresDatabase` has the ``vector`` extension.
Every process and machine then searches the same rows in the server: opening a store reads
nothing proportional to it, and another process's committed insert is searched at once (no
change-log reload, no per-process copy).

* The ``vectors`` table keeps its contract (``ns``, ``id``, float32 ``vector`` bytes, JSON
  ``meta``): copies, checks and processes that load vectors into memory read it as before.
* Beside it, one table per namespace (``pgvec_<namespace>``: ``id``, ``embedding
  vector(<dim>)``) holds the same unit vectors as pgvector values, written in the same
  transaction, with an HNSW index (``vector_ip_ops``: the inner product of unit vectors is
  their cosine) when pgvector has HNSW (0.5.0 and later); older versions search exactly.
* The side table is valid while the ``meta`` row ``pgvector:<namespace>`` holds its dimension.
  Opening a store whose ``vectors`` rows have no valid side table (a store written without
  pgvector, or copied in by ``copy_store``) builds it, in one write transaction: that is the
  migration. A process that keeps vectors in memory (``pgvector=False``) cannot write such a
  store (it would leave the side table behind); it may read it.

Example (a server with pgvector; ``LIGHTRAG_PG_DSN`` set):
    >>> import numpy as np
    >>> from lightrag.components.storage.postgres_db import PostgresDatabase
    >>> store = PgVectorStorage(PostgresDatabase(workspace="demo"), namespace="chunks")  # doctest: +SKIP
    >>> store.upsert({"a": {"content": "x"}, "b": {"content": "y"}}, vectors=np.eye(2))  # doctest: +SKIP
    >>> [h["id"] for h in store.query(np.array([1.0, 0.1]), 1)]  # doctest: +SKIP
    ['a']
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import struct
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from lightrag.components.storage.base import BaseVectorStorage, at_least
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

MAX_INDEXED_DIM = 2000  # pgvector's HNSW limit for the vector type
MAX_EF_SEARCH = 1000  # pgvector's hnsw.ef_search limit
DEFAULT_EF_SEARCH = 200  # pgvector's own default is 40 (recall@10 0.76 at 200k vectors; 200: 0.99)
COPY_BATCH = 2000  # rows per read and write when the side table is built


class PgVector:
    """A float32 vector passed to the server in pgvector's binary format (see
    :func:`register_adapter`); the statement casts the parameter (``?::public.vector``)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


@functools.lru_cache(maxsize=1)
def register_adapter() -> None:
    """Teach psycopg to send :class:`PgVector` in pgvector's binary input format (dimension,
    unused, big-endian float32 values); once, before the first connection (connections copy
    the global adapters when they open)."""
    from psycopg import adapters
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class PgVectorDumper(Dumper):
        format = Format.BINARY
        oid = 0  # unknown here: the server takes the type from the statement's cast

        def dump(self, obj: PgVector) -> bytes:
            values = np.asarray(obj.array, dtype=">f4").reshape(-1)
            return struct.pack(">HH", values.shape[0], 0) + values.tobytes()

    adapters.register_dumper(PgVector, PgVectorDumper)


def side_table(namespace: str) -> str:
    """The side table of a namespace: ``pgvec_<namespace>``, a hash appended when the name had
    to be changed.

    Example:
        >>> side_table("chunks"), side_table("Odd-Name").startswith("pgvec_odd_name_")
        ('pgvec_chunks', True)
    """
    slug = re.sub(r"[^a-z0-9_]+", "_", namespace.lower())
    name = f"pgvec_{slug}"
    if slug != namespace or len(name) > 63:
        name = f"{name[:54]}_{hashlib.sha1(namespace.encode()).hexdigest()[:8]}"
    return name


def marker_key(namespace: str) -> str:
    """The ``meta`` row saying the namespace's side table is valid (its value: the dimension)."""
    return f"pgvector:{namespace}"


def side_table_dim(db: SQLDatabase, namespace: str) -> Optional[int]:
    """The dimension of the namespace's valid side table, or None when it has none."""
    value = db.meta(marker_key(namespace))
    return int(value) if value is not None else None


def _version_tuple(version: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


class PgVectorStorage(BaseVectorStorage):
    """Top-k by cosine in the PostgreSQL server (pgvector), ids and metadata read by key.

    Args:
        db: a :class:`~lightrag.components.storage.postgres_db.PostgresDatabase` whose server
            has pgvector (``db.vector_extension()`` not None).
        namespace / embedder / cosine_threshold / meta_fields / embedding_batch_size /
            embedding_dim: as for :class:`~lightrag.components.storage.base.BaseVectorStorage`.
        index: ``"hnsw"`` (default: approximate, fast at any size; exact where pgvector is
            older than 0.5.0 or the dimension is over 2,000) or ``"exact"`` (every row scanned).
        ef_search: HNSW's candidate list per query (``hnsw.ef_search``; at least ``2 * top_k``,
            at most 1,000): higher finds more of the true nearest neighbours, more slowly.
    """

    _to_dict_exclude = ("db", "embedder", "version", "_ext", "_table", "_hnsw", "_dim")

    def __init__(self, db: Any, namespace: str, embedder: Any = None,
                 cosine_threshold: float = 0.2, meta_fields: Optional[Sequence[str]] = None,
                 embedding_batch_size: int = 64, workspace: str = "",
                 working_dir: str = "./lightrag_storage", embedding_dim: Optional[int] = None,
                 index: str = "hnsw", ef_search: int = DEFAULT_EF_SEARCH) -> None:
        if index not in ("hnsw", "exact"):
            raise ValueError(f"index must be 'hnsw' or 'exact', got {index!r}")
        if not 1 <= ef_search <= MAX_EF_SEARCH:
            raise ValueError(f"ef_search must be 1 to {MAX_EF_SEARCH}, got {ef_search!r}")
        schema = db.vector_extension() if hasattr(db, "vector_extension") else None
        if schema is None:
            raise ValueError(f"PgVectorStorage needs a PostgreSQL server with pgvector; "
                             f"{db.describe()} has none")
        super().__init__(namespace, embedder, cosine_threshold, meta_fields, embedding_batch_size,
                         workspace, working_dir, embedding_dim)
        object.__setattr__(self, "db", db)
        self.index = index
        self.ef_search = ef_search
        self.version = 0
        self._ext = schema
        self._table = side_table(namespace)
        self._hnsw = index == "hnsw" and _version_tuple(db.vector_version() or "0") >= (0, 5, 0)
        db.execute(f"CREATE TABLE IF NOT EXISTS vectors (ns TEXT NOT NULL, id TEXT NOT NULL, "
                   f"vector {db.blob_type} NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (ns, id))")
        self._dim = side_table_dim(db, namespace)
        if self._dim is None and self._has_rows():
            with db.transaction():
                self._dim = side_table_dim(db, namespace)
                if self._dim is None:
                    self._build_side_table()
        self._check_dim(self.embedding_dim, "the embedder makes")
        db.register(f"vectors:{namespace}", self._changed)

    # ------------------------------------------------------------ the side table
    @property
    def _vector_type(self) -> str:
        return f'"{self._ext}".vector'

    def _op(self) -> str:
        return f'OPERATOR("{self._ext}".<#>)'

    def _has_rows(self) -> bool:
        return bool(self.db.query("SELECT 1 FROM vectors WHERE ns = ? LIMIT 1", (self.namespace,)))

    def _create_side_table(self, dim: int) -> None:
        """Create the side table for ``dim``-d vectors (inside the write transaction)."""
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {self._table} (id TEXT PRIMARY KEY, "
                        f"embedding {self._vector_type}({dim}) NOT NULL)")
        if self._hnsw and dim <= MAX_INDEXED_DIM:
            self.db.execute(f"CREATE INDEX IF NOT EXISTS {self._table}_hnsw ON {self._table} "
                            f'USING hnsw (embedding "{self._ext}".vector_ip_ops)')
        self.db.set_meta(marker_key(self.namespace), str(dim))
        self._dim = dim

    def _build_side_table(self) -> None:
        """Fill a new side table from the ``vectors`` rows (the migration of a store written
        without pgvector); the index is built once, after the rows."""
        first = self.db.query("SELECT vector FROM vectors WHERE ns = ? LIMIT 1", (self.namespace,))
        dim = len(bytes(first[0][0])) // 4
        self.db.execute(f"DROP TABLE IF EXISTS {self._table}")
        hnsw, self._hnsw = self._hnsw, False
        try:
            self._create_side_table(dim)
        finally:
            self._hnsw = hnsw
        last, count = "", 0
        while True:
            rows = self.db.query("SELECT id, vector FROM vectors WHERE ns = ? AND id > ? "
                                 "ORDER BY id LIMIT ?", (self.namespace, last, COPY_BATCH))
            if not rows:
                break
            self._write_side([r[0] for r in rows],
                             np.stack([np.frombuffer(bytes(r[1]), dtype=np.float32) for r in rows]))
            last, count = rows[-1][0], count + len(rows)
        self._create_side_table(dim)  # the index, now that the rows are in
        log.info("vectors %s: %d rows copied into %s for pgvector", self.namespace, count, self._table)

    def _write_side(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.db.executemany(
            f"INSERT INTO {self._table} (id, embedding) VALUES (?, ?::{self._vector_type}) "
            "ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding",
            ((i, PgVector(v)) for i, v in zip(ids, vectors)))

    def _check_dim(self, got: Optional[int], what: str) -> None:
        if got and self._dim and got != self._dim:
            raise ValueError(
                f"vector store {self.namespace!r} holds {self._dim}-d vectors but {what} {got}-d "
                "ones: the embedding model changed; drop the store (or use another workspace) "
                "and re-index")

    def _changed(self, keys: Optional[Set[str]]) -> None:
        """Another process changed vectors: nothing to reload, but caches keyed by
        ``version`` must be rebuilt, and the side table may have been created or dropped."""
        self.version += 1
        self._dim = side_table_dim(self.db, self.namespace)

    # -------------------------------------------------------------------- writes
    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        if not data:
            return
        keep = {"content", *self.meta_fields}
        metas = []
        for key, record in data.items():
            if not isinstance(key, str) or not isinstance(record, dict):
                raise TypeError(f"upsert wants {{str id: dict record}}, got {key!r}: "
                                f"{type(record).__name__}")
            try:
                metas.append(json.dumps({k: v for k, v in record.items() if k in keep},
                                        ensure_ascii=False))
            except (TypeError, ValueError) as e:
                raise TypeError(f"metadata of {key!r} is not JSON-serialisable: {e}") from e
        if vectors is None:
            vectors = self.embed([record.get("content", "") for record in data.values()])
        vectors = self._normalize(vectors)
        if len(vectors) != len(data):
            raise ValueError(f"{len(vectors)} vectors for {len(data)} records")
        with self.db.transaction():
            self._dim = side_table_dim(self.db, self.namespace)
            self._check_dim(vectors.shape[1], "got")
            if self._dim is None:
                self._create_side_table(vectors.shape[1])
            self.db.executemany(
                "INSERT INTO vectors (ns, id, vector, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (ns, id) DO UPDATE SET vector = excluded.vector, meta = excluded.meta",
                ((self.namespace, k, v.tobytes(), m) for k, v, m in zip(data, vectors, metas)))
            self._write_side(list(data), vectors)
            self.db.log_changes(f"vectors:{self.namespace}", data)
        self.version += 1

    def delete(self, ids: Iterable[str]) -> None:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        with self.db.transaction():
            self.db.executemany("DELETE FROM vectors WHERE ns = ? AND id = ?",
                                ((self.namespace, i) for i in wanted))
            if self._dim is not None:
                self.db.executemany(f"DELETE FROM {self._table} WHERE id = ?", ((i,) for i in wanted))
            self.db.log_changes(f"vectors:{self.namespace}", wanted)
        self.version += 1

    def index_done_callback(self) -> None:
        """Nothing to do: every write is in the database at commit."""

    def drop(self) -> None:
        with self.db.transaction():
            self.db.log_changes(f"vectors:{self.namespace}", self.keys())
            self.db.execute("DELETE FROM vectors WHERE ns = ?", (self.namespace,))
            self.db.execute(f"DROP TABLE IF EXISTS {self._table}")
            self.db.delete_meta(marker_key(self.namespace))
            self._dim = None
        self.version += 1

    # --------------------------------------------------------------------- reads
    def _unit(self, query: Union[str, np.ndarray]) -> np.ndarray:
        if isinstance(query, str):
            return self.embed([query])[0]
        return self._normalize(query)[0]

    def _hits(self, rows: Sequence[Tuple[Any, ...]], top_k: int) -> List[Dict[str, Any]]:
        hits = [{"id": key, "score": float(score), **json.loads(meta)}
                for key, score, meta in rows if score >= self.cosine_threshold]
        hits.sort(key=lambda h: -h["score"])
        return hits[:top_k]

    def query(self, query: Union[str, np.ndarray], top_k: int,
              ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        """Top ``top_k`` by cosine, best first, scores >= ``cosine_threshold``; ``ids_filter``
        restricts the candidates (scored exactly)."""
        if top_k <= 0 or (ids_filter is not None and not ids_filter):
            return []
        self._dim = self._dim or side_table_dim(self.db, self.namespace)
        if self._dim is None:
            return []
        vector = self._unit(query)
        self._check_dim(vector.shape[0], "the query has")
        if ids_filter is not None:
            rows = self.db.query(
                f"SELECT s.id, -(s.embedding {self._op()} ?::{self._vector_type}), v.meta "
                f"FROM {self._table} s JOIN vectors v ON v.ns = ? AND v.id = s.id "
                "WHERE s.id = ANY(?)", (PgVector(vector), self.namespace, list(ids_filter)))
            return self._hits(rows, top_k)
        return self._hits(self._nearest(vector, top_k), top_k)

    def _nearest(self, vector: np.ndarray, top_k: int) -> List[Tuple[Any, ...]]:
        sql = (f"SELECT s.id, s.score, v.meta FROM (SELECT id, -(embedding {self._op()} ?::"
               f"{self._vector_type}) AS score FROM {self._table} ORDER BY embedding {self._op()} "
               f"?::{self._vector_type} LIMIT ?) s JOIN vectors v ON v.ns = ? AND v.id = s.id")
        params = (PgVector(vector), PgVector(vector), top_k, self.namespace)
        if not self._hnsw:
            return self.db.query(sql, params)
        ef = min(MAX_EF_SEARCH, max(self.ef_search, 2 * top_k))
        return self.db.query_with_settings({"hnsw.ef_search": str(ef)}, sql, params)

    def query_batch(self, matrix: np.ndarray, top_k: int, nprobe: Optional[int] = None,
                    min_score: Optional[float] = None) -> List[List[Dict[str, Any]]]:
        """:meth:`query` for each row of ``matrix``."""
        queries = self._normalize(matrix)
        return at_least([self.query(row, top_k) for row in queries], min_score)

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        return self.get_by_ids([id])[0]

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        ids = list(ids)
        if not ids:
            return []
        found = {key: {"id": key, **json.loads(meta)} for key, meta in self.db.query(
            "SELECT id, meta FROM vectors WHERE ns = ? AND id = ANY(?)", (self.namespace, ids))}
        return [found.get(i) for i in ids]

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        return {key: np.frombuffer(bytes(v), dtype=np.float32).copy() for key, v in self.db.query(
            "SELECT id, vector FROM vectors WHERE ns = ? AND id = ANY(?)", (self.namespace, ids))}

    def keys(self) -> List[str]:
        return [r[0] for r in self.db.query("SELECT id FROM vectors WHERE ns = ?", (self.namespace,))]

    @property
    def _ids(self) -> List[str]:
        """Every stored id (for checks and exports, not for queries)."""
        return self.keys()

    def __len__(self) -> int:
        return int(self.db.query("SELECT COUNT(*) FROM vectors WHERE ns = ?", (self.namespace,))[0][0])

    def __contains__(self, id: object) -> bool:
        return isinstance(id, str) and self.get_by_id(id) is not None

    def rows(self) -> Tuple[List[str], np.ndarray]:
        """``(ids, matrix)`` of every vector (reads them all: for maintenance, not queries)."""
        rows = self.db.query("SELECT id, vector FROM vectors WHERE ns = ? ORDER BY id", (self.namespace,))
        if not rows:
            return [], np.zeros((0, self._dim or self.embedding_dim or 0), dtype=np.float32)
        return [r[0] for r in rows], np.stack([np.frombuffer(bytes(r[1]), dtype=np.float32) for r in rows])

    def _extra_repr(self) -> str:
        return super()._extra_repr() + f", cosine_threshold={self.cosine_threshold}, index={self.index!r}"
