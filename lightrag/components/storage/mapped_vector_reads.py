"""Reads by id of :class:`~lightrag.components.storage.mapped_vector.MappedVectorStorage`:
records, vectors (one by one or as one matrix), ids, every live row.

A mixin of the store (like ``GraphDisplayReads`` of the SQL graph): it reads the store's own
``vectors`` rows and mapped file, and inside a write transaction the transaction's own view
(its pending vectors, dropped ids and the records it read once: ``TransactionRecords``).
Outside one, the file row of each id comes from the store's ``RowCache`` while the row map is
unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.storage.base import stack_by_id


def _parse_file_meta(value: Optional[str]) -> Optional[Tuple[int, int]]:
    """``(generation, dim)`` of a ``vector_file`` meta value (None: no file)."""
    if not value:
        return None
    generation, dim = value.split(":")
    return int(generation), int(dim)


class MappedVectorReads:
    """Reads by id (see the module docstring); the store provides ``db``, ``namespace``, the
    mapped file (``_matrix``), the row cache and the write transaction's state."""

    db: Any
    namespace: str
    embedding_dim: Optional[int]
    _pending: Dict[str, np.ndarray]  # this transaction's vectors by id
    _dropped: set  # ids this transaction deleted
    _records: Any  # TransactionRecords
    _row_cache: Any  # RowCache
    _meta_key: str
    _moves_key: str
    _matrix: Any

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        return self.get_by_ids([id])[0]

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        ids = list(ids)
        if self.db.in_transaction:  # the writer's view, read once per transaction
            stored = self._records.stored(ids)
            return [{"id": i, **json.loads(stored[i][1])} if i in stored else None for i in ids]
        found: Dict[str, Dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            for key, meta in self.db.read(
                    f"SELECT id, meta FROM vectors WHERE ns = ? AND id IN ({','.join('?' * len(part))})",
                    (self.namespace, *part)):
                found[key] = {"id": key, **json.loads(meta)}
        return [found.get(i) for i in ids]

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        """Vectors by id, read from the mapped file. Outside a write transaction the rows of
        ids asked before come from :class:`RowCache` while the row map is unchanged; the
        others are one indexed look-up per 500 ids."""
        pending, keys, vectors = self._read_vectors(ids)
        pending.update(zip(keys, vectors))
        return pending

    def get_vector_matrix(self, ids: Sequence[str]) -> Tuple[List[str], np.ndarray]:
        """:meth:`BaseVectorStorage.get_vector_matrix`: the file's rows of the ids in one
        gather, no dict of row views to stack again."""
        pending, keys, vectors = self._read_vectors(ids)
        if not pending:
            return list(keys), vectors
        pending.update(zip(keys, vectors))  # a writer's own vectors among them
        return stack_by_id(ids, pending)

    def _read_vectors(self, ids: Sequence[str]) -> Tuple[Dict[str, np.ndarray], Sequence[str], np.ndarray]:
        """``(this transaction's own vectors by id, the other found ids, their rows of the
        file)``; ids neither pending nor stored are left out."""
        ids = list(dict.fromkeys(ids))
        out: Dict[str, np.ndarray] = {}
        nothing = np.zeros((0, 0), dtype=np.float32)
        if self.db.in_transaction:  # this transaction's own writes first
            out = {i: self._pending[i].copy() for i in ids if i in self._pending}
            ids = [i for i in ids if i not in out and i not in self._dropped]
        if not ids:
            return out, (), nothing
        if self.db.in_transaction:  # its own view of the rows: not cached
            matrix = self._matrix()
            stored = self._lookup_rows(ids) if matrix is not None else {}
            found = [(i, stored[i]) for i in ids if i in stored]  # in the ids' order
        else:
            state = dict(self.db.read("SELECT name, value FROM meta WHERE name IN (?, ?)",
                                      (self._meta_key, self._moves_key)))
            file_meta = state.get(self._meta_key)
            matrix = self._matrix(_parse_file_meta(file_meta))
            found = ([] if matrix is None else
                     self._row_cache.rows((file_meta, state.get(self._moves_key)), ids, self._lookup_rows))
        if matrix is None or not found:
            return out, (), nothing
        keys, row_numbers = zip(*found)
        rows = np.array(row_numbers, dtype=np.int64)
        if rows.max() >= matrix.shape[0]:  # appended by a commit after this mapping: map again
            matrix = self._matrix()
        return out, keys, matrix[rows]  # type: ignore[index]

    def _lookup_rows(self, ids: Sequence[str]) -> Dict[str, int]:
        # (no "row IS NOT NULL" in the SQL: SQLite then scans the namespace by the row index)
        found = self.db.query_in("SELECT id, row FROM vectors WHERE ns = ? AND id IN ({in_})",
                                 ids, (self.namespace,))
        return {key: row for key, row in found if row is not None}

    def keys(self) -> List[str]:
        return [r[0] for r in self.db.read("SELECT id FROM vectors WHERE ns = ?", (self.namespace,))]

    @property
    def _ids(self) -> List[str]:
        """Every stored id (read from the database: for checks and exports, not for queries)."""
        return self.keys()

    def __len__(self) -> int:
        return int(self.db.read("SELECT COUNT(*) FROM vectors WHERE ns = ?", (self.namespace,))[0][0])

    def rows(self) -> Tuple[List[str], np.ndarray]:
        """``(ids, matrix)`` of every live vector (reads them all: for maintenance, not queries)."""
        rows = self.db.read("SELECT id, row FROM vectors WHERE ns = ? AND row IS NOT NULL ORDER BY row",
                            (self.namespace,))
        matrix = self._matrix()
        ids: List[str] = []
        parts: List[np.ndarray] = []
        if rows and matrix is not None:
            changed = set(self._pending) | self._dropped if self.db.in_transaction else set()
            rows = [r for r in rows if r[0] not in changed]
            ids = [r[0] for r in rows]
            parts.append(np.asarray(matrix[[r[1] for r in rows]]))
        if self.db.in_transaction and self._pending:  # this transaction's own writes
            ids += list(self._pending)
            parts.append(np.stack(list(self._pending.values())))
        if not ids:
            return [], np.zeros((0, self.embedding_dim or 0), dtype=np.float32)
        return ids, np.concatenate(parts) if len(parts) > 1 else parts[0]
