"""``MappedVectorStorage``: vectors searched where they lie, in a memory-mapped file.

Opening costs nothing proportional to the store: no vector and no id is read. The ``vectors``
table of the :class:`SQLiteDatabase` stays the durable truth (id, float32 bytes, metadata; the
same rows a PostgreSQL store holds, so ``copy_store`` works unchanged), and says in its ``row``
column which file row holds each id's current vector; beside it:

* a file ``vectors-<namespace>-<generation>.f32`` of float32 rows, appended at each commit
  (before it; fsynced too when the database's ``synchronous`` is ``FULL``), memory-mapped by
  every process that searches: processes share the OS page cache instead of each holding a copy.

A search (:class:`~lightrag.components.storage.mapped_search.RowSearch`) multiplies the mapped
rows by the query (in blocks, so memory stays bounded), takes the best rows, and reads their ids
and metadata by key on a read connection (committed data only). Rows of replaced or deleted
vectors (and of a crashed writer's uncommitted appends) are garbage that no id's ``row``
points to: they are skipped, and the file is compacted into a new generation once
garbage outweighs the live rows.

Above ``ann_min_rows`` live rows the search is approximate: the writer builds an inverted-file
index (:mod:`~lightrag.components.storage.vector_ivf`, k-means by faiss) as a new generation
whose rows are grouped by list, appends the list of each new row at every commit, and retrains
once the rows appended since outnumber the indexed ones (and at every compaction). A search then
scores ``ann_nprobe`` lists (by default 128 or 15 % of them) instead of every row, widening when
garbage rows cost it hits. Without faiss, or while the index file of the generation is missing or
corrupt (logged; the writer rebuilds it at its next commit), the search stays exact.

A store written before this class (vectors only in the table) or copied from PostgreSQL gets
its file built on first open, in one write transaction.

Example:
    >>> import tempfile, os
    >>> import numpy as np
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> db = SQLiteDatabase(os.path.join(tempfile.mkdtemp(), "s.sqlite3"))
    >>> store = MappedVectorStorage(db, namespace="chunks")
    >>> store.upsert({"a": {"content": "x"}, "b": {"content": "y"}}, vectors=np.eye(2))
    >>> [h["id"] for h in MappedVectorStorage(db, namespace="chunks").query(np.array([1.0, 0.1]), 1)]
    ['a']
"""

from __future__ import annotations

import json
import logging
import mmap
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from lightrag.components.storage import vector_ivf
from lightrag.components.storage.base import BaseVectorStorage
from lightrag.components.storage.mapped_search import RowSearch
from lightrag.components.storage.mapped_vector_reads import MappedVectorReads, _parse_file_meta
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.vector_generations import VectorGenerations, _create_row_column
from lightrag.components.storage.vector_row_cache import RowCache
from lightrag.components.storage.vector_write_view import TransactionRecords, kept_rows

log = logging.getLogger(__name__)

MIN_COMPACT_ROWS = 10_000  # never compact files smaller than this many garbage rows
#: a new vector this close to the stored one (largest difference of a component of the unit
#: vectors) is the same vector: its file row is kept. Re-normalising a unit vector, or composing
#: it once from a fresh and once from a stored (normalised) part, moves the last bits (~1e-7)
SAME_VECTOR_ATOL = 1e-6


