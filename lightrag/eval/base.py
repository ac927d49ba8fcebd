"""``EvaluationResult`` and ``BaseEvaluator``: the shape every evaluator shares.

An evaluator scores one item (``compute_single_item``) and a list of items (``compute``), and
returns the mean with every per-item score, so a caller can bootstrap a confidence interval or pair
items between two systems. ``EvaluationResult`` unpacks like lightrag 0.1's ``(avg, per_item)``
tuple (and indexes like it).

Example:
    >>> result = EvaluationResult(avg_score=0.5, per_item_scores=[1.0, 0.0])
    >>> avg, per_item = result
    >>> avg, per_item, result[0]
    (0.5, [1.0, 0.0], 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence

from lightrag.core.parameter import Parameter
from lightrag.core.types import GeneratorOutput


@dataclass
class EvaluationResult:
    """The mean score, each item's score, and evaluator-specific extras.

    Args:
        avg_score: mean of ``per_item_scores`` (0.0 for no items).
        per_item_scores: one float per evaluated item, in input order.
        additional_info: other figures (e.g. per-criterion win rates of a judge).

    Example:
        >>> EvaluationResult(0.5, [1.0, 0.0]).to_dict()["per_item_scores"]
        [1.0, 0.0]
    """

    avg_score: float
    per_item_scores: List[float] = field(default_factory=list)
    additional_info: Dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``avg, per_item`` (the lightrag 0.1 tuple)."""
        yield self.avg_score
        yield self.per_item_scores

    def __getitem__(self, index: int) -> Any:
        """``result[0]`` is the mean and ``result[1]`` the per-item scores, as in 0.1's tuple."""
        return (self.avg_score, self.per_item_scores)[index]

    def __len__(self) -> int:
        return 2

    def to_dict(self) -> Dict[str, Any]:
        return {
            "avg_score": self.avg_score,
            "per_item_scores": list(self.per_item_scores),
            "additional_info": dict(self.additional_info),
        }


def mean(scores: Sequence[float]) -> float:
    """The arithmetic mean, 0.0 for an empty sequence."""
    return math.fsum(scores) / len(scores) if scores else 0.0


def unwrap(value: Any) -> Any:
    """The plain value inside a :class:`Parameter` or a :class:`GeneratorOutput` (its ``data``)."""
    while isinstance(value, (Parameter, GeneratorOutput)):
        value = value.data
    return value


class BaseEvaluator:
    """Score predictions against references; subclasses implement :meth:`compute_single_item`.

    ``compute(preds, refs)`` maps ``compute_single_item`` over aligned lists and averages; calling
    an evaluator is the same as calling ``compute``.

    Example:
        >>> class Equal(BaseEvaluator):
        ...     def compute_single_item(self, y, y_gt):
        ...         return float(y == y_gt)
        >>> Equal()(["a", "b"], ["a", "c"]).avg_score
        0.5
    """

    def compute_single_item(self, *args: Any, **kwargs: Any) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement compute_single_item")

    def compute(
        self, pred_answers: Sequence[Any], gt_answers: Sequence[Any], **kwargs: Any
    ) -> EvaluationResult:
        """Score aligned lists; raises ``ValueError`` if their lengths differ."""
        if len(pred_answers) != len(gt_answers):
            raise ValueError(
                f"{type(self).__name__}: {len(pred_answers)} predictions but "
                f"{len(gt_answers)} references"
            )
        scores = [float(self.compute_single_item(p, g, **kwargs))
                  for p, g in zip(pred_answers, gt_answers)]
        return EvaluationResult(mean(scores), scores)

    def __call__(self, *args: Any, **kwargs: Any) -> EvaluationResult:
        return self.compute(*args, **kwargs)

    def __repr__(self) -> str:
        extra: Optional[str] = getattr(self, "_extra_repr", lambda: "")()
        return f"{type(self).__name__}({extra or ''})"
