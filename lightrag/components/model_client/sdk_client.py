"""``ChatSDKMixin``: what clients of OpenAI-style SDKs share beyond :class:`SDKClientMixin`.

OpenAI's and Groq's SDKs expose the same surface (``client.chat.completions.create``,
``client.embeddings.create``, the same response and stream shapes), so their clients differ only
in how the SDK client is created and in request details. Mixed in before the other two bases
(no mixin subclasses another): ``class OpenAIClient(ChatSDKMixin, SDKClientMixin, ModelClient)``.
"""

from __future__ import annotations

from typing import Any, Callable

from lightrag.components.model_client.chat_utils import (
    ChatCompletionParser,
    check_input_type,
    parse_completion,
    parse_embeddings,
    to_completion_usage,
    to_embedding_input,
    to_messages,
)
from lightrag.core.types import CompletionUsage, EmbedderOutput, GeneratorOutput, ModelType
from lightrag.utils.call_deadline import seconds_left


class ChatSDKMixin:
    """Chat completions and embeddings requests, and the parsing of their replies."""

    model_types = (ModelType.LLM, ModelType.EMBEDDER)
    chat_completion_parser: Any
    input_type: str

    def _init_chat(self, chat_completion_parser: ChatCompletionParser | None, input_type: str) -> None:
        self.chat_completion_parser = chat_completion_parser
        self.input_type = check_input_type(input_type)

    def _llm_api_kwargs(self, input: Any, api_kwargs: dict[str, Any]) -> dict[str, Any]:
        """``{**model_kwargs, "messages": [...]}``."""
        api_kwargs["messages"] = to_messages(input)
        return api_kwargs

    def _embedder_api_kwargs(self, input: Any, api_kwargs: dict[str, Any]) -> dict[str, Any]:
        """``{**model_kwargs, "input": [...]}``."""
        api_kwargs["input"] = to_embedding_input(input)
        return api_kwargs

    def _bounded(self, request: dict[str, Any]) -> dict[str, Any]:
        """``request`` with the SDK's ``timeout`` set to what is left of a Generator's time limit
        (unless the caller gave one): the SDK then also bounds each read of a streamed reply, so
        a stream stalled past the limit frees its thread and socket at the limit instead of the
        client's own timeout (60 s by default)."""
        left = seconds_left()
        if left is not None and left > 0 and "timeout" not in request:
            request["timeout"] = left
        return request

    def _endpoint(self, client: Any, model_type: ModelType, request: dict[str, Any]) -> Callable[..., Any]:
        return client.chat.completions.create if model_type == ModelType.LLM else client.embeddings.create

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """Text and usage of a ``ChatCompletion``, or a text stream for a streamed reply."""
        return parse_completion(completion, self.chat_completion_parser)

    def track_completion_usage(self, completion: Any) -> CompletionUsage:
        usage = to_completion_usage(getattr(completion, "usage", None))
        return usage or CompletionUsage(completion_tokens=0, prompt_tokens=0, total_tokens=0)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        return parse_embeddings(response)

    def _extra_repr(self) -> str:
        return f"input_type={self.input_type!r}" if self.input_type != "text" else ""
