"""``Parameter``: a value inside a Component that an optimizer may change.

A Parameter holds prompt text, an instruction or few-shot demos. Assigning one to a Component
attribute registers it (like ``torch.nn.Parameter``), so ``component.named_parameters()`` finds it,
``state_dict()`` saves its value and ``load_state_dict()`` restores it. Optimizers change a value in
two steps: ``propose_data`` tries a new value, then ``step_data`` keeps it or ``revert_data``
restores the previous one.

Example:
    >>> p = Parameter(data="You are a helpful assistant.", role_desc="system prompt")
    >>> p.propose_data("You are a terse assistant.")
    >>> p.revert_data()
    >>> p.data
    'You are a helpful assistant.'
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict, Generic, Optional, TypeVar

from lightrag.utils.registry import EntityMapping

T = TypeVar("T")


class ParameterType(str, Enum):
    """What a Parameter holds; optimizers pick the parameters of the type they optimize."""

    PROMPT = "prompt"
    DEMOS = "demos"
    INSTANCE = "instance"
    NONE = "none"


class Parameter(Generic[T]):
    """A trainable (``requires_opt=True``) or frozen value registered on a Component.

    Args:
        data: the current value.
        requires_opt: whether optimizers may change it.
        role_desc: what the value is for, read by text optimizers.
        param_type: a :class:`ParameterType`.
        name: an optional human-readable name (the registration name is used when missing).
    """

    def __init__(
        self,
        data: Optional[T] = None,
        requires_opt: bool = True,
        role_desc: str = "",
        param_type: ParameterType | str = ParameterType.PROMPT,
        name: Optional[str] = None,
    ) -> None:
        self.data = data
        self.requires_opt = requires_opt
        self.role_desc = role_desc
        self.param_type = ParameterType(param_type)
        self.name = name
        self.data_type = type(data) if data is not None else None
        self.proposing = False
        self.previous_data: Optional[T] = None

    def update_value(self, data: T) -> None:
        """Set a new value; it must have the type of the current one (None adopts any type)."""
        if self.data_type is not None and data is not None and not isinstance(data, self.data_type):
            raise TypeError(
                f"Parameter{' ' + self.name if self.name else ''} expects {self.data_type.__name__}, "
                f"got {type(data).__name__}"
            )
        self.data = data
        if data is not None:
            self.data_type = type(data)

    def propose_data(self, data: T) -> None:
        """Try ``data``; keep the current value so :meth:`revert_data` can restore it."""
        if self.proposing:
            raise RuntimeError("a proposal is already pending: call step_data() or revert_data()")
        self.previous_data = self.data
        self.data = data
        self.proposing = True

    def step_data(self) -> None:
        """Accept the pending proposal."""
        self.previous_data = None
        self.proposing = False

    def revert_data(self) -> None:
        """Reject the pending proposal and restore the previous value."""
        if self.proposing:
            self.data = self.previous_data
        self.previous_data = None
        self.proposing = False

    def to_dict(self) -> Dict[str, Any]:
        """``{"data", "requires_opt"}`` as in lightrag 0.1, plus ``role_desc``, ``param_type`` and
        ``name`` where they differ from their defaults (0.1's Parameter has none of them)."""
        out: Dict[str, Any] = {"data": self.data, "requires_opt": self.requires_opt}
        if self.role_desc:
            out["role_desc"] = self.role_desc
        if self.param_type != ParameterType.PROMPT:
            out["param_type"] = self.param_type.value
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> Parameter:
        return cls(**data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Parameter) and self.to_dict() == other.to_dict()

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return str(self.data)

    def __repr__(self) -> str:
        return f"Parameter: {self.data}"


EntityMapping.register("Parameter", Parameter)
