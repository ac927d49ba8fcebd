"""The records tracing writes: a Generator's prompt state, and one Generator call.

Both are :class:`~lightrag.core.base_data_class.DataClass` es, so they print, turn into JSON
(``to_json_obj``) and load back (``from_dict``), nested :class:`GeneratorOutput` included.

Example:
    >>> from lightrag.core.types import GeneratorOutput
    >>> record = GeneratorCallRecord(
    ...     prompt_kwargs={"input_str": "hi"}, output=GeneratorOutput(error="timeout")
    ... )
    >>> GeneratorCallRecord.from_dict(record.to_json_obj()).output.error
    'timeout'
    >>> a = GeneratorStatesRecord({"template": "{{x}}"}, "2024-07-01T10:00:00")
    >>> a == GeneratorStatesRecord({"template": "{{x}}"}, "2024-07-02T09:30:00")
    True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict

from lightrag.core.base_data_class import DataClass, to_jsonable
from lightrag.core.types import GeneratorOutput
from lightrag.utils.serialization import default

__all__ = ["GeneratorCallRecord", "GeneratorStatesRecord", "canonical_json"]


def canonical_json(value: Any) -> str:
    """``value`` as sorted, compact JSON, so equal states compare equal after a save and load.

    Example:
        >>> canonical_json({"b": (1, 2), "a": None})
        '{"a":null,"b":[1,2]}'
    """
    return json.dumps(
        to_jsonable(value),
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=default,
    )


@dataclass
class GeneratorStatesRecord(DataClass):
    """A Generator's prompt state at one moment.

    Two records are equal when their prompt states are; the time stamp is ignored (as in lightrag
    0.1), so ``last_record != new_record`` means "the prompt changed".
    """

    prompt_states: Dict[str, Any] = field(
        default_factory=dict, metadata={"desc": "The prompt, as Prompt.to_dict() returns it"}
    )
    time_stamp: str = field(default="", metadata={"desc": "When it was logged, ISO 8601"})

    def same_state(self, other: GeneratorStatesRecord) -> bool:
        """Whether ``other`` holds the same prompt state (compared as canonical JSON)."""
        return canonical_json(self.prompt_states) == canonical_json(other.prompt_states)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GeneratorStatesRecord):
            return NotImplemented
        return self.same_state(other)


@dataclass
class GeneratorCallRecord(DataClass):
    """One Generator call: its per-call arguments and the :class:`GeneratorOutput` it returned."""

    prompt_kwargs: Dict[str, Any] = field(
        default_factory=dict, metadata={"desc": "The prompt_kwargs passed to the call"}
    )
    model_kwargs: Dict[str, Any] = field(
        default_factory=dict, metadata={"desc": "The model_kwargs passed to the call"}
    )
    output: GeneratorOutput = field(
        default_factory=GeneratorOutput, metadata={"desc": "What the call returned"}
    )
    time_stamp: str = field(default="", metadata={"desc": "When the call ended, ISO 8601"})
