"""lightrag 0.1's module path of :class:`RerankerRetriever` (defined in ``reranker``).

Example:
    >>> from lightrag.components.retriever.reranker_retriever import RerankerRetriever
    >>> RerankerRetriever.__module__
    'lightrag.components.retriever.reranker'
"""

from lightrag.components.retriever.reranker import RerankerRetriever

__all__ = ["RerankerRetriever"]
