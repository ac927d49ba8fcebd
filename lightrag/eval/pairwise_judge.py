"""``PairwiseLLMJudge``: compare two answers on the LightRAG paper's criteria, in both orders.

This is the judge of the LightRAG paper's evaluation (which of two systems answers better); for
lightrag 0.1's pointwise judge (is *this* answer right, yes or no?) see
:class:`~lightrag.eval.llm_as_judge.LLMasJudge`.

For each question the judge sees two answers and names a winner per criterion
(comprehensiveness, diversity, empowerment, overall). LLM judges prefer whichever answer comes
first (or second) more often than chance, so every pair is judged twice, once in each order, and
the two verdicts are averaged: A's score per criterion is 1.0 (won both), 0.75, 0.5 (split or
ties), 0.25 or 0.0. ``position_consistency`` reports how often the two orders agreed; a low value
means the verdicts are mostly position noise.

Parsing is tolerant: a JSON object, JSON inside prose or a code fence, or plain lines such as
``Comprehensiveness: Answer 2``. A criterion that cannot be read counts as a tie and is counted
in ``parse_failures``.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> reply = '{"Comprehensiveness": {"Winner": "Answer 1"}, "Diversity": "Answer 1", ' \\
    ...         '"Empowerment": "Answer 1", "Overall": {"Winner": "Answer 1"}}'
    >>> judge = PairwiseLLMJudge(model_client=ScriptedClient(response_fn=lambda p: reply))
    >>> judge.compute_single_item("Q?", "long answer", "short answer")  # A first, then B first
    0.5
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.eval.base import EvaluationResult, mean, unwrap

log = logging.getLogger(__name__)

DEFAULT_CRITERIA: Dict[str, str] = {
    "Comprehensiveness": "How much detail does the answer give to cover every aspect of the question?",
    "Diversity": "How varied and rich is the answer in offering different perspectives and insights?",
    "Empowerment": "How well does the answer help the reader understand the topic and make "
                   "informed judgements?",
    "Overall": "Which answer is better overall, considering the criteria above?",
}

JUDGE_TEMPLATE = r"""<SYS>
You are an expert evaluator. Compare two answers to the same question on each criterion below and
pick the better answer for each one.
{% for name, desc in criteria.items() %}
- {{name}}: {{desc}}
{% endfor %}
Reply with JSON only, one entry per criterion:
{"{{ criteria | list | first }}": {"Winner": "Answer 1" or "Answer 2", "Explanation": "..."}, ...}
</SYS>
Question: {{question}}

Answer 1:
{{answer_1}}

