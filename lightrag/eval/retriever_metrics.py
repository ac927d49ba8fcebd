"""Retrieval metrics: ``RetrieverRecall``, ``RetrieverPrecision``, ``RetrieverMRR``, ``RetrieverHits``.

Each query has a ranked list of retrieved items and a set of relevant (gold) items. Items are ids
(any hashable: ``Document.id``, corpus indices, titles) matched exactly, or texts:

* a query's retrieval given as one string (the joined context, as in lightrag 0.1) matches a gold
  text when the gold text is a substring of it;
* with ``match="substring"`` a gold text matches a retrieved text that contains it.

With ``top_k`` only the first ``top_k`` retrieved items count (Recall@k, Precision@k, Hits@k).

* Recall: fraction of the gold items found.
* Precision: fraction of the retrieved items that are gold (of ``min(top_k, retrieved)`` items).
* MRR: 1 / rank of the first gold item (0 when none is found).
* Hits: 1 when at least one gold item is found.

Example:
    >>> retrieved = [["d1", "d7", "d3"], ["d2", "d9"]]
    >>> gold = [["d3", "d4"], ["d9"]]
    >>> RetrieverRecall().compute(retrieved, gold).per_item_scores
    [0.5, 1.0]
    >>> RetrieverRecall(top_k=2).compute(retrieved, gold).avg_score
    0.5
    >>> RetrieverMRR().compute(retrieved, gold).per_item_scores
    [0.3333333333333333, 0.5]
    >>> RetrieverRecall().compute(["Paris is in France. Rome is in Italy."], [["Rome is in Italy."]])
    EvaluationResult(avg_score=1.0, per_item_scores=[1.0], additional_info={})
"""

from __future__ import annotations

from typing import Any, Dict, Hashable, List, Literal, Optional, Sequence, Union

from lightrag.eval.base import BaseEvaluator, EvaluationResult, mean, unwrap

Retrieved = Union[str, Sequence[Any]]
Gold = Union[str, Hashable, Sequence[Any]]


def _as_list(value: Any) -> List[Any]:
    value = unwrap(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return [value]


def relevance_flags(
    retrieved: Retrieved, gold: Gold, top_k: Optional[int] = None, match: str = "exact"
) -> tuple[List[bool], List[bool]]:
    """``(is_gold per retrieved rank, is_found per gold item)`` for one query."""
    gold_items = list(dict.fromkeys(_as_list(gold)))
    if not gold_items:
        raise ValueError("a query has no gold items: recall and MRR are undefined for it")
    retrieved = unwrap(retrieved)
    if isinstance(retrieved, str):
        found = [str(g) in retrieved for g in gold_items]
        return [any(found)], found
    ranked = _as_list(retrieved)[: top_k if top_k is not None else None]
    if match == "substring":
        def hit(r: Any, g: Any) -> bool:
            return str(g) in str(r)
    else:
        def hit(r: Any, g: Any) -> bool:
            return r == g
    is_gold = [any(hit(r, g) for g in gold_items) for r in ranked]
    found = [any(hit(r, g) for r in ranked) for g in gold_items]
    return is_gold, found


class _RetrievalMetric(BaseEvaluator):
    """Shared argument handling; subclasses define ``_score(is_gold, found)``."""

    def __init__(self, top_k: Optional[int] = None,
                 match: Literal["exact", "substring"] = "exact") -> None:
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if match not in ("exact", "substring"):
            raise ValueError(f"match must be 'exact' or 'substring', got {match!r}")
        self.top_k = top_k
        self.match = match

    def _score(self, is_gold: List[bool], found: List[bool]) -> float:
        raise NotImplementedError

    def compute_single_item(self, retrieved: Retrieved, gold: Gold, **kwargs: Any) -> float:
        """The metric for one query: its ranked retrieval and its gold items."""
        return self._score(*relevance_flags(retrieved, gold, self.top_k, self.match))

    def compute(
        self,
        retrieved_contexts: Sequence[Retrieved],
        gt_contexts: Sequence[Gold],
        **kwargs: Any,
    ) -> EvaluationResult:
        """Per-query scores and their mean; the two lists are aligned per query.

        The argument names are lightrag 0.1's (``retrieved_contexts``, ``gt_contexts``).
        """
        return super().compute(retrieved_contexts, gt_contexts)

    def _extra_repr(self) -> str:
        return f"top_k={self.top_k}, match={self.match!r}"


class RetrieverRecall(_RetrievalMetric):
    """Fraction of each query's gold items among the (first ``top_k``) retrieved items.

    ``compute(retrieved_contexts, gt_contexts)`` accepts lightrag 0.1's arguments: one joined
    context string per query and a list of gold sentences per query.

    Example:
        >>> RetrieverRecall(top_k=1).compute_single_item([3, 1, 2], [1, 2])
        0.0
    """

    def _score(self, is_gold: List[bool], found: List[bool]) -> float:
        return sum(found) / len(found)


class RetrieverPrecision(_RetrievalMetric):
    """Fraction of the (first ``top_k``) retrieved items that are gold; 0.0 when none retrieved.

    Example:
        >>> RetrieverPrecision(top_k=2).compute_single_item(["a", "x", "b"], ["a", "b"])
        0.5
    """

    def _score(self, is_gold: List[bool], found: List[bool]) -> float:
        return sum(is_gold) / len(is_gold) if is_gold else 0.0


class RetrieverMRR(_RetrievalMetric):
    """Reciprocal rank of the first gold item (0.0 when none is retrieved).

    Example:
        >>> RetrieverMRR().compute_single_item(["x", "y", "a"], ["a"])
        0.3333333333333333
    """

    def _score(self, is_gold: List[bool], found: List[bool]) -> float:
        return next((1.0 / rank for rank, g in enumerate(is_gold, start=1) if g), 0.0)


class RetrieverHits(_RetrievalMetric):
    """Hits@k: 1.0 when at least one gold item is among the first ``top_k`` retrieved.

    Example:
        >>> RetrieverHits(top_k=1).compute([["a", "b"], ["x", "a"]], [["a"], ["a"]]).avg_score
        0.5
    """

    def _score(self, is_gold: List[bool], found: List[bool]) -> float:
        return float(any(found))


def retrieval_metrics(
    retrieved: Sequence[Retrieved],
    gold: Sequence[Gold],
    ks: Sequence[int] = (1, 2, 5),
    match: Literal["exact", "substring"] = "exact",
) -> Dict[str, float]:
    """Recall@k, Precision@k and Hits@k for each k in ``ks``, and MRR, as one dict of means.

    Example:
        >>> retrieval_metrics([["a", "b"]], [["b"]], ks=(1, 2))["recall@2"]
        1.0
    """
    out: Dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = RetrieverRecall(k, match).compute(retrieved, gold).avg_score
        out[f"precision@{k}"] = RetrieverPrecision(k, match).compute(retrieved, gold).avg_score
        out[f"hits@{k}"] = RetrieverHits(k, match).compute(retrieved, gold).avg_score
    out["mrr"] = mean(RetrieverMRR(None, match).compute(retrieved, gold).per_item_scores)
    return out
