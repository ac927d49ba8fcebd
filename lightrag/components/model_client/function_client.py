"""``FunctionClient``: a model client made of your own functions, sync or async.

HKU LightRAG takes the model as functions: ``llm_model_func(prompt, system_prompt=None,
history_messages=[], **kwargs) -> str`` and ``embedding_func(texts) -> np.ndarray``. This client
calls such functions, so anything you can reach from Python (a private gateway, a local server,
a model in the same process) works in a :class:`~lightrag.core.generator.Generator` or an
:class:`~lightrag.core.embedder.Embedder` without writing a :class:`ModelClient`.

The prompt's ``<SYS>...</SYS>`` part becomes ``system_prompt``, earlier turns (a Generator's
``conversation``) ``history_messages``, and the last user message ``prompt``; the
Generator's ``model_kwargs`` are passed as keywords. A function may return an iterator (or an
async iterator) of text pieces when asked to ``stream``.

Example:
    >>> from lightrag.core.generator import Generator
    >>> def shout(prompt, system_prompt=None, history_messages=None, **kwargs):
    ...     return f"{system_prompt}: {prompt.upper()}"
    >>> gen = Generator(model_client=FunctionClient(llm_func=shout),
    ...                 template="<SYS>Echo</SYS>{{text}}")
    >>> gen({"text": "hello"}).data
    'Echo: HELLO'
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from lightrag.components.model_client.chat_utils import to_embedding_input, to_messages
from lightrag.core.model_client import ModelClient
from lightrag.core.types import EmbedderOutput, Embedding, GeneratorOutput, ModelType


def _resolve(value: Any) -> Any:
    """The value of a function's result: awaited to completion when it is awaitable (in a
    fresh event loop, or in a helper thread when this thread already runs one)."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> Any:
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wait()).result()


async def _collect(pieces: AsyncIterator[Any]) -> List[Any]:
    """Every piece of an async stream (a sync caller reads them once the stream has ended)."""
    return [piece async for piece in pieces]


def split_chat(messages: List[Dict[str, Any]]) -> Tuple[str, Optional[str], List[Dict[str, Any]]]:
    """``(prompt, system_prompt, history_messages)`` of chat messages: the system messages
    joined, the last user message, and what lies between."""
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    prompt = ""
    if rest and rest[-1].get("role") == "user":
        prompt = str(rest[-1].get("content") or "")
        rest = rest[:-1]
    return prompt, ("\n\n".join(system) if system else None), rest


class FunctionClient(ModelClient):
    """Call ``llm_func`` for completions and ``embedding_func`` for embeddings.

    Args:
        llm_func: ``(prompt, system_prompt=None, history_messages=[], **model_kwargs) -> str``
            (or a coroutine function, or one returning an iterator of pieces for ``stream``).
        embedding_func: ``(texts: list[str]) -> array of shape (len(texts), dim)`` (or a
            coroutine function; HKU's ``EmbeddingFunc`` works as it is).
        model_name: the name usage and caches record for these functions.
    """

    def __init__(self, llm_func: Optional[Callable[..., Any]] = None,
                 embedding_func: Optional[Callable[..., Any]] = None,
                 model_name: str = "function") -> None:
        super().__init__()
        if llm_func is None and embedding_func is None:
            raise ValueError("FunctionClient needs llm_func, embedding_func or both")
        for name, func in (("llm_func", llm_func), ("embedding_func", embedding_func)):
            if func is not None and not callable(func):
                raise TypeError(f"FunctionClient: {name} must be callable, got {type(func).__name__}")
        self.llm_func = llm_func
        self.embedding_func = embedding_func
        self.model_name = model_name

    _to_dict_exclude = ("llm_func", "embedding_func")

    def _after_from_dict(self) -> None:
        super()._after_from_dict()
        for name in ("llm_func", "embedding_func"):
            self.__dict__.setdefault(name, None)

    def convert_inputs_to_api_kwargs(
        self,
        input: Optional[Any] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Dict[str, Any]:
        kwargs = dict(model_kwargs or {})
        kwargs.pop("model", None)
        if model_type is ModelType.EMBEDDER:
            return {"input": to_embedding_input(input), **kwargs}
        return {"messages": to_messages(input), **kwargs}

    def _arguments(self, api_kwargs: Dict[str, Any], model_type: ModelType
                   ) -> Tuple[Callable[..., Any], Tuple[Any, ...], Dict[str, Any]]:
        kwargs = dict(api_kwargs)
        if model_type is ModelType.EMBEDDER:
            if self.embedding_func is None:
                raise ValueError("FunctionClient has no embedding_func: it cannot embed")
            return self.embedding_func, (list(kwargs.pop("input")),), {}
        if self.llm_func is None:
            raise ValueError("FunctionClient has no llm_func: it cannot generate")
        prompt, system_prompt, history = split_chat(kwargs.pop("messages"))
        return self.llm_func, (prompt,), {"system_prompt": system_prompt,
                                          "history_messages": history, **kwargs}

    def call(self, api_kwargs: Optional[Dict[str, Any]] = None,
             model_type: ModelType = ModelType.UNDEFINED) -> Any:
        func, args, kwargs = self._arguments(dict(api_kwargs or {}), model_type)
        result = _resolve(func(*args, **kwargs))
        if isinstance(result, AsyncIterator):  # HKU's streaming functions, called from sync code
            return iter(_resolve(_collect(result)))
        return result

    async def acall(self, api_kwargs: Optional[Dict[str, Any]] = None,
                    model_type: ModelType = ModelType.UNDEFINED) -> Any:
        func, args, kwargs = self._arguments(dict(api_kwargs or {}), model_type)
        if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__):
            return await func(*args, **kwargs)
        result = await asyncio.to_thread(func, *args, **kwargs)
        return await result if inspect.isawaitable(result) else result

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        if isinstance(completion, (Iterator, AsyncIterator)):
            return GeneratorOutput(data=completion, raw_response=completion)
        if completion is None:
            return GeneratorOutput(error="the llm function returned None", raw_response=None)
        return GeneratorOutput(data=str(completion), raw_response=str(completion))

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        vectors = np.asarray(response, dtype=np.float32)
        if vectors.ndim != 2:
            return EmbedderOutput(error=f"the embedding function returned shape {vectors.shape}, "
                                        "not (texts, dimensions)")
        return EmbedderOutput(data=[Embedding(embedding=v.tolist(), index=i)
                                    for i, v in enumerate(vectors)], model=self.model_name)

    def cache_namespace(self) -> str:
        return f"{type(self).__name__}:{self.model_name}"

    def _extra_repr(self) -> str:
        names = [f"{k}={getattr(getattr(self, k), '__name__', type(getattr(self, k)).__name__)}"
                 for k in ("llm_func", "embedding_func") if getattr(self, k) is not None]
        return ", ".join(names + [f"model_name={self.model_name!r}"])
