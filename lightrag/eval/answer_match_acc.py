"""Answer-matching metrics: ``AnswerMatchAcc``, ``ExactMatch`` and token ``F1Score``.

``ExactMatch`` and ``F1Score`` use the SQuAD normalisation of the official SQuAD / MuSiQue
evaluation scripts (:func:`normalize_answer`: lower-case, drop ASCII punctuation, drop the articles
"a", "an", "the", collapse whitespace), so figures are comparable with published ones. A reference
may be one string or a list of acceptable answers (the answer and its aliases): the score is the
maximum over them.

Example:
    >>> ExactMatch().compute_single_item("The Eiffel Tower!", ["Eiffel Tower", "Tour Eiffel"])
    1.0
    >>> round(F1Score().compute_single_item("in Paris, France", "Paris"), 3)
    0.5
    >>> AnswerMatchAcc(type="fuzzy_match").compute(["It is Paris."], ["Paris"]).avg_score
    1.0
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any, List, Literal, Sequence, Union

from lightrag.eval.base import BaseEvaluator, unwrap

Reference = Union[str, Sequence[str]]
MatchType = Literal["exact_match", "normalized", "fuzzy_match", "contains"]

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: Any) -> str:
    """SQuAD normalisation: lower-case, strip punctuation and articles, collapse whitespace.

    Example:
        >>> normalize_answer("  The  Beatles' *first* album. ")
        'beatles first album'
    """
    text = "" if text is None else str(text).lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def references(y_gt: Any) -> List[str]:
    """The acceptable answers of a reference: a string, or a list/tuple/set of strings."""
    y_gt = unwrap(y_gt)
    if y_gt is None:
        return []
    if isinstance(y_gt, (list, tuple, set, frozenset)):
        return [str(unwrap(g)) for g in y_gt if unwrap(g) is not None]
    return [str(y_gt)]


def exact_match_score(prediction: Any, ground_truth: str) -> float:
    """1.0 when the normalised strings are equal."""
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def f1_score(prediction: Any, ground_truth: str) -> float:
    """SQuAD token F1 between the normalised prediction and reference.

    When either side normalises to no tokens the score is 1.0 if both do, else 0.0.
    """
    pred_tokens = normalize_answer(prediction).split()
    gt_tokens = normalize_answer(ground_truth).split()
    if not pred_tokens or not gt_tokens:
        return float(pred_tokens == gt_tokens)
    same = sum((Counter(pred_tokens) & Counter(gt_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gt_tokens)
    return 2 * precision * recall / (precision + recall)


def _contains(prediction: Any, ground_truth: str) -> float:
    pred = f" {normalize_answer(prediction)} "
    gt = normalize_answer(ground_truth)
    if not gt:
        return float(not pred.strip())
    return float(f" {gt} " in pred)


def _max_over(fn: Any, prediction: Any, y_gt: Any) -> float:
    prediction = unwrap(prediction)
    if prediction is None:
        return 0.0
    return max((fn(prediction, gt) for gt in references(y_gt)), default=0.0)


class ExactMatch(BaseEvaluator):
    """SQuAD Exact Match, maximised over the acceptable answers.

    Example:
        >>> ExactMatch().compute(["paris", "Lyon"], ["Paris", ["Marseille", "Marseilles"]])
        EvaluationResult(avg_score=0.5, per_item_scores=[1.0, 0.0], additional_info={})
    """

    def compute_single_item(self, y: Any, y_gt: Reference, **kwargs: Any) -> float:
        return _max_over(exact_match_score, y, y_gt)


class F1Score(BaseEvaluator):
    """SQuAD token F1, maximised over the acceptable answers.

    Example:
        >>> F1Score().compute_single_item("Barack Obama", ["Obama", "Barack H. Obama"])  # 2/3 vs 0.8
        0.8
    """

    def compute_single_item(self, y: Any, y_gt: Reference, **kwargs: Any) -> float:
        return _max_over(f1_score, y, y_gt)


class AnswerMatchAcc(BaseEvaluator):
    """Accuracy by string matching (lightrag 0.1's evaluator, with two more match types).

    Args:
        type: ``"exact_match"`` (equal after ``strip()``, as in 0.1), ``"normalized"`` (equal after
            SQuAD normalisation), ``"fuzzy_match"`` (the reference is a substring of the
            prediction, as in 0.1) or ``"contains"`` (the normalised reference occurs as whole
            words in the normalised prediction: for verbose model answers).

    Predictions and references may be :class:`~lightrag.core.parameter.Parameter` s or
    ``GeneratorOutput`` s (their data is used); a reference may list aliases (best one counts).

    Example:
        >>> AnswerMatchAcc(type="exact_match").compute_single_item("42 ", "42")
        1.0
        >>> AnswerMatchAcc(type="contains").compute_single_item("I think it is the Nile.", "Nile")
        1.0
    """

    def __init__(self, type: MatchType = "exact_match") -> None:
        functions = {
            "exact_match": lambda y, g: float(str(y).strip() == g.strip()),
            "normalized": exact_match_score,
            "fuzzy_match": lambda y, g: float(g.strip() in str(y)),
            "contains": _contains,
        }
        if type not in functions:
            raise ValueError(f"AnswerMatchAcc type must be one of {sorted(functions)}, got {type!r}")
        self.type = type
        self._fn = functions[type]

    def compute_single_item(self, y: Any, y_gt: Reference, **kwargs: Any) -> float:
        return _max_over(self._fn, y, y_gt)

    def _extra_repr(self) -> str:
        return f"type={self.type!r}"
