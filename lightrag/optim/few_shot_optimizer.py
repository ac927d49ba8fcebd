"""lightrag 0.1's sampler-driven few-shot optimizer (``lightrag.optim.few_shot_optimizer``).

:class:`SamplerFewShot` (importable here as ``BootstrapFewShot``, its 0.1 name) keeps a set of
``num_shots`` demos drawn by a :class:`~lightrag.optim.sampler.Sampler` and writes them into a
Parameter. You drive it by hand: ``init()`` draws the first set, ``propose(shots)`` swaps
``shots`` of them, then, after scoring the task, ``update_parameter()`` keeps the proposal or
``reset_parameter()`` goes back to the current set.

For demos chosen by the :class:`~lightrag.optim.trainer.Trainer` from teacher traces (raw and
bootstrapped shots, validation-gated) use :class:`lightrag.optim.BootstrapFewShot`, from
:mod:`lightrag.optim.few_shot`.

Example:
    >>> from lightrag.core.parameter import Parameter
    >>> from lightrag.optim.sampler import RandomSampler
    >>> demos = Parameter(data=[])
    >>> opt = BootstrapFewShot(demos, RandomSampler([{"q": i} for i in range(10)], seed=0), 3)
    >>> opt.init(); first = [s.index for s in demos.data]
    >>> len(opt.propose(shots=1)), len(set(first) & {s.index for s in demos.data})
    (3, 2)
    >>> opt.reset_parameter(); [s.index for s in demos.data] == first
    True
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from typing import Any, Callable, Dict, List, Optional

from lightrag.core.parameter import Parameter
from lightrag.optim.optimizer import Optimizer
from lightrag.optim.sampler import Sample, Sampler

log = logging.getLogger(__name__)


def _build(cls: Any, data: Dict[str, Any]) -> Any:
    """``cls.from_dict`` of the item's keys that are fields of the dataclass ``cls``."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls.from_dict({k: v for k, v in data.items() if k in names})


class SamplerFewShot(Optimizer):
    """Search few-shot demos by swapping a few sampled examples at a time (lightrag 0.1 API).

    Args:
        parameter: receives the demos (a list of :class:`Sample` s, or what
            ``output_processors`` makes of it, e.g. a prompt string).
        sampler: draws the demos (``RandomSampler`` or ``ClassSampler``).
        num_shots: how many demos.
        llm_augmenter: optional ``(input_obj, output_obj) -> dict`` that rewrites a demo's output
            fields (e.g. adds a rationale); needs the two dataclasses below.
        task_input_dataclass, task_output_dataclass: DataClasses built from each demo's dict.
        output_processors: turns the list of Samples into the Parameter's value.
    """

    def __init__(
        self,
        parameter: Parameter,
        sampler: Sampler,
        num_shots: int,
        llm_augmenter: Optional[Callable[[Any, Any], Dict[str, Any]]] = None,
        task_input_dataclass: Optional[type] = None,
        output_processors: Optional[Callable[[List[Sample]], Any]] = None,
        task_output_dataclass: Optional[type] = None,
    ) -> None:
        super().__init__(None)
        if llm_augmenter is not None and (task_input_dataclass is None
                                          or task_output_dataclass is None):
            raise ValueError("task_input_dataclass and task_output_dataclass are needed with "
                             "an llm_augmenter")
        self.example_parameter = parameter
        self.sampler = sampler
        self.num_shots = num_shots
        self.llm_augmenter = llm_augmenter
        self.task_input_dataclass = task_input_dataclass
        self.task_output_dataclass = task_output_dataclass
        self.output_processors = output_processors
        self.current: List[Sample] = []
        self.proposed: List[Sample] = []

    def _write(self, samples: List[Sample]) -> Any:
        examples: Any = copy.deepcopy(samples)
        if self.output_processors is not None:
            examples = self.output_processors(examples)
        self.example_parameter.update_value(examples)
        return examples

    def augment_samples(self, samples: List[Sample]) -> List[Sample]:
        """Samples whose output fields the ``llm_augmenter`` rewrote (unchanged without one)."""
        if self.llm_augmenter is None:
            return samples
        augmented = []
        for sample in samples:
            data = dict(sample.data)
            input_obj = _build(self.task_input_dataclass, data)
            output_obj = _build(self.task_output_dataclass, data)
            for key, value in (self.llm_augmenter(input_obj, output_obj) or {}).items():
                if hasattr(output_obj, key):
                    log.debug("augmented demo %d field %s", sample.index, key)
                    data[key] = value
            augmented.append(Sample(index=sample.index, data=data))
        return augmented

    def reset(self) -> None:
        """Forget the current and proposed demos."""
        self.current, self.proposed = [], []

    def init(self, weights: Optional[List[float]] = None, shots: Optional[int] = None) -> None:
        """Draw the first ``shots`` (default ``num_shots``) demos and write them."""
        self.current = self.augment_samples(
            self.sampler(shots if shots is not None else self.num_shots, replace=False))
        self.proposed = copy.deepcopy(self.current)
        self._write(self.current)

    def random_replace(self, shots: int, weights_per_class: Optional[Any] = None) -> None:
        """Set ``proposed`` to the current demos with ``shots`` of them swapped.

        Raises:
            AssertionError: :meth:`init` was not called first (as in 0.1).
        """
        if len(self.current) != self.num_shots:
            raise AssertionError("call init() before proposing: there are no current demos")
        extra = {"weights_per_class": weights_per_class} if weights_per_class is not None else {}
        self.proposed = self.sampler.random_replace(shots, copy.deepcopy(self.current), **extra)

    def propose(self, shots: int, weights_per_class: Optional[Any] = None) -> Any:
        """Swap ``shots`` demos, write the proposal into the Parameter and return its value.

        Only the swapped-in demos go through the ``llm_augmenter``.
        """
        if not isinstance(shots, int):
            raise TypeError("SamplerFewShot is driven by hand (propose(shots: int), lightrag 0.1); "
                            "with the Trainer use lightrag.optim.BootstrapFewShot")
        self.random_replace(shots=shots, weights_per_class=weights_per_class)
        kept = {s.index for s in self.current}
        fresh = {s.index: s for s in self.augment_samples(
            [s for s in self.proposed if s.index not in kept])}
        self.proposed = [s if s.index in kept else fresh[s.index] for s in self.proposed]
        return self._write(self.proposed)

    def update_parameter(self) -> None:
        """Keep the proposal: it becomes the current demos."""
        if self.proposed:
            self.current = copy.deepcopy(self.proposed)
        self.proposed = []
        self._write(self.current)

    def reset_parameter(self) -> None:
        """Drop the proposal and write the current demos back."""
        self.proposed = []
        self._write(self.current)

    def state_dict(self) -> Dict[str, Any]:
        return {"type": type(self).__name__, "num_shots": self.num_shots,
                "current": [s.to_dict() for s in self.current]}


BootstrapFewShot = SamplerFewShot

__all__ = ["BootstrapFewShot", "SamplerFewShot"]
