"""``LazyList``: a read-only sequence computed on first use.

Used where a value is cheap to hand out but costly to compute and often not needed: the
synonym pairs of a store are read (every pair, two look-ups each) only when a query builds the
whole entity–passage graph, not at every query's view of the stores.

Example:
    >>> calls = []
    >>> pairs = LazyList(lambda: calls.append(1) or [("a", "b", 0.9)])
    >>> len(calls)
    0
    >>> len(pairs), list(pairs), len(calls)
    (1, [('a', 'b', 0.9)], 1)
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, Iterator, List, Optional, Sequence, TypeVar, Union, overload

T = TypeVar("T")


class LazyList(Sequence[T], Generic[T]):
    """The list ``load()`` returns, loaded once (thread-safe) when first read."""

    def __init__(self, load: Callable[[], List[T]]) -> None:
        self._load = load
        self._items: Optional[List[T]] = None
        self._lock = threading.Lock()

    def _get(self) -> List[T]:
        if self._items is None:
            with self._lock:
                if self._items is None:
                    self._items = list(self._load())
        return self._items

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> List[T]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[T, List[T]]:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[T]:
        return iter(self._get())

    def __repr__(self) -> str:
        return f"LazyList({'not loaded' if self._items is None else self._items!r})"
