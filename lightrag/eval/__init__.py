"""Evaluators: answer matching, retrieval metrics and a pairwise LLM judge.

Every evaluator returns an :class:`EvaluationResult` with the mean and each item's score (it
unpacks as lightrag 0.1's ``(avg, per_item)`` tuple).

Example:
    >>> from lightrag.eval import F1Score
    >>> avg, per_item = F1Score().compute(["Paris", "in Lyon"], ["Paris", "Lyon"])
    >>> per_item
    [1.0, 0.6666666666666666]
"""

from lightrag.eval.answer_match import (
    AnswerMatchAcc,
    ExactMatch,
    F1Score,
    exact_match_score,
    f1_score,
    normalize_answer,
)
from lightrag.eval.base import BaseEvaluator, EvaluationResult
from lightrag.eval.llm_judge import DEFAULT_CRITERIA, LLMasJudge, PairwiseJudgement, parse_verdicts
from lightrag.eval.retriever_metrics import (
    RetrieverHits,
    RetrieverMRR,
    RetrieverPrecision,
    RetrieverRecall,
    retrieval_metrics,
)

__all__ = [
    "AnswerMatchAcc",
    "BaseEvaluator",
    "DEFAULT_CRITERIA",
    "EvaluationResult",
    "ExactMatch",
    "F1Score",
    "LLMasJudge",
    "PairwiseJudgement",
    "RetrieverHits",
    "RetrieverMRR",
    "RetrieverPrecision",
    "RetrieverRecall",
    "exact_match_score",
    "f1_score",
    "normalize_answer",
    "parse_verdicts",
    "retrieval_metrics",
]
