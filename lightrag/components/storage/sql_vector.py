"""``SQLVectorStorage``: vectors kept as rows of an :class:`SQLDatabase` and searched in memory,
or in the server where it is PostgreSQL with pgvector.

On a :class:`~lightrag.components.storage.postgres_db.PostgresDatabase` whose server has pgvector
(and ``pgvector`` not False), ``SQLVectorStorage(db, ...)`` builds a
:class:`~lightrag.components.storage.pg_vector.PgVectorStorage` instead: same rows, same methods,
searched in the server, nothing loaded per process. Everywhere else it is the class below.

The rows (``id``, float32 vector bytes, JSON metadata) are the durable copy; the search runs on
the :class:`NumpyVectorStorage` matrix, loaded once at open and then changed row by row: by this
process's writes, by a rollback (the touched rows are re-read), and by other processes' commits
(the change log names the rows to re-read). Nothing is ever rewritten whole.

Example:
    >>> import tempfile, os
    >>> import numpy as np
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> db = SQLiteDatabase(os.path.join(tempfile.mkdtemp(), "s.sqlite3"))
    >>> store = SQLVectorStorage(db, namespace="chunks")
    >>> store.upsert({"a": {"content": "x"}, "b": {"content": "y"}}, vectors=np.eye(2))
    >>> [h["id"] for h in SQLVectorStorage(db, namespace="chunks").query(np.array([1.0, 0.1]), 1)]
    ['a']
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, Iterable, Optional, Sequence, Set

import numpy as np

from lightrag.components.storage.numpy_vector import NumpyVectorStorage
from lightrag.components.storage.pg_vector import DEFAULT_EF_SEARCH, PgVectorStorage, side_table_dim
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)


class SQLVectorStorage(NumpyVectorStorage):
    """Cosine search over an in-memory matrix whose rows live in the ``vectors`` table.

    Args:
        db: the database shared by the stores of one working directory.
        namespace / embedder / cosine_threshold / meta_fields / embedding_batch_size /
            embedding_dim: as for :class:`NumpyVectorStorage`.
        index / ef_search: how pgvector searches (see :class:`PgVectorStorage`); unused here,
            accepted so that one configuration opens either.
    """

    _to_dict_exclude = (*NumpyVectorStorage._to_dict_exclude, "db")

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """A :class:`PgVectorStorage` on a PostgreSQL server with pgvector (see the module)."""
        db = args[0] if args else kwargs.get("db")
        find = getattr(db, "vector_extension", None)
        if cls is SQLVectorStorage and find is not None and find() is not None:
            return PgVectorStorage(*args, **kwargs)
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, db: SQLDatabase, namespace: str, embedder: Any = None,
                 cosine_threshold: float = 0.2, meta_fields: Optional[Sequence[str]] = None,
                 embedding_batch_size: int = 64, workspace: str = "",
                 working_dir: str = "./lightrag_storage", embedding_dim: Optional[int] = None,
                 index: str = "hnsw", ef_search: int = DEFAULT_EF_SEARCH) -> None:
        object.__setattr__(self, "db", db)
        db.execute(f"CREATE TABLE IF NOT EXISTS vectors (ns TEXT NOT NULL, id TEXT NOT NULL, "
                   f"vector {db.blob_type} NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (ns, id))")
        super().__init__(namespace, embedder, cosine_threshold, meta_fields, embedding_batch_size,
                         workspace, working_dir, embedding_dim)
        db.register(self._log_name, self._reload)

    @property
    def _log_name(self) -> str:
        return f"vectors:{self.namespace}"

    # ---------------------------------------------------------------- loading
    def _load(self) -> None:
        rows = self.db.query("SELECT id, vector, meta FROM vectors WHERE ns = ?", (self.namespace,))
        self._set_rows(rows, replace_all=True)

    def _set_rows(self, rows: Sequence[tuple], replace_all: bool = False) -> None:
        if replace_all:
            self._matrix = np.zeros((0, self.embedding_dim or 0), dtype=np.float32)
            self._size, self._ids, self._rows, self._meta = 0, [], {}, []
        if not rows:
            return
        matrix = np.stack([np.frombuffer(bytes(v), dtype=np.float32) for _, v, _ in rows])
        if self.embedding_dim and matrix.shape[1] != self.embedding_dim:
            raise ValueError(
                f"vector store {self.namespace!r} holds {matrix.shape[1]}-d vectors but the embedder "
                f"makes {self.embedding_dim}-d ones: the embedding model changed; drop the store "
                "(or use another working_dir) and re-index")
        NumpyVectorStorage.upsert(self, {i: json.loads(m) for i, _, m in rows}, vectors=matrix)

    def _reload(self, keys: Optional[Set[str]]) -> None:
        if keys is None:
            self._load()
            return
        rows = self.db.query_in("SELECT id, vector, meta FROM vectors WHERE ns = ? AND id IN ({in_})",
                                sorted(keys), (self.namespace,))
        NumpyVectorStorage.delete(self, set(keys) - {r[0] for r in rows})
        self._set_rows(rows)

    # ----------------------------------------------------------------- writes
    def _refuse_pgvector_store(self) -> None:
        """A store searched by pgvector elsewhere must not be written here (its side table
        would fall behind): raise, naming the fix."""
        if getattr(self.db, "vector_extension", None) is not None and \
                side_table_dim(self.db, self.namespace) is not None:
            raise ValueError(
                f"vector store {self.namespace!r} of {self.db.describe()} is searched by pgvector; "
                "this process keeps vectors in memory (pgvector=False) and cannot write it: open "
                "it without pgvector=False to write, or only read here")

    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        if not data:
            return
        if vectors is None:
            vectors = self.embed([record.get("content", "") for record in data.values()])
        with self.db.transaction():
            self._refuse_pgvector_store()
            super().upsert(data, vectors=vectors)
            rows = [self._rows[k] for k in data]
            self.db.executemany(
                "INSERT INTO vectors (ns, id, vector, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (ns, id) DO UPDATE SET vector = excluded.vector, meta = excluded.meta",
                ((self.namespace, k, self._matrix[r].tobytes(), json.dumps(self._meta[r], ensure_ascii=False))
                 for k, r in zip(data, rows)))
            self.db.log_changes(self._log_name, data)

    def delete(self, ids: Iterable[str]) -> None:
        wanted = list(ids)
        with self.db.transaction():
            ids = [i for i in wanted if i in self._rows]
            if not ids:
                return
            self._refuse_pgvector_store()
            super().delete(ids)
            self.db.executemany("DELETE FROM vectors WHERE ns = ? AND id = ?",
                                ((self.namespace, i) for i in ids))
            self.db.log_changes(self._log_name, ids)

    def index_done_callback(self) -> None:
        """Nothing to do: every write is already in the database."""

    def drop(self) -> None:
        with self.db.transaction():
            self._refuse_pgvector_store()
            self.db.log_changes(self._log_name, list(self._ids))
            self.db.execute("DELETE FROM vectors WHERE ns = ?", (self.namespace,))
            self._set_rows([], replace_all=True)
