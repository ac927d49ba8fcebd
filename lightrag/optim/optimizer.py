"""The optimizer protocol the :class:`~lightrag.optim.trainer.Trainer` drives.

An optimizer owns some Parameters. Each training step it looks at how the task did on a batch of
training items (:class:`Sample` s) and *proposes* new values (``Parameter.propose_data``),
returning a :class:`Proposal` that says what changed and why. The trainer validates the proposal
and calls :meth:`Optimizer.step` (keep it) or :meth:`Optimizer.revert` (restore the old values).

Example:
    >>> from lightrag.core.parameter import Parameter
    >>> class Shout(Optimizer):
    ...     def propose(self, samples):
    ...         name, p = self.params[0]
    ...         return self.propose_value(name, p, p.data.upper(), reason="louder")
    >>> p = Parameter(data="be brief", name="instruction")
    >>> opt = Shout([p])
    >>> opt.propose([]).changes[0].new
    'BE BRIEF'
    >>> opt.revert(); p.data
    'be brief'
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple, Union

from lightrag.core.component import Component
from lightrag.core.parameter import Parameter, ParameterType
from lightrag.optim.evaluation import ItemResult

log = logging.getLogger(__name__)

ParamsArg = Union[Component, Parameter, Sequence[Union[Parameter, Tuple[str, Parameter]]]]


class TrainerLike(Protocol):
    """What an optimizer may use of the :class:`~lightrag.optim.trainer.Trainer` it is bound to
    (named structurally, so this module does not import the trainer, which imports it)."""

    task: Component
    train_set: Sequence[Dict[str, Any]]

    def evaluate(self, component: Component, items: Sequence[Dict[str, Any]]) -> List[ItemResult]: ...


@dataclass
class Sample:
    """A training item, its index in the training set, and how the task did on it."""

    index: int
    item: Dict[str, Any]
    result: ItemResult


@dataclass
class ParamChange:
    """One Parameter's value before and after a proposal."""

    name: str
    old: Any
    new: Any


@dataclass
class Proposal:
    """What a proposal changed and the optimizer's reason for it."""

    changes: List[ParamChange]
    reason: str = ""
    details: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def named_params(params: ParamsArg, param_type: Optional[ParameterType] = None
                 ) -> List[Tuple[str, Parameter]]:
    """``(name, Parameter)`` pairs with ``requires_opt`` (and ``param_type`` when given).

    A Component gives its dotted names; a bare Parameter is named by its ``name``.
    """
    if isinstance(params, Component):
        pairs = list(params.named_parameters())
    elif isinstance(params, Parameter):
        pairs = [(params.name or "param", params)]
    else:
        pairs = [p if isinstance(p, tuple) else (p.name or f"param_{i}", p)
                 for i, p in enumerate(params)]
    return [(n, p) for n, p in pairs
            if p.requires_opt and (param_type is None or p.param_type == param_type)]


class Optimizer:
    """Base class: holds named Parameters and implements step / revert / history.

    Args:
        params: a Component (its trainable Parameters), a Parameter, or a list of Parameters;
            None for a subclass that manages its values itself (lightrag 0.1's optimizers, whose
            base class took no arguments).

    The class attribute ``param_type`` keeps only Parameters of that type.
    """

    param_type: Optional[ParameterType] = None

    def __init__(self, params: Optional[ParamsArg] = None) -> None:
        self.params = named_params(params, self.param_type) if params is not None else []
        if params is not None and not self.params:
            kind = f" of type {self.param_type.value}" if self.param_type else ""
            raise ValueError(f"{type(self).__name__}: no trainable Parameters{kind} found")
        self.history: List[Dict[str, Any]] = []
        self.trainer: Optional[TrainerLike] = None

    def bind(self, trainer: TrainerLike) -> None:
        """Called by the trainer before training: gives access to its data and evaluation."""
        self.trainer = trainer

    def propose(self, samples: List[Sample]) -> Optional[Proposal]:
        """Propose new values from a batch's outcomes; None when there is nothing to propose."""
        raise NotImplementedError

    def propose_value(self, name: str, param: Parameter, value: Any, reason: str = "",
                      **details: Any) -> Proposal:
        """Helper: ``param.propose_data(value)`` and the matching Proposal."""
        old = param.data
        param.propose_data(value)
        return Proposal([ParamChange(name, old, value)], reason, dict(details))

    def step(self) -> None:
        """Keep the pending proposal."""
        for _, param in self.params:
            if param.proposing:
                param.step_data()

    def revert(self) -> None:
        """Drop the pending proposal and restore the previous values."""
        for _, param in self.params:
            if param.proposing:
                param.revert_data()

    def record(self, proposal: Proposal, score: float, accepted: bool) -> None:
        """Remember a validated proposal (optimizers may use it to avoid repeating themselves)."""
        self.history.append({"proposal": proposal, "score": score, "accepted": accepted})

    def state_dict(self) -> Dict[str, Any]:
        return {"type": type(self).__name__, "params": {n: p.data for n, p in self.params},
                "proposals": len(self.history)}

    def load_state(self, state: Dict[str, Any]) -> None:
        """Continue from a checkpoint's :meth:`state_dict` (``Trainer.fit(resume=True)``): an
        optimizer that draws or takes turns restores where it was, so a resumed run proposes
        what the uninterrupted one would. The Parameters' values come from the task."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(params={[n for n, _ in self.params]})"
