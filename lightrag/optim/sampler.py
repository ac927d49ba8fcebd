"""Samplers of few-shot examples (lightrag 0.1's ``lightrag.optim.sampler``).

A sampler draws examples from a dataset for a few-shot prompt and can swap some of them for
others, which is how :class:`~lightrag.optim.few_shot_optimizer.SamplerFewShot` searches for
better demos. Every drawn example is a :class:`Sample`: its index in the dataset and the item.

* :class:`RandomSampler`: uniform draws.
* :class:`ClassSampler`: class-balanced draws (about ``num_shots / num_classes`` per class), and
  replacements that keep each swapped example's class.

Draws use the ``random`` module's global generator, as in 0.1 (``random.seed`` makes them
repeatable), or a private one when ``seed`` is given.

Example:
    >>> data = [{"text": f"t{i}", "label": i % 2} for i in range(6)]
    >>> sampler = ClassSampler(data, num_classes=2, get_data_key_fun=lambda x: x["label"], seed=0)
    >>> sorted(s.data["label"] for s in sampler(4))
    [0, 0, 1, 1]
    >>> shots = RandomSampler(data, default_num_shots=2, seed=0)()
    >>> len(shots), isinstance(shots[0], Sample)
    (2, True)
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, Hashable, List, Optional, Sequence, TypeVar

T = TypeVar("T")


@dataclass
class Sample(Generic[T]):
    """One drawn example: ``index`` in the dataset and the item itself (``data``)."""

    index: int
    data: T

    def to_dict(self) -> Dict[str, Any]:
        return {"index": self.index, "data": self.data}


def _rng(seed: Optional[int]) -> Any:
    """A private ``random.Random(seed)``, or the ``random`` module itself when ``seed`` is None."""
    return random.Random(seed) if seed is not None else random


class Sampler(Generic[T]):
    """Base class: ``sampler(num_shots)`` calls :meth:`call` and returns a list of Samples."""

    dataset: Optional[List[Sample[T]]] = None

    def set_dataset(self, dataset: Optional[Sequence[T]]) -> None:
        """Use ``dataset`` (each item becomes a Sample with its index)."""
        self.dataset = [Sample(i, x) for i, x in enumerate(dataset)] if dataset is not None else None

    def _data(self) -> List[Sample[T]]:
        if not self.dataset:
            raise ValueError(f"{type(self).__name__} has no dataset: call set_dataset() first")
        return self.dataset

    default_num_shots: Optional[int] = None

    def random_sample(self, shots: int, replace: bool = False) -> List[Sample[T]]:
        raise NotImplementedError(f"{type(self).__name__} must implement random_sample")

    def call(self, num_shots: Optional[int] = None, replace: bool = False) -> List[Sample[T]]:
        """Draw ``num_shots`` (default ``default_num_shots``) examples with :meth:`random_sample`."""
        num_shots = num_shots if num_shots is not None else self.default_num_shots
        if num_shots is None:
            raise ValueError("num_shots is not set (pass it or set default_num_shots)")
        return self.random_sample(num_shots, replace)

    def random_replace(self, shots: int, samples: List[Sample[T]], **kwargs: Any
                       ) -> List[Sample[T]]:
        """``samples`` with ``shots`` of them swapped for other dataset items."""
        raise NotImplementedError(f"{type(self).__name__} must implement random_replace")

    def __call__(self, *args: Any, **kwargs: Any) -> List[Sample[T]]:
        return self.call(*args, **kwargs)


def _check_shots(shots: int, samples: Sequence[Any]) -> None:
    if not 0 <= shots <= len(samples):
        raise ShotCountError(f"cannot replace {shots} of {len(samples)} samples")


class RandomSampler(Sampler[T]):
    """Draw examples uniformly at random.

    Args:
        dataset: the items (settable later with :meth:`set_dataset`).
        default_num_shots: the draw size when ``call`` gets none.
        seed: a private seed (None: the ``random`` module's global generator).
    """

    def __init__(self, dataset: Optional[Sequence[T]] = None,
                 default_num_shots: Optional[int] = None, seed: Optional[int] = None) -> None:
        self.set_dataset(dataset)
        self.default_num_shots = default_num_shots
        self.rng = _rng(seed)

    def random_sample(self, shots: int, replace: bool = False) -> List[Sample[T]]:
        """``shots`` examples; with ``replace`` the same example may come more than once."""
        data = self._data()
        if replace:
            return [self.rng.choice(data) for _ in range(shots)]
        if shots > len(data):
            raise ValueError(f"cannot draw {shots} distinct examples from {len(data)}")
        return self.rng.sample(data, shots)

    def random_replace(self, shots: int, samples: List[Sample[T]], replace: bool = False,
                       **kwargs: Any) -> List[Sample[T]]:
        """Swap ``shots`` random positions of ``samples`` for items not already among them
        (any item with ``replace``); the input list is not changed."""
        _check_shots(shots, samples)
        data = self._data()
        out = list(samples)
        positions = self.rng.sample(range(len(out)), shots)
        if replace:
            for pos in positions:
                out[pos] = self.rng.choice(data)
            return out
        taken = {s.index for s in out}
        candidates = [s for s in data if s.index not in taken]
        if len(candidates) < shots:
            raise ValueError(f"only {len(candidates)} unused examples to replace {shots}")
        for pos, new in zip(positions, self.rng.sample(candidates, shots)):
            out[pos] = new
        return out


class ShotCountError(ValueError, AssertionError):
    """More shots to replace than there are samples (0.1 failed an ``assert``)."""


class ClassCountError(ValueError, IndexError):
    """The dataset has more class labels than ``num_classes`` (0.1 raised IndexError)."""


class ClassSampler(Sampler[T]):
    """Draw class-balanced examples: about ``num_shots / num_classes`` from each class.

    Args:
        dataset: the items.
        num_classes: how many classes the draw is balanced over.
        get_data_key_fun: an item's class label (e.g. ``lambda x: x["label"]``).
        default_num_shots: the draw size when ``call`` gets none.
        seed: a private seed (None: the ``random`` module's global generator).
    """

    def __init__(self, dataset: Sequence[T], num_classes: int,
                 get_data_key_fun: Callable[[T], Hashable],
                 default_num_shots: Optional[int] = None, seed: Optional[int] = None) -> None:
        if get_data_key_fun is None:
            raise ValueError("get_data_key_fun must be provided")
        if num_classes < 1:
            raise ValueError(f"num_classes must be >= 1, got {num_classes}")
        self.set_dataset(dataset)
        self.num_classes = num_classes
        self.get_data_key_fun = get_data_key_fun
        self.default_num_shots = default_num_shots
        self.rng = _rng(seed)
        labels = [(get_data_key_fun(sample.data), sample.index) for sample in self._data()]
        # 0.1 kept one list per class 0..num_classes-1 (empty ones too); other labels key a dict
        int_labels = all(type(label) is int and 0 <= label < num_classes for label, _ in labels)
        self.class_indices: Dict[Hashable, List[int]] = (
            {k: [] for k in range(num_classes)} if int_labels else {}
        )
        for label, index in labels:
            self.class_indices.setdefault(label, []).append(index)
        if len(self.class_indices) > num_classes:
            raise ClassCountError(f"the dataset has {len(self.class_indices)} classes, more "
                                  f"than num_classes={num_classes}")

    @property
    def class_indexces(self) -> Dict[Hashable, List[int]]:
        """lightrag 0.1's name (sic) of :attr:`class_indices`."""
        return self.class_indices

    def _sample_one_class(self, num_samples: int, class_index: Hashable, replace: bool = False
                          ) -> List[Sample[T]]:
        """Up to ``num_samples`` examples of one class (exactly that many with ``replace``)."""
        indices = self.class_indices.get(class_index, [])
        if not indices:
            return []
        if replace:
            chosen = self.rng.choices(indices, k=num_samples)
        else:
            chosen = self.rng.sample(indices, min(num_samples, len(indices)))
        return [self._data()[i] for i in chosen]

    def random_sample(self, num_shots: int, replace: bool = False) -> List[Sample[T]]:
        """``ceil(num_shots / num_classes)`` per class, then trimmed (or topped up from any
        class when some classes are small) to ``num_shots``."""
        per_class = math.ceil(num_shots / self.num_classes)
        samples = [s for label in self.class_indices
                   for s in self._sample_one_class(per_class, label, replace)]
        if len(samples) > num_shots:
            samples = self.rng.sample(samples, num_shots)
        elif len(samples) < num_shots and not replace:
            taken = {s.index for s in samples}
            rest = [s for s in self._data() if s.index not in taken]
            samples += self.rng.sample(rest, min(num_shots - len(samples), len(rest)))
        return samples

    def random_replace(self, shots: int, samples: List[Sample[T]], replace: bool = False,
                       weights_per_class: Optional[Any] = None, **kwargs: Any
                       ) -> List[Sample[T]]:
        """Swap ``shots`` positions of ``samples`` for other examples of the same class.

        ``weights_per_class`` (a list or dict indexed by label) makes the examples of heavily
        weighted classes more likely to be swapped (e.g. the classes the task gets wrong). The
        draws are 0.1's, so a seeded ``random`` gives 0.1's result; a position whose class has no
        unused example left keeps its example (0.1 raised).
        """
        _check_shots(shots, samples)
        out = list(samples)
        key = self.get_data_key_fun
        existing: Dict[Hashable, set] = {}
        for sample in out:
            existing.setdefault(key(sample.data), set()).add(sample.index)
        if weights_per_class is None:
            chosen = self.rng.sample(range(len(out)), shots)
        else:  # 0.1's draw: positions with replacement, weighted by their class
            weights = [float(weights_per_class[key(s.data)]) + 1e-9 for s in out]
            chosen = self.rng.choices(range(len(out)), k=shots, weights=weights)
        by_class: Dict[Hashable, List[int]] = {}
        for pos in chosen:
            by_class.setdefault(key(out[pos].data), []).append(pos)
        for label, positions in by_class.items():
            indices = self.class_indices.get(label, [])
            if replace:
                new = self.rng.choices(indices, k=len(positions)) if indices else []
            else:
                pool = list(set(indices) - existing.get(label, set()))
                new = self.rng.sample(pool, min(len(positions), len(pool)))
            for pos, index in zip(positions, new):
                out[pos] = self._data()[index]
        return out
