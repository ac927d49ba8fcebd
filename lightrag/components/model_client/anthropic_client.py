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
from typing import Any, Callable, Dict, Optional

from lightrag.components.model_client.base import SDKClientMixin
from lightrag.components.model_client.chat_utils import is_stream, stream_output, to_messages
from lightrag.core.model_client import ModelClient
from lightrag.core.types import CompletionUsage, GeneratorOutput, ModelType
from lightrag.utils.lazy_import import OptionalPackages

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


def _delta_text(event: Any) -> str:
    if getattr(event, "type", None) != "content_block_delta":
        return ""
    return getattr(getattr(event, "delta", None), "text", None) or ""


class AnthropicAPIClient(SDKClientMixin, ModelClient):
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

    sdk_package = OptionalPackages.ANTHROPIC
    sdk_classes = ("Anthropic", "AsyncAnthropic")

    def __init__(
        self,
        api_key: Optional[str] = None,
        chat_completion_parser: Optional[Callable[[Any], Any]] = None,
        default_max_tokens: int = 1024,
        env_api_key_name: str = "ANTHROPIC_API_KEY",
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        self._init_api_key(api_key, env_api_key_name, timeout)
        self.chat_completion_parser = chat_completion_parser or get_first_message_content
        self.default_max_tokens = default_max_tokens

    def _llm_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``messages`` and ``system`` plus ``model_kwargs`` (``max_tokens`` defaulted)."""
        messages = to_messages(input)
        system = [m["content"] for m in messages if m["role"] == "system"]
        if system:
            api_kwargs["system"] = "\n\n".join(str(s) for s in system)
        api_kwargs["messages"] = [m for m in messages if m["role"] != "system"]
        if api_kwargs.get("max_tokens") is None:
            api_kwargs["max_tokens"] = self.default_max_tokens
        return api_kwargs

    def _endpoint(self, client: Any, model_type: ModelType, request: Dict[str, Any]) -> Callable[..., Any]:
        """``messages.create``: a ``Message`` (or an event stream) comes back."""
        return client.messages.create

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """Text and token usage of a ``Message``; a text stream for a streamed reply."""
        if is_stream(completion):
            return stream_output(completion, _delta_text, usage_of=None)
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
