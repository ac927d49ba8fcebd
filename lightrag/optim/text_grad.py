"""``TextGradOptimizer``: an LLM critiques a prompt on the task's failures, then rewrites it.

Each step has two model calls, the text analogue of a gradient step:

1. *feedback* (the "gradient"): the optimizer model sees the prompt Parameter, its role, and a
   few training items the task got wrong (input, output, expected answer, error), and writes what
   in the prompt should change;
2. *update*: it rewrites the prompt following that feedback, also told which earlier rewrites
   were tried and rejected (so it does not go round in circles), between ``<NEW_VALUE>`` tags.

The rewrite becomes a proposal; the trainer keeps it only if the validation score improves. One
Parameter is changed per step (in turn), so the log says exactly which change did what.

Example:
    >>> from lightrag.core.parameter import Parameter
    >>> from lightrag.components.model_client import ScriptedClient
    >>> p = Parameter(data="Answer.", role_desc="instruction for a QA model", name="instruction")
    >>> client = ScriptedClient(
    ...     responses=["It answers too long.", "<NEW_VALUE>Answer in 3 words.</NEW_VALUE>"])
    >>> opt = TextGradOptimizer([p], model_client=client)
    >>> from lightrag.optim.evaluation import ItemResult
    >>> failure = Sample(0, {"question": "Capital of France?", "answer": "Paris"},
    ...                  ItemResult(index=0, score=0.0, prediction="The capital is Paris, a city..."))
    >>> opt.propose([failure]).changes[0].new
    'Answer in 3 words.'
"""

from __future__ import annotations

import logging
import re
from typing import Any, Dict, List, Optional, Sequence

from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.parameter import ParameterType
from lightrag.optim.optimizer import Optimizer, ParamsArg, Proposal, Sample

log = logging.getLogger(__name__)

FEEDBACK_TEMPLATE = r"""<SYS>
You improve prompts for a language-model system. Read the prompt variable and the examples it
got wrong, then explain briefly (at most 5 bullet points) what in the variable causes the errors
and how it should change. Do not rewrite it yet.
</SYS>
Variable role: {{role}}
Current value:
<VALUE>
{{value}}
</VALUE>

Examples the system got wrong:
{% for ex in examples %}
--- example {{loop.index}} (score {{ex.score}}) ---
{{ex.text}}
{% endfor %}
"""

UPDATE_TEMPLATE = r"""<SYS>
You improve prompts for a language-model system. Rewrite the variable following the feedback.
Keep what works; keep it general (do not mention the specific examples).
{% if constraints %}
Constraints:
{% for c in constraints %}
- {{c}}
{% endfor %}
{% endif %}
Write only the new value between <NEW_VALUE> and </NEW_VALUE>.
</SYS>
Variable role: {{role}}
Current value:
<VALUE>
{{value}}
</VALUE>

Feedback:
{{feedback}}
{% if rejected %}

These earlier rewrites did not improve the validation score; do something different:
{% for r in rejected %}
- {{r}}
{% endfor %}
{% endif %}
"""

_NEW_VALUE = re.compile(r"<NEW_VALUE>(.*?)(?:</NEW_VALUE>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```\w*\n?|\n?```$")


def parse_new_value(text: str) -> str:
    """The text between ``<NEW_VALUE>`` tags (or after an unclosed one), else the whole reply.

    Example:
        >>> parse_new_value("Sure!\\n<NEW_VALUE>\\nBe concise.\\n</NEW_VALUE>")
        'Be concise.'
        >>> parse_new_value("```\\nBe concise.\\n```")
        'Be concise.'
    """
    match = _NEW_VALUE.search(text or "")
    value = match.group(1) if match else (text or "")
    return _FENCE.sub("", value.strip()).strip()


def _clip(value: Any, limit: int) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + " …"


