"""``AnthropicAPIClient``: Claude through Anthropic's Messages API (extra ``anthropic``).

The ``anthropic`` SDK is imported on the first request, so the client can be built, printed and
saved without it. A rendered prompt's ``<SYS>…</SYS>`` block becomes the Messages API's
top-level ``system`` parameter and the rest the user message; a list of ``{"role", "content"}``
messages is sent as it is (its system messages moved to ``system``). The API requires
``max_tokens``; the client sends ``default_max_tokens`` when the request gives none.

Example:
    >>> client = AnthropicAPIClient(api_key="sk-ant-test")
    >>> kwargs = client.convert_inputs_to_api_kwargs(
    ...     input="<SYS>Be terse.</SYS> Hi!", model_kwargs={"model": "claude-3-5-haiku-latest"},
    ...     model_type=ModelType.LLM)
    >>> kwargs["system"], kwargs["messages"], kwargs["max_tokens"]
    ('Be terse.', [{'role': 'user', 'content': 'Hi!'}], 1024)
"""

from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Callable, Dict, Iterator, Optional

from lightrag.components.model_client.chat_utils import resolve_api_key, to_messages
from lightrag.core.model_client import ModelClient
from lightrag.core.retry import with_retries
from lightrag.core.types import CompletionUsage, GeneratorOutput, ModelType
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = ["AnthropicAPIClient", "get_first_message_content"]

log = logging.getLogger(__name__)


def get_first_message_content(completion: Any) -> str:
    """The text of the first text block of a ``Message`` (0.1's default parser)."""
    for block in getattr(completion, "content", None) or []:
        text = getattr(block, "text", None)
        if text is not None:
            return text
    raise ValueError(f"the Anthropic reply has no text block: {completion!r}"[:300])


def _usage(usage: Any) -> Optional[CompletionUsage]:
    if usage is None:
        return None
    prompt = getattr(usage, "input_tokens", None) or 0
    completion = getattr(usage, "output_tokens", None) or 0
    return CompletionUsage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )


class AnthropicAPIClient(ModelClient):
    """Chat completions (``ModelType.LLM``) with Anthropic's Messages API.

    Args:
        api_key: the key; by default read from ``env_api_key_name`` on the first request.
        chat_completion_parser: ``Message -> data``; :func:`get_first_message_content` by default.
        default_max_tokens: ``max_tokens`` sent when the request has none (the API requires it).
        env_api_key_name: the environment variable holding the key.
        timeout: seconds per request (60 when None).

    Streaming (``model_kwargs={"stream": True}``) gives an output whose ``data`` yields the text
    deltas as they arrive.
    """

    _config_exclude = ("api_key",)
    _to_dict_exclude = ("sync_client", "async_client", "_api_key")

    def __init__(
        self,
        api_key: Optional[str] = None,
        chat_completion_parser: Optional[Callable[[Any], Any]] = None,
        default_max_tokens: int = 1024,
        env_api_key_name: str = "ANTHROPIC_API_KEY",
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        self._api_key = api_key
        self.chat_completion_parser = chat_completion_parser or get_first_message_content
        self.default_max_tokens = default_max_tokens
        self.env_api_key_name = env_api_key_name
        self.timeout = timeout

    def _client_kwargs(self) -> Dict[str, Any]:
        key = resolve_api_key(self._api_key, self.env_api_key_name, "AnthropicAPIClient")
        return {"api_key": key, "max_retries": 0, "timeout": self.call_timeout() or None}

    def init_sync_client(self) -> Any:
        """A new ``anthropic.Anthropic`` client."""
        anthropic = safe_import(*OptionalPackages.ANTHROPIC.value)
        return anthropic.Anthropic(**self._client_kwargs())

    def init_async_client(self) -> Any:
        """A new ``anthropic.AsyncAnthropic`` client."""
        anthropic = safe_import(*OptionalPackages.ANTHROPIC.value)
        return anthropic.AsyncAnthropic(**self._client_kwargs())

    def convert_inputs_to_api_kwargs(
        self,
        input: Optional[Any] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Dict[str, Any]:
        """``messages`` and ``system`` plus ``model_kwargs`` (``max_tokens`` defaulted)."""
        if model_type != ModelType.LLM:
            raise ValueError(f"AnthropicAPIClient does not support model_type={model_type}")
        api_kwargs = dict(model_kwargs or {})
        system = [m["content"] for m in to_messages(input) if m["role"] == "system"]
        messages = [m for m in to_messages(input) if m["role"] != "system"]
        if system:
            api_kwargs["system"] = "\n\n".join(str(s) for s in system)
        api_kwargs["messages"] = messages
        if api_kwargs.get("max_tokens") is None:
            api_kwargs["max_tokens"] = self.default_max_tokens
        return api_kwargs

    def _check(self, model_type: ModelType) -> None:
        if model_type != ModelType.LLM:
            raise ValueError(f"AnthropicAPIClient does not support model_type={model_type}")

    @with_retries
    def call(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """``messages.create`` with the request; a ``Message`` (or an event stream) comes back."""
        self._check(model_type)
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        return self.sync_client.messages.create(**(api_kwargs or {}))

    @with_retries
    async def acall(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        self._check(model_type)
        return await self.loop_async_client().messages.create(**(api_kwargs or {}))

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """Text and token usage of a ``Message``; a text stream for a streamed reply."""
        if isinstance(completion, (Iterator, AsyncIterator)) or hasattr(completion, "__aiter__"):
            return _stream_output(completion)
        try:
            data = self.chat_completion_parser(completion)
        except Exception as e:
            return GeneratorOutput(raw_response=str(completion), error=f"parse error: {e}")
        text = data if isinstance(data, str) else str(data)
        return GeneratorOutput(
            data=data, raw_response=text, usage=_usage(getattr(completion, "usage", None))
        )

    def track_completion_usage(self, completion: Any) -> CompletionUsage:
        return _usage(getattr(completion, "usage", None)) or CompletionUsage(0, 0, 0)


def _delta_text(event: Any) -> str:
    if getattr(event, "type", None) != "content_block_delta":
        return ""
    return getattr(getattr(event, "delta", None), "text", None) or ""


def _stream_output(stream: Any) -> GeneratorOutput:
    def pieces() -> Iterator[str]:
        for event in stream:
            text = _delta_text(event)
            if text:
                yield text

    async def apieces() -> AsyncIterator[str]:
        async for event in stream:
            text = _delta_text(event)
            if text:
                yield text

    data = apieces() if hasattr(stream, "__aiter__") else pieces()
    return GeneratorOutput(data=data, raw_response=data)
