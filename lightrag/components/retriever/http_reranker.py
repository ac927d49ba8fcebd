"""Rerankers behind an HTTP ``/rerank`` API: Cohere, Jina and the self-hosted servers that speak
their shape (vLLM, Xinference, LocalAI, LiteLLM, Infinity, ...).

Request: ``POST {base_url}/rerank`` with ``{"model", "query", "documents": [str, ...], "top_n"}``
and ``Authorization: Bearer <key>``. Response: ``{"results": [{"index", "relevance_score"}, ...]}``
(Cohere v2 and Jina); a bare list of results and a ``score`` key (Hugging Face TEI's reply) are
read too.

- :class:`HTTPReranker` takes any ``base_url``; a key (``RERANK_BINDING_API_KEY``) is optional.
- :class:`CohereReranker` is preset to ``https://api.cohere.com/v2`` and ``COHERE_API_KEY``.
- :class:`JinaReranker` is preset to ``https://api.jina.ai/v1`` and ``JINA_API_KEY``.

The key is read from the environment on the first request (or passed as ``api_key``); it is never
written by ``to_dict``, a YAML dump or ``repr``. 429 and 5xx replies, timeouts and connection
errors are retried with exponential backoff (honouring ``Retry-After``); other 4xx replies raise
:class:`RerankAPIError` at once.

Example:
    >>> reranker = JinaReranker(top_n=3)
    >>> reranker
    JinaReranker(base_url='https://api.jina.ai/v1', model='jina-reranker-v2-base-multilingual', top_n=3)
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from typing import Any, Dict, List, Optional, Tuple

import httpx

from lightrag.components.retriever._common import doc_text
from lightrag.components.retriever.reranker import (
    RerankInput,
    RerankOutput,
    _candidates,
    _ranked,
)
from lightrag.core.component import Component
from lightrag.utils.secrets import check_not_redacted

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 60.0


class RerankAPIError(RuntimeError):
    """A rerank request that failed: a 4xx reply, retries exhausted, or a reply of the wrong shape.

    Attributes:
        status_code: the HTTP status (None when no reply came or the reply was unreadable).
    """

    def __init__(self, message: str, status_code: Optional[int] = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class HTTPReranker(Component):
    """Rerank passages with a Cohere/Jina-shaped HTTP ``/rerank`` API.

    Args:
        base_url: the API root (``.../rerank`` is appended unless the URL already ends with it),
            e.g. ``http://localhost:8000/v1`` for a vLLM server.
        model: the rerank model's name, sent as ``"model"``.
        top_n: default number of passages kept (and asked of the API); None keeps them all, which
            is what the graph RAG query modes want (they cut the chunks by their own budgets).
        api_key: the key; when None it is read from ``env_api_key_name`` at the first request.
            No key at all sends no ``Authorization`` header (self-hosted servers). Configs never
            carry keys (:func:`lightrag.utils.config.build` refuses them): use the environment.
        env_api_key_name: the environment variable holding the key (default
            ``RERANK_BINDING_API_KEY``, HKU LightRAG's name; ``COHERE_API_KEY`` / ``JINA_API_KEY``
            for the presets).
        timeout: seconds per request.
        max_retries: retries after a 429/5xx reply, a timeout or a connection error.
        backoff: first retry delay in seconds, doubled at each retry (with jitter).
        extra_body: more request fields, e.g. ``{"max_tokens_per_doc": 4096}`` (Cohere) or
            ``{"return_documents": False}`` (Jina).
        headers: more request headers. ``to_dict`` (so a saved pipeline) writes them
            ``<redacted>``; a reranker rebuilt from one refuses to send the marker
            (:class:`~lightrag.utils.secrets.RedactedValueError`) until they are set again.

    ``call(query, documents, top_k)`` returns a :class:`RerankOutput`: the ``top_k`` best, best
    first; passages the API did not score (beyond its ``top_n``) rank below all scored ones.
    """

    default_base_url: str = ""
    default_model: str = ""
    default_env_api_key_name: str = "RERANK_BINDING_API_KEY"
    key_required: bool = False

    _config_exclude = ("api_key",)
    _to_dict_exclude = ("_api_key", "_client")

    def __init__(
        self,
        base_url: Optional[str] = None,
        model: Optional[str] = None,
        top_n: Optional[int] = None,
        api_key: Optional[str] = None,
        env_api_key_name: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        extra_body: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
    ) -> None:
        super().__init__()
        base_url = base_url or self.default_base_url
        if not base_url:
            raise ValueError(f"{type(self).__name__} needs a base_url (the rerank API's root)")
        if top_n is not None and (not isinstance(top_n, int) or top_n < 1):
            raise ValueError(f"top_n must be a positive integer or None, got {top_n!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model or self.default_model
        self.top_n = top_n
        self.env_api_key_name = env_api_key_name or self.default_env_api_key_name
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        self._api_key = api_key
        self._client: Optional[httpx.Client] = None

    def _after_from_dict(self) -> None:
        """The key and the HTTP client are never saved: the key is read from the environment
        and the client made again at the first request."""
        object.__setattr__(self, "_api_key", None)
        object.__setattr__(self, "_client", None)

    # ------------------------------------------------------------------ request
    @property
    def url(self) -> str:
        """The endpoint requests go to."""
        return self.base_url if self.base_url.endswith("/rerank") else f"{self.base_url}/rerank"

    def _key(self) -> Optional[str]:
        key = self._api_key or (os.getenv(self.env_api_key_name) if self.env_api_key_name else None)
        if not key and self.key_required:
            raise ValueError(
                f"{type(self).__name__} needs an API key: set the environment variable "
                f"{self.env_api_key_name} or pass the key as the api_key argument"
            )
        return key or None

    def _request_headers(self) -> Dict[str, str]:
        check_not_redacted(self.headers, "headers", owner="reranker")  # a saved secret is not sent
        check_not_redacted(self.extra_body, "extra_body", owner="reranker")
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, query: str, texts: List[str], top_n: int) -> Dict[str, Any]:
        body: Dict[str, Any] = {"query": query, "documents": texts, "top_n": top_n}
        if self.model:
            body["model"] = self.model
        body.update(self.extra_body)
        return body

    def _delay(self, attempt: int, response: Optional[httpx.Response]) -> float:
        if response is not None:
            retry_after = response.headers.get("retry-after")
            try:
                if retry_after is not None:
                    return min(max(float(retry_after), 0.0), MAX_RETRY_AFTER_S)
            except ValueError:
                pass
        return self.backoff * (2**attempt) * (1.0 + 0.1 * random.random())

    def _check(self, response: httpx.Response) -> Dict[str, Any]:
        if response.status_code >= 400:
            detail = response.text[:300].strip()
            raise RerankAPIError(
                f"{type(self).__name__}: {self.url} answered HTTP {response.status_code}: {detail}",
                status_code=response.status_code,
            )
        try:
            return response.json()
        except ValueError as e:
            raise RerankAPIError(
                f"{type(self).__name__}: {self.url} did not answer JSON: {response.text[:200]!r}",
                status_code=response.status_code,
            ) from e

    def _retryable(self, attempt: int, what: str) -> bool:
        if attempt >= self.max_retries:
            return False
        log.warning("%s: %s; retry %d of %d", type(self).__name__, what, attempt + 1, self.max_retries)
        return True

    def _post(self, body: Dict[str, Any]) -> Dict[str, Any]:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        headers = self._request_headers()
        attempt = 0
        while True:
            try:
                response = self._client.post(self.url, json=body, headers=headers)
            except httpx.TransportError as e:
                if not self._retryable(attempt, f"request failed ({type(e).__name__}: {e})"):
                    raise RerankAPIError(f"{type(self).__name__}: {self.url} unreachable: {e}") from e
                time.sleep(self._delay(attempt, None))
                attempt += 1
                continue
            if response.status_code in RETRY_STATUSES and self._retryable(
                attempt, f"HTTP {response.status_code}"
            ):
                time.sleep(self._delay(attempt, response))
                attempt += 1
                continue
            return self._check(response)

    async def _apost(self, body: Dict[str, Any]) -> Dict[str, Any]:
        headers = self._request_headers()
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            attempt = 0
            while True:
                try:
                    response = await client.post(self.url, json=body, headers=headers)
                except httpx.TransportError as e:
                    if not self._retryable(attempt, f"request failed ({type(e).__name__}: {e})"):
                        raise RerankAPIError(
                            f"{type(self).__name__}: {self.url} unreachable: {e}"
                        ) from e
                    await asyncio.sleep(self._delay(attempt, None))
                    attempt += 1
                    continue
                if response.status_code in RETRY_STATUSES and self._retryable(
                    attempt, f"HTTP {response.status_code}"
                ):
                    await asyncio.sleep(self._delay(attempt, response))
                    attempt += 1
                    continue
                return self._check(response)

    # ------------------------------------------------------------------ reply
    def _scores(self, reply: Any, count: int) -> List[float]:
        """Every passage's score in input order; passages left unscored rank below the rest."""
        results = reply.get("results", reply.get("data")) if isinstance(reply, dict) else reply
        if not isinstance(results, list):
            raise RerankAPIError(f"{type(self).__name__}: no 'results' list in the reply {reply!r:.200}")
        scored: Dict[int, float] = {}
        for item in results:
            try:
                index = int(item["index"])
                score = item["relevance_score"] if "relevance_score" in item else item["score"]
                scored[index] = float(score)
            except (KeyError, TypeError, ValueError) as e:
                raise RerankAPIError(
                    f"{type(self).__name__}: a result without index/relevance_score: {item!r:.200}"
                ) from e
            if not 0 <= index < count:
                raise RerankAPIError(
                    f"{type(self).__name__}: result index {index} out of range for {count} passages"
                )
        floor = min(scored.values(), default=0.0) - 1.0
        return [scored.get(i, floor) for i in range(count)]

    def _prepare(
        self, query: str, documents: RerankInput, top_k: Optional[int]
    ) -> Tuple[List[int], List[Any], int]:
        indices, docs = _candidates(documents)
        k = top_k if top_k is not None else (self.top_n or len(docs))
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"top_k must be a positive integer, got {k!r}")
        return indices, docs, min(k, len(docs))

    # ------------------------------------------------------------------ calls
    def call(
        self, query: str, documents: RerankInput, top_k: Optional[int] = None
    ) -> RerankOutput:
        """Rerank ``documents`` for ``query`` through the API; keep the ``top_k`` best."""
        indices, docs, k = self._prepare(query, documents, top_k)
        if not docs:
            return RerankOutput(doc_indices=[], doc_scores=[], query=query, documents=[])
        reply = self._post(self._body(query, [doc_text(d) for d in docs], k))
        return _ranked(query, indices, docs, self._scores(reply, len(docs)), k)

    async def acall(
        self, query: str, documents: RerankInput, top_k: Optional[int] = None
    ) -> RerankOutput:
        """Like :meth:`call`, with an async HTTP client."""
        indices, docs, k = self._prepare(query, documents, top_k)
        if not docs:
            return RerankOutput(doc_indices=[], doc_scores=[], query=query, documents=[])
        reply = await self._apost(self._body(query, [doc_text(d) for d in docs], k))
        return _ranked(query, indices, docs, self._scores(reply, len(docs)), k)

    def close(self) -> None:
        """Close the pooled sync HTTP connection (a new one opens on the next call)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _extra_repr(self) -> str:
        return f"base_url={self.base_url!r}, model={self.model!r}, top_n={self.top_n}"


class CohereReranker(HTTPReranker):
    """Cohere's rerank API (v2): ``HTTPReranker`` preset to ``https://api.cohere.com/v2``,
    ``rerank-v3.5`` and the ``COHERE_API_KEY`` environment variable (required)."""

    default_base_url = "https://api.cohere.com/v2"
    default_model = "rerank-v3.5"
    default_env_api_key_name = "COHERE_API_KEY"
    key_required = True


class JinaReranker(HTTPReranker):
    """Jina AI's rerank API: ``HTTPReranker`` preset to ``https://api.jina.ai/v1``,
    ``jina-reranker-v2-base-multilingual`` and the ``JINA_API_KEY`` environment variable
    (required)."""

    default_base_url = "https://api.jina.ai/v1"
    default_model = "jina-reranker-v2-base-multilingual"
    default_env_api_key_name = "JINA_API_KEY"
    key_required = True
