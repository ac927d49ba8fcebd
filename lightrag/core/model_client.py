"""``ModelClient``: the one interface between lightrag and a model provider.

A client turns lightrag's inputs into the provider's request (``convert_inputs_to_api_kwargs``),
sends it (``call``/``acall``) and turns the reply back into lightrag types
(``parse_chat_completion`` -> :class:`GeneratorOutput`, ``parse_embedding_response`` ->
:class:`EmbedderOutput`). Generators and Embedders only ever talk to this interface, so swapping
Groq for OpenAI or a local model is a one-line change.

Subclasses decorate ``call``/``acall`` with :func:`lightrag.core.retry.with_retries` so transient
provider errors are retried with exponential backoff (never client errors such as a bad request).

Example (a client that echoes the prompt, handy in tests):
    >>> from lightrag.core.types import GeneratorOutput, ModelType
    >>> class Echo(ModelClient):
    ...     def convert_inputs_to_api_kwargs(self, input=None, model_kwargs=None,
    ...                                      model_type=ModelType.UNDEFINED):
    ...         return {"prompt": input, **(model_kwargs or {})}
    ...     def call(self, api_kwargs=None, model_type=ModelType.UNDEFINED):
    ...         return api_kwargs["prompt"]
    ...     def parse_chat_completion(self, completion):
    ...         return GeneratorOutput(data=completion, raw_response=completion)
    >>> Echo().call({"prompt": "hi"})
    'hi'
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional, TypeVar

from lightrag.core.component import Component
from lightrag.core.retry import RetryPolicy
from lightrag.core.types import (
    CompletionUsage,
    EmbedderOutput,
    Embedding,
    GeneratorOutput,
    ModelType,
    Usage,
)

#: the methods :meth:`ModelClient.convert_inputs_to_api_kwargs` hands each model type to
_API_KWARGS_HOOKS = {
    ModelType.LLM: "_llm_api_kwargs",
    ModelType.EMBEDDER: "_embedder_api_kwargs",
    ModelType.RERANKER: "_reranker_api_kwargs",
}


_ASYNC_CLIENT_LOCK = threading.Lock()
MC = TypeVar("MC", bound="ModelClient")


class ModelClient(Component):
    """Base class of model clients (LLMs, embedders, rerankers).

    Attributes:
        sync_client: the provider's sync SDK client, created by ``init_sync_client``.
        async_client: the provider's async SDK client, created lazily by ``init_async_client``.
        retry_policy: how transient errors are retried.
        rate_limit: the requests per minute the HTTP clients keep to (:meth:`limit_rate`;
            None: as fast as the callers ask).
    """

    _config_exclude = ("api_key",)
    #: seconds a Generator waits for one request when neither it nor the client sets ``timeout``
    #: (API clients 60 s; local models, which may load first, 300 s).
    default_timeout: float = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.sync_client: Any = None
        self.async_client: Any = None
        self.retry_policy = RetryPolicy()

    def _after_from_dict(self) -> None:
        """SDK clients are never serialised: recreated lazily on the next request."""
        for name in ("sync_client", "async_client"):
            if name not in self.__dict__:
                object.__setattr__(self, name, None)
        object.__setattr__(self, "_async_client_loop", None)
        object.__setattr__(self, "_async_client_bound", None)
        if "retry_policy" not in self.__dict__:
            self.retry_policy = RetryPolicy()

    def __getstate__(self) -> Dict[str, Any]:
        """Pickled without SDK clients (they hold sockets and locks): recreated on next use."""
        state = dict(self.__dict__)
        state["sync_client"] = None
        state["async_client"] = None
        state["_async_client_loop"] = None
        state["_async_client_bound"] = None
        return state

    def limit_rate(self: MC, requests_per_minute: Optional[float], burst: int = 1) -> MC:
        """Start at most ``requests_per_minute`` requests a minute (``burst`` at once), whatever
        the number of threads and event loops calling this client; retries count as requests.
        ``None`` removes the limit. Returns the client.

        Example:
            >>> from lightrag.components.model_client import OpenAIClient
            >>> OpenAIClient(api_key="sk-x").limit_rate(60).rate_limit
            RequestRateLimit(requests_per_minute=60, burst=1)
        """
        from lightrag.utils.rate_limit import RequestRateLimit

        limit = None if requests_per_minute is None else RequestRateLimit(requests_per_minute, burst)
        object.__setattr__(self, "rate_limit", limit)
        return self

    def call_timeout(self) -> Optional[float]:
        """Seconds one request may take: the client's ``timeout`` if set, else its default.

        ``0`` or a negative value means no limit.
        """
        timeout = self.__dict__.get("timeout")
        return self.default_timeout if timeout is None else timeout

    def init_sync_client(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no sync client")

    def init_async_client(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no async client")

    def loop_async_client(self) -> Any:
        """The async SDK client for the running event loop, created on first use in that loop.

        An async SDK client (httpx underneath) holds connections bound to the loop that opened
        them; each sync call (``rag.query``, ``rag.insert``) runs its own short-lived loop, so a
        client kept from an earlier loop fails with "Event loop is closed". Each loop therefore
        gets its own client (dropped with the loop); a client assigned to ``async_client`` by hand
        is adopted by the next loop that uses it.
        """
        import asyncio
        import weakref

        loop = asyncio.get_running_loop()
        with _ASYNC_CLIENT_LOCK:  # query threads each run a loop: one decision at a time
            clients = self.__dict__.get("_async_client_loop")
            if clients is None:
                clients = weakref.WeakKeyDictionary()
                object.__setattr__(self, "_async_client_loop", clients)
                object.__setattr__(self, "_async_clients_made", set())
            client = clients.get(loop)
            if client is None:
                # adopt a client assigned by hand, never one made here for another loop
                made = self.__dict__["_async_clients_made"]
                current = self.async_client
                adopt = current is not None and id(current) not in made
                client = current if adopt else self.init_async_client()
                clients[loop] = client
                made.add(id(client))
            self.async_client = client
        return client

    def convert_inputs_to_api_kwargs(
        self,
        input: Optional[Any] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Dict[str, Any]:
        """Build the provider request from lightrag's input and ``model_kwargs``.

        A subclass overrides this, or implements a hook per model type it serves, each given the
        input and a copy of ``model_kwargs`` to complete: ``_llm_api_kwargs(input, api_kwargs)``,
        ``_embedder_api_kwargs`` and ``_reranker_api_kwargs``. Another model type raises
        ``ValueError``.
        """
        hooks = {t: getattr(self, name, None) for t, name in _API_KWARGS_HOOKS.items()}
        if not any(hooks.values()):
            raise NotImplementedError(
                f"{type(self).__name__} must implement convert_inputs_to_api_kwargs"
            )
        hook = hooks.get(model_type)
        if hook is None:
            served = ", ".join(t.name for t, h in hooks.items() if h is not None)
            raise ValueError(
                f"{type(self).__name__} does not support model_type={model_type}: "
                f"it serves {served} requests only"
            )
        return hook(input, dict(model_kwargs or {}))

    def call(
        self,
        api_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement call")

    async def acall(
        self,
        api_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Any:
        """Async call; by default the sync ``call`` in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.call, api_kwargs, model_type)

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """Turn the provider's chat reply into a :class:`GeneratorOutput` (``data`` = text)."""
        if isinstance(completion, GeneratorOutput):
            return completion
        text = completion if isinstance(completion, str) else str(completion)
        return GeneratorOutput(data=text, raw_response=text)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        """Turn the provider's embedding reply into an :class:`EmbedderOutput`."""
        if isinstance(response, EmbedderOutput):
            return response
        vectors = list(response)
        return EmbedderOutput(
            data=[Embedding(embedding=list(map(float, v)), index=i) for i, v in enumerate(vectors)]
        )

    def cache_namespace(self) -> str:
        """What, besides the request, identifies this client's answers in a response cache.

        The default is the client's repr, which names its model or endpoint where the request
        does not (a local client drops ``model`` from the request), so two models never share
        cached answers.
        """
        return repr(self)

    def track_completion_usage(self, completion: Any) -> CompletionUsage:
        """Token usage of a reply; providers override this (unknown -> zeros)."""
        return CompletionUsage(completion_tokens=0, prompt_tokens=0, total_tokens=0)

    @staticmethod
    def _process_text(text: str) -> str:
        return text.replace("\n", " ")

    def _track_usage(self, **kwargs: Any) -> Usage:
        return Usage(**kwargs)


def compose_model_kwargs(
    default_model_kwargs: Dict[str, Any], model_kwargs: Optional[Dict[str, Any]]
) -> Dict[str, Any]:
    """A copy of ``default_model_kwargs`` updated with ``model_kwargs`` (call-time wins).

    Example:
        >>> compose_model_kwargs({"model": "a", "temperature": 0}, {"model": "b"})
        {'model': 'b', 'temperature': 0}
    """
    return {**default_model_kwargs, **(model_kwargs or {})}
