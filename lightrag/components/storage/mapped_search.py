"""``RowSearch``: the best rows of a memory-mapped vector matrix, as hits with their records.

The search half of :class:`~lightrag.components.storage.mapped_vector.MappedVectorStorage`:
given the mapped rows (and, above the ANN size, the generation's inverted-file index), score the
queries against them block by block or list by list, keep the best rows at or above the cosine
threshold, and read the ids and metadata of those rows by key. Rows that no id's ``row``
points to (replaced or deleted vectors, a crashed writer's appends) have no record: they
are skipped, and the search reads further down (or probes more lists) only when they cost hits.

Example:
    >>> import numpy as np
    >>> records = {0: ("a", {"content": "x"}), 1: ("b", {"content": "y"})}
    >>> search = RowSearch(lambda rows: {r: records[r] for r in rows if r in records}, 0.2)
    >>> [h["id"] for h in search.exact(np.eye(2, dtype=np.float32), np.array([[0.1, 1.0]]), 1)[0]]
    ['b']
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.storage import vector_ivf
from lightrag.components.storage.vector_ivf import IVFIndex, TailLists

BLOCK_ROWS = 65_536  # rows multiplied at a time (bounded temporary memory)

#: ``file rows -> {row: (id, metadata)}`` for the rows that are live
RecordsAt = Callable[[Sequence[int]], Dict[int, Tuple[str, Dict[str, Any]]]]
Hit = Dict[str, Any]


def block_scores(matrix: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``queries @ matrix.T`` (queries × rows), computed block by block."""
    out = np.empty((queries.shape[0], matrix.shape[0]), dtype=np.float32)
    for start in range(0, matrix.shape[0], BLOCK_ROWS):
        block = matrix[start:start + BLOCK_ROWS]
        out[:, start:start + block.shape[0]] = queries @ block.T
    return out


