"""Retrievers: dense (NumPy, FAISS), keyword (BM25), fusion (hybrid), LLM and reranking
(LLM, local cross-encoder, or an HTTP rerank API: Cohere, Jina, vLLM and other compatible servers).

Every retriever takes one query or a list of queries and returns one
:class:`~lightrag.core.types.RetrieverOutput` per query. Optional packages (faiss, bm25s,
sentence-transformers) are imported only when used.

Example:
    >>> from lightrag.components.retriever import BM25Retriever
    >>> r = BM25Retriever(top_k=1, documents=["Jupiter is the biggest planet.",
    ...                                       "Mars is the red planet.", "Venus is hot."])
    >>> r("biggest planet")[0].doc_indices
    [0]
"""

from lightrag.components.retriever.bm25_retriever import (
    ENGLISH_STOPWORDS,
    BM25Retriever,
    split_text_by_word_fn,
    split_text_by_word_fn_then_lower_tokenized,
    split_text_tokenized,
)
from lightrag.components.retriever.dense_retriever import NumpyRetriever
from lightrag.components.retriever.faiss_retriever import FAISSRetriever
from lightrag.components.retriever.http_reranker import (
    CohereReranker,
    HTTPReranker,
    JinaReranker,
    RerankAPIError,
)
from lightrag.components.retriever.hybrid_retriever import HybridRetriever, reciprocal_rank_fusion
from lightrag.components.retriever.llm_retriever import LLMRetriever
from lightrag.components.retriever.postgres_retriever import PostgresRetriever
from lightrag.components.retriever.reranker import (
    CrossEncoderReranker,
    LLMReranker,
    RerankerRetriever,
    RerankOutput,
)

__all__ = [
    "BM25Retriever",
    "CohereReranker",
    "CrossEncoderReranker",
    "ENGLISH_STOPWORDS",
    "FAISSRetriever",
    "HTTPReranker",
    "HybridRetriever",
    "JinaReranker",
    "LLMReranker",
    "LLMRetriever",
    "NumpyRetriever",
    "PostgresRetriever",
    "RerankAPIError",
    "RerankOutput",
    "RerankerRetriever",
    "reciprocal_rank_fusion",
    "split_text_by_word_fn",
    "split_text_by_word_fn_then_lower_tokenized",
    "split_text_tokenized",
]
