"""The generations of a :class:`~lightrag.components.storage.mapped_vector.MappedVectorStorage`
file and its inverted-file index: when the writer rewrites the file (compaction, or a rebuild
in list order for the index), when the index is due, and the ``vector_rows`` layout.

A rebuild writes a new generation ``vectors-<namespace>-<generation>.f32`` holding exactly the
live vectors, grouped by inverted list when the store is big enough for an index
(:mod:`~lightrag.components.storage.vector_ivf`), inside the writer's transaction; readers keep
mapping the previous generation until they see the new one, and the one before it is removed.
:class:`VectorGenerations` is a mixin of ``MappedVectorStorage`` (its file, meta and append
helpers).
"""

from __future__ import annotations

import logging
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.storage import vector_ivf
from lightrag.components.storage.mapped_search import BLOCK_ROWS
from lightrag.components.storage.vector_ivf import IndexFileError, IVFIndex, TailLists

log = logging.getLogger(__name__)

#: a rebuild rewrites every ``vector_rows`` entry of its namespace (the rows move into list
#: order). From this many rows, when they are at least a third of the table, the index by row is
#: dropped and built again by one sort, and the entries are inserted in id order (sequential in
#: the primary key): 2.15M entries were rewritten in ~36 s by random B-tree inserts and deletes
REINDEX_ROWS_FROM = 200_000
ANN_TAIL_RATIO = 1.0  # retrain when rows appended since the build exceed this times the indexed


def _vector_rows_table(name: str) -> str:
    return (f"CREATE TABLE IF NOT EXISTS {name} (ns TEXT NOT NULL, id TEXT NOT NULL, "
            "row INTEGER NOT NULL, PRIMARY KEY (ns, id)) WITHOUT ROWID")


def _id_order(ids: Sequence[str]) -> List[int]:
    """Positions of ``ids`` in id order (a NumPy sort of their bytes: ~5x faster than sorting
    millions of Python tuples). ``vector_rows`` entries inserted in this order extend its primary
    key B-tree in sequence instead of splitting pages at random."""
    encoded = [i.encode("utf-8") for i in ids]
    if not encoded or max(map(len, encoded)) > 256:  # NumPy pads every key to the longest
        return sorted(range(len(ids)), key=encoded.__getitem__)
    return np.argsort(np.array(encoded), kind="stable").tolist()


def _create_vector_rows(db: Any) -> None:
    """The ``vector_rows`` table (which file row holds each id), clustered by id, and its index
    by row (which holds the id too): each look-up either way reads one B-tree, and a new
    vector writes two (a rowid table with a covering index each way wrote four). A table of an
    older store is copied into this layout once."""
    found = db.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vector_rows'")
    if found and "WITHOUT ROWID" not in found[0][0].upper():
        log.info("laying out the vector rows of %s clustered by id (once)", db.describe())
        db.execute(_vector_rows_table("vector_rows_by_id_new"))
        db.execute("INSERT INTO vector_rows_by_id_new (ns, id, row) "
                   "SELECT ns, id, row FROM vector_rows ORDER BY ns, id")
        db.execute("DROP TABLE vector_rows")
        db.execute("ALTER TABLE vector_rows_by_id_new RENAME TO vector_rows")
    db.execute(_vector_rows_table("vector_rows"))
    db.execute("CREATE INDEX IF NOT EXISTS vector_rows_by_row ON vector_rows (ns, row)")