class RowSearch:
    """Exact and inverted-file searches over mapped rows (see the module doc).

    Args:
        records_at: reads the records of file rows (the live ones only).
        cosine_threshold: the lowest score a hit may have.
        default_nprobe: lists probed per query when a search does not say (None: the index's
            :func:`~lightrag.components.storage.vector_ivf.default_nprobe`).
    """

    def __init__(self, records_at: RecordsAt, cosine_threshold: float,
                 default_nprobe: Optional[int] = None) -> None:
        self.records_at = records_at
        self.cosine_threshold = cosine_threshold
        self.default_nprobe = default_nprobe

    # ------------------------------------------------------------------ exact
    def exact(self, matrix: np.ndarray, queries: np.ndarray, top_k: int) -> List[List[Hit]]:
        """The ``top_k`` hits of each query among every row of ``matrix``."""
        return self._hits_of_rows(block_scores(matrix, queries), top_k)

    def _best(self, scores: np.ndarray, want: int) -> np.ndarray:
        """Positions of the ``want`` best ``scores`` at or above the threshold, best first
        (those at or above it found first: a near-duplicate search's high threshold leaves a
        few to rank, not every row)."""
        top = np.flatnonzero(scores >= self.cosine_threshold)
        if top.shape[0] > want:
            top = top[np.argpartition(-scores[top], want - 1)[:want]]
        return top[np.argsort(-scores[top], kind="stable")]

    def _hits(self, scores: np.ndarray, top_k: int, rows: Optional[np.ndarray] = None) -> List[Hit]:
        """The best live rows as hits (garbage rows skipped): ``scores[i]`` is the score of file
        row ``rows[i]`` (of row ``i`` when ``rows`` is None)."""
        n = scores.shape[0]
        if n == 0:
            return []
        want = min(n, top_k + 8)  # garbage rows are few: read on only when they cost hits
        while True:
            top = self._best(scores, want)
            at = (top if rows is None else rows[top]).tolist()
            found = self.records_at(at)
            hits = [{"id": found[r][0], "score": float(scores[t]), **found[r][1]}
                    for t, r in zip(top.tolist(), at) if r in found]
            if len(hits) >= top_k or want >= n or len(top) < want:
                return hits[:top_k]
            want = min(n, want * 4)

    def _hits_of_rows(self, scores: np.ndarray, top_k: int) -> List[List[Hit]]:
        """:meth:`_hits` of each row of ``scores`` (queries x file rows), the records of every
        row's ``top_k`` best read together (one look-up per 500 rows, not one per query: a
        batch of 1,200 synonym searches made 1,200); a row whose best include garbage rows is
        redone by :meth:`_hits`, which reads further down."""
        n = scores.shape[1] if scores.ndim == 2 else 0
        if n == 0 or top_k <= 0:
            return [[] for _ in range(scores.shape[0])]
        tops = [self._best(row, min(n, top_k)) for row in scores]
        found = self.records_at(sorted({int(r) for top in tops for r in top.tolist()}))
        out = []
        for row, top in zip(scores, tops):
            if all(r in found for r in top.tolist()):
                out.append([{"id": found[r][0], "score": float(row[r]), **found[r][1]}
                            for r in top.tolist()])
            else:
                out.append(self._hits(row, top_k))
        return out

    # -------------------------------------------------------------- inverted file
    def ann(self, matrix: np.ndarray, found: Tuple[IVFIndex, TailLists], queries: np.ndarray,
            top_k: int, nprobe: Optional[int] = None) -> List[List[Hit]]:
        """The ``top_k`` hits of each query among the rows of its ``nprobe`` best lists."""
        if len(queries) == 1:
            return [self._ann_hits(matrix, found, queries[0], top_k, nprobe)]
        return self._ann_hits_batch(matrix, found, queries, top_k, nprobe)

    def _nprobe(self, index: IVFIndex, nprobe: Optional[int]) -> int:
        return min(nprobe or self.default_nprobe or vector_ivf.default_nprobe(index.lists), index.lists)

    def _ann_hits(self, matrix: np.ndarray, found: Tuple[IVFIndex, TailLists], query: np.ndarray,
                  top_k: int, nprobe: Optional[int] = None,
                  first: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> List[Hit]:
        """Hits among the rows of the best lists; more lists while garbage rows cost hits (or
        the lists hold fewer than ``top_k`` rows), up to every list (an exact search).
        ``first``: the candidates of the first ``nprobe`` lists, already scored."""
        index, tail = found
        nprobe = self._nprobe(index, nprobe)
        while True:
            if first is not None:
                (rows, scores), first = first, None
            else:
                rows, scores = index.candidates(matrix, tail, query,
                                                index.probe(query[None, :], nprobe)[0])
            hits = self._hits(scores, top_k, rows)
            lost = int(np.count_nonzero(scores >= self.cosine_threshold)) > len(hits)
            if len(hits) >= top_k or nprobe >= index.lists or not (lost or len(scores) < top_k):
                return hits
            nprobe = min(index.lists, nprobe * 4)

    def _ann_hits_batch(self, matrix: np.ndarray, found: Tuple[IVFIndex, TailLists],
                        queries: np.ndarray, top_k: int,
                        nprobe: Optional[int] = None) -> List[List[Hit]]:
        """:meth:`_ann_hits` of each query: the first round of all of them together (each
        probed list scored once for all its queries, the best rows' records read together);
        a query whose first round would widen (garbage rows among its best, or too few
        candidates) goes on alone in :meth:`_ann_hits`, from the candidates of its first round
        (scoring them again was most of a query's search on a store whose entity vectors are
        often replaced: the best rows of 2-3 of a query's ~5 keyword searches included
        garbage rows at 1M chunks)."""
        index, tail = found
        probes = self._nprobe(index, nprobe)
        rounds = index.candidates_batch(matrix, tail, queries, index.probe(queries, probes))
        tops = [self._best(scores, min(top_k, len(scores))) if len(scores) else rows
                for rows, scores in rounds]
        records = self.records_at(sorted({int(r) for (rows, _), top in zip(rounds, tops)
                                          for r in rows[top].tolist()}))
        out = []
        for query, (rows, scores), top in zip(queries, rounds, tops):
            at = rows[top].tolist()
            settled = len(at) >= top_k or probes >= index.lists or len(scores) >= top_k
            if settled and all(r in records for r in at):
                out.append([{"id": records[r][0], "score": float(s), **records[r][1]}
                            for r, s in zip(at, scores[top].tolist())])
            else:
                out.append(self._ann_hits(matrix, found, query, top_k, nprobe, first=(rows, scores)))
        return out