DEFAULT_ANN_MIN_ROWS = 100_000  # live rows from which the search is approximate (see benchmarks)
class MappedVectorStorage(VectorGenerations, MappedVectorReads, BaseVectorStorage):
    """Cosine search over a memory-mapped matrix file; ids and metadata read by key.

    Args:
        db: the embedded database of the working directory (the file lives beside it).
        namespace / embedder / cosine_threshold / meta_fields / embedding_batch_size /
            embedding_dim: as for :class:`~lightrag.components.storage.base.BaseVectorStorage`.
        ann_min_rows: live rows from which the writer builds an approximate index (None: always
            exact search).
        ann_nprobe: inverted lists scored per query of an indexed store (more: better recall,
            slower); None: :func:`~lightrag.components.storage.vector_ivf.default_nprobe`.
    """

    _to_dict_exclude = ("db", "embedder", "version", "_map", "_pending", "_dropped", "_ivf",
                        "_faiss_warned", "_build", "_dropped_rows", "_records")

    def __init__(self, db: SQLiteDatabase, namespace: str, embedder: Any = None,
                 cosine_threshold: float = 0.2, meta_fields: Optional[Sequence[str]] = None,
                 embedding_batch_size: int = 64, workspace: str = "",
                 working_dir: str = "./lightrag_storage", embedding_dim: Optional[int] = None,
                 ann_min_rows: Optional[int] = DEFAULT_ANN_MIN_ROWS,
                 ann_nprobe: Optional[int] = None) -> None:
        if db.local_folder is None:
            raise ValueError("MappedVectorStorage needs an embedded database (SQLite)")
        if ann_min_rows is not None and ann_min_rows < 1:
            raise ValueError(f"ann_min_rows must be a positive row count or None, got {ann_min_rows}")
        if ann_nprobe is not None and ann_nprobe < 1:
            raise ValueError(f"ann_nprobe must be at least 1, got {ann_nprobe}")
        super().__init__(namespace, embedder, cosine_threshold, meta_fields, embedding_batch_size,
                         workspace, working_dir, embedding_dim)
        for name, value in (("db", db), ("_map", None), ("_pending", {}), ("_dropped", set()),
                            ("_dropped_rows", 0), ("_records", TransactionRecords(db, namespace)),
                            ("_ivf", None), ("_faiss_warned", False), ("_build", None),
                            ("_row_cache", RowCache())):
            object.__setattr__(self, name, value)
        self.ann_min_rows = ann_min_rows
        self.ann_nprobe = ann_nprobe
        self.version = 0
        db.ensure_schema(self._create_table)
        db.on_commit(self._flush, self._forget)

    def _create_table(self) -> None:
        db = self.db
        db.execute(f"CREATE TABLE IF NOT EXISTS vectors (ns TEXT NOT NULL, id TEXT NOT NULL, "
                   f"vector {db.blob_type} NOT NULL, meta TEXT NOT NULL, row INTEGER, "
                   "PRIMARY KEY (ns, id))")
        _create_row_column(db)
        if self._file_meta() is None and self._has_table_rows():
            self._rebuild_file()

    # ------------------------------------------------------------------- the file
    @property
    def _meta_key(self) -> str:
        return f"vector_file:{self.namespace}"

    @property
    def _moves_key(self) -> str:
        """A counter bumped by each commit that moves or removes an existing id's row (the
        token of :class:`RowCache`, with the file generation)."""
        return f"vector_moves:{self.namespace}"

    def _bump_moves(self) -> None:
        self.db.increment_meta(self._moves_key)

    def _file_meta(self) -> Optional[Tuple[int, int]]:
        """``(generation, dim)`` of the current file, or None before the first vector."""
        return self._metas()[0]

    def _metas(self) -> Tuple[Optional[Tuple[int, int]], Optional[Tuple[int, int, int]]]:
        """The file's ``(generation, dim)`` and the index's ``(generation, lists, indexed_rows)``
        (None: no file / no index), in one read."""
        found = dict(self.db.read("SELECT name, value FROM meta WHERE name IN (?, ?)",
                                  (self._meta_key, self._ann_key)))
        return _parse_file_meta(found.get(self._meta_key)), vector_ivf.read_meta(found.get(self._ann_key))

    def _set_file_meta(self, generation: int, dim: int) -> None:
        self.db.set_meta(self._meta_key, f"{generation}:{dim}")

    def _path(self, generation: int, suffix: str = "f32") -> Path:
        """The matrix file of a generation, or (``suffix`` ivf / lst) its index files."""
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in self.namespace)
        return self.db.local_folder / f"vectors-{safe}-{generation}.{suffix}"  # type: ignore[operator]

    @property
    def _durable(self) -> bool:
        """Whether file writes are fsynced (as durable as the database's own commits)."""
        return getattr(self.db, "synchronous", "NORMAL") in ("FULL", "EXTRA")

    def _has_table_rows(self) -> bool:
        return bool(self.db.query("SELECT 1 FROM vectors WHERE ns = ? LIMIT 1", (self.namespace,)))

    def _matrix(self, meta: Any = False) -> Optional[np.ndarray]:
        """The mapped rows of the current file (remapped when it grew or was compacted);
        ``meta``: the file's meta if just read."""
        meta = self._file_meta() if meta is False else meta
        if meta is None:
            return None
        generation, dim = meta
        path = self._path(generation)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return None
        rows = size // (4 * dim)
        cached = self._map
        if cached is not None and cached[0] == generation and cached[1].shape[0] == rows:
            return cached[1]
        matrix = np.zeros((0, dim), dtype=np.float32)
        if rows:
            with open(path, "rb") as f:  # a plain ndarray over the mapping (np.memmap is slower)
                mapped = mmap.mmap(f.fileno(), rows * 4 * dim, access=mmap.ACCESS_READ)
            matrix = np.frombuffer(mapped, dtype=np.float32).reshape(rows, dim)
        object.__setattr__(self, "_map", (generation, matrix))
        return matrix

    def _append(self, generation: int, vectors: np.ndarray) -> int:
        """Append rows to the file; returns the first new row."""
        path = self._path(generation)
        row_bytes = 4 * vectors.shape[1]
        with open(path, "ab") as f:
            size = f.tell()
            if size % row_bytes:  # a crashed append left a partial row: cut it
                f.truncate(size - size % row_bytes)
                size -= size % row_bytes
            f.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
            f.flush()
            if self._durable:
                os.fsync(f.fileno())
        return size // row_bytes

    # ------------------------------------------------------------------ writes
    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        if not data:
            return
        keep = {"content", *self.meta_fields}
        metas = []
        for key, record in data.items():
            if not isinstance(key, str) or not isinstance(record, dict):
                raise TypeError(f"upsert wants {{str id: dict record}}, got {key!r}: "
                                f"{type(record).__name__}")
            metas.append(json.dumps({k: v for k, v in record.items() if k in keep},
                                    ensure_ascii=False))
        if vectors is None:
            vectors = self.embed([record.get("content", "") for record in data.values()])
        vectors = self._normalize(vectors)
        if len(vectors) != len(data):
            raise ValueError(f"{len(vectors)} vectors for {len(data)} records")
        meta = self._file_meta()
        dim = meta[1] if meta else (self.embedding_dim or vectors.shape[1])
        if vectors.shape[1] != dim:
            raise ValueError(
                f"vector store {self.namespace!r} holds {dim}-d vectors, got {vectors.shape[1]}-d "
                "ones: the embedding model changed; drop the store (or use another working_dir) "
                "and re-index")
        with self.db.transaction():
            unchanged = self._records.unchanged(  # (an upsert leaves them as they are)
                self._matrix(meta), dict(zip(data, metas)), vectors, {*self._pending, *self._dropped},
                SAME_VECTOR_ATOL)
            stored = self._records.stored([k for k in data if k not in unchanged])
            self.db.executemany(
                "INSERT INTO vectors (ns, id, vector, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (ns, id) DO UPDATE SET vector = excluded.vector, meta = excluded.meta",
                ((self.namespace, k, v.tobytes(), m) for k, v, m in zip(data, vectors, metas)
                 if k not in unchanged))
            for key, vector, record_meta in zip(data, vectors, metas):
                if key not in unchanged:
                    self._pending[key] = vector
                    self._dropped.discard(key)
                    self._records.wrote(key, stored[key][0] if key in stored else None, record_meta)

    def delete(self, ids: Iterable[str]) -> None:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        with self.db.transaction():
            # the file rows of deleted records become garbage (counted before their row goes)
            rows = [row for row, _ in self._records.stored(wanted).values() if row is not None]
            object.__setattr__(self, "_dropped_rows", self._dropped_rows + len(rows))
            self.db.executemany("DELETE FROM vectors WHERE ns = ? AND id = ?",
                                ((self.namespace, i) for i in wanted))
            for key in wanted:
                self._pending.pop(key, None)
                self._dropped.add(key)
                self._records.deleted(key)

    def _flush(self) -> None:
        """Before the commit: append the transaction's vectors and point their ids at them.

        An id whose new vector is the one its file row holds (within :data:`SAME_VECTOR_ATOL`)
        keeps that row, and its record the row's exact bytes: re-embedding an entity whose name
        and first description fragment stay the same, as most entities a new document cites
        do, appends nothing, leaves no garbage row and moves no entry of the index by row."""
        pending, dropped = dict(self._pending), self._dropped
        replaced = self._dropped_rows
        if not pending and not dropped:
            self._forget()
            return
        stored = self._records.stored(list(pending))
        current = {key: row for key, (row, _) in stored.items() if row is not None}
        self._forget()
        meta = self._file_meta()
        mapped = self._matrix(meta) if current else None
        kept, nudged = kept_rows(mapped, current, pending, SAME_VECTOR_ATOL)
        replaced += len(current) - len(kept)
        for key in kept:
            del pending[key]
        restore = [(stored, self.namespace, key) for key, stored in nudged.items()]
        if restore:  # the table keeps the file's bytes (it is what a rebuilt file is made of)
            self.db.executemany("UPDATE vectors SET vector = ? WHERE ns = ? AND id = ?", restore)
        garbage = self._garbage() + replaced
        if replaced:
            self._set_garbage(garbage)
            self._bump_moves()
        if pending:
            generation = meta[0] if meta else 1
            matrix = np.stack(list(pending.values()))
            first = self._append(generation, matrix)
            index = self._index_new_rows(generation, first, matrix)
            self.db.executemany("UPDATE vectors SET row = ? WHERE ns = ? AND id = ?",
                                ((first + n, self.namespace, k) for n, k in enumerate(pending)))
            if meta is None:
                self._set_file_meta(generation, matrix.shape[1])
            rows = first + len(pending)
            if garbage > max(MIN_COMPACT_ROWS, rows // 2):
                self._rebuild_file()
            elif self._reindex_due(generation, rows, rows - garbage, index):
                self._rebuild_file(compact=False, committed_rows=first)
        self.version += 1

    def _rows_renumbered(self) -> None:
        """A compaction inside the transaction: the rows it knew are read again, and the rows
        its deletes and replacements made garbage are not in the new file (not counted)."""
        self._records.forget()
        object.__setattr__(self, "_dropped_rows", 0)

    def _garbage(self) -> int:
        return int(self.db.meta(f"vector_garbage:{self.namespace}") or 0)

    def _set_garbage(self, value: int) -> None:
        self.db.set_meta(f"vector_garbage:{self.namespace}", str(value))

    def _forget(self) -> None:
        self._records.forget()
        object.__setattr__(self, "_pending", {})
        object.__setattr__(self, "_dropped", set())
        object.__setattr__(self, "_dropped_rows", 0)

    def index_done_callback(self) -> None:
        """Nothing to do: every write is in the database (and the file) at commit."""

    def drop(self) -> None:
        self._drop_build()
        with self.db.transaction():
            self.db.execute("DELETE FROM vectors WHERE ns = ?", (self.namespace,))
            self.db.delete_meta(self._meta_key, f"vector_garbage:{self.namespace}", self._ann_key)
            self._bump_moves()  # the ids' rows are gone (a new file numbers its rows anew)
            self._forget()

    # ------------------------------------------------------------------- reads
    def _unit(self, query: Union[str, np.ndarray]) -> np.ndarray:
        if isinstance(query, str):
            return self.embed([query])[0]
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def _search(self, matrix: np.ndarray, ann: Any, queries: np.ndarray, top_k: int,
                nprobe: Optional[int] = None,
                min_score: Optional[float] = None) -> List[List[Dict[str, Any]]]:
        """Hits of each row of ``queries``: by the index of the mapped generation if it has one
        (``ann``: its meta, read with the file's; ``nprobe`` lists per query, default
        ``ann_nprobe``), else exactly; none under ``min_score`` nor ``cosine_threshold``. When
        a compaction committed a new generation meanwhile (its rows are numbered anew), the
        search is run again on it."""
        threshold = max(self.cosine_threshold, min_score if min_score is not None else -1.0)
        for _ in range(3):
            generation = self._map[0] if self._map is not None else 0
            found = self._index(generation, matrix.shape[1], ann)
            search = RowSearch(self._records_at, threshold, self.ann_nprobe)
            hits = (search.exact(matrix, queries, top_k) if found is None
                    else search.ann(matrix, found, queries, top_k, nprobe))
            meta, ann = self._metas()
            if meta is None or meta[0] == generation or self.db.in_transaction:
                break
            remapped = self._matrix(meta)
            if remapped is None:
                return [[] for _ in range(len(queries))]
            matrix = remapped
        return hits

    def _records_at(self, rows: Sequence[int]) -> Dict[int, Tuple[str, Dict[str, Any]]]:
        """``row -> (id, metadata)`` of the file rows an id's ``row`` points to."""
        found: Dict[int, Tuple[str, Dict[str, Any]]] = {}
        for start in range(0, len(rows), 500):
            part = rows[start:start + 500]
            marks = ",".join("?" * len(part))
            for row, key, meta in self.db.read(
                    f"SELECT row, id, meta FROM vectors WHERE ns = ? AND row IN ({marks})",
                    (self.namespace, *part)):
                found[int(row)] = (key, json.loads(meta))
        return found

    def query(self, query: Union[str, np.ndarray], top_k: int,
              ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        """Top ``top_k`` by cosine, best first, scores >= ``cosine_threshold``; ``ids_filter``
        restricts the candidates."""
        if top_k <= 0:
            return []
        meta, ann = self._metas()
        matrix = self._matrix(meta)
        if matrix is None or matrix.shape[0] == 0:
            return []
        vector = self._unit(query)
        if vector.shape[0] != matrix.shape[1]:
            raise self._dim_error(vector.shape[0], matrix.shape[1])
        if ids_filter is not None:
            vectors = self.get_vectors_by_ids(list(ids_filter))
            ranked = sorted(((float(v @ vector), i) for i, v in vectors.items()), reverse=True)
            picked = [(s, i) for s, i in ranked if s >= self.cosine_threshold][:top_k]
            records = dict(zip([i for _, i in picked], self.get_by_ids([i for _, i in picked])))
            return [{**(records[i] or {"id": i}), "score": s} for s, i in picked]
        return self._search(matrix, ann, vector[None, :], top_k)[0]

    def query_batch(self, matrix: np.ndarray, top_k: int, nprobe: Optional[int] = None,
                    min_score: Optional[float] = None) -> List[List[Dict[str, Any]]]:
        """:meth:`query` for each row of ``matrix`` (one pass over the file, or over each probed
        list of the index). ``nprobe``: lists scored per query by the index (default
        ``ann_nprobe``); a search for near duplicates only needs the few nearest lists, and its
        ``min_score`` leaves few rows to rank and read."""
        queries = self._normalize(matrix)
        meta, ann = self._metas()
        mapped = self._matrix(meta)
        if mapped is None or mapped.shape[0] == 0 or top_k <= 0:
            return [[] for _ in range(len(queries))]
        if queries.shape[1] != mapped.shape[1]:
            raise self._dim_error(queries.shape[1], mapped.shape[1])
        return self._search(mapped, ann, queries, top_k, nprobe, min_score)

    def _dim_error(self, got: int, dim: int) -> ValueError:
        return ValueError(f"vector store {self.namespace!r} holds {dim}-d vectors; the query has "
                          f"{got} dimensions (the embedding model changed?)")

    def _extra_repr(self) -> str:
        return super()._extra_repr() + f", cosine_threshold={self.cosine_threshold}"
