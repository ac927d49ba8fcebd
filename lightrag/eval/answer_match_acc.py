"""Answer-matching metrics: ``AnswerMatchAcc``, ``ExactMatch`` and token ``F1Score``.

``ExactMatch`` and ``F1Score`` use the SQuAD normalisation of the official SQuAD / MuSiQue
evaluation scripts (:func:`normalize_answer`: lower-case, drop ASCII punctuation, drop the articles
"a", "an", "the", collapse whitespace), so figures are comparable with published ones. A reference
may be one string or a list of acceptable answers (the answer and its aliases): the score is the
maximum over them.

SQuAD's normalisation knows ASCII only: a correct answer in curly quotes (“Paris”) or ending in
an ideographic full stop scores 0, and dropping the decimal point and the minus sign makes wrong
numbers right ("314" matches "3.14", "5" matches "-5"). ``normalize="unicode"`` (every
evaluator here, and ``metric: {normalize: unicode}`` in a bench config) fixes both, at the cost
of figures no longer comparable with published SQuAD ones (see :func:`normalize_answer`).

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
import unicodedata
from collections import Counter
from typing import Any, Callable, List, Literal, Sequence, Union

from lightrag.eval.base import BaseEvaluator, unwrap

Reference = Union[str, Sequence[str]]
MatchType = Literal["exact_match", "normalized", "fuzzy_match", "contains"]
Normalization = Literal["squad", "unicode"]
NORMALIZATIONS = ("squad", "unicode")

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0'](?=\d{3}(?!\d))")
_IN_NUMBER = re.compile(r"(?<=\d)[.,/:\-\u2212](?=\d)|(?:(?<=\s)|^)[-\u2212](?=\d)")
#: marks inside numbers, kept through the punctuation removal as private-use characters
_KEPT = {".": "\ue000", ",": "\ue000", "/": "\ue001", ":": "\ue002", "-": "\ue003",
         "\u2212": "\ue003"}
_RESTORE = str.maketrans({"\ue000": ".", "\ue001": "/", "\ue002": ":", "\ue003": "-"})


def _strip_unicode(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(ch))
    text = _THOUSANDS.sub("", text)
    text = _IN_NUMBER.sub(lambda m: _KEPT[m.group(0)], text)
    text = "".join(ch for ch in text
                   if ch not in _PUNCTUATION and not unicodedata.category(ch).startswith("P"))
    return text.translate(_RESTORE)


def normalize_answer(text: Any, normalize: Normalization = "squad") -> str:
    """Lower-case, strip punctuation and articles, collapse whitespace.

    ``"squad"`` is the official SQuAD / MuSiQue normalisation (ASCII punctuation only).
    ``"unicode"`` also applies NFKC (H₂O = H2O, full-width letters), case folding (Straße =
    strasse), removes accents (São = Sao) and every Unicode punctuation mark (“ ” « » 。 — …),
    and keeps numbers whole: a decimal point or comma, ``/``, ``:`` or ``-`` between digits and a
    leading minus stay ("3.14" ≠ "314", "-5" ≠ "5", "2-3" ≠ "23", "3,5" = "3.5"), thousands
    separators go ("1,000" = "1000"). Both forms apply Unicode's canonical composition (NFC)
    first, so "São" typed as "Sa" + a combining tilde equals "São".

    Example:
        >>> normalize_answer("  The  Beatles' *first* album. ")
        'beatles first album'
        >>> normalize_answer("“Paris”"), normalize_answer("“Paris”", "unicode")
        ('“paris”', 'paris')
        >>> normalize_answer("-3.14", "unicode"), normalize_answer("1,000", "unicode")
        ('-3.14', '1000')
    """
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
    text = "" if text is None else unicodedata.normalize("NFC", str(text))
    if normalize == "unicode":
        text = _strip_unicode(text)
    else:
        text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
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


def exact_match_score(prediction: Any, ground_truth: str,
                      normalize: Normalization = "squad") -> float:
    """1.0 when the normalised strings are equal."""
    return float(normalize_answer(prediction, normalize) == normalize_answer(ground_truth, normalize))


def f1_score(prediction: Any, ground_truth: str, normalize: Normalization = "squad") -> float:
    """SQuAD token F1 between the normalised prediction and reference.

    When either side normalises to no tokens the score is 1.0 if both do, else 0.0.
    """
    pred_tokens = normalize_answer(prediction, normalize).split()
    gt_tokens = normalize_answer(ground_truth, normalize).split()
    if not pred_tokens or not gt_tokens:
        return float(pred_tokens == gt_tokens)
    same = sum((Counter(pred_tokens) & Counter(gt_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gt_tokens)
    return 2 * precision * recall / (precision + recall)


def _contains(prediction: Any, ground_truth: str, normalize: Normalization = "squad") -> float:
    pred = f" {normalize_answer(prediction, normalize)} "
    gt = normalize_answer(ground_truth, normalize)
    if not gt:
        return float(not pred.strip())
    return float(f" {gt} " in pred)


def _max_over(fn: Any, prediction: Any, y_gt: Any) -> float:
    prediction = unwrap(prediction)
    if prediction is None:
        return 0.0
    return max((fn(prediction, gt) for gt in references(y_gt)), default=0.0)


def _check(normalize: str) -> str:
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
    return normalize


class ExactMatch(BaseEvaluator):
    """SQuAD Exact Match, maximised over the acceptable answers.

    Args:
        normalize: ``"squad"`` (default, comparable with published figures) or ``"unicode"``
            (see :func:`normalize_answer`).

    Example:
        >>> ExactMatch().compute(["paris", "Lyon"], ["Paris", ["Marseille", "Marseilles"]])
        EvaluationResult(avg_score=0.5, per_item_scores=[1.0, 0.0], additional_info={})
        >>> wrong, gold = "314", "3.14"
        >>> ExactMatch()([wrong], [gold]).avg_score, ExactMatch("unicode")([wrong], [gold]).avg_score
        (1.0, 0.0)
    """

    def __init__(self, normalize: Normalization = "squad") -> None:
        self.normalize = _check(normalize)

    def compute_single_item(self, y: Any, y_gt: Reference, **kwargs: Any) -> float:
        return _max_over(lambda p, g: exact_match_score(p, g, self.normalize), y, y_gt)

    def _extra_repr(self) -> str:
        return "" if self.normalize == "squad" else f"normalize={self.normalize!r}"


class F1Score(BaseEvaluator):
    """SQuAD token F1, maximised over the acceptable answers.

    Args:
        normalize: ``"squad"`` (default) or ``"unicode"`` (see :func:`normalize_answer`).

    Example:
        >>> F1Score().compute_single_item("Barack Obama", ["Obama", "Barack H. Obama"])  # 2/3 vs 0.8
        0.8
        >>> F1Score(normalize="unicode").compute_single_item("« São Paulo »", "Sao Paulo")
        1.0
    """

    def __init__(self, normalize: Normalization = "squad") -> None:
        self.normalize = _check(normalize)

    def compute_single_item(self, y: Any, y_gt: Reference, **kwargs: Any) -> float:
        return _max_over(lambda p, g: f1_score(p, g, self.normalize), y, y_gt)

    def _extra_repr(self) -> str:
        return "" if self.normalize == "squad" else f"normalize={self.normalize!r}"


class AnswerMatchAcc(BaseEvaluator):
    """Accuracy by string matching (lightrag 0.1's evaluator, with two more match types).

    Args:
        type: ``"exact_match"`` (equal after ``strip()``, as in 0.1), ``"normalized"`` (equal after
            SQuAD normalisation), ``"fuzzy_match"`` (the reference is a substring of the
            prediction, as in 0.1) or ``"contains"`` (the normalised reference occurs as whole
            words in the normalised prediction: for verbose model answers).
        normalize: the normalisation of ``"normalized"`` and ``"contains"``: ``"squad"``
            (default) or ``"unicode"`` (see :func:`normalize_answer`).

    Predictions and references may be :class:`~lightrag.core.parameter.Parameter` s or
    ``GeneratorOutput`` s (their data is used); a reference may list aliases (best one counts).

    Example:
        >>> AnswerMatchAcc(type="exact_match").compute_single_item("42 ", "42")
        1.0
        >>> AnswerMatchAcc(type="contains").compute_single_item("I think it is the Nile.", "Nile")
        1.0
    """

    def __init__(self, type: MatchType = "exact_match", normalize: Normalization = "squad") -> None:
        self.normalize = _check(normalize)
        functions: dict[str, Callable[[Any, str], float]] = {
            "exact_match": lambda y, g: float(str(y).strip() == g.strip()),
            "normalized": lambda y, g: exact_match_score(y, g, self.normalize),
            "fuzzy_match": lambda y, g: float(g.strip() in str(y)),
            "contains": lambda y, g: _contains(y, g, self.normalize),
        }
        if type not in functions:
            raise ValueError(f"AnswerMatchAcc type must be one of {sorted(functions)}, got {type!r}")
        self.type = type
        self._fn = functions[type]

    def compute_single_item(self, y: Any, y_gt: Reference, **kwargs: Any) -> float:
        return _max_over(self._fn, y, y_gt)

    def _extra_repr(self) -> str:
        extra = "" if self.normalize == "squad" else f", normalize={self.normalize!r}"
        return f"type={self.type!r}{extra}"
