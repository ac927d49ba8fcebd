"""``ScriptedClient``: a model client that answers from a script, for tests and offline demos.

It plays the model's part without a network: replies come from a list (in order, cycling when
``cycle=True``), from a function of the prompt, or echo the prompt. Embeddings are a hashed bag of
words, so texts that share words get similar vectors (retrieval behaves sensibly in tests).
Every request is recorded in ``requests``. An ``Exception`` in the script is raised instead of
replied, which lets tests exercise error handling and retries.

Example:
    >>> from lightrag.core.generator import Generator
    >>> client = ScriptedClient(responses=["Paris"])
    >>> gen = Generator(model_client=client, template="Capital of {{country}}?")
    >>> gen(prompt_kwargs={"country": "France"}).data
    'Paris'
    >>> client.requests[0]["prompt"]
    'Capital of France?'
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

from lightrag.core.model_client import ModelClient
from lightrag.core.types import (
    CompletionUsage,
    EmbedderOutput,
    Embedding,
    GeneratorOutput,
    ModelType,
)

Reply = Union[str, BaseException]
ReplyFn = Callable[[str], Reply]

_WORD = re.compile(r"\w+")


def hashed_bag_of_words(text: str, dim: int = 64) -> List[float]:
    """A unit vector with one hashed bucket per lower-cased word (deterministic across runs)."""
    vector = np.zeros(dim, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
        vector[bucket % dim] += 1.0
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        vector[0] = 1.0
        norm = 1.0
    return (vector / norm).tolist()


class ScriptedClient(ModelClient):
    """Reply with scripted text (or raise scripted errors) and embed with hashed bags of words.

    Args:
        responses: replies in order; a reply may be an Exception instance to raise.
        response_fn: a function ``prompt -> reply`` used when ``responses`` is exhausted or None.
        cycle: start again from the first reply when the list runs out.
        embedding_dim: dimension of the hashed bag-of-words embeddings.
        stream_chunk_size: characters per chunk when streaming.
    """

    def __init__(
        self,
        responses: Optional[Sequence[Reply]] = None,
        response_fn: Optional[ReplyFn] = None,
        cycle: bool = False,
        embedding_dim: int = 64,
        stream_chunk_size: int = 4,
    ) -> None:
        super().__init__()
        self.responses: List[Reply] = list(responses or [])
        self.response_fn = response_fn
        self.cycle = cycle
        self.embedding_dim = embedding_dim
        self.stream_chunk_size = stream_chunk_size
        self.requests: List[Dict[str, Any]] = []
        self._next = 0
        self._lock = threading.Lock()

    _to_dict_exclude = ("_lock", "response_fn")
    #: scripted replies are in-process: no time limit by default (a Generator's or Embedder's
    #: ``timeout=`` still bounds a slow ``response_fn``), so tests and benchmarks pay no thread
    default_timeout = 0.0

    def _after_from_dict(self) -> None:
        super()._after_from_dict()
        self._lock = threading.Lock()
        self.response_fn = self.__dict__.get("response_fn")

    def convert_inputs_to_api_kwargs(
        self,
        input: Optional[Any] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        model_type: ModelType = ModelType.UNDEFINED,
    ) -> Dict[str, Any]:
        key = "input" if model_type is ModelType.EMBEDDER else "prompt"
        return {key: input, **(model_kwargs or {})}

    def _next_reply(self, prompt: str) -> Reply:
        with self._lock:
            if self._next < len(self.responses):
                reply = self.responses[self._next]
                self._next += 1
                if self.cycle and self._next == len(self.responses):
                    self._next = 0
                return reply
        if self.response_fn is not None:
            return self.response_fn(prompt)
        if self.responses:
            raise RuntimeError(f"ScriptedClient ran out of its {len(self.responses)} responses")
        return prompt

    def call(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        api_kwargs = dict(api_kwargs or {})
        with self._lock:
            self.requests.append(api_kwargs)
        if model_type is ModelType.EMBEDDER:
            texts = api_kwargs["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
            return [hashed_bag_of_words(t, self.embedding_dim) for t in texts]
        reply = self._next_reply(str(api_kwargs.get("prompt", api_kwargs.get("messages", ""))))
        if isinstance(reply, BaseException):
            raise reply
        if api_kwargs.get("stream"):
            return self._chunks(reply)
        return reply

    async def acall(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        await asyncio.sleep(0)
        result = self.call(api_kwargs, model_type)
        if isinstance(result, Iterator):
            return self._achunks(list(result))
        return result

    def _chunks(self, text: str) -> Iterator[str]:
        size = self.stream_chunk_size
        return iter([text[i : i + size] for i in range(0, len(text), size)] or [""])

    @staticmethod
    async def _achunks(chunks: List[str]) -> AsyncIterator[str]:
        for chunk in chunks:
            await asyncio.sleep(0)
            yield chunk

    def parse_chat_completion(self, completion: Any) -> GeneratorOutput:
        if isinstance(completion, (Iterator, AsyncIterator)):
            return GeneratorOutput(data=completion, raw_response=completion)
        text = str(completion)
        prompt_tokens = len(_WORD.findall(str(self.requests[-1]))) if self.requests else 0
        completion_tokens = len(_WORD.findall(text))
        usage = CompletionUsage(
            completion_tokens=completion_tokens,
            prompt_tokens=prompt_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        return GeneratorOutput(data=text, raw_response=text, usage=usage)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        return EmbedderOutput(
            data=[Embedding(embedding=v, index=i) for i, v in enumerate(response)],
            model="hashed-bag-of-words",
        )

    def cache_namespace(self) -> str:
        """Scripted answers stand for one model whatever the script's length."""
        return type(self).__name__

    def _extra_repr(self) -> str:
        return f"responses={len(self.responses)}, cycle={self.cycle}"
