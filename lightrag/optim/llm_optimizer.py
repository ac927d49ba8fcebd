"""``LLMOptimizer``: OPRO-style instruction search (lightrag 0.1's ``lightrag.optim.llm_optimizer``).

An LLM sees the starter instruction and the instructions tried so far with their scores (worst
first, as in OPRO, Yang et al. 2023) and writes a new instruction meant to score higher. Sampling
temperature is at least 1, so repeated proposals differ.

It works both ways:

* lightrag 0.1 style, by hand: ``propose()``, score the task, then ``update_parameter(score)``
  (keep, and remember the score) or ``reset_parameter()`` (go back);
* with the :class:`~lightrag.optim.trainer.Trainer`, which proposes, validates, keeps or reverts,
  and feeds every validated score back into the history.

Example:
    >>> from lightrag.core.parameter import Parameter
    >>> from lightrag.components.model_client import ScriptedClient
    >>> instruction = Parameter(data="Answer the question.")
    >>> opt = LLMOptimizer(instruction, ScriptedClient(responses=["Answer in one word."]), {})
    >>> opt.propose().changes[0].new
    'Answer in one word.'
    >>> opt.update_parameter(score=0.8); instruction.data, opt.instruction_history[-1].score
    ('Answer in one word.', 0.8)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from lightrag.core.base_data_class import DataClass
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.parameter import Parameter
from lightrag.optim.optimizer import Optimizer, Proposal, Sample
from lightrag.optim.text_grad import parse_new_value

log = logging.getLogger(__name__)

LLM_OPTIMIZER_TEMPLATE = r"""<SYS>
Your task is to write a new instruction that scores higher than all previous instructions.
{% if starter_instruction %}
The starter instruction (the source of truth for the task; keep its core information):
<STARTER_INS>
{{starter_instruction}}
</STARTER_INS>
{% endif %}
{% if instructions %}
Previous instructions and their scores (0 to 1, higher is better), worst first:
{% for ins in instructions %}
- score {{ "%.3f" | format(ins.score) }}: {{ins.text}}
{% endfor %}
{% endif %}
The new instruction must differ from all previous ones and be clear, concise and effective.
Reply with the new instruction only.
</SYS>
New instruction:"""


@dataclass
class Instruction(DataClass):
    """An instruction that was tried and its score (0.1's DataClass)."""

    text: str = field(metadata={"desc": "The instruction text"})
    score: float = field(metadata={"desc": "The score of the instruction, from 0 to 1"})
    responses: Optional[List[str]] = field(
        default=None, metadata={"desc": "The responses of using the instruction"})
    gts: Optional[List[str]] = field(default=None, metadata={"desc": "The ground truths"})


def _clean(text: str) -> str:
    value = parse_new_value(text)
    if value.lower().startswith("new instruction:"):
        value = value[len("new instruction:"):].strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1].strip()
    return value


class LLMOptimizer(Optimizer):
    """Propose new instructions from the scored history of earlier ones (see the module doc).

    Args:
        parameter: the instruction Parameter (its current value is the starter instruction).
        model_client, model_kwargs: the optimizer model; ``temperature`` is raised to at least 1
            (the caller's dict is not changed).
        max_history: the best-scoring instructions shown to the model.
        max_tries: calls per proposal before giving up on an empty or failed reply.
    """

    def __init__(
        self,
        parameter: Parameter,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        max_history: int = 20,
        max_tries: int = 5,
    ) -> None:
        super().__init__([parameter])
        kwargs = dict(model_kwargs or {})
        kwargs["temperature"] = max(1, kwargs.get("temperature", 1))  # 0.1's rule (an int 1)
        self.generator = Generator(model_client=model_client, model_kwargs=kwargs,
                                   template=LLM_OPTIMIZER_TEMPLATE)
        self.instruction_parameter = parameter
        self.starter_instruction: Optional[str] = (
            str(parameter.data) if parameter.data is not None else None)
        self.current: Optional[str] = self.starter_instruction
        self.proposed: Optional[str] = None
        self.instruction_history: List[Instruction] = []
        self.max_history, self.max_tries = max_history, max_tries

    @property
    def prompt_kwargs(self) -> Dict[str, Any]:
        """What the optimizer model sees: the starter and the best instructions, worst first."""
        best = sorted(self.instruction_history, key=lambda i: i.score)[-self.max_history:]
        return {"starter_instruction": self.starter_instruction, "instructions": best}

    def reset(self) -> None:
        """Forget the scored history."""
        self.instruction_history = []

    def propose(self, samples: Optional[List[Sample]] = None) -> Optional[Proposal]:
        """Write a new instruction into the Parameter (replacing a pending one); None when the
        model gave no usable reply in ``max_tries`` calls."""
        name, param = self.params[0]
        if param.proposing:
            param.revert_data()
        for attempt in range(1, self.max_tries + 1):
            output = self.generator(prompt_kwargs=self.prompt_kwargs, use_cache=False)
            text = _clean(str(output.data or "")) if output.error is None else ""
            if text and text != str(param.data).strip():
                break
            log.info("LLMOptimizer: try %d gave no new instruction (%s)", attempt,
                     output.error or "empty or unchanged")
        else:
            self.proposed = None
            return None
        self.proposed = text
        return self.propose_value(
            name, param, text,
            reason=f"OPRO: a new instruction meant to beat the {len(self.instruction_history)} "
                   "scored so far")

    def step(self) -> None:
        """Keep the pending instruction."""
        super().step()
        self.current, self.proposed = self.instruction_parameter.data, None

    def revert(self) -> None:
        """Drop the pending instruction."""
        super().revert()
        self.proposed = None

    def record(self, proposal: Proposal, score: float, accepted: bool) -> None:
        """Remember a validated proposal and its score (kept or not) for later prompts."""
        super().record(proposal, score, accepted)
        self.instruction_history.append(Instruction(str(proposal.changes[0].new), float(score)))

    def update_parameter(self, score: float) -> None:
        """Keep the proposed instruction and add it to the history with ``score`` (0.1 API)."""
        if self.proposed is None:
            log.info("LLMOptimizer: no pending proposal to keep")
            return
        text = self.proposed
        self.step()
        self.instruction_history.append(Instruction(text, float(score)))

    def reset_parameter(self) -> None:
        """Drop the proposed instruction and restore the current one (0.1 API)."""
        self.revert()
