"""The generations of a :class:`~lightrag.components.storage.mapped_vector.MappedVectorStorage`
file and its inverted-file index: when the writer rewrites the file (compaction, or a rebuild
in list order for the index), when the index is due, and the ``row`` column of ``vectors``.

A new generation ``vectors-<namespace>-<generation>.f32`` comes two ways, inside the writer's
transaction; readers keep mapping the previous generation until they see the new one, and the
one before it is removed:

* a **compaction** (garbage rows outweigh the live ones, or :meth:`VectorGenerations.reindex`)
  writes a file holding exactly the live vectors, points every id's ``row`` at its new row,
  and indexes it when the store is big enough
  (:mod:`~lightrag.components.storage.vector_ivf`);
* a **new index** (the rows appended since the last build outgrow it) links the new
  generation's name to the same file (a hard link: no row moves, no id's ``row``
  changes; appends reach both names) and writes only the index, whose copy of the vectors is
  in list order. At 1M chunks this was a 22 s stall (rows rewritten into list order). From
  :data:`~lightrag.components.storage.vector_index_build.BACKGROUND_BUILD_ROWS` live rows the
  index is trained in a thread beside the writer and swapped in by a later commit
  (:mod:`~lightrag.components.storage.vector_index_build`).
:class:`VectorGenerations` is a mixin of ``MappedVectorStorage`` (its file, meta and append
helpers).
"""

from __future__ import annotations

import logging
import os
from typing import Any, List, Optional, Tuple

import numpy as np

from lightrag.components.storage import vector_index_build, vector_ivf
from lightrag.components.storage.mapped_search import BLOCK_ROWS
from lightrag.components.storage.vector_index_build import IndexBuild
from lightrag.components.storage.vector_ivf import IndexFileError, IVFIndex, TailLists

log = logging.getLogger(__name__)

#: a rebuild rewrites every id's ``row`` in its namespace (the rows move into list order). From
#: this many rows, when they are at least a third of the table, the index by row is dropped and
#: built again by one sort; the rows are updated in the table's storage order either way
#: (sequential pages): 2.15M entries were rewritten in ~36 s by random B-tree inserts and deletes
REINDEX_ROWS_FROM = 200_000
#: retrain when the rows appended since the build exceed this share of the indexed ones. A search
#: gathers the tail rows of its lists one by one (a list's indexed rows are one slice): at 1M
#: chunks with the share at 1.0, 1.1M relation rows in the tail made that search 35 ms of a
#: query's ~130. A retrain runs beside the writer (~20 s for 2M 64-d rows), at every 25 % growth.
ANN_TAIL_RATIO = 0.25


def _fsync_folder(folder: Any) -> None:
    """Make the folder's new names (a link, a renamed file) durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create_row_column(db: Any) -> None:
    """The ``row`` column of ``vectors`` (which file row holds each id's vector; NULL until the
    commit appends it, or for rows a table-only store wrote) and its index by row.

    The row lives in the record's own table row: a new vector's insert already dirties that
    page, so pointing it at its file row costs no further random page (a table of its own,
    ``vector_rows``, cost one more random leaf per new vector: ~2,700 of the 22k pages 100
    documents wrote at 1M chunks). An older store's ``vector_rows`` is folded in once."""
    if "row" not in db.columns("vectors"):
        db.execute("ALTER TABLE vectors ADD COLUMN row INTEGER")
    if db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_rows'"):
        log.warning("moving the vector rows of %s into the vectors table (once; minutes for "
                    "millions of vectors)", db.describe())
        db.execute("DROP INDEX IF EXISTS vector_rows_by_row")
        db.execute("UPDATE vectors SET row = r.row FROM vector_rows r "
                   "WHERE r.ns = vectors.ns AND r.id = vectors.id")
        db.execute("DROP TABLE vector_rows")
    db.execute("CREATE INDEX IF NOT EXISTS vectors_by_row ON vectors (ns, row)")


