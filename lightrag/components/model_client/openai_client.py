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

import dataclasses
import logging
import os
from typing import Any, Callable, TypeVar

from lightrag.components.model_client.base import SDKClientMixin
from lightrag.components.model_client.chat_utils import (
    ChatCompletionParser,
    get_all_messages_content,
    get_first_message_content,
    get_probabilities,
    handle_streaming_response,
    parse_stream_response,
)
from lightrag.components.model_client.sdk_client import ChatSDKMixin
from lightrag.core.model_client import ModelClient
from lightrag.core.types import ModelType
from lightrag.utils.lazy_import import OptionalPackages
from lightrag.utils.secrets import register_url_credentials

__all__ = [
    "OpenAIClient",
    "get_all_messages_content",
    "get_first_message_content",
    "get_probabilities",
    "handle_streaming_response",
    "parse_stream_response",
]

T = TypeVar("T")

log = logging.getLogger(__name__)

#: Sent as the key to a ``base_url`` server when no key is configured (local servers ignore it).
LOCAL_SERVER_API_KEY = "not-needed"


def check_response_format(response_format: Any) -> None:
    """Refuse a pydantic class or a dataclass (or an instance of one) as ``response_format``.

    ``chat.completions.create`` takes a dict; the SDK's own error for a class points to
    ``chat.completions.parse()``, which lightrag does not call. This error names the dicts to pass.

    Raises:
        TypeError: ``response_format`` is a class, a dataclass or a pydantic model.

    Example:
        >>> check_response_format({"type": "json_object"})  # fine: returns None
    """
    is_class = isinstance(response_format, type)
    if not (is_class or dataclasses.is_dataclass(response_format)
            or hasattr(response_format, "model_json_schema")):
        return
    name = getattr(response_format, "__name__", type(response_format).__name__)
    what = f"the class {name}" if is_class else f"an instance of {name}"
    schema = (f"{name}.model_json_schema()" if hasattr(response_format, "model_json_schema")
              else f"<a JSON schema of {name}>")
    raise TypeError(
        f"OpenAIClient: response_format must be a dict, not {what} (chat.completions.create() "
        "takes no class): pass {'type': 'json_object'} and describe the fields in the prompt, or "
        f"{{'type': 'json_schema', 'json_schema': {{'name': '{name}', 'schema': {schema}}}}}; "
        "then parse the reply with an output parser such as DataClassParser."
    )


class OpenAIClient(ChatSDKMixin, SDKClientMixin, ModelClient):
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
        timeout: the request timeout in seconds (60 when None); a Generator enforces it too.
        requests_per_minute: start at most this many requests a minute, retries included, for
            every thread and event loop using the client (a provider's rate limit kept instead
            of answered with 429s; :meth:`~lightrag.core.model_client.ModelClient.limit_rate`).

    Transient errors (rate limits, timeouts, 5xx) are retried per ``retry_policy``; the SDK's own
    retries are switched off so the policy is the only one.

    Streaming: with ``model_kwargs={"stream": True}``, ``parse_chat_completion`` gives an output
    whose ``data`` yields the text as it arrives (an async generator after ``acall``). Token usage
    is requested with ``stream_options={"include_usage": True}`` (pass ``stream_options=None`` for
    servers that reject it) and lands in ``output.usage`` once the stream is consumed. Streaming
    changes nothing on the client, so later non-streaming calls work as usual.

    JSON replies: ``model_kwargs={"response_format": {"type": "json_object"}}`` or a
    ``{"type": "json_schema", ...}`` dict. A pydantic class or a dataclass there raises
    ``TypeError`` before any request, naming those dicts (see :func:`check_response_format`).

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

    sdk_package = OptionalPackages.OPENAI
    sdk_classes = ("OpenAI", "AsyncOpenAI")

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
        requests_per_minute: float | None = None,
    ) -> None:
        super().__init__()
        self._init_api_key(api_key, env_api_key_name, timeout)
        self._init_chat(chat_completion_parser, input_type)
        self.limit_rate(requests_per_minute)
        self.base_url = base_url
        self.env_base_url_name = env_base_url_name
        self.organization = organization

    # ------------------------------------------------------------------ SDK clients
    def _resolved_base_url(self) -> str | None:
        return self.base_url or os.getenv(self.env_base_url_name) or None

    def _client_kwargs(self) -> dict[str, Any]:
        base_url = self._resolved_base_url()
        register_url_credentials(base_url)  # sent as "Basic <base64>", which errors may echo
        key = self._resolved_api_key(placeholder=LOCAL_SERVER_API_KEY if base_url else None)
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0}
        if base_url:
            kwargs["base_url"] = base_url
        if self.organization:
            kwargs["organization"] = self.organization
        if self.call_timeout():
            kwargs["timeout"] = self.call_timeout()
        return kwargs

    # --------------------------------------------------------------------- requests
    def _llm_api_kwargs(self, input: Any, api_kwargs: dict[str, Any]) -> dict[str, Any]:
        """``messages`` plus ``model_kwargs`` (``stream_options`` asks a stream for usage).

        A prompt string without a ``<SYS>`` block is sent as lightrag 0.1 sends it: one ``system``
        message with the prompt unchanged (no message for ``""`` or None). A prompt with a
        ``<SYS>...</SYS>`` block becomes a system message and a user message; a list of messages
        is sent as given.
        """
        check_response_format(api_kwargs.get("response_format"))
        if input is None or (isinstance(input, str) and "<SYS>" not in input
                             and "<START_OF_SYSTEM_PROMPT>" not in input):
            api_kwargs["messages"] = [{"role": "system", "content": input}] if input else []
        else:
            api_kwargs = super()._llm_api_kwargs(input, api_kwargs)
        if api_kwargs.get("stream"):
            api_kwargs.setdefault("stream_options", {"include_usage": True})
            if api_kwargs["stream_options"] is None:
                del api_kwargs["stream_options"]
        return api_kwargs

    def _endpoint(self, client: Any, model_type: ModelType, request: dict[str, Any]) -> Callable[..., Any]:
        """The SDK method for ``model_type``; a chat request's ``response_format`` is checked
        first (:func:`check_response_format`), so a class fails before anything is sent."""
        if model_type == ModelType.LLM:
            check_response_format(request.get("response_format"))
        return super()._endpoint(client, model_type, request)

    def _extra_repr(self) -> str:
        parts = []
        base_url = self._resolved_base_url()
        if base_url:
            from lightrag.utils.secrets import redact

            parts.append(f"base_url={redact(base_url)!r}")
        if self.input_type != "text":
            parts.append(f"input_type={self.input_type!r}")
        return ", ".join(parts)
