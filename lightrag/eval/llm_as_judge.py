"""``LLMasJudge`` and ``DefaultLLMJudge``: lightrag 0.1's pointwise LLM judge.

The judge model reads a question, its ground-truth answer and a predicted answer, and answers a
*judgement query* (by default "Does the predicted answer contain the ground truth answer?") with
True or False. ``LLMasJudge.compute`` judges every item and returns the fraction judged True with
each item's verdict (True or False, as in 0.1), and unpacks as 0.1's ``(avg, judgement_list)``.

The reply is read from its first ``true`` / ``false`` / ``yes`` / ``no`` word. An item whose
judge call fails or whose reply has no such word scores False, is logged, and is counted in
``additional_info["failures"]`` (its verdict there is None); the other items are still judged.

To compare two systems' answers on the LightRAG paper's criteria (comprehensiveness, diversity,
empowerment, overall), use :class:`~lightrag.eval.pairwise_judge.PairwiseLLMJudge` instead.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> judge = LLMasJudge(model_client=ScriptedClient(responses=["True", "False, it is not."]))
    >>> avg, judgements = judge.compute(["Capital of France?", "Is earth flat?"],
    ...                                 ["Paris", "No"], ["It is Paris.", "Yes"])
    >>> avg, judgements
    (0.5, [True, False])
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable, Dict, List, Optional, Sequence

from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.eval.answer_match_acc import references
from lightrag.eval.base import EvaluationResult, mean, unwrap

log = logging.getLogger(__name__)

DEFAULT_LLM_EVALUATOR_PROMPT = r"""<SYS>
You are a careful evaluator. Given a question, its ground truth answer and a predicted answer,
answer the judgement question with one word: True or False.
</SYS>
Question: {{question_str}}
Ground truth answer: {{gt_answer_str}}
Predicted answer: {{pred_answer_str}}
Judgement question: {{judgement_str}}
Your judgement (True or False):"""

DEFAULT_LLM_EVALUATOR_MODEL_KWARGS: Dict[str, Any] = {"model": "gpt-3.5-turbo", "temperature": 0.3}

DEFAULT_JUDGEMENT_QUERY = (
    "For the question, does the predicted answer contain the ground truth answer?"
)

_VERDICT = re.compile(r"\b(not\s+|isn't\s+|is\s+not\s+)?(true|false|yes|no)\b", re.IGNORECASE)
#: the prompt's own options echoed back ("Your judgement (True or False): False")
_OPTIONS = re.compile(r"\b(?:true\s*(?:or|/)\s*false|false\s*(?:or|/)\s*true|yes\s*(?:or|/)\s*no)\b",
                      re.IGNORECASE)

Judge = Callable[[str, str, str, str], bool]


def parse_judgement(text: Any) -> Optional[bool]:
    """True or False from the first ``true``/``false``/``yes``/``no`` word; None if there is none.

    The prompt's options echoed back ("True or False") are skipped, and a negated word counts
    as its opposite ("not true" is False).

    Example:
        >>> parse_judgement("**True** - it names Paris."), parse_judgement("No."), parse_judgement("?")
        (True, False, None)
        >>> parse_judgement("Your judgement (True or False): False"), parse_judgement("Not true.")
        (False, False)
    """
    match = _VERDICT.search(_OPTIONS.sub(" ", str(text or "")))
    if match is None:
        return None
    positive = match.group(2).lower() in ("true", "yes")
    return not positive if match.group(1) else positive


def _as_text(value: Any) -> str:
    """A prediction or reference as prompt text; a list of acceptable answers is joined."""
    value = unwrap(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return " / ".join(references(value))
    return "" if value is None else str(value)


class DefaultLLMJudge(Component):
    """A Generator that answers a judgement query about one predicted answer with True or False.

    Args:
        model_client: the judge model's client; an ``OpenAIClient`` (needs ``OPENAI_API_KEY``)
            when None, as in lightrag 0.1.
        model_kwargs: request arguments; ``DEFAULT_LLM_EVALUATOR_MODEL_KWARGS``
            (gpt-3.5-turbo, temperature 0.3) when None.
        template: a Jinja2 template with ``question_str``, ``gt_answer_str``,
            ``pred_answer_str`` and ``judgement_str``.
        cache_path: SQLite response cache, so re-judging costs no calls.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> DefaultLLMJudge(ScriptedClient(responses=["yes"]))("Q?", "Paris", "Paris", "Right?")
        True
    """

    def __init__(
        self,
        model_client: Optional[ModelClient] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        template: Optional[str] = None,
        cache_path: Optional[str] = None,
    ) -> None:
        super().__init__()
        if model_client is None:
            from lightrag.components.model_client import OpenAIClient

            log.info("DefaultLLMJudge: no model_client given, using OpenAIClient()")
            model_client = OpenAIClient()
        self.model_kwargs = dict(model_kwargs or DEFAULT_LLM_EVALUATOR_MODEL_KWARGS)
        self.llm_evaluator = Generator(
            model_client=model_client,
            model_kwargs=self.model_kwargs,
            template=template or DEFAULT_LLM_EVALUATOR_PROMPT,
            cache_path=cache_path,
        )

    def call(self, question: str, gt_answer: Any, pred_answer: Any, judgement_query: str) -> bool:
        """The judge's verdict on one item.

        Raises:
            RuntimeError: the judge call failed.
            ValueError: the reply holds no true/false/yes/no word.
        """
        output = self.llm_evaluator(prompt_kwargs={
            "question_str": question,
            "gt_answer_str": _as_text(gt_answer),
            "pred_answer_str": _as_text(pred_answer),
            "judgement_str": judgement_query,
        })
        if output.error is not None:
            raise RuntimeError(f"judge call failed: {output.error}")
        reply = output.raw_response if isinstance(output.raw_response, str) else output.data
        verdict = parse_judgement(reply)
        if verdict is None:
            raise ValueError(f"invalid judgement (no True/False in the reply): {reply!r}")
        return verdict


class LLMasJudge:
    """Judge predicted answers with an LLM, one item at a time (lightrag 0.1's evaluator).

    Args:
        llm_evaluator: any callable ``(question, gt_answer, pred_answer, judgement_query) ->
            bool``; a :class:`DefaultLLMJudge` built from ``model_client`` / ``model_kwargs``
            when None.
        model_client, model_kwargs: the judge model (only without ``llm_evaluator``).
        judgement_query: the default query of :meth:`compute`.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> judge = LLMasJudge(model_client=ScriptedClient(responses=["True"]))
        >>> judge.compute_single_item("Is Beijing in China?", "Yes", "Yes, it is.")
        True
    """

    def __init__(
        self,
        llm_evaluator: Optional[Judge] = None,
        *,
        model_client: Optional[ModelClient] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        judgement_query: str = DEFAULT_JUDGEMENT_QUERY,
    ) -> None:
        if llm_evaluator is not None and (model_client is not None or model_kwargs is not None):
            raise ValueError("give either llm_evaluator or model_client/model_kwargs, not both")
        self.llm_evaluator: Judge = (
            llm_evaluator if llm_evaluator is not None
            else DefaultLLMJudge(model_client, model_kwargs)
        )
        self.judgement_query = judgement_query

    def _judge(self, question: str, gt_answer: Any, pred_answer: Any,
               judgement_query: Optional[str]) -> tuple[Optional[bool], Optional[str]]:
        try:
            verdict = self.llm_evaluator(question, gt_answer, pred_answer,
                                         judgement_query or self.judgement_query)
        except Exception as e:
            log.warning("LLMasJudge: item not judged: %s", e)
            return None, f"{type(e).__name__}: {e}"
        return bool(verdict), None

    def compute_single_item(self, question: str, gt_answer: Any, pred_answer: Any,
                            judgement_query: Optional[str] = None) -> bool:
        """True when the judge says True, else False (also when the judge fails)."""
        return bool(self._judge(question, gt_answer, pred_answer, judgement_query)[0])

    def compute(
        self,
        questions: Sequence[str],
        gt_answers: Sequence[Any],
        pred_answers: Sequence[Any],
        judgement_query: Optional[str] = None,
    ) -> EvaluationResult:
        """Judge every item; ``avg_score`` is the fraction judged True and ``per_item_scores``
        the verdicts as booleans (0.1's ``judgement_list``).

        ``additional_info`` holds each verdict (``judgements``: True, False, or None when the
        item could not be judged), the number of ``failures`` and their ``errors`` by index.
        """
        if not len(questions) == len(gt_answers) == len(pred_answers):
            raise ValueError("questions, gt_answers and pred_answers must have the same length")
        verdicts: List[Optional[bool]] = []
        errors: Dict[int, str] = {}
        for i, (q, gt, pred) in enumerate(zip(questions, gt_answers, pred_answers)):
            verdict, error = self._judge(q, gt, pred, judgement_query)
            verdicts.append(verdict)
            if error is not None:
                errors[i] = error
        scores = [bool(v) for v in verdicts]
        info = {"judgements": verdicts, "failures": len(errors), "errors": errors,
                "judgement_query": judgement_query or self.judgement_query}
        return EvaluationResult(mean(scores), scores, info)

    __call__ = compute

    def __repr__(self) -> str:
        return f"LLMasJudge(llm_evaluator={type(self.llm_evaluator).__name__})"
