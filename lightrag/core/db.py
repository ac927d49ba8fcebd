"""``LocalDB``: an in-memory list of items plus the transformed versions of them.

Items (documents, dialog turns, ...) are kept in order; transformers (a ``TextSplitter``, a
``ToEmbeddings``, any Component or function that maps a list of items to a list) are registered
under a key, and their outputs are kept per key so a retriever can index them. Adding items
later runs the registered transformers on the new items only. The whole database, transformers
included, can be saved to and loaded from a pickle file.

Example:
    >>> from lightrag.core.component import Component
    >>> class Upper(Component):
    ...     def call(self, items):
    ...         return [s.upper() for s in items]
    >>> db = LocalDB(name="notes", items=["a", "b"])
    >>> key = db.transform(Upper(), key="upper")
    >>> db.extend(["c"])
    >>> db.get_transformed_data("upper")
    ['A', 'B', 'C']
    >>> db
    LocalDB(
      name='notes', length=3, transformed={'upper': 3}
      (upper): Upper()
    )
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from lightrag.core.component import Component
from lightrag.utils.file_io import load_pickle, save_pickle

log = logging.getLogger(__name__)

__all__ = ["LocalDB", "TransformerKeyError"]

T = TypeVar("T")  # an item
U = TypeVar("U")  # a transformed item (0.1's name)

TransformerType = Component | Callable[[list[Any]], Sequence[Any]]
MapFn = Callable[[Any], Any]


class TransformerKeyError(KeyError, ValueError):
    """No transformer or transformed data under a key: a ``ValueError``, and the ``KeyError``
    that 0.1's dict lookup raised."""

    def __str__(self) -> str:  # the message, not KeyError's repr of it
        return str(self.args[0]) if self.args else ""