Answer 2:
{{answer_2}}
"""


@dataclass
class PairwiseJudgement:
    """A's score per criterion (1.0 = A won in both orders) and the judge's raw replies."""

    scores: Dict[str, float]
    verdicts: List[Dict[str, Optional[str]]] = field(default_factory=list)
    raw_responses: List[str] = field(default_factory=list)
    parse_failures: int = 0
    consistent: Dict[str, bool] = field(default_factory=dict)


def _winner(value: Any) -> Optional[str]:
    """``"1"``, ``"2"``, ``"tie"`` or None from a verdict such as ``"Answer 2"``."""
    if isinstance(value, dict):
        value = next((v for k, v in value.items() if k.lower() == "winner"), None)
    if value is None:
        return None
    text = str(value).lower()
    has1, has2 = bool(re.search(r"\b1\b|\bone\b|first", text)), bool(
        re.search(r"\b2\b|\btwo\b|second", text))
    if re.search(r"\btie\b|\bboth\b|\bequal", text) or (has1 and has2):
        return "tie"
    return "1" if has1 else "2" if has2 else None


def parse_verdicts(text: str, criteria: Sequence[str]) -> Dict[str, Optional[str]]:
    """Each criterion's winner (``"1"``, ``"2"``, ``"tie"``, or None when unreadable).

    Example:
        >>> parse_verdicts("Comprehensiveness: Answer 2\\nOverall - winner: answer 1",
        ...                ["Comprehensiveness", "Overall"])
        {'Comprehensiveness': '2', 'Overall': '1'}
    """
    found: Dict[str, Optional[str]] = dict.fromkeys(criteria)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            lowered = {str(k).lower(): v for k, v in data.items()}
            for name in criteria:
                found[name] = _winner(lowered.get(name.lower()))
    for name in criteria:
        if found[name] is None:
            match = re.search(
                rf"{re.escape(name)}\W[^\n]*?(answer\s*[12]|\btie\b|\bboth\b)", text, re.IGNORECASE
            )
            found[name] = _winner(match.group(1)) if match else None
    return found


class PairwiseLLMJudge:
    """Pairwise LLM-as-judge with position-bias cancellation.

    Args:
        model_client: the judge model's client.
        model_kwargs: request arguments (e.g. ``{"model": "gpt-4o", "temperature": 0}``).
        criteria: criterion name -> description; the LightRAG paper's four by default. The
            criterion named ``"Overall"`` (else the last one) gives ``avg_score``.
        template: a Jinja2 template with ``criteria``, ``question``, ``answer_1``, ``answer_2``.
        cache_path: SQLite response cache, so re-judging costs no calls.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> judge = PairwiseLLMJudge(model_client=ScriptedClient(response_fn=lambda p: "Overall: Answer 1"),
        ...                    criteria={"Overall": "better?"})
        >>> judge.compute(["Q"], ["a"], ["b"]).additional_info["position_consistency"]
        0.0
    """

    def __init__(
        self,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        criteria: Optional[Dict[str, str]] = None,
        template: Optional[str] = None,
        cache_path: Optional[str] = None,
    ) -> None:
        self.criteria = dict(criteria or DEFAULT_CRITERIA)
        if not self.criteria:
            raise ValueError("PairwiseLLMJudge needs at least one criterion")
        self.main_criterion = "Overall" if "Overall" in self.criteria else list(self.criteria)[-1]
        self.generator = Generator(
            model_client=model_client,
            model_kwargs=model_kwargs,
            template=template or JUDGE_TEMPLATE,
            prompt_kwargs={"criteria": self.criteria},
            cache_path=cache_path,
        )

    def _judge_once(self, question: str, first: str, second: str) -> tuple[Dict[str, Optional[str]], str]:
        output = self.generator(
            prompt_kwargs={"question": question, "answer_1": first, "answer_2": second}
        )
        if output.error is not None:
            log.warning("judge call failed: %s", output.error)
            return dict.fromkeys(self.criteria), f"ERROR: {output.error}"
        raw = str(output.raw_response or output.data or "")
        return parse_verdicts(raw, list(self.criteria)), raw

    def compare(self, question: str, answer_a: Any, answer_b: Any) -> PairwiseJudgement:
        """Judge A against B in both orders; scores are A's (0.5 = no preference)."""
        a, b = str(unwrap(answer_a)), str(unwrap(answer_b))
        forward, raw_forward = self._judge_once(question, a, b)
        backward, raw_backward = self._judge_once(question, b, a)
        points = {"1": 1.0, "2": 0.0, "tie": 0.5, None: 0.5}
        scores: Dict[str, float] = {}
        consistent: Dict[str, bool] = {}
        failures = 0
        for name in self.criteria:
            fw, bw = forward[name], backward[name]
            failures += (fw is None) + (bw is None)
            scores[name] = (points[fw] + 1.0 - points[bw]) / 2
            if fw is not None and bw is not None:
                consistent[name] = points[fw] == 1.0 - points[bw]
        return PairwiseJudgement(scores, [forward, backward], [raw_forward, raw_backward],
                                 failures, consistent)

    def compute_single_item(self, question: str, answer_a: Any, answer_b: Any) -> float:
        """A's score on the main criterion (``Overall``)."""
        return self.compare(question, answer_a, answer_b).scores[self.main_criterion]

    def compute(
        self, questions: Sequence[str], answers_a: Sequence[Any], answers_b: Sequence[Any]
    ) -> EvaluationResult:
        """Judge every pair; ``avg_score`` is A's mean score on the main criterion.

        ``additional_info`` holds A's mean score per criterion (``win_rate``), the fraction of
        readable verdict pairs on which both orders agreed, the parse failures, and every
        judgement.
        """
        if not len(questions) == len(answers_a) == len(answers_b):
            raise ValueError("questions, answers_a and answers_b must have the same length")
        judgements = [self.compare(q, a, b) for q, a, b in zip(questions, answers_a, answers_b)]
        per_item = [j.scores[self.main_criterion] for j in judgements]
        agreements = [ok for j in judgements for ok in j.consistent.values()]
        info = {
            "win_rate": {c: mean([j.scores[c] for j in judgements]) for c in self.criteria},
            "position_consistency": mean([float(ok) for ok in agreements]),
            "parse_failures": sum(j.parse_failures for j in judgements),
            "judgements": [j.__dict__ for j in judgements],
        }
        return EvaluationResult(mean(per_item), per_item, info)

    __call__ = compute

    def __repr__(self) -> str:
        return f"PairwiseLLMJudge(criteria={list(self.criteria)}, model_kwargs={self.generator.model_kwargs})"
