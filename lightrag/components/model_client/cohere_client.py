"""``CohereAPIClient``: Cohere's reranker and embeddings (extra ``cohere``).

Reranking (``ModelType.RERANKER``) is what lightrag 0.1 used it for: the request is
``model_kwargs={"model", "documents", "top_k"}`` with the query as input, and ``call`` returns
``(top_k_indices, top_k_scores)``, the form :class:`RerankerRetriever` expects.

Example:
    >>> client = CohereAPIClient(api_key="test")
    >>> client.convert_inputs_to_api_kwargs(
    ...     input="capital of France",
    ...     model_kwargs={"model": "rerank-english-v3.0", "documents": ["Paris", "Rome"], "top_k": 1},
    ...     model_type=ModelType.RERANKER)
    {'model': 'rerank-english-v3.0', 'documents': ['Paris', 'Rome'], 'query': 'capital of France', 'top_n': 1}
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from lightrag.components.model_client.base import SDKClientMixin
from lightrag.components.model_client.chat_utils import to_embedding_input
from lightrag.core.model_client import ModelClient
from lightrag.core.types import EmbedderOutput, Embedding, ModelType
from lightrag.utils.lazy_import import OptionalPackages

__all__ = ["CohereAPIClient"]


def _ranked(response: Any) -> Tuple[List[int], List[float]]:
    results = list(getattr(response, "results", None) or [])
    return [r.index for r in results], [float(r.relevance_score) for r in results]


def _with_model(api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
    if "model" not in api_kwargs:
        raise ValueError("CohereAPIClient needs model_kwargs['model']")
    return api_kwargs


class CohereAPIClient(SDKClientMixin, ModelClient):
    """Rerank (``ModelType.RERANKER``) and embed (``ModelType.EMBEDDER``) with Cohere.

    Args:
        api_key: the key; by default read from ``env_api_key_name`` on the first request.
        env_api_key_name: the environment variable holding the key.
        timeout: seconds per request (60 when None).
    """

    sdk_package = OptionalPackages.COHERE
    sdk_classes = ("Client", "AsyncClient")
    model_types = (ModelType.RERANKER, ModelType.EMBEDDER)

    def __init__(self, api_key: Optional[str] = None, env_api_key_name: str = "COHERE_API_KEY",
                 timeout: Optional[float] = None) -> None:
        super().__init__()
        self._init_api_key(api_key, env_api_key_name, timeout)

    def _client_kwargs(self) -> Dict[str, Any]:
        return {"api_key": self._resolved_api_key(), "timeout": self.call_timeout() or None}

    def _reranker_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``query`` + ``documents`` + ``top_n`` (from ``top_k``)."""
        for key in ("documents", "top_k"):
            if key not in _with_model(api_kwargs):
                raise ValueError(f"a Cohere rerank request needs model_kwargs[{key!r}]")
        api_kwargs["query"] = input
        api_kwargs["top_n"] = api_kwargs.pop("top_k")
        return api_kwargs

    def _embedder_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``texts`` (and ``input_type``, ``search_document`` by default)."""
        _with_model(api_kwargs)["texts"] = to_embedding_input(input)
        api_kwargs.setdefault("input_type", "search_document")
        return api_kwargs

    def _endpoint(self, client: Any, model_type: ModelType, request: Dict[str, Any]) -> Callable[..., Any]:
        return client.rerank if model_type == ModelType.RERANKER else client.embed

    def _finish(self, response: Any, model_type: ModelType) -> Any:
        """Rerank -> ``(indices, scores)``; embed -> the SDK's embed response."""
        return _ranked(response) if model_type == ModelType.RERANKER else response

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        """Vectors of an embed response (``response.embeddings``)."""
        try:
            vectors = response.embeddings
            vectors = getattr(vectors, "float_", None) or getattr(vectors, "float", None) or vectors
            data = [Embedding(embedding=list(map(float, v)), index=i) for i, v in enumerate(vectors)]
        except Exception as e:
            return EmbedderOutput(data=[], error=f"parse error: {e}", raw_response=response)
        return EmbedderOutput(data=data)
