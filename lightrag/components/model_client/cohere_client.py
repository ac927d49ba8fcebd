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

from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.model_client.chat_utils import resolve_api_key, to_embedding_input
from lightrag.core.model_client import ModelClient
from lightrag.core.retry import with_retries
from lightrag.core.types import EmbedderOutput, Embedding, ModelType
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = ["CohereAPIClient"]


def _ranked(response: Any) -> Tuple[List[int], List[float]]:
    results = list(getattr(response, "results", None) or [])
    return [r.index for r in results], [float(r.relevance_score) for r in results]


class CohereAPIClient(ModelClient):
    """Rerank (``ModelType.RERANKER``) and embed (``ModelType.EMBEDDER``) with Cohere.

    Args:
        api_key: the key; by default read from ``env_api_key_name`` on the first request.
        env_api_key_name: the environment variable holding the key.
        timeout: seconds per request (60 when None).
    """

    _config_exclude = ("api_key",)
    _to_dict_exclude = ("sync_client", "async_client", "_api_key")

    def __init__(
        self,
        api_key: Optional[str] = None,
        env_api_key_name: str = "COHERE_API_KEY",
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        self._api_key = api_key
        self.env_api_key_name = env_api_key_name
        self.timeout = timeout

    def _key(self) -> str:
        return resolve_api_key(self._api_key, self.env_api_key_name, "CohereAPIClient")

    def init_sync_client(self) -> Any:
        """A new ``cohere.Client``."""
        cohere = safe_import(*OptionalPackages.COHERE.value)
        return cohere.Client(api_key=self._key(), timeout=self.call_timeout() or None)

    def init_async_client(self) -> Any:
        """A new ``cohere.AsyncClient``."""
        cohere = safe_import(*OptionalPackages.COHERE.value)
        return cohere.AsyncClient(api_key=self._key(), timeout=self.call_timeout() or None)

    def convert_inputs_to_api_kwargs(
        self,
        input: Optional[Any] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Dict[str, Any]:
        """Rerank: ``query`` + ``documents`` + ``top_n``; embed: ``texts``."""
        api_kwargs = dict(model_kwargs or {})
        if "model" not in api_kwargs:
            raise ValueError("CohereAPIClient needs model_kwargs['model']")
        if model_type == ModelType.RERANKER:
            for key in ("documents", "top_k"):
                if key not in api_kwargs:
                    raise ValueError(f"a Cohere rerank request needs model_kwargs[{key!r}]")
            api_kwargs["query"] = input
            api_kwargs["top_n"] = api_kwargs.pop("top_k")
            return api_kwargs
        if model_type == ModelType.EMBEDDER:
            api_kwargs["texts"] = to_embedding_input(input)
            api_kwargs.setdefault("input_type", "search_document")
            return api_kwargs
        raise ValueError(f"CohereAPIClient does not support model_type={model_type}")

    @with_retries
    def call(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Rerank -> ``(indices, scores)``; embed -> the SDK's embed response."""
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        if model_type == ModelType.RERANKER:
            return _ranked(self.sync_client.rerank(**(api_kwargs or {})))
        if model_type == ModelType.EMBEDDER:
            return self.sync_client.embed(**(api_kwargs or {}))
        raise ValueError(f"CohereAPIClient does not support model_type={model_type}")

    @with_retries
    async def acall(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        client = self.loop_async_client()
        if model_type == ModelType.RERANKER:
            return _ranked(await client.rerank(**(api_kwargs or {})))
        if model_type == ModelType.EMBEDDER:
            return await client.embed(**(api_kwargs or {}))
        raise ValueError(f"CohereAPIClient does not support model_type={model_type}")

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        """Vectors of an embed response (``response.embeddings``)."""
        try:
            vectors = response.embeddings
            vectors = getattr(vectors, "float_", None) or getattr(vectors, "float", None) or vectors
            data = [Embedding(embedding=list(map(float, v)), index=i) for i, v in enumerate(vectors)]
        except Exception as e:
            return EmbedderOutput(data=[], error=f"parse error: {e}", raw_response=response)
        return EmbedderOutput(data=data)
