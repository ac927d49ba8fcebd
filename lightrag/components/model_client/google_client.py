"""``GoogleGenAIClient``: Gemini models through ``google-generativeai`` (extra ``google``).

The SDK is imported on the first request. Chat requests send the rendered prompt as
``contents`` (a ``<SYS>`` block becomes the model's ``system_instruction``); every other
``model_kwargs`` key except ``model`` goes into the ``GenerationConfig``. Embeddings use
``genai.embed_content``.

Example:
    >>> client = GoogleGenAIClient(api_key="test")
    >>> client.convert_inputs_to_api_kwargs(
    ...     input="<SYS>Be terse.</SYS> Hi!", model_kwargs={"model": "gemini-1.5-flash"},
    ...     model_type=ModelType.LLM)
    {'model': 'gemini-1.5-flash', 'prompt': 'Hi!', 'system_instruction': 'Be terse.'}
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Optional

from lightrag.components.model_client.base import SDKClientMixin
from lightrag.components.model_client.chat_utils import (
    is_stream,
    stream_output,
    to_embedding_input,
    to_messages,
)
from lightrag.core.model_client import ModelClient
from lightrag.core.types import (
    CompletionUsage,
    EmbedderOutput,
    Embedding,
    GeneratorOutput,
    ModelType,
)
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = ["GoogleGenAIClient"]

log = logging.getLogger(__name__)

_REQUEST_KEYS = ("model", "prompt", "system_instruction", "stream", "safety_settings")


def _usage(meta: Any) -> Optional[CompletionUsage]:
    if meta is None:
        return None
    return CompletionUsage(
        prompt_tokens=getattr(meta, "prompt_token_count", None),
        completion_tokens=getattr(meta, "candidates_token_count", None),
        total_tokens=getattr(meta, "total_token_count", None),
    )


def _chunk_text(chunk: Any) -> str:
    return getattr(chunk, "text", "")


class GoogleGenAIClient(SDKClientMixin, ModelClient):
    """Chat (``ModelType.LLM``) and embeddings (``ModelType.EMBEDDER``) with Google GenAI.

    Args:
        api_key: the key; by default read from ``env_api_key_name`` on the first request.
        env_api_key_name: the environment variable holding the key.
        timeout: seconds per request (60 when None).

    The SDK is module-level and sync only: ``acall`` runs ``call`` in a worker thread.
    """

    model_types = (ModelType.LLM, ModelType.EMBEDDER)

    def __init__(self, api_key: Optional[str] = None, env_api_key_name: str = "GOOGLE_API_KEY",
                 timeout: Optional[float] = None) -> None:
        super().__init__()
        self._init_api_key(api_key, env_api_key_name, timeout)

    def init_sync_client(self) -> Any:
        """The configured ``google.generativeai`` module."""
        genai = safe_import(*OptionalPackages.GOOGLE_GENERATIVEAI.value)
        genai.configure(api_key=self._resolved_api_key())
        return genai

    def init_async_client(self) -> Any:
        raise NotImplementedError("GoogleGenAIClient has no async client")

    def _embedder_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``input`` texts."""
        api_kwargs["input"] = to_embedding_input(input)
        return api_kwargs

    def _llm_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``prompt`` (+ ``system_instruction``)."""
        messages = to_messages(input)
        system = "\n\n".join(str(m["content"]) for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        if len(turns) == 1 and turns[0]["role"] == "user":
            api_kwargs["prompt"] = turns[0]["content"]
        else:
            api_kwargs["prompt"] = [
                {"role": "model" if m["role"] == "assistant" else "user", "parts": [m["content"]]}
                for m in turns
            ]
        if system:
            api_kwargs["system_instruction"] = system
        return api_kwargs

    def _endpoint(self, client: Any, model_type: ModelType, request: Dict[str, Any]) -> Callable[..., Any]:
        """``genai.embed_content``, or ``generate_content`` of a ``GenerativeModel`` for the
        request (``request`` keeps only ``generate_content``'s arguments)."""
        model = request.pop("model", None)
        if not model:
            raise ValueError("GoogleGenAIClient needs model_kwargs['model']")
        if model_type == ModelType.EMBEDDER:
            request["content"] = request.pop("input")
            request["model"] = model
            return client.embed_content
        fixed = {k: request.pop(k) for k in _REQUEST_KEYS if k in request}
        llm = client.GenerativeModel(
            model_name=model,
            generation_config=client.GenerationConfig(**request),
            system_instruction=fixed.get("system_instruction"),
            safety_settings=fixed.get("safety_settings"),
        )
        request.clear()
        request.update(contents=fixed["prompt"], stream=bool(fixed.get("stream")))
        if self.call_timeout():
            request["request_options"] = {"timeout": self.call_timeout()}
        return llm.generate_content

    async def acall(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        """:meth:`call` in a worker thread (the SDK module has no async client)."""
        return await ModelClient.acall(self, api_kwargs, model_type)

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        """``completion.text`` and its usage; a text stream when the request streamed."""
        if is_stream(completion):
            return stream_output(completion, _chunk_text, usage_of=None)
        try:
            text = completion.text
        except Exception as e:  # blocked or empty candidates raise ValueError in the SDK
            return GeneratorOutput(raw_response=str(completion), error=f"parse error: {e}")
        usage = _usage(getattr(completion, "usage_metadata", None))
        return GeneratorOutput(data=text, raw_response=text, usage=usage)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        """Vectors of an ``embed_content`` reply (``{"embedding": [[...], ...]}``)."""
        try:
            vectors = response["embedding"]
            if vectors and not isinstance(vectors[0], (list, tuple)):
                vectors = [vectors]
            data = [Embedding(embedding=list(v), index=i) for i, v in enumerate(vectors)]
        except Exception as e:
            return EmbedderOutput(data=[], error=f"parse error: {e}", raw_response=response)
        return EmbedderOutput(data=data, raw_response=None)
