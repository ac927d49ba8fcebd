"""The records of an agent run: one ``StepOutput`` per step, and the :class:`AgentRun`.

Example:
    >>> from lightrag.core.types import FunctionExpression
    >>> step = ReActStep(step=1, action=FunctionExpression(thought="Done.", action="finish(answer='4')"),
    ...                  observation="4")
    >>> run = AgentRun(input="2+2?", answer="4", steps=[step], stopped_reason="finish")
    >>> AgentRun.from_json(run.to_json()) == run
    True
    >>> print(run)
    Question: 2+2?
    Step 1
      Thought: Done.
      Action: finish(answer='4')
      Observation: 4
    Answer: 4  [stopped: finish]
"""

import json
from dataclasses import dataclass, field
from typing import Any, List, Optional

from lightrag.core.base_data_class import DataClass
from lightrag.core.types import FunctionExpression, StepOutput

__all__ = ["AgentRun", "ReActStep", "observation_text"]

#: A ``StepOutput`` whose ``action`` is a :class:`FunctionExpression`.
ReActStep = StepOutput.with_action_type(FunctionExpression)


def observation_text(value: Any) -> str:
    """A tool's output as observation text: strings as they are, the rest as JSON (or repr)."""
    if isinstance(value, str):
        return value
    if isinstance(value, DataClass):
        return value.to_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


@dataclass
class AgentRun(DataClass):
    """The record of one agent run: the question, every step, the answer and why it stopped.

    ``stopped_reason`` is ``"finish"`` (the model called finish), ``"max_steps"`` (the step
    limit was reached; the answer is then the last successful observation, or a message) or
    ``"model_error"`` (the model could not be called).
    """

    input: str = field(default="", metadata={"desc": "The user's question"})
    answer: Any = field(default=None, metadata={"desc": "The final answer"})
    steps: List[ReActStep] = field(default_factory=list, metadata={"desc": "The steps taken"})
    stopped_reason: Optional[str] = field(
        default=None, metadata={"desc": "finish | max_steps | model_error"}
    )

    def __str__(self) -> str:
        lines = [f"Question: {self.input}"]
        for step in self.steps:
            action = step.action
            lines.append(f"Step {step.step}")
            if action is not None and action.thought:
                lines.append(f"  Thought: {action.thought}")
            lines.append(f"  Action: {action.action if action is not None else '(none)'}")
            lines.append(f"  Observation: {step.observation}")
        lines.append(f"Answer: {self.answer}  [stopped: {self.stopped_reason}]")
        return "\n".join(lines)