class VectorGenerations:
    """File generations and the approximate index of a mapped vector store (mixed into
    ``MappedVectorStorage``)."""

    db: Any
    namespace: str
    ann_min_rows: Optional[int]
    version: int

    def _rebuild_file(self) -> None:
        """Write a new generation holding exactly the live vectors (in a write transaction),
        grouped by inverted list when the store is big enough for an index."""
        meta = self._file_meta()
        generation = (meta[0] + 1) if meta else 1
        ids, matrix, rows = self._live_vectors()
        rebuild_row_index = len(ids) >= REINDEX_ROWS_FROM and 3 * len(ids) >= self._all_vector_rows()
        if rebuild_row_index:  # see REINDEX_ROWS_FROM
            self.db.execute("DROP INDEX IF EXISTS vector_rows_by_row")
        self.db.execute("DELETE FROM vector_rows WHERE ns = ?", (self.namespace,))
        self.db.delete_meta(self._ann_key)
        if not ids:
            return
        for suffix in ("f32", "ivf", "lst"):
            self._path(generation, suffix).unlink(missing_ok=True)
        index = None
        if self._index_wanted(len(ids)):
            try:
                order, index = IVFIndex.build(matrix, rows, vector_ivf.lists_for(len(ids)))
            except Exception:  # the commit must not fail for its index: search exactly instead
                log.exception("vectors %s: building the index failed; searching exactly", self.namespace)
            else:
                rows, ids = rows[order], [ids[i] for i in order.tolist()]
        for start in range(0, len(ids), BLOCK_ROWS):
            self._append(generation, matrix[rows[start:start + BLOCK_ROWS]])
        self.db.executemany("INSERT INTO vector_rows (ns, id, row) VALUES (?, ?, ?)",
                            ((self.namespace, ids[n], n) for n in _id_order(ids)))
        if rebuild_row_index:
            _create_vector_rows(self.db)
        self._set_file_meta(generation, matrix.shape[1])
        self._set_garbage(0)
        if index is not None:
            index.write(self._path(generation, "ivf"), durable=self._durable)
            self.db.set_meta(self._ann_key, f"{generation}:{index.lists}:{index.indexed_rows}")
        # the previous generation stays for readers that still map it; the one before goes
        for suffix in ("f32", "ivf", "lst"):
            self._path(generation - 2, suffix).unlink(missing_ok=True)
        log.info("vectors %s: file generation %d with %d rows%s", self.namespace, generation, len(ids),
                 f" in {index.lists} inverted lists" if index is not None else "")

    def _all_vector_rows(self) -> int:
        return int(self.db.query("SELECT COUNT(*) FROM vector_rows")[0][0])

    def _live_vectors(self) -> Tuple[List[str], np.ndarray, np.ndarray]:
        """``(ids, matrix, rows)``: row ``rows[i]`` of ``matrix`` is the vector of ``ids[i]``
        (the mapped file when there is one, else the ``vectors`` table read whole)."""
        matrix = self._matrix() if self._file_meta() is not None else None
        if matrix is not None:
            found = self.db.read("SELECT id, row FROM vector_rows WHERE ns = ? ORDER BY row",
                                 (self.namespace,))
            rows = np.fromiter((r for _, r in found), dtype=np.int64, count=len(found))
            if found and rows.max() < matrix.shape[0]:
                return [i for i, _ in found], matrix, rows
        stored = self.db.query("SELECT id, vector FROM vectors WHERE ns = ? ORDER BY id", (self.namespace,))
        if not stored:
            return [], np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int64)
        matrix = np.stack([np.frombuffer(bytes(v), dtype=np.float32) for _, v in stored])
        return [i for i, _ in stored], matrix, np.arange(len(stored), dtype=np.int64)

    # --------------------------------------------------------- the ANN index
    @property
    def _ann_key(self) -> str:
        return f"vector_ann:{self.namespace}"

    def _ann_meta(self) -> Optional[Tuple[int, int, int]]:
        """``(generation, lists, indexed_rows)`` of the index, or None (exact search)."""
        return self._metas()[1]

    def _index_wanted(self, live: int) -> bool:
        """Whether a store of ``live`` rows should be indexed (and can: faiss installed)."""
        if self.ann_min_rows is None or live < self.ann_min_rows:
            return False
        if not vector_ivf.faiss_available():
            if not self._faiss_warned:
                log.warning("vectors %s: %d rows searched exactly: install faiss (the 'faiss' "
                            "extra) for the approximate index", self.namespace, live)
                object.__setattr__(self, "_faiss_warned", True)
            return False
        return True

    def _index(self, generation: int, dim: int, ann: Any = False) -> Optional[Tuple[IVFIndex, TailLists]]:
        """The index of ``generation`` and its tail lists (mapped), or None: search exactly.
        ``ann``: the index's meta if just read."""
        if self.ann_min_rows is None:
            return None
        ann = self._ann_meta() if ann is False else ann
        if ann is None or ann[0] != generation:
            return None
        path = self._path(generation, "ivf")
        try:
            stat = path.stat()
            version: Optional[Tuple[int, int, int]] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        except FileNotFoundError:
            version = None
        key = (generation, dim, ann, version)
        cached = self._ivf
        if cached is not None and cached[0] == key:
            found = cached[1]
        else:
            try:
                found = (IVFIndex.read(path, dim, ann[1], ann[2]),
                         TailLists(self._path(generation, "lst"), ann[2], ann[1]))
            except IndexFileError as e:
                log.warning("vectors %s: %s; searching exactly until the writer rebuilds it",
                            self.namespace, e)
                found = None
            object.__setattr__(self, "_ivf", (key, found))
        if found is not None:
            found[1].refresh()
        return found

    def _index_new_rows(self, generation: int, first: int, vectors: np.ndarray) -> None:
        """Append the lists of rows ``first ..`` to the tail file of an indexed generation."""
        meta = self._ann_meta()
        if meta is None or meta[0] != generation or self.ann_min_rows is None:
            return
        found = self._index(generation, vectors.shape[1])
        if found is not None:
            index = found[0]
            vector_ivf.append_lists(self._path(generation, "lst"), first - index.indexed_rows,
                                    vector_ivf.assign(index.centroids, vectors), durable=self._durable)

    def _reindex_due(self, generation: int, rows: int, live: int) -> bool:
        """Whether the index of a file of ``rows`` rows (``live`` of them live) must be (re)built:
        none yet above the size, missing or corrupt, or outgrown by the rows appended since."""
        if not self._index_wanted(live):
            return False
        meta = self._file_meta()
        found = self._index(generation, meta[1]) if meta else None
        if found is None:
            return True
        return rows - found[0].indexed_rows > ANN_TAIL_RATIO * found[0].indexed_rows

    def reindex(self) -> None:
        """Rebuild the vector file now as a new generation (indexed if above ``ann_min_rows``),
        in a write transaction of its own (or the caller's)."""
        with self.db.transaction():
            self._rebuild_file()
            self.version += 1