class LocalDB(Component, Generic[T]):
    """An in-memory database of items and their transformations.

    Args:
        name: an optional name, shown when printed.
        items: the initial items (the list is copied).
        transformed_items: already transformed data, by key (0.1's field).
        transformer_setups: transformers to register, by key (not run until ``load``).
        mapper_setups: per-item functions of those transformers, by key.

    Attributes:
        items: the items, in order.
        transformed_items: transformer key -> the transformer's output for all items.
        transformer_setups: transformer key -> the transformer (registered as a sub-component
            when it is a Component, so ``print(db)`` shows it).
        mapper_setups: transformer key -> the function applied to each item before the
            transformer sees it (e.g. ``lambda turn: turn.text``).

    Transformers take a list and return a list. ``add``/``delete`` keep ``transformed_items``
    aligned by index, which assumes one output per item; a transformer that changes the count
    (such as a text splitter) works with ``transform``, ``load`` and ``extend``.

    Example:
        >>> db = LocalDB(items=[1, 2, 3])
        >>> key = db.transform(lambda xs: [x * 10 for x in xs], key="x10")
        >>> db.add(4)
        >>> db.delete(0)
        1
        >>> db.items, db.get_transformed_data("x10")
        ([2, 3, 4], [20, 30, 40])
        >>> db.fetch_items(lambda x: x > 2)
        [3, 4]
    """

    def __init__(
        self,
        name: str | None = None,
        items: Sequence[T] | None = None,
        transformed_items: dict[str, list[Any]] | None = None,
        transformer_setups: dict[str, TransformerType] | None = None,
        mapper_setups: dict[str, MapFn] | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.items: list[T] = list(items or [])
        self.transformed_items: dict[str, list[Any]] = {}
        self.transformer_setups: dict[str, TransformerType] = {}
        self.mapper_setups: dict[str, MapFn] = {}
        self._transformer_children: dict[str, str] = {}
        # lightrag 0.1's dataclass fields: registered transformers (not re-run) and their data
        for key, transformer in (transformer_setups or {}).items():
            self.register_transformer(transformer, key, (mapper_setups or {}).get(key))
        unknown = set(mapper_setups or {}) - set(self.transformer_setups)
        if unknown:
            raise ValueError(f"mapper_setups keys {sorted(unknown)} have no transformer")
        self.transformed_items.update({k: list(v) for k, v in (transformed_items or {}).items()})

    # ----------------------------------------------------------------- queries
    @property
    def length(self) -> int:
        """The number of items."""
        return len(self.items)

    def get_transformer_keys(self) -> list[str]:
        """Keys of the transformed data sets."""
        return list(self.transformed_items)

    def get_transformed_data(
        self, key: str, filter_fn: Callable[[Any], bool] | None = None
    ) -> list[Any]:
        """The transformed items under ``key``, optionally filtered.

        Raises:
            TransformerKeyError: (a ``ValueError`` and ``KeyError``) when nothing was
                transformed under ``key``.
        """
        data = self._transformed(key)
        return data if filter_fn is None else [x for x in data if filter_fn(x)]

    def fetch_items(self, condition: Callable[[T], bool]) -> list[T]:
        """The items for which ``condition(item)`` is true."""
        return [item for item in self.items if condition(item)]

    def fetch_transformed_items(self, key: str, condition: Callable[[Any], bool]) -> list[Any]:
        """The transformed items under ``key`` for which ``condition`` is true."""
        return [x for x in self._transformed(key) if condition(x)]

    def _transformed(self, key: str) -> list[Any]:
        if key not in self.transformed_items:
            raise TransformerKeyError(
                f"No transformed data under {key!r}; keys: {self.get_transformer_keys()}"
            )
        return self.transformed_items[key]

    # ------------------------------------------------------------ transformers
    def _default_key(self, transformer: TransformerType) -> str:
        base = getattr(transformer, "__name__", None) or type(transformer).__name__
        key, n = base, 1
        while key in self.transformer_setups:
            key, n = f"{base}_{n}", n + 1
        return key

    def _child_name(self, key: str) -> str:
        child = key.replace(".", "_") or "transformer"
        while hasattr(self, child) and child not in self._components:
            child = f"transformer_{child}"
        return child

    def _unregister_transformer(self, key: str) -> None:
        self.transformer_setups.pop(key, None)
        self.mapper_setups.pop(key, None)
        child = self._transformer_children.pop(key, None)
        if child is not None:
            delattr(self, child)

    def register_transformer(
        self, transformer: TransformerType, key: str | None = None, map_fn: MapFn | None = None
    ) -> str:
        """Register ``transformer`` (without running it) under ``key``; returns the key.

        The default key is the transformer's class (or function) name, made unique.

        Raises:
            ValueError: when ``key`` is already registered.
            TypeError: when ``transformer`` is not callable.
        """
        if not callable(transformer):
            raise TypeError(f"A transformer must be callable, got {type(transformer).__name__}")
        key = key or self._default_key(transformer)
        if key in self.transformer_setups:
            raise ValueError(f"Transformer {key!r} is already registered")
        self.transformer_setups[key] = transformer
        if map_fn is not None:
            self.mapper_setups[key] = map_fn
        if isinstance(transformer, Component):
            child = self._child_name(key)
            self.register_component(child, transformer)
            self._transformer_children[key] = child
        return key

    def _apply(self, key: str, items: Sequence[T]) -> list[Any]:
        map_fn = self.mapper_setups.get(key)
        inputs = [map_fn(item) for item in items] if map_fn is not None else list(items)
        output = self.transformer_setups[key](inputs)
        return output if isinstance(output, list) else list(output)

    def transform(
        self,
        transformer: TransformerType | None = None,
        key: str | None = None,
        map_fn: MapFn | None = None,
    ) -> str:
        """Run a transformer on all items and store its output; returns the key.

        With ``transformer``, it is registered first (replacing whatever was under ``key``).
        Without one, the transformer already registered under ``key`` runs again. ``map_fn``
        (or the one registered with the key) is applied to each item first.

        Raises:
            ValueError: when neither a transformer nor a key is given;
                :class:`TransformerKeyError` (also a ``KeyError``, as in 0.1) for an unknown key.
        """
        if transformer is not None:
            if key is not None and key in self.transformer_setups:
                previous_map_fn = self.mapper_setups.get(key)
                self._unregister_transformer(key)
                map_fn = map_fn or previous_map_fn
            key = self.register_transformer(transformer, key, map_fn)
        elif key is None:
            raise ValueError(f"Give a transformer or a registered key; got key={key!r}")
        elif key not in self.transformer_setups:
            raise TransformerKeyError(f"Give a transformer or a registered key; got key={key!r}")
        elif map_fn is not None:
            self.mapper_setups[key] = map_fn
        self.transformed_items[key] = self._apply(key, self.items)
        log.debug("LocalDB %s: transformed %d items under %r", self.name, self.length, key)
        return key

    # ------------------------------------------------------------------ items
    def load(self, items: Sequence[T]) -> None:
        """Replace all items, and re-run every registered transformer on them."""
        self.items = list(items)
        self.transformed_items = {}
        for key in self.transformer_setups:
            self.transformed_items[key] = self._apply(key, self.items)

    def extend(self, items: Sequence[T], apply_transformer: bool = True) -> None:
        """Append ``items`` and, by default, append their transformed versions too."""
        new_items = list(items)
        self.items.extend(new_items)
        if apply_transformer:
            for key in self.transformer_setups:
                self.transformed_items.setdefault(key, []).extend(self._apply(key, new_items))

    def add(self, item: T, index: int | None = None, apply_transformer: bool = True) -> None:
        """Insert ``item`` at ``index`` (append when None), and its transformed version."""
        if index is None:
            self.items.append(item)
        else:
            self.items.insert(index, item)
        if apply_transformer:
            for key in self.transformer_setups:
                target = self.transformed_items.setdefault(key, [])
                output = self._apply(key, [item])
                if index is None:
                    target.extend(output)
                else:
                    target[index:index] = output

    def delete(self, index: int | None = None, remove_transformed: bool = True) -> T:
        """Remove the item at ``index`` (the last one when None) and return it.

        With ``remove_transformed`` the transformed item at the same index goes too.

        Raises:
            IndexError: when there is no item at ``index``.
        """
        if not self.items:
            raise IndexError("delete from an empty LocalDB")
        index = len(self.items) - 1 if index is None else index
        item = self.items.pop(index)
        if remove_transformed:
            for key, data in self.transformed_items.items():
                if -len(data) <= index < len(data):
                    data.pop(index)
                else:
                    log.warning(
                        "LocalDB %s: no transformed item %d under %r", self.name, index, key
                    )
        return item

    def reset(self) -> None:
        """Remove all items, transformed data and transformers."""
        for key in list(self.transformer_setups):
            self._unregister_transformer(key)
        self.items = []
        self.transformed_items = {}
        self.transformer_setups = {}
        self.mapper_setups = {}

    # ------------------------------------------------------------ persistence
    def save_state(self, filepath: str | Path) -> None:
        """Pickle the whole database (items, transformed data, transformers) atomically.

        Raises:
            ValueError: when something cannot be pickled (for example a lambda ``map_fn``:
                use a module-level function instead).
        """
        try:
            save_pickle(self, filepath)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            raise ValueError(f"LocalDB {self.name!r} cannot be pickled: {e}") from e

    @classmethod
    def load_state(cls, filepath: str | Path) -> LocalDB:
        """Load a database saved by :meth:`save_state`. Only load files you wrote yourself.

        Raises:
            TypeError: when the file holds something other than a LocalDB.
        """
        db = load_pickle(filepath, missing_ok=False)
        if not isinstance(db, cls):
            raise TypeError(f"{filepath} holds a {type(db).__name__}, not a {cls.__name__}")
        return db

    def _extra_repr(self) -> str:
        transformed = {key: len(data) for key, data in self.transformed_items.items()}
        return f"name={self.name!r}, length={self.length}, transformed={transformed}"
