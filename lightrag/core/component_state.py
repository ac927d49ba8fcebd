"""The Parameters' state of a component tree: ``state_dict`` (the Parameter objects by dotted
name, as lightrag 0.1 gives them), ``state_values`` (a snapshot of their values) and
``load_state_dict``. A mixin of :class:`~lightrag.core.component.Component`, which provides the
registries (``_parameters``, ``_components``) these walk.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any, Dict, Mapping, Optional, Set

from lightrag.core.parameter import Parameter

LoadStateResult = namedtuple("LoadStateResult", ["missing_keys", "unexpected_keys"])


class ParameterState:
    """``state_dict`` / ``state_values`` / ``load_state_dict`` of a component tree."""

    _parameters: Dict[str, Optional[Parameter]]
    _components: Dict[str, Any]
    _version: int

    def state_dict(
        self, destination: Optional[Dict] = None, prefix: str = ""
    ) -> Dict[str, Parameter]:
        """All Parameters (the objects, as in lightrag 0.1), keyed by dotted name.

        As in 0.1, a child registered under two names (``self.shared = self.pre``) lists its
        Parameters under both, and a new dict carries ``_metadata``: ``{dotted component name:
        {"version": 1}}``. Use :meth:`state_values` for a snapshot of the values.
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        self._save_state(destination, prefix.rstrip("."), set())
        return destination

    def _save_state(self, destination: Dict, prefix: str, ancestors: Set[int]) -> None:
        """Add this component's Parameters, then its children's, under ``prefix``."""
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix] = {"version": self._version}
        dot = f"{prefix}." if prefix else ""
        for name, param in self._parameters.items():
            if param is not None:
                destination[dot + name] = param
        ancestors.add(id(self))
        for name, child in self._components.items():
            if child is not None and id(child) not in ancestors:  # a cycle is walked once
                child._save_state(destination, dot + name, ancestors)
        ancestors.discard(id(self))

    def state_values(self) -> Dict[str, Any]:
        """A snapshot of every Parameter's value, keyed by dotted name (JSON-friendly)."""
        return OrderedDict((name, param.data) for name, param in self.named_parameters())

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> LoadStateResult:
        """Restore Parameter values saved by :meth:`state_dict`.

        A Parameter reachable under several names (an aliased child) is set by any of them: a
        dict with one name per Parameter (:meth:`named_parameters`) and 0.1's layout with every
        name both load. With ``strict`` a missing or unexpected key raises ``RuntimeError``
        listing them and nothing is changed.

        Raises:
            TypeError: ``state_dict`` is not a mapping.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"state_dict should be a mapping, but got {type(state_dict)}")
        params: Dict[str, Parameter] = OrderedDict()
        self._save_state(params, "", set())
        given = {id(params[k]) for k in state_dict if k in params}
        missing = [k for k, p in params.items() if id(p) not in given]
        unexpected = [k for k in state_dict if k not in params]
        if strict and (missing or unexpected):
            raise RuntimeError(
                f"Error loading state_dict for {type(self).__name__}: "
                f"missing keys {missing}, unexpected keys {unexpected}"
            )
        for name, value in state_dict.items():
            if name in params:
                params[name].update_value(value.data if isinstance(value, Parameter) else value)
        return LoadStateResult(missing, unexpected)
