"""``RowCache``: which file row holds each vector id, remembered between reads.

A ``mix`` query compares the query with every chunk its entities and relations cite: ~4,600
chunk ids at 1M chunks, each an indexed look-up in ``vectors`` (~3 us, ~14 ms a query).
Hub entities are cited by most questions, so the same ids come back query after query (78 % of
the look-ups of 100 MuSiQue-like questions repeated an earlier one). This cache keeps the answers
for as long as the store's row map is unchanged, which a reader checks in the metadata it reads
anyway: the token is the file generation (a compaction renumbers rows) and a counter the writer
bumps in the same commit that moves or removes an existing id (a replaced vector gets a new
row, a deleted one none). New ids appended meanwhile leave the token as it is: they are simply
not cached yet (absent ids are never remembered).

Each token has its own map, so a look-up made under an older token can never land in the map
of a newer one; the map is dropped whole when it outgrows ``capacity`` (cheaper than an LRU on
the hot path, and the hub rows come back within a query or two).

Example:
    >>> cache = RowCache(capacity=10)
    >>> cache.rows(("g1", 0), ["a", "b"], lambda ids: {"a": 3})
    [('a', 3)]
    >>> cache.rows(("g1", 0), ["a"], lambda ids: {})  # remembered: no look-up
    [('a', 3)]
    >>> cache.rows(("g1", 1), ["a"], lambda ids: {"a": 7})  # the row map changed
    [('a', 7)]
"""

from __future__ import annotations

import threading
from typing import Callable, Dict, Hashable, List, Mapping, Sequence, Tuple

DEFAULT_CAPACITY = 250_000  # ids (~40 MB of keys at most)


class _Rows:
    __slots__ = ("token", "rows")

    def __init__(self, token: Hashable) -> None:
        self.token = token
        self.rows: Dict[str, int] = {}


class RowCache:
    """``id -> file row`` answers kept while the row-map ``token`` stays the same.

    Args:
        capacity: ids kept at most; past it the map starts over.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._current = _Rows(None)
        self._lock = threading.Lock()

    def rows(self, token: Hashable, ids: Sequence[str],
             lookup: Callable[[List[str]], Mapping[str, int]]) -> List[Tuple[str, int]]:
        """``(id, row)`` of the ``ids`` stored (in their order), asking ``lookup`` only for the
        ones not remembered under ``token``."""
        with self._lock:
            current = self._current
            if current.token != token:
                current = self._current = _Rows(token)
        known = current.rows
        missing = [i for i in ids if i not in known]
        found = lookup(missing) if missing else {}
        answer = [(i, known[i] if i in known else found[i]) for i in ids if i in known or i in found]
        if found:
            if len(known) + len(found) > self.capacity:
                with self._lock:
                    if self._current is current:
                        self._current = _Rows(token)
                    known = self._current.rows if self._current.token == token else {}
            known.update(found)
        return answer

    def clear(self) -> None:
        with self._lock:
            self._current = _Rows(None)
