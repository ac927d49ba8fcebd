"""``RetrieverRelevance``: how much of the retrieved context is ground-truth context (lightrag 0.1).

For one query, the tokens of the ground-truth passages that occur (as substrings) in the retrieved
context, divided by the tokens of the retrieved context: 1.0 when the context is nothing but
ground truth, lower the more unrelated text was retrieved with it. Tokens are counted with
:class:`~lightrag.core.tokenizer.Tokenizer` (tiktoken ``cl100k_base``, offline). A ground-truth
passage listed twice counts once, and the score is capped at 1.0 (overlapping passages).

Example:
    >>> relevance = RetrieverRelevance()
    >>> relevance.compute_single_item("Apple was founded in 1976.", ["Apple was founded in 1976."])
    1.0
    >>> avg, per_item = relevance.compute(["Paris is in France. Bananas are yellow."],
    ...                                   [["Paris is in France."]])
    >>> 0.4 < avg < 0.7
    True
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

from lightrag.core.tokenizer import Tokenizer
from lightrag.eval.base import BaseEvaluator, EvaluationResult, unwrap

Context = Union[str, Sequence[str]]


def _as_strings(value: Any) -> List[str]:
    value = unwrap(value)
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(unwrap(v)) for v in value if unwrap(v) is not None]
    return [str(value)]


class RetrieverRelevance(BaseEvaluator):
    """Fraction of the retrieved context's tokens that belong to ground-truth passages.

    ``compute(retrieved_contexts, gt_contexts)`` takes, per query, the retrieved context (one
    string, or a list of passages joined with newlines) and its ground-truth passages (a string
    or a list of strings).

    Args:
        tokenizer: counts tokens; ``Tokenizer()`` (cl100k_base) when None.
    """

    def __init__(self, tokenizer: Optional[Tokenizer] = None) -> None:
        self.tokenizer = tokenizer or Tokenizer()

    def compute(
        self,
        retrieved_contexts: Sequence[Context],
        gt_contexts: Sequence[Context],
        **kwargs: Any,
    ) -> EvaluationResult:
        """Per-query relevance and its mean (0.1's argument names)."""
        return super().compute(retrieved_contexts, gt_contexts, **kwargs)

    def compute_single_item(self, retrieved_context: Context, gt_context: Context,
                            **kwargs: Any) -> float:
        """The relevant share of one query's retrieved context (0.0 for an empty context)."""
        context = "\n".join(_as_strings(retrieved_context))
        total = self.tokenizer.count_tokens(context)
        if total == 0:
            return 0.0
        gold = dict.fromkeys(g for g in _as_strings(gt_context) if g)
        relevant = sum(self.tokenizer.count_tokens(g) for g in gold if g in context)
        return min(1.0, relevant / total)
