"""``RetrieverRecall`` at its lightrag 0.1 import path (``lightrag.eval.retriever_recall``).

The metric and its siblings (precision, MRR, Hits@k) live in
:mod:`lightrag.eval.retriever_metrics`.

Example:
    >>> RetrieverRecall().compute(["Paris is in France."], [["Paris is in France.", "Oslo"]])[0]
    0.5
"""

from lightrag.eval.retriever_metrics import RetrieverRecall

__all__ = ["RetrieverRecall"]
