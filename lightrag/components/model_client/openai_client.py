"""``OpenAIClient``: OpenAI chat completions and embeddings, and any OpenAI-compatible server.

The ``openai`` SDK is optional: this module imports without it, and the SDK client is created on
the first request (so a pipeline can be built, printed and saved to a config without a key).
With ``base_url`` the client talks to any OpenAI-compatible server (Ollama, vLLM, LM Studio…).

Example:
    >>> from lightrag.core.generator import Generator
    >>> gen = Generator(
    ...     model_client=OpenAIClient(),
    ...     model_kwargs={"model": "gpt-4o-mini", "temperature": 0},
    ... )
    >>> gen(prompt_kwargs={"input_str": "What is LightRAG?"}).data  # doctest: +SKIP
    'LightRAG is ...'
    >>> local = OpenAIClient(base_url="http://localhost:11434/v1")  # Ollama, no key needed
    >>> local
    OpenAIClient(base_url='http://localhost:11434/v1')
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from lightrag.components.model_client.chat_utils import (
    ChatCompletionParser,
    chat_api_kwargs,
    check_input_type,
    embedding_api_kwargs,
    get_all_messages_content,
    get_first_message_content,
    get_probabilities,
    parse_completion,
    parse_embeddings,
    parse_stream_response,
    resolve_api_key,
    to_completion_usage,
)
from lightrag.core.model_client import ModelClient
from lightrag.core.retry import with_retries
from lightrag.core.types import CompletionUsage, EmbedderOutput, GeneratorOutput, ModelType
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = [
    "OpenAIClient",
    "get_all_messages_content",
    "get_first_message_content",
    "get_probabilities",
    "parse_stream_response",
]

log = logging.getLogger(__name__)

#: Sent as the key to a ``base_url`` server when no key is configured (local servers ignore it).
LOCAL_SERVER_API_KEY = "not-needed"


class OpenAIClient(ModelClient):
    """Chat completions (``ModelType.LLM``) and embeddings (``ModelType.EMBEDDER``) via ``openai``.

    Args:
        api_key: the API key; by default read from ``env_api_key_name`` when first needed.
        chat_completion_parser: turns a whole ``ChatCompletion`` into ``GeneratorOutput.data``;
            defaults to :func:`get_first_message_content`.
        input_type: ``"text"``: the input is a rendered prompt, whose ``<SYS>…</SYS>`` block
            becomes the system message and the rest the user message; ``"messages"``: the input
            is a list of ``{"role", "content"}`` messages. Both modes accept both forms; a list
            of messages is always sent as it is.
        base_url: an OpenAI-compatible endpoint; by default ``env_base_url_name``, else OpenAI's.
            With a base URL and no key, a placeholder key is sent.
        env_api_key_name: the environment variable holding the key.
        env_base_url_name: the environment variable holding the base URL.
        organization: the OpenAI organization id, if any.
        timeout: the request timeout in seconds (the SDK's default when None).

    Transient errors (rate limits, timeouts, 5xx) are retried per ``retry_policy``; the SDK's own
    retries are switched off so the policy is the only one.

    Streaming: with ``model_kwargs={"stream": True}``, ``parse_chat_completion`` gives an output
    whose ``data`` yields the text as it arrives (an async generator after ``acall``). Token usage
    is requested with ``stream_options={"include_usage": True}`` (pass ``stream_options=None`` for
    servers that reject it) and lands in ``output.usage`` once the stream is consumed. Streaming
    changes nothing on the client, so later non-streaming calls work as usual.

    Example:
        >>> client = OpenAIClient(api_key="sk-test")
        >>> api_kwargs = client.convert_inputs_to_api_kwargs(
        ...     input="<SYS>You are terse.</SYS> Hi!",
        ...     model_kwargs={"model": "gpt-4o-mini"},
        ...     model_type=ModelType.LLM,
        ... )
        >>> api_kwargs["messages"]
        [{'role': 'system', 'content': 'You are terse.'}, {'role': 'user', 'content': 'Hi!'}]
    """

    _config_exclude = ("api_key",)
    _to_dict_exclude = ("sync_client", "async_client", "_api_key")

    def __init__(
        self,
        api_key: str | None = None,
        chat_completion_parser: ChatCompletionParser | None = None,
        input_type: str = "text",
        base_url: str | None = None,
        env_api_key_name: str = "OPENAI_API_KEY",
        env_base_url_name: str = "OPENAI_BASE_URL",
        organization: str | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__()
        self._api_key = api_key
        self.chat_completion_parser = chat_completion_parser
        self.input_type = check_input_type(input_type)
        self.base_url = base_url
        self.env_api_key_name = env_api_key_name
        self.env_base_url_name = env_base_url_name
        self.organization = organization
        self.timeout = timeout

    # ------------------------------------------------------------------ SDK clients
    def _resolved_base_url(self) -> str | None:
        return self.base_url or os.getenv(self.env_base_url_name) or None

    def _client_kwargs(self) -> dict[str, Any]:
        base_url = self._resolved_base_url()
        kwargs: dict[str, Any] = {
            "api_key": resolve_api_key(
                self._api_key,
                self.env_api_key_name,
                "OpenAIClient",
                placeholder=LOCAL_SERVER_API_KEY if base_url else None,
            ),
            "max_retries": 0,
        }
        if base_url:
            kwargs["base_url"] = base_url
        if self.organization:
            kwargs["organization"] = self.organization
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return kwargs

    def init_sync_client(self) -> Any:
        """A new ``openai.OpenAI`` client (ImportError without the SDK, ValueError without a key)."""
        openai = safe_import(*OptionalPackages.OPENAI.value)
        return openai.OpenAI(**self._client_kwargs())

    def init_async_client(self) -> Any:
        """A new ``openai.AsyncOpenAI`` client."""
        openai = safe_import(*OptionalPackages.OPENAI.value)
        return openai.AsyncOpenAI(**self._client_kwargs())

    @staticmethod
    def _endpoint(client: Any, model_type: ModelType) -> Callable[..., Any]:
        if model_type == ModelType.LLM:
            return client.chat.completions.create
        if model_type == ModelType.EMBEDDER:
            return client.embeddings.create
        raise ValueError(f"OpenAIClient does not support model_type={model_type}")

    # --------------------------------------------------------------------- requests
    def convert_inputs_to_api_kwargs(
        self,
        input: Any | None = None,
        model_kwargs: dict[str, Any] | None = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> dict[str, Any]:
        """``messages`` (LLM) or ``input`` (embedder) plus ``model_kwargs``."""
        if model_type == ModelType.EMBEDDER:
            return embedding_api_kwargs(input, model_kwargs)
        if model_type != ModelType.LLM:
            raise ValueError(f"OpenAIClient does not support model_type={model_type}")
        api_kwargs = chat_api_kwargs(input, model_kwargs)
        if api_kwargs.get("stream"):
            api_kwargs.setdefault("stream_options", {"include_usage": True})
            if api_kwargs["stream_options"] is None:
                del api_kwargs["stream_options"]
        return api_kwargs

    @with_retries
    def call(
        self, api_kwargs: dict[str, Any] | None = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Send the request; a ``ChatCompletion``, a chunk ``Stream`` or embeddings come back."""
        if model_type not in (ModelType.LLM, ModelType.EMBEDDER):
            raise ValueError(f"OpenAIClient does not support model_type={model_type}")
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        return self._endpoint(self.sync_client, model_type)(**(api_kwargs or {}))

    @with_retries
    async def acall(
        self, api_kwargs: dict[str, Any] | None = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """Async :meth:`call`; a stream comes back as an async iterator of chunks."""
        if model_type not in (ModelType.LLM, ModelType.EMBEDDER):
            raise ValueError(f"OpenAIClient does not support model_type={model_type}")
        if self.async_client is None:
            self.async_client = self.init_async_client()
        return await self._endpoint(self.async_client, model_type)(**(api_kwargs or {}))

    # -------------------------------------------------------------------- responses
    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """Text and usage of a ``ChatCompletion``, or a text stream for a streamed reply."""
        return parse_completion(completion, self.chat_completion_parser)

    def track_completion_usage(self, completion: Any) -> CompletionUsage:
        usage = to_completion_usage(getattr(completion, "usage", None))
        return usage or CompletionUsage(completion_tokens=0, prompt_tokens=0, total_tokens=0)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        return parse_embeddings(response)

    # ---------------------------------------------------------------- housekeeping
    def _after_from_dict(self) -> None:
        self.sync_client = None
        self.async_client = None
        self._api_key = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["sync_client"] = None
        state["async_client"] = None
        return state

    def _extra_repr(self) -> str:
        parts = []
        base_url = self._resolved_base_url()
        if base_url:
            parts.append(f"base_url={base_url!r}")
        if self.input_type != "text":
            parts.append(f"input_type={self.input_type!r}")
        return ", ".join(parts)
