"""``OllamaClient``: local models served by Ollama, through the ``ollama`` SDK (extra ``ollama``).

LLM requests use Ollama's ``generate`` API with the prompt (a ``<SYS>`` block becomes
``system``); embeddings use ``embeddings`` for one text (0.1's form) and ``embed`` for a list.
The SDK is imported on the first request; the host is ``host``, else ``OLLAMA_HOST``, else
``http://localhost:11434``.

Example:
    >>> client = OllamaClient(host="http://localhost:11434")
    >>> client.convert_inputs_to_api_kwargs(
    ...     input="<SYS>Be terse.</SYS> Hi!", model_kwargs={"model": "llama3"},
    ...     model_type=ModelType.LLM)
    {'model': 'llama3', 'prompt': 'Hi!', 'system': 'Be terse.', 'options': {'num_predict': 256}}
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Dict, Iterator, Optional, TypeVar

from lightrag.components.model_client.base import SDKClientMixin
from lightrag.components.model_client.chat_utils import is_stream, stream_output, to_messages
from lightrag.core.model_client import ModelClient
from lightrag.core.types import (
    CompletionUsage,
    EmbedderOutput,
    Embedding,
    GeneratorOutput,
    ModelType,
)
from lightrag.utils.lazy_import import OptionalPackages

__all__ = ["OllamaClient", "parse_generate_response", "parse_stream_response"]

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_OLLAMA_HOST = "http://localhost:11434"
DEFAULT_MAX_TOKENS = 256


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` for dicts and the SDK's subscriptable responses, else the attribute."""
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        return getattr(obj, key, None)


def _chunk_text(chunk: Any) -> Optional[str]:
    return _get(chunk, "response")


def parse_stream_response(completion: Iterator[Any]) -> Iterator[Optional[str]]:
    """The ``response`` text of each chunk of a streamed ``generate`` reply."""
    for chunk in completion:
        yield _chunk_text(chunk)


def parse_generate_response(completion: Any) -> str:
    """The ``response`` text of a ``generate`` reply; ``ValueError`` when there is none."""
    text = _chunk_text(completion)
    if text is None:
        raise ValueError(f"Ollama reply has no 'response': {completion!r}"[:300])
    return text


def _usage(completion: Any) -> Optional[CompletionUsage]:
    prompt = _get(completion, "prompt_eval_count")
    generated = _get(completion, "eval_count")
    if not (isinstance(prompt, int) or isinstance(generated, int)):
        return None
    return CompletionUsage(
        prompt_tokens=prompt, completion_tokens=generated,
        total_tokens=(prompt or 0) + (generated or 0),
    )


class OllamaClient(SDKClientMixin, ModelClient):
    """Generate (``ModelType.LLM``) and embed (``ModelType.EMBEDDER``) with an Ollama server.

    Args:
        host: the server URL; by default ``OLLAMA_HOST`` or ``http://localhost:11434``.
        timeout: seconds per request (300 when None: a local model may need loading first).
        max_tokens: ``options.num_predict`` sent when a generate request sets neither it nor
            ``max_tokens`` (a local model left unbounded can ramble).

    ``model_kwargs``: ``model`` (required), ``stream``, ``options`` (Ollama's ``num_predict``,
    ``temperature``, ``top_k``, ``num_ctx``...), ``format`` (``"json"`` or a JSON schema).
    """

    default_timeout = 300.0
    sdk_package = OptionalPackages.OLLAMA
    sdk_classes = ("Client", "AsyncClient")
    model_types = (ModelType.LLM, ModelType.EMBEDDER)
    _to_dict_exclude = ("sync_client", "async_client")

    def __init__(
        self,
        host: Optional[str] = None,
        timeout: Optional[float] = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        super().__init__()
        self._host = host or os.getenv("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST
        self.timeout = timeout
        self.max_tokens = max_tokens

    def _client_kwargs(self) -> Dict[str, Any]:
        return {"host": self._host, "timeout": self.call_timeout() or None}

    def _after_from_dict(self) -> None:
        ModelClient._after_from_dict(self)

    def _embedder_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``prompt`` for one text (0.1's ``embeddings`` form), ``input`` for a list."""
        if isinstance(input, str):
            api_kwargs["prompt"] = input
        else:
            api_kwargs["input"] = list(input or [])
        return api_kwargs

    def _llm_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``prompt`` (+ ``system``) and ``options.num_predict`` (from ``max_tokens``)."""
        if input is None or input == "":
            raise ValueError("OllamaClient needs a prompt")
        messages = to_messages(input)
        system = "\n\n".join(str(m["content"]) for m in messages if m["role"] == "system")
        api_kwargs["prompt"] = "\n\n".join(
            str(m["content"]) for m in messages if m["role"] != "system"
        )
        if system:
            api_kwargs["system"] = system
        limit = api_kwargs.pop("max_tokens", None)
        options = dict(api_kwargs.get("options") or {})
        if options.get("num_predict") is None:
            options["num_predict"] = limit if limit is not None else self.max_tokens
        api_kwargs["options"] = options
        return api_kwargs

    def _endpoint(self, client: Any, model_type: ModelType, request: Dict[str, Any]) -> Callable[..., Any]:
        if "model" not in request:
            raise ValueError("OllamaClient needs model_kwargs['model']")
        if model_type == ModelType.EMBEDDER:
            return client.embeddings if "prompt" in request else client.embed
        return client.generate

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """The reply text and token counts; a text stream for a streamed reply."""
        if is_stream(completion):
            return stream_output(completion, _chunk_text, usage_of=None)
        try:
            text = parse_generate_response(completion)
        except ValueError as e:
            return GeneratorOutput(raw_response=str(completion), error=f"parse error: {e}")
        return GeneratorOutput(data=text, raw_response=text, usage=_usage(completion))

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        """Vectors from ``{"embedding": [...]}`` (one text) or ``{"embeddings": [[...]]}``."""
        try:
            single = _get(response, "embedding")
            vectors = [single] if single is not None else list(_get(response, "embeddings"))
            data = [Embedding(embedding=list(v), index=i) for i, v in enumerate(vectors)]
        except Exception as e:
            log.error("cannot parse the Ollama embedding reply: %s", e)
            return EmbedderOutput(data=[], error=f"parse error: {e}", raw_response=response)
        return EmbedderOutput(data=data)

    def _extra_repr(self) -> str:
        return f"host={self._host!r}"