class TextGradOptimizer(Optimizer):
    """Rewrite PROMPT Parameters from an LLM's feedback on failures (see the module doc).

    Args:
        params: a Component (its trainable PROMPT Parameters) or Parameters.
        model_client, model_kwargs: the optimizer model (ideally stronger than the task model).
        max_failures: failed items shown to the feedback call.
        failure_threshold: an item with a score below it counts as a failure.
        input_fields: the item fields shown as the input (all fields when None).
        target_field: the item field holding the expected answer.
        constraints: rules every rewrite must follow (e.g. "Keep the answer format line").
        max_chars: each shown field is clipped to this many characters.
    """

    param_type = ParameterType.PROMPT

    def __init__(
        self,
        params: ParamsArg,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        max_failures: int = 4,
        failure_threshold: float = 1.0,
        input_fields: Optional[Sequence[str]] = None,
        target_field: Optional[str] = "answer",
        constraints: Optional[Sequence[str]] = None,
        max_chars: int = 400,
    ) -> None:
        super().__init__(params)
        self.feedback_generator = Generator(model_client=model_client, model_kwargs=model_kwargs,
                                            template=FEEDBACK_TEMPLATE)
        self.update_generator = Generator(model_client=model_client, model_kwargs=model_kwargs,
                                          template=UPDATE_TEMPLATE)
        self.max_failures = max_failures
        self.failure_threshold = failure_threshold
        self.input_fields = list(input_fields) if input_fields is not None else None
        self.target_field = target_field
        self.constraints = list(constraints or [])
        self.max_chars = max_chars
        self._turn = 0

    def _example_text(self, sample: Sample) -> str:
        item = sample.item
        fields = self.input_fields or [k for k in item if k != self.target_field]
        lines = [f"{k}: {_clip(item.get(k), self.max_chars)}" for k in fields]
        output = sample.result.raw_response or sample.result.prediction
        lines.append(f"system output: {_clip(output, self.max_chars)}")
        if sample.result.error:
            lines.append(f"error: {_clip(sample.result.error, self.max_chars)}")
        if self.target_field and self.target_field in item:
            lines.append(f"expected: {_clip(item[self.target_field], self.max_chars)}")
        return "\n".join(lines)

    def propose(self, samples: List[Sample]) -> Optional[Proposal]:
        """Critique and rewrite the next PROMPT Parameter; None when nothing failed or the
        optimizer model gave no usable new value."""
        failures = sorted((s for s in samples if s.result.score < self.failure_threshold),
                          key=lambda s: (s.result.score, s.index))[: self.max_failures]
        if not failures:
            log.info("TextGradOptimizer: no failures in the batch, nothing to propose")
            return None
        name, param = self.params[self._turn % len(self.params)]
        self._turn += 1
        role = param.role_desc or name
        examples = [{"score": round(s.result.score, 3), "text": self._example_text(s)}
                    for s in failures]
        feedback = self.feedback_generator(
            prompt_kwargs={"role": role, "value": param.data, "examples": examples})
        if feedback.error is not None:  # a failed model call is a failure, not "nothing to propose"
            raise RuntimeError(f"the feedback call failed: {feedback.error}")
        if not str(feedback.data or "").strip():
            log.info("TextGradOptimizer: empty feedback for %s", name)
            return None
        rejected = [_clip(h["proposal"].changes[0].new, self.max_chars) for h in self.history
                    if not h["accepted"] and h["proposal"].changes[0].name == name][-3:]
        update = self.update_generator(prompt_kwargs={
            "role": role, "value": param.data, "feedback": str(feedback.data).strip(),
            "rejected": rejected, "constraints": self.constraints})
        if update.error is not None:
            raise RuntimeError(f"the update call failed: {update.error}")
        new_value = parse_new_value(str(update.data or ""))
        if not new_value or new_value == str(param.data).strip():
            log.info("TextGradOptimizer: no new value for %s", name)
            return None
        return self.propose_value(name, param, new_value, reason=str(feedback.data).strip(),
                                  failures=[s.index for s in failures])


    def state_dict(self) -> Dict[str, Any]:
        return {**super().state_dict(), "turn": self._turn}

    def load_state(self, state: Dict[str, Any]) -> None:
        self._turn = int(state.get("turn", self._turn))
