"""``ChatSDKMixin``: the request/response plumbing shared by clients of OpenAI-style SDKs.

OpenAI's and Groq's SDKs expose the same surface (``client.chat.completions.create``,
``client.embeddings.create``, the same response and stream shapes), so their clients differ only
in how the SDK client is created and in request details. Mixed in before :class:`ModelClient`:
``class OpenAIClient(ChatSDKMixin, ModelClient)``.
"""

from __future__ import annotations

from typing import Any, Callable

from lightrag.components.model_client.chat_utils import (
    parse_completion,
    parse_embeddings,
    to_completion_usage,
)
from lightrag.core.retry import with_retries
from lightrag.core.types import CompletionUsage, EmbedderOutput, GeneratorOutput, ModelType


class ChatSDKMixin:
    """``call``/``acall`` with retries, response parsing and SDK-free pickling/serialisation."""

    sync_client: Any
    async_client: Any
    chat_completion_parser: Any
    init_sync_client: Callable[[], Any]
    init_async_client: Callable[[], Any]

    def _check_model_type(self, model_type: ModelType) -> None:
        if model_type not in (ModelType.LLM, ModelType.EMBEDDER):
            raise ValueError(f"{type(self).__name__} does not support model_type={model_type}")

    @staticmethod
    def _endpoint(client: Any, model_type: ModelType) -> Callable[..., Any]:
        return client.chat.completions.create if model_type == ModelType.LLM else client.embeddings.create

    @with_retries
    def call(
        self, api_kwargs: dict[str, Any] | None = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Send the request; a ``ChatCompletion``, a chunk ``Stream`` or embeddings come back."""
        self._check_model_type(model_type)
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        return self._endpoint(self.sync_client, model_type)(**(api_kwargs or {}))

    @with_retries
    async def acall(
        self, api_kwargs: dict[str, Any] | None = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Async :meth:`call`; a stream comes back as an async iterator of chunks."""
        self._check_model_type(model_type)
        return await self._endpoint(self.loop_async_client(), model_type)(**(api_kwargs or {}))

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """Text and usage of a ``ChatCompletion``, or a text stream for a streamed reply."""
        return parse_completion(completion, self.chat_completion_parser)

    def track_completion_usage(self, completion: Any) -> CompletionUsage:
        usage = to_completion_usage(getattr(completion, "usage", None))
        return usage or CompletionUsage(completion_tokens=0, prompt_tokens=0, total_tokens=0)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        return parse_embeddings(response)

    def _after_from_dict(self) -> None:
        self.sync_client = None
        self.async_client = None
        self._api_key = None

