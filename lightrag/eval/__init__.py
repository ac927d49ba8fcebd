"""Evaluators: answer matching, retrieval metrics and LLM judges.

* :mod:`~lightrag.eval.answer_match_acc`: ``AnswerMatchAcc`` (exact, normalised, fuzzy,
  contains), SQuAD ``ExactMatch`` and token ``F1Score`` with answer aliases;
* :mod:`~lightrag.eval.retriever_metrics`: ``RetrieverRecall``, ``RetrieverPrecision``,
  ``RetrieverMRR``, ``RetrieverHits``; :mod:`~lightrag.eval.retriever_relevance`:
  ``RetrieverRelevance`` (share of the retrieved tokens that are ground truth);
* :mod:`~lightrag.eval.llm_as_judge`: ``LLMasJudge`` / ``DefaultLLMJudge``, lightrag 0.1's
  pointwise judge (is this answer right?); :mod:`~lightrag.eval.pairwise_judge`:
  ``PairwiseLLMJudge``, which of two answers is better on the LightRAG paper's criteria.

Every evaluator returns an :class:`EvaluationResult` with the mean and each item's score (it
unpacks as lightrag 0.1's ``(avg, per_item)`` tuple).

Example:
    >>> from lightrag.eval import F1Score
    >>> avg, per_item = F1Score().compute(["Paris", "in Lyon"], ["Paris", "Lyon"])
    >>> per_item
    [1.0, 0.6666666666666666]
"""

from lightrag.eval.answer_match_acc import (
    AnswerMatchAcc,
    ExactMatch,
    F1Score,
    exact_match_score,
    f1_score,
    normalize_answer,
)
from lightrag.eval.base import BaseEvaluator, EvaluationResult
from lightrag.eval.llm_as_judge import (
    DEFAULT_JUDGEMENT_QUERY,
    DEFAULT_LLM_EVALUATOR_PROMPT,
    DefaultLLMJudge,
    LLMasJudge,
    parse_judgement,
)
from lightrag.eval.pairwise_judge import (
    DEFAULT_CRITERIA,
    PairwiseJudgement,
    PairwiseLLMJudge,
    parse_verdicts,
)
from lightrag.eval.retriever_metrics import (
    RetrieverHits,
    RetrieverMRR,
    RetrieverPrecision,
    RetrieverRecall,
    retrieval_metrics,
)
from lightrag.eval.retriever_relevance import RetrieverRelevance

__all__ = [
    "AnswerMatchAcc",
    "BaseEvaluator",
    "DEFAULT_CRITERIA",
    "DEFAULT_JUDGEMENT_QUERY",
    "DEFAULT_LLM_EVALUATOR_PROMPT",
    "DefaultLLMJudge",
    "EvaluationResult",
    "ExactMatch",
    "F1Score",
    "LLMasJudge",
    "PairwiseJudgement",
    "PairwiseLLMJudge",
    "RetrieverHits",
    "RetrieverMRR",
    "RetrieverPrecision",
    "RetrieverRecall",
    "RetrieverRelevance",
    "exact_match_score",
    "f1_score",
    "normalize_answer",
    "parse_judgement",
    "parse_verdicts",
    "retrieval_metrics",
]
