"""``GroqAPIClient``: Groq's chat completions (sync, async and streaming).

The ``groq`` SDK is optional: this module imports without it, and the SDK client is created on the
first request (so a pipeline can be built, printed and saved to a config without a key).

Example:
    >>> from lightrag.core.generator import Generator
    >>> gen = Generator(
    ...     model_client=GroqAPIClient(),
    ...     model_kwargs={"model": "llama-3.1-8b-instant"},
    ... )
    >>> gen(prompt_kwargs={"input_str": "What is LightRAG?"}).data  # doctest: +SKIP
    'LightRAG is ...'
    >>> for piece in gen.stream(prompt_kwargs={"input_str": "Count to 3"}):  # doctest: +SKIP
    ...     print(piece, end="")
"""

from __future__ import annotations

import logging

from lightrag.components.model_client.base import SDKClientMixin
from lightrag.components.model_client.chat_utils import ChatCompletionParser
from lightrag.components.model_client.sdk_client import ChatSDKMixin
from lightrag.core.model_client import ModelClient
from lightrag.core.types import ModelType  # noqa: F401 (used by the doctest)
from lightrag.utils.lazy_import import OptionalPackages

__all__ = ["GroqAPIClient"]

log = logging.getLogger(__name__)


class GroqAPIClient(ChatSDKMixin, SDKClientMixin, ModelClient):
    """Chat completions (``ModelType.LLM``) and embeddings (``ModelType.EMBEDDER``) via ``groq``.

    Args:
        api_key: the API key; by default read from ``env_api_key_name`` when first needed.
        chat_completion_parser: turns a whole ``ChatCompletion`` into ``GeneratorOutput.data``;
            defaults to the first message's text.
        input_type: ``"text"`` (a rendered prompt; its ``<SYS>…</SYS>`` block becomes the system
            message) or ``"messages"`` (a list of ``{"role", "content"}`` messages). Both modes
            accept both forms.
        env_api_key_name: the environment variable holding the key.
        requests_per_minute: start at most this many requests a minute, retries included
            (Groq's free tier limits requests per minute; see ``ModelClient.limit_rate``).

    Transient errors (rate limits, timeouts, 5xx) are retried per ``retry_policy``; the SDK's own
    retries are switched off so the policy is the only one.

    Streaming: with ``model_kwargs={"stream": True}``, ``parse_chat_completion`` gives an output
    whose ``data`` yields the text as it arrives (an async generator after ``acall``); Groq's
    usage report (``x_groq.usage`` on the last chunk) lands in ``output.usage`` once the stream
    is consumed. Streaming changes nothing on the client.

    Example:
        >>> client = GroqAPIClient(api_key="gsk-test")
        >>> client.convert_inputs_to_api_kwargs(
        ...     input=[{"role": "user", "content": "Hi"}],
        ...     model_kwargs={"model": "llama-3.1-8b-instant"},
        ...     model_type=ModelType.LLM,
        ... )
        {'model': 'llama-3.1-8b-instant', 'messages': [{'role': 'user', 'content': 'Hi'}]}
    """

    sdk_package = OptionalPackages.GROQ
    sdk_classes = ("Groq", "AsyncGroq")

    def __init__(
        self,
        api_key: str | None = None,
        chat_completion_parser: ChatCompletionParser | None = None,
        input_type: str = "text",
        env_api_key_name: str = "GROQ_API_KEY",
        timeout: float | None = None,
        requests_per_minute: float | None = None,
    ) -> None:
        super().__init__()
        self._init_api_key(api_key, env_api_key_name, timeout)
        self._init_chat(chat_completion_parser, input_type)
        self.limit_rate(requests_per_minute)