class VectorGenerations:
    """File generations and the approximate index of a mapped vector store (mixed into
    ``MappedVectorStorage``)."""

    db: Any
    _build: Optional[IndexBuild]
    namespace: str
    ann_min_rows: Optional[int]
    version: int

    def _rebuild_file(self, compact: bool = True, committed_rows: Optional[int] = None) -> None:
        """A new generation (in a write transaction): a compaction, or (``compact`` False and
        the store has a file) the same rows under a new index (see the module doc), built in a
        thread from the ``committed_rows`` rows committed before this transaction when large."""
        meta = self._file_meta()
        if not compact and meta is not None and self._index_in_place(meta, committed_rows):
            return
        generation = (meta[0] + 1) if meta else 1
        self._drop_build()  # of rows this compaction renumbers
        self._rows_renumbered()
        ids, matrix, rows, table_rows = self._live_vectors()
        rebuild_row_index = len(ids) >= REINDEX_ROWS_FROM and 3 * len(ids) >= self._all_vector_rows()
        if rebuild_row_index:  # see REINDEX_ROWS_FROM
            self.db.execute("DROP INDEX IF EXISTS vectors_by_row")
        self.db.delete_meta(self._ann_key)
        if not ids:
            return
        for suffix in ("f32", "ivf", "lst"):
            self._path(generation, suffix).unlink(missing_ok=True)
        index = self._built_index(matrix, rows, len(ids), rowids=np.arange(len(ids), dtype=np.int64))
        for start in range(0, len(ids), BLOCK_ROWS):
            self._append(generation, matrix[rows[start:start + BLOCK_ROWS]])
        order = np.argsort(table_rows, kind="stable").tolist()  # the table's page order
        self.db.executemany("UPDATE vectors SET row = ? WHERE rowid = ?",
                            ((n, int(table_rows[n])) for n in order))
        if rebuild_row_index:
            _create_row_column(self.db)
        self._set_file_meta(generation, matrix.shape[1])
        self._set_garbage(0)
        if index is not None:
            self._write_index(generation, index, matrix)
        self._drop_generation(generation - 2)
        log.info("vectors %s: file generation %d with %d rows%s", self.namespace, generation, len(ids),
                 f" in {index.lists} inverted lists" if index is not None else "")

    def _rows_renumbered(self) -> None:
        """Called as a compaction starts renumbering the rows, in the write transaction (a store
        that keeps what the transaction read of them forgets it)."""

    def _index_in_place(self, meta: Tuple[int, int], committed_rows: Optional[int] = None) -> bool:
        """A new generation linked to the current file with a new index of its live rows
        (nothing else rewritten), or a build of it started or still running in a thread (the
        old index serves meanwhile); False (nothing done) where that cannot be: no mapped rows,
        no index wanted or built, or the file system refuses the link."""
        generation, dim = meta
        matrix = self._matrix(meta)
        if matrix is None or not matrix.shape[0]:
            return False
        build: Optional[IndexBuild] = self._build
        failed = False
        if build is not None:
            if not build.done:
                return True
            object.__setattr__(self, "_build", None)
            if build.index is not None and build.generation == generation:
                return self._swap_in(build, meta, matrix)
            build.discard()  # failed (build inline below), or for a generation since compacted
            failed = build.error is not None
        else:  # what a process that ended mid-build left
            self._path(generation, "ivf.build").unlink(missing_ok=True)
        live = matrix.shape[0] - self._garbage()
        if (not failed and committed_rows and live >= vector_index_build.BACKGROUND_BUILD_ROWS
                and self._index_wanted(live)):
            object.__setattr__(self, "_build", IndexBuild(
                self.db.path, self.namespace, generation, self._path(generation), dim,
                min(committed_rows, matrix.shape[0]), self._path(generation, "ivf.build"),
                durable=self._durable))
            return True
        found = self.db.read("SELECT row FROM vectors WHERE ns = ? AND row IS NOT NULL ORDER BY row",
                             (self.namespace,))
        rows = np.fromiter((r for (r,) in found), dtype=np.int64, count=len(found))
        rows = rows[rows < matrix.shape[0]]
        if not self._index_wanted(len(rows)):
            return False
        index = self._built_index(matrix, rows, len(rows))
        if index is None:
            return False
        new = generation + 1
        for suffix in ("f32", "ivf", "lst"):
            self._path(new, suffix).unlink(missing_ok=True)
        try:
            os.link(self._path(generation), self._path(new))
        except OSError as e:
            log.info("vectors %s: cannot link a new generation (%s); compacting instead", self.namespace, e)
            return False
        self._write_index(new, index, matrix)
        self._set_file_meta(new, dim)
        self._drop_generation(new - 2)
        log.info("vectors %s: generation %d indexes %d rows in %d inverted lists (file kept)",
                 self.namespace, new, len(rows), index.lists)
        return True

    def _swap_in(self, build: IndexBuild, meta: Tuple[int, int], matrix: np.ndarray) -> bool:
        """Make a finished thread's index the next generation's (the file linked, the rows
        appended since its snapshot assigned to its lists)."""
        generation, dim = meta
        new = generation + 1
        index = build.index
        assert index is not None
        for suffix in ("f32", "ivf", "lst"):
            self._path(new, suffix).unlink(missing_ok=True)
        try:
            os.link(self._path(generation), self._path(new))
        except OSError as e:
            log.info("vectors %s: cannot link a new generation (%s); compacting instead", self.namespace, e)
            build.discard()
            return False
        os.replace(build.target, self._path(new, "ivf"))
        tail = matrix[build.file_rows:]
        if tail.shape[0]:
            vector_ivf.append_lists(self._path(new, "lst"), 0, vector_ivf.assign(index.centroids, tail),
                                    durable=self._durable)
        if self._durable:
            _fsync_folder(self._path(new).parent)
        self.db.set_meta(self._ann_key, f"{new}:{index.lists}:{index.indexed_rows}")
        self._set_file_meta(new, dim)
        self._drop_generation(new - 2)
        log.info("vectors %s: generation %d takes the index built beside the writer (%d rows since)",
                 self.namespace, new, tail.shape[0])
        return True

    def _built_index(self, matrix: np.ndarray, rows: np.ndarray, live: int,
                     rowids: Optional[np.ndarray] = None) -> Optional[IVFIndex]:
        """The index of rows ``rows`` of ``matrix`` (their file rows ``rowids``), or None:
        search exactly (too small, no faiss, or the build failed)."""
        if not self._index_wanted(live):
            return None
        try:
            return IVFIndex.build(matrix, rows, vector_ivf.lists_for(live), rowids=rowids,
                                  file_rows=None if rowids is None else len(rowids))
        except Exception:  # the commit must not fail for its index: search exactly instead
            log.exception("vectors %s: building the index failed; searching exactly", self.namespace)
            return None

    def _write_index(self, generation: int, index: IVFIndex, matrix: np.ndarray) -> None:
        """Write the index file of ``generation`` and point the store's meta at it."""
        index.write(self._path(generation, "ivf"), matrix, durable=self._durable)
        if self._durable:
            _fsync_folder(self._path(generation).parent)
        self.db.set_meta(self._ann_key, f"{generation}:{index.lists}:{index.indexed_rows}")

    def _drop_build(self) -> None:
        """Wait for an index build running beside the writer, and drop it (its rows are about
        to be renumbered or deleted)."""
        build = self._build
        if build is not None:
            object.__setattr__(self, "_build", None)
            build.join()
            build.discard()

    def _drop_generation(self, generation: int) -> None:
        """Remove a generation's files (the previous one stays for readers still mapping it)."""
        for suffix in ("f32", "ivf", "lst", "ivf.build"):
            self._path(generation, suffix).unlink(missing_ok=True)

    def _all_vector_rows(self) -> int:
        return int(self.db.query("SELECT COUNT(*) FROM vectors")[0][0])

    def _live_vectors(self) -> Tuple[List[str], np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, matrix, rows, table_rows)``: row ``rows[i]`` of ``matrix`` is the vector of
        ``ids[i]``, whose record is the ``vectors`` table's row ``table_rows[i]`` (the mapped file
        when there is one, else the table read whole)."""
        matrix = self._matrix() if self._file_meta() is not None else None
        if matrix is not None:
            found = self.db.read("SELECT id, row, rowid FROM vectors WHERE ns = ? AND row IS NOT NULL "
                                 "ORDER BY row", (self.namespace,))
            rows = np.fromiter((r for _, r, _ in found), dtype=np.int64, count=len(found))
            if found and rows.max() < matrix.shape[0]:
                table_rows = np.fromiter((t for _, _, t in found), dtype=np.int64, count=len(found))
                return [i for i, _, _ in found], matrix, rows, table_rows
        stored = self.db.query("SELECT id, vector, rowid FROM vectors WHERE ns = ? ORDER BY rowid",
                               (self.namespace,))
        if not stored:
            empty = np.zeros(0, dtype=np.int64)
            return [], np.zeros((0, 0), dtype=np.float32), empty, empty
        matrix = np.stack([np.frombuffer(bytes(v), dtype=np.float32) for _, v, _ in stored])
        table_rows = np.fromiter((t for _, _, t in stored), dtype=np.int64, count=len(stored))
        return [i for i, _, _ in stored], matrix, np.arange(len(stored), dtype=np.int64), table_rows

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

    def _index(self, generation: int, dim: int, ann: Any = False,
               fresh_tail: bool = True) -> Optional[Tuple[IVFIndex, TailLists]]:
        """The index of ``generation`` and its tail lists (mapped), or None: search exactly.
        ``ann``: the index's meta if just read; ``fresh_tail`` False: the tail lists as last
        mapped (for a caller that uses the index alone: mapping the grown file again at every
        commit was a third of the writer's index upkeep)."""
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
        if found is not None and fresh_tail:
            found[1].refresh()
        return found

    def _index_new_rows(self, generation: int, first: int, vectors: np.ndarray) -> Optional[IVFIndex]:
        """Append the lists of rows ``first ..`` to the tail file of an indexed generation;
        returns its index (None: the generation has none)."""
        meta = self._ann_meta()
        if meta is None or meta[0] != generation or self.ann_min_rows is None:
            return None
        found = self._index(generation, vectors.shape[1], meta, fresh_tail=False)
        if found is None:
            return None
        index = found[0]
        vector_ivf.append_lists(self._path(generation, "lst"), first - index.indexed_rows,
                                vector_ivf.assign(index.centroids, vectors), durable=self._durable)
        return index

    def _reindex_due(self, generation: int, rows: int, live: int,
                     index: Optional[IVFIndex] = None) -> bool:
        """Whether the index of a file of ``rows`` rows (``live`` of them live) must be (re)built:
        none yet above the size, missing or corrupt, or outgrown by the rows appended since
        (``index``: the generation's, when the caller has it)."""
        if not self._index_wanted(live):
            return False
        if index is None:
            meta = self._file_meta()
            found = self._index(generation, meta[1], fresh_tail=False) if meta else None
            if found is None:
                return True
            index = found[0]
        return rows - index.indexed_rows > ANN_TAIL_RATIO * index.indexed_rows

    def verify_files(self, sample: int = 2048) -> List[str]:
        """Problems of the vector file and its index (empty: consistent): ids whose ``row``
        points past the file's end, an index that cannot be read, or (checked on ``sample``
        positions spread over the index) a listed row whose copy differs from the file's row.
        Run by ``lightrag check``."""
        meta, ann = self._metas()
        if meta is None:
            return []
        name = f"vectors {self.namespace}"
        matrix = self._matrix(meta)
        rows = matrix.shape[0] if matrix is not None else 0
        past = self.db.read("SELECT COUNT(*) FROM vectors WHERE ns = ? AND row >= ?",
                            (self.namespace, rows))[0][0]
        problems = [f"{name}: {past} ids point past the end of its file ({rows} rows)"] if past else []
        if ann is None or ann[0] != meta[0] or matrix is None:
            return problems
        try:
            index = IVFIndex.read(self._path(meta[0], "ivf"), meta[1], ann[1], ann[2])
        except IndexFileError as e:
            return problems + [f"{name}: {e} (searched exactly until the next build)"]
        if index.rowids is None or not len(index.rowids):
            return problems
        if index.indexed_rows > rows:
            return problems + [f"{name}: the index covers {index.indexed_rows} rows, the file has {rows}"]
        listed = len(index.rowids)
        positions = np.unique(np.linspace(0, listed - 1, min(sample, listed)).astype(np.int64))
        copies, originals = index.vectors[positions], matrix[index.rowids[positions]]  # type: ignore[index]
        differ = int(np.count_nonzero(np.any(copies != originals, axis=1)))
        if differ:
            problems.append(f"{name}: {differ} of {len(positions)} sampled index rows differ from the "
                            "file (run `reindex`)")
        return problems

    def finish_index_build(self) -> bool:
        """Wait for an index build running beside the writer and commit it (a transaction of
        its own); True when one was swapped in. A writer that closes calls this so that a
        finished build is not thrown away and started again by the next writer's first commit
        (a bulk load that ended past :data:`~lightrag.components.storage.vector_index_build.
        BACKGROUND_BUILD_ROWS` rows left the first insert building the index of 1M rows)."""
        build = self._build
        if build is None:
            return False
        log.info("vectors %s: finishing the index build beside the writer", self.namespace)
        build.join()
        with self.db.transaction():
            meta = self._file_meta()
            before = self._ann_meta()
            if meta is None or not self._index_in_place(meta):
                return False
            self.version += 1
            return self._ann_meta() != before

    def reindex(self) -> None:
        """Rebuild the vector file now as a new generation (indexed if above ``ann_min_rows``),
        in a write transaction of its own (or the caller's)."""
        with self.db.transaction():
            self._rebuild_file()
            self.version += 1
