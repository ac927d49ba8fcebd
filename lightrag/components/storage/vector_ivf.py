"""An inverted-file (IVF) index over the rows of a vector file, with its own copy of them grouped by list.

The approximate search of :class:`~lightrag.components.storage.mapped_vector.MappedVectorStorage`
above a size. The index file holds the live rows' vectors grouped by their nearest centroid, with
the file row of each, so each inverted list is a contiguous slice of the memory-mapped copy and is
searched where it lies (a BLAS matrix-vector product per list: at 1M chunks ``einsum``, which
does not use BLAS, made a query's ~150 list products 2-3x slower). The vector file itself keeps
its rows where they are: building an index moves no row, so no id's ``row`` changes (rewriting
2.15M of them into list order was most of a 22 s writer stall at 1M chunks). Beside the matrix file of a
generation:

* ``<stem>.ivf``: the centroids, the first position of each list, the file row of each position
  and the copy of the vectors (written once, atomically; memory-mapped by every reader). An
  older store's version-1 file has no copy: its vector file was written in list order;
* ``<stem>.lst``: the list of each row appended after the build (int32, one per row, appended at
  each commit like the matrix file and memory-mapped by every reader).

A search scores the centroids, takes the ``nprobe`` best lists, multiplies their slices (and the
tail rows assigned to them) by the query, and returns candidate rows with their scores; the
caller filters garbage rows and widens ``nprobe`` when it lost hits. The k-means that trains the
centroids is faiss's (imported when an index is built); searching needs only NumPy.

Example:
    >>> rng = np.random.default_rng(0)
    >>> vectors = rng.normal(size=(2000, 16)).astype(np.float32)
    >>> vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    >>> index = IVFIndex.build(vectors, np.arange(2000), lists=8)
    >>> first = index.rowids[index.offsets[0]:index.offsets[1]]  # the file rows of list 0
    >>> index.lists, index.indexed_rows, sorted(index.rowids.tolist()) == list(range(2000))
    (8, 2000, True)
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import math
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np

log = logging.getLogger(__name__)

MAGIC = b"LRIVF001"  # version 1: the vector file itself is in list order (older stores; read only)
HEADER_INTS = 3  # dim, lists, indexed rows
MAGIC_COPY = b"LRIVF002"  # version 2: file rows and a copy of their vectors in list order
HEADER_INTS_COPY = 4  # dim, lists, indexed (file) rows, listed rows
TRAIN_POINTS_PER_LIST = 64  # k-means sample: at most this many rows per centroid
TRAIN_ITERATIONS = 12
ASSIGN_BLOCK = 32_768  # rows assigned to their lists at a time (bounded temporary memory)
NO_LIST = -1  # the list of a tail row written by a crashed writer (searched exactly)
MIN_NPROBE = 128  # lists scored per query at least (docs/benchmarks/vector_search.md) ...
PROBE_SHARE = 0.15  # ... or this share of them, when more
SHARED_LISTS_SPLIT = 0.8  # a batch whose distinct lists exceed this share of its probes: query by query


class IndexFileError(ValueError):
    """An index file is missing, truncated or does not match the vector file it describes."""


@functools.cache
def faiss_available() -> bool:
    """Whether faiss (the ``faiss`` extra) is installed to train an index. Found, not imported:
    importing it took 0.16 s of the first commit of every writing process (1M-chunk store, 2
    cores), which asks this before it has anything to train; a broken install fails when an
    index is built, and the commit then searches exactly (logged)."""
    return importlib.util.find_spec("faiss") is not None


def lists_for(rows: int) -> int:
    """How many inverted lists an index of ``rows`` rows gets (about ``sqrt(rows)``, at least 1)."""
    return max(1, int(round(math.sqrt(rows))))


def default_nprobe(lists: int) -> int:
    """Lists scored per query by default: 128, or 15 % of them when more (recall@10 >= 0.95 from
    100k to 1M structured 384-d vectors in ``benchmarks/ann_recall.py``), at most all."""
    return min(lists, max(MIN_NPROBE, math.ceil(PROBE_SHARE * lists)))


def assign(centroids: np.ndarray, vectors: np.ndarray, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """The list (index of the most similar centroid) of each row of ``vectors`` (of rows
    ``rows`` of it when given), as int32."""
    count = vectors.shape[0] if rows is None else rows.shape[0]
    out = np.empty(count, dtype=np.int32)
    for start in range(0, count, ASSIGN_BLOCK):
        end = min(count, start + ASSIGN_BLOCK)
        block = np.asarray(vectors[start:end] if rows is None else vectors[rows[start:end]], dtype=np.float32)
        out[start:end] = np.argmax(block @ centroids.T, axis=1)
    return out


def train(sample: np.ndarray, lists: int, seed: int = 1234) -> np.ndarray:
    """``lists`` unit centroids of ``sample`` (spherical k-means by faiss).

    Raises:
        ImportError: faiss is not installed.
    """
    import faiss

    lists = min(lists, sample.shape[0])
    kmeans = faiss.Kmeans(sample.shape[1], lists, niter=TRAIN_ITERATIONS, spherical=True, seed=seed,
                          max_points_per_centroid=TRAIN_POINTS_PER_LIST, verbose=False)
    kmeans.train(np.ascontiguousarray(sample, dtype=np.float32))
    return np.ascontiguousarray(kmeans.centroids, dtype=np.float32)


@dataclass(frozen=True)
class IVFIndex:
    """One generation's index: list ``l`` is positions ``offsets[l]`` to ``offsets[l + 1]``,
    position ``p`` is file row ``rowids[p]`` with vector ``vectors[p]``; file rows from
    :attr:`indexed_rows` on are the tail (:class:`TailLists`).

    A version-1 index (``rowids`` None) describes a file written in list order: position ``p``
    is file row ``p`` and the vectors are the file's own rows."""

    centroids: np.ndarray
    offsets: np.ndarray
    rowids: Optional[np.ndarray] = None
    vectors: Optional[np.ndarray] = None  # mapped from the file once written
    tail_from: Optional[int] = None  # file rows covered when built (None: offsets[-1])
    source: Optional[np.ndarray] = None  # built, not yet written: rows of the build's matrix by position

    @property
    def lists(self) -> int:
        return int(self.centroids.shape[0])

    @property
    def indexed_rows(self) -> int:
        """File rows the index covers (listed or garbage when built): later rows are the tail."""
        return int(self.offsets[-1] if self.tail_from is None else self.tail_from)

    @classmethod
    def build(cls, matrix: np.ndarray, rows: np.ndarray, lists: int, seed: int = 1234,
              file_rows: Optional[int] = None, rowids: Optional[np.ndarray] = None) -> IVFIndex:
        """Train on a sample of rows ``rows`` of ``matrix`` and group those rows by list.

        ``rowids``: the file row of each of ``rows`` (default: ``rows`` themselves, for an index
        of the matrix's own file); ``file_rows``: the rows of that file now (default:
        ``matrix``'s), from which rows are the tail. Write it with :meth:`write` (the vectors
        are copied from ``matrix`` then).

        Raises:
            ImportError: faiss is not installed.
        """
        rows = np.asarray(rows, dtype=np.int64)
        wanted = min(rows.shape[0], max(lists, 1) * TRAIN_POINTS_PER_LIST)
        picked = np.sort(np.random.default_rng(seed).choice(rows.shape[0], size=wanted, replace=False))
        centroids = train(np.asarray(matrix[rows[picked]]), lists, seed)
        assigned = assign(centroids, matrix, rows)
        order = np.argsort(assigned, kind="stable")
        counts = np.bincount(assigned, minlength=centroids.shape[0])
        offsets = np.zeros(centroids.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        file_ids = rows if rowids is None else np.asarray(rowids, dtype=np.int64)
        return cls(centroids, offsets, rowids=file_ids[order],
                   tail_from=int(matrix.shape[0] if file_rows is None else file_rows),
                   source=rows[order])

    # ------------------------------------------------------------------ files
    def write(self, path: Path, matrix: np.ndarray, durable: bool = False) -> None:
        """Write a built index atomically (a temporary file renamed over ``path``), its vectors
        copied from the rows of ``matrix`` it was built from, a block at a time."""
        if self.rowids is None or self.source is None:
            raise ValueError("only an index made by IVFIndex.build can be written")
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(MAGIC_COPY)
            f.write(np.array([self.centroids.shape[1], self.lists, self.indexed_rows, len(self.rowids)],
                             dtype=np.int64).tobytes())
            f.write(np.ascontiguousarray(self.centroids, dtype=np.float32).tobytes())
            f.write(self.offsets.astype(np.int64).tobytes())
            f.write(self.rowids.astype(np.int64).tobytes())
            for start in range(0, len(self.source), ASSIGN_BLOCK):
                block = matrix[self.source[start:start + ASSIGN_BLOCK]]
                f.write(np.ascontiguousarray(block, dtype=np.float32).tobytes())
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path, dim: int, lists: int, indexed_rows: int) -> IVFIndex:
        """Map the index file of a generation whose metadata says ``dim``, ``lists`` and
        ``indexed_rows`` (either version).

        Raises:
            IndexFileError: the file is missing, truncated, or describes another index.
        """
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except (OSError, ValueError) as e:
            raise IndexFileError(f"index file {path} cannot be read: {e}") from e
        magic = bytes(data[:len(MAGIC)])
        ints = {MAGIC: HEADER_INTS, MAGIC_COPY: HEADER_INTS_COPY}.get(magic)
        head = len(MAGIC) + 8 * (ints or 0)
        if ints is None or len(data) < head:
            raise IndexFileError(f"index file {path} is not an IVF index file (bad header)")
        got = tuple(int(v) for v in np.frombuffer(data, dtype=np.int64, count=ints, offset=len(MAGIC)))
        if got[:3] != (dim, lists, indexed_rows):
            raise IndexFileError(f"index file {path} describes dim/lists/rows {got[:3]}, the store "
                                 f"says {(dim, lists, indexed_rows)}")
        listed = got[3] if magic == MAGIC_COPY else indexed_rows
        copy_bytes = 8 * listed + 4 * listed * dim if magic == MAGIC_COPY else 0
        if len(data) != head + 4 * lists * dim + 8 * (lists + 1) + copy_bytes:
            raise IndexFileError(f"index file {path} is truncated ({len(data)} bytes)")
        centroids = np.frombuffer(data, dtype=np.float32, count=lists * dim, offset=head)
        at = head + 4 * lists * dim
        offsets = np.frombuffer(data, dtype=np.int64, count=lists + 1, offset=at)
        if offsets[0] != 0 or offsets[-1] != listed or np.any(np.diff(offsets) < 0):
            raise IndexFileError(f"index file {path} has inconsistent list offsets")
        if magic == MAGIC:
            return cls(centroids.reshape(lists, dim), offsets)
        at += 8 * (lists + 1)
        rowids = np.frombuffer(data, dtype=np.int64, count=listed, offset=at)
        if listed and (int(rowids.min()) < 0 or int(rowids.max()) >= indexed_rows):
            raise IndexFileError(f"index file {path} lists rows outside the file's {indexed_rows}")
        vectors = np.frombuffer(data, dtype=np.float32, count=listed * dim,
                                offset=at + 8 * listed).reshape(listed, dim)
        return cls(centroids.reshape(lists, dim), offsets, rowids=rowids, vectors=vectors,
                   tail_from=indexed_rows)

    def listed(self, part: int, matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(file rows, vectors)`` of list ``part`` (``matrix``: the mapped file, which holds
        them itself in a version-1 index)."""
        start, end = int(self.offsets[part]), int(self.offsets[part + 1])
        if self.rowids is None:
            return np.arange(start, end, dtype=np.int64), matrix[start:end]
        return self.rowids[start:end], self.vectors[start:end]  # type: ignore[index]

    # ----------------------------------------------------------------- search
    def probe(self, queries: np.ndarray, nprobe: int) -> np.ndarray:
        """The ``nprobe`` lists whose centroids score best, for each query (queries × nprobe)."""
        scores = np.einsum("qd,ld->ql", queries, self.centroids)  # small: no BLAS threads
        if nprobe >= self.lists:
            return np.tile(np.arange(self.lists), (queries.shape[0], 1))
        return np.argpartition(-scores, nprobe - 1, axis=1)[:, :nprobe]

    def candidates(self, matrix: np.ndarray, tail: TailLists, query: np.ndarray,
                   lists: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Rows of ``lists`` (their slices and their tail rows; tail rows of no list too) with
        their scores against ``query``: ``(rows, scores)``."""
        rows, scores = [], []
        for part in lists.tolist():
            listed, block = self.listed(part, matrix)
            if listed.size:
                rows.append(listed)
                scores.append(block @ query)
        extra = tail.rows_in(lists, matrix.shape[0])
        if extra.size:
            rows.append(extra)
            scores.append(matrix[extra] @ query)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(rows), np.concatenate(scores)


    def candidates_batch(self, matrix: np.ndarray, tail: TailLists, queries: np.ndarray,
                         lists: np.ndarray) -> List[Tuple[np.ndarray, np.ndarray]]:
        """:meth:`candidates` of each query (row ``i`` of ``lists`` are the lists of
        ``queries[i]``). When the queries share lists (a batch of synonym searches), each shared
        list is scored against all the queries probing it in one matrix product; when they
        share few (a question's 2-5 keywords: each its own ~128 lists), query by query, which
        skips the batch's bookkeeping (measured on the 1M scale store: 3 keyword rows 37 -> 27
        ms, 30 synonym searches 25 -> 22 ms)."""
        if len(set(lists.ravel().tolist())) > SHARED_LISTS_SPLIT * lists.size:
            return [self.candidates(matrix, tail, query, probed) for query, probed in zip(queries, lists)]
        by_list: Dict[int, List[int]] = {}
        for query, probed in enumerate(lists.tolist()):
            for part in probed:
                by_list.setdefault(part, []).append(query)
        tail_rows = tail.rows_by_list(matrix.shape[0], by_list)
        rows: List[List[np.ndarray]] = [[] for _ in range(queries.shape[0])]
        scores: List[List[np.ndarray]] = [[] for _ in range(queries.shape[0])]
        for part, asking in by_list.items():
            listed, block = self.listed(part, matrix)
            pieces = [(listed, block)] if listed.size else []
            extra = tail_rows.get(part)
            if extra is not None:  # scored apart: joining them would copy the list's block
                pieces.append((extra, matrix[extra]))
            for found, vectors in pieces:
                if len(asking) == 1:
                    rows[asking[0]].append(found)
                    scores[asking[0]].append(np.asarray(vectors, dtype=np.float32) @ queries[asking[0]])
                    continue
                scored = np.asarray(vectors, dtype=np.float32) @ queries[asking].T
                for column, query in enumerate(asking):
                    rows[query].append(found)
                    scores[query].append(scored[:, column])
        unlisted = tail_rows.get(None)
        if unlisted is not None:
            scored = np.asarray(matrix[unlisted], dtype=np.float32) @ queries.T
            for query in range(queries.shape[0]):
                rows[query].append(unlisted)
                scores[query].append(scored[:, query])
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        return [(np.concatenate(r), np.concatenate(s)) if r else empty
                for r, s in zip(rows, scores)]


class TailLists:
    """The lists of the rows appended after an index was built, mapped from the ``.lst`` file.

    Entry ``i`` is the list of row ``indexed_rows + i``. Rows of the matrix beyond the entries
    (appended by a writer that crashed before writing their entry) and entries of no valid list
    are candidates of every search.
    """

    def __init__(self, path: Path, indexed_rows: int, lists: int) -> None:
        self.indexed_rows = indexed_rows
        self._path, self._lists = path, lists
        empty = np.zeros(0, dtype=np.int32)
        # (file identity and entry count, entries, entries of no valid list): replaced whole
        self._state: Tuple[Tuple[int, int], np.ndarray, np.ndarray] = ((0, 0), empty, empty)
        # (file identity, entries covered, their valid positions by list, where each list starts)
        self._groups: Tuple[int, int, np.ndarray, np.ndarray] = (0, 0, empty, np.zeros(lists + 1, np.int64))

    @property
    def entries(self) -> np.ndarray:
        return self._state[1]

    def refresh(self) -> None:
        """Map the file again if it changed (grew, or was replaced) since it was last mapped."""
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            stat = None
        key = (stat.st_ino, stat.st_size // 4) if stat else (0, 0)
        (seen_ino, seen), _, stray = self._state
        if key == (seen_ino, seen):
            return
        entries = np.zeros(0, dtype=np.int32)
        if key[1]:
            with open(self._path, "rb") as f:
                mapped = mmap.mmap(f.fileno(), key[1] * 4, access=mmap.ACCESS_READ)
            entries = np.frombuffer(mapped, dtype=np.int32)
        # The file grew (each commit appends): only the new entries are scanned (the whole tail,
        # up to a million entries, took ~1 ms at every commit). Entries marked stray before may
        # have been rewritten since (a crashed writer's rows): :meth:`_strays` reads them again.
        grown = key[0] == seen_ino and key[1] >= seen
        first = seen if grown else 0
        fresh = entries[first:]
        found = first + np.flatnonzero((fresh < 0) | (fresh >= self._lists))
        self._state = (key, entries, np.concatenate([stray, found]) if grown else found)

    def _strays(self, entries: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The positions among ``entries`` marked of no valid list when the file was mapped (a
        crashed writer's rows) and their entries now: one rewritten in place since belongs to
        its list."""
        stray = self._state[2]
        stray = stray[stray < entries.shape[0]]
        return stray, entries[stray]

    def _grouped(self, count: int) -> Tuple[int, np.ndarray, np.ndarray]:
        """``(covered, positions, starts)``: the positions of the first ``covered`` entries
        that hold a valid list, ordered by list (stably), list ``l``'s at
        ``positions[starts[l]:starts[l + 1]]``; ``covered <= count``. Kept between searches:
        an entry of a complete row is never rewritten, so the grouping of a file only grows.
        It is made again once the entries it leaves out (appended since, matched one by one)
        are more than an eighth of it (a 1M-row tail: ~60 ms; matching every entry against
        the probed lists at each search took 1-3 ms at 1M chunks)."""
        ino = self._state[0][0]
        seen_ino, covered, positions, starts = self._groups
        if seen_ino == ino and covered <= count and count - covered <= max(4096, covered // 8):
            return covered, positions, starts
        entries = self._state[1][:count]
        valid = np.flatnonzero((entries >= 0) & (entries < self._lists))
        positions = valid[np.argsort(entries[valid], kind="stable")]
        starts = np.zeros(self._lists + 1, dtype=np.int64)
        np.cumsum(np.bincount(entries[valid], minlength=self._lists), out=starts[1:])
        self._groups = (ino, count, positions, starts)
        return count, positions, starts

    def rows_in(self, lists: np.ndarray, rows: int) -> np.ndarray:
        """Tail rows (below ``rows``, the mapped matrix's size) in ``lists``, or in no list,
        in ascending order."""
        entries = self._state[1][:max(0, rows - self.indexed_rows)]
        covered, positions, starts = self._grouped(entries.shape[0])
        parts = [positions[starts[part]:starts[part + 1]] for part in lists.tolist()]
        parts.append(covered + np.flatnonzero(np.isin(entries[covered:], lists)))
        hit = np.concatenate(parts)
        stray, now = self._strays(entries)
        if stray.size:
            wanted = (now < 0) | (now >= self._lists) | np.isin(now, lists)
            hit = np.concatenate([hit[~np.isin(hit, stray)], stray[wanted]])
        unlisted = np.arange(self.indexed_rows + entries.shape[0], rows, dtype=np.int64)
        return np.concatenate([np.sort(hit).astype(np.int64) + self.indexed_rows, unlisted])

    def rows_by_list(self, rows: int, lists: Optional[Iterable[int]] = None
                     ) -> Dict[Optional[int], np.ndarray]:
        """The tail rows below ``rows`` of each of ``lists`` (default: all) that has any, in
        ascending order; ``None``: those of no list (searched by every query)."""
        entries = self._state[1][:max(0, rows - self.indexed_rows)]
        covered, positions, starts = self._grouped(entries.shape[0])
        fresh = entries[covered:]
        later = covered + np.flatnonzero((fresh >= 0) & (fresh < self._lists))
        later = later[np.argsort(entries[later], kind="stable")]
        later_lists = entries[later]
        stray, now = self._strays(entries)
        out: Dict[Optional[int], np.ndarray] = {}
        parts = list(range(self._lists) if lists is None else lists)
        low = np.searchsorted(later_lists, parts).tolist()
        high = np.searchsorted(later_lists, parts, "right").tolist()
        begin, end = starts[parts].tolist(), starts[np.asarray(parts, dtype=np.int64) + 1].tolist()
        for part, first, last, lo, hi in zip(parts, begin, end, low, high):
            found = positions[first:last] if lo == hi else np.concatenate([positions[first:last],
                                                                         later[lo:hi]])
            if stray.size:
                found = np.sort(np.concatenate([found[~np.isin(found, stray)], stray[now == part]]))
            if found.size:
                out[int(part)] = found.astype(np.int64) + self.indexed_rows
        lost = stray[(now < 0) | (now >= self._lists)].astype(np.int64)
        beyond = np.arange(self.indexed_rows + entries.shape[0], rows, dtype=np.int64)
        unlisted = np.concatenate([lost + self.indexed_rows, beyond])
        if unlisted.size:
            out[None] = unlisted
        return out

    def __len__(self) -> int:
        return int(self.entries.shape[0])


def append_lists(path: Path, position: int, lists: np.ndarray, durable: bool = False) -> None:
    """Write the lists of tail rows ``position ..`` into the ``.lst`` file at that position
    (padding with :data:`NO_LIST` after a crashed writer's rows; bytes already there are garbage
    rows' entries and are overwritten, never truncated under a reader's mapping)."""
    with open(path, "ab"):
        pass
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END) // 4
        if size < position:
            f.write(np.full(position - size, NO_LIST, dtype=np.int32).tobytes())
        f.seek(4 * position)
        f.write(np.ascontiguousarray(lists, dtype=np.int32).tobytes())
        f.flush()
        if durable:
            os.fsync(f.fileno())


def read_meta(value: Optional[str]) -> Optional[Tuple[int, int, int]]:
    """``(generation, lists, indexed_rows)`` from the store's ``vector_ann`` meta value."""
    if not value:
        return None
    try:
        generation, lists, rows = (int(v) for v in value.split(":"))
    except ValueError:
        log.warning("vector index meta %r is unreadable: searching exactly", value)
        return None
    return generation, lists, rows
