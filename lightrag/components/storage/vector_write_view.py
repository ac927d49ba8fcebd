"""What one write transaction of a :class:`~lightrag.components.storage.mapped_vector.MappedVectorStorage`
knows of its stored records: each id's file row and metadata, read once and kept as the
transaction writes them.

A vector write asks for the same ids three times: the samples a record keeps
(:func:`~lightrag.components.graph_rag.index.vectors.keep_samples`), the check for an unchanged
record, and the commit's row look-up. At 1M chunks each is a B-tree descent to a random leaf
per id (76 ms per 100 documents read three times, against 26 ms at 10k). No other writer can
change the rows while the transaction holds the writer lock, so what it read stays true until
it commits, rolls back or compacts the file (then :meth:`TransactionRecords.forget`).

Example:
    >>> import numpy as np
    >>> same_vectors(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 1e-7], [1.0, 0.0]]), 1e-6).tolist()
    [True, False]
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np

#: a record as the transaction sees it: its file row (None before its commit appends it) and
#: its metadata text; None: no such id
Record = Optional[Tuple[Optional[int], str]]


def same_vectors(stored: np.ndarray, fresh: np.ndarray, atol: float) -> np.ndarray:
    """Per row, whether ``fresh`` is ``stored`` within ``atol`` (one array operation for all
    rows; ``np.allclose`` per row cost ~15 us each, ~2,000 rows per 100 documents)."""
    return np.abs(stored - fresh).max(axis=1, initial=0.0) <= atol


def kept_rows(matrix: Optional[np.ndarray], rows: Dict[str, int], fresh: Mapping[str, np.ndarray],
              atol: float) -> Tuple[List[str], Dict[str, bytes]]:
    """The ids among ``rows`` (``id -> file row`` of ``matrix``) whose row holds their ``fresh``
    vector (within ``atol``: :func:`same_vectors`), and of those the ones whose bytes differ in
    the last bits: ``id -> the row's bytes`` (what their record keeps)."""
    in_file = {key: row for key, row in rows.items() if matrix is not None and row < matrix.shape[0]}
    if not in_file:
        return [], {}
    stored = matrix[np.array(list(in_file.values()), dtype=np.int64)]  # type: ignore[index]
    new = np.stack([fresh[key] for key in in_file])
    same = same_vectors(stored, new, atol)
    kept = [key for key, keep in zip(in_file, same) if keep]
    nudged = {key: old.tobytes() for key, old, vector, keep in zip(in_file, stored, new, same)
              if keep and not np.array_equal(old, vector)}
    return kept, nudged


class TransactionRecords:
    """The stored records of the ``vectors`` rows of ``namespace`` in ``db`` that one write
    transaction read or wrote, by id."""

    def __init__(self, db: Any, namespace: str) -> None:
        self.db, self.namespace = db, namespace
        self._seen: Dict[str, Record] = {}

    def stored(self, ids: Sequence[str]) -> Dict[str, Tuple[Optional[int], str]]:
        """``id -> (file row, meta)`` of the stored records among ``ids``: inside the write
        transaction each id is read once; outside it, read."""
        wanted = list(dict.fromkeys(ids))
        writing = self.db.in_transaction
        seen = self._seen if writing else {}
        fresh = [i for i in wanted if i not in seen]
        found = {key: (row, meta) for key, row, meta in self.db.query_in(
            "SELECT id, row, meta FROM vectors WHERE ns = ? AND id IN ({in_})",
            fresh, (self.namespace,))} if fresh else {}
        if not writing:
            return found
        seen.update({i: found.get(i) for i in fresh})
        return {i: seen[i] for i in wanted if seen[i] is not None}  # type: ignore[misc]

    def unchanged(self, matrix: Optional[np.ndarray], metas: Dict[str, str], vectors: np.ndarray,
                  written: Set[str], atol: float) -> Set[str]:
        """The ids of ``metas`` (``id -> record``, in the order of ``vectors``' rows) whose stored
        record is that one and whose file row of ``matrix`` holds their vector (within
        ``atol``), and that the transaction has not ``written``. Re-embedding the entities a
        document cites again mostly gives their stored records; rewriting them was a quarter of
        the pages an insert wrote at 1M chunks."""
        if matrix is None:
            return set()
        position = {key: n for n, key in enumerate(metas) if key not in written}
        same_meta = {key: row for key, (row, meta) in self.stored(list(position)).items()
                     if row is not None and meta == metas[key]}
        return set(kept_rows(matrix, same_meta, {key: vectors[position[key]] for key in same_meta}, atol)[0])

    def wrote(self, key: str, row: Optional[int], meta: str) -> None:
        """The transaction upserted ``key``: its record is ``meta``, its file row still ``row``
        (an upsert does not move it; the commit does)."""
        self._seen[key] = (row, meta)

    def deleted(self, key: str) -> None:
        self._seen[key] = None

    def forget(self) -> None:
        """At commit, rollback, or a compaction that renumbers the rows."""
        self._seen = {}
