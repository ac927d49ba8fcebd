"""``Embedder`` and ``BatchEmbedder``: text in, vectors out, through any ModelClient.

As in lightrag 0.1, an exception from the model client (its ``call``/``acall``, its
``parse_embedding_response``) or from the output processors propagates to the caller. Only a
request that takes longer than the timeout comes back as ``EmbedderOutput(error="model call
timed out after N s")``. Wrong input types raise ``TypeError`` at once.

Example:
    >>> from lightrag.components.model_client import OpenAIClient
    >>> embedder = Embedder(model_client=OpenAIClient(),
    ...                     model_kwargs={"model": "text-embedding-3-small"})
    >>> embedder("hello").embedding_dim  # doctest: +SKIP
    1536
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from lightrag.core.component import Component
from lightrag.core.model_client import ModelClient
from lightrag.core.timeouts import ModelCallTimeout, acall_with_timeout, call_with_timeout
from lightrag.core.types import EmbedderOutput, ModelType

log = logging.getLogger(__name__)

EmbedderInputType = Union[str, Sequence[str]]


def _timed_out(error: ModelCallTimeout, texts: List[str]) -> EmbedderOutput:
    """The output of a model call that took too long (logged)."""
    log.warning("embedding call: %s", error)
    return EmbedderOutput(error=str(error), input=texts)


def _check_input(input: Any) -> List[str]:
    if isinstance(input, str):
        return [input]
    if isinstance(input, Sequence) and all(isinstance(t, str) for t in input):
        return list(input)
    raise TypeError(
        f"Embedder input must be a str or a sequence of str, got {type(input).__name__}"
    )


class Embedder(Component):
    """Embed a string or a list of strings with ``model_client``.

    Args:
        model_client: a ModelClient that supports ``ModelType.EMBEDDER``.
        model_kwargs: request arguments, e.g. ``{"model": "text-embedding-3-small"}``.
        output_processors: a Component applied to the output's ``data`` (the list of
            :class:`Embedding`), as in lightrag 0.1; its result replaces ``data``.
        timeout: seconds one request may take before the call returns
            ``EmbedderOutput(error="model call timed out after N s")``; None uses the client's
            (60 s for API clients, 300 s for local models); 0 means no limit.
    """

    def __init__(
        self,
        *,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        output_processors: Optional[Component] = None,
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        if model_kwargs is not None and not isinstance(model_kwargs, Mapping):
            raise TypeError(
                f"Embedder: model_kwargs must be a dict, got {type(model_kwargs).__name__}"
            )
        if not isinstance(model_client, ModelClient):
            raise TypeError(
                f"Embedder: model_client must be a ModelClient, got {type(model_client).__name__}"
            )
        self.model_kwargs: Dict[str, Any] = dict(model_kwargs or {})
        self.model_client = model_client
        self.output_processors = output_processors
        self.timeout = timeout

    def effective_timeout(self) -> Optional[float]:
        """The limit in seconds for one request: ``timeout``, else the client's (0: none)."""
        if self.__dict__.get("timeout") is not None:
            return self.timeout
        get = getattr(self.model_client, "call_timeout", None)
        return get() if get is not None else None

    def _api_kwargs(
        self, texts: List[str], model_kwargs: Optional[Dict[str, Any]]
    ) -> Dict[str, Any]:
        merged = {**self.model_kwargs, **(model_kwargs or {})}
        return self.model_client.convert_inputs_to_api_kwargs(
            input=texts, model_kwargs=merged, model_type=ModelType.EMBEDDER
        )

    def _finish(self, response: Any, texts: List[str]) -> EmbedderOutput:
        output = self.model_client.parse_embedding_response(response)
        output.input = texts
        count = len(output.data) if isinstance(output.data, list) else None
        if output.error is None and count is not None and count != len(texts):
            # a vector too few or too many shifts every text after it onto another's vector
            log.warning("embedding call: %d vectors for %d texts", count, len(texts))
            output.error = (f"wrong number of embeddings from the model: got {count} embeddings "
                            f"for {len(texts)} texts (refusing to guess which vector is whose)")
            output.data = []
        if output.error is None and self.output_processors is not None and output.data is not None:
            output.data = self.output_processors(output.data)
        return output

    def call(
        self, input: EmbedderInputType, model_kwargs: Optional[Dict[str, Any]] = None
    ) -> EmbedderOutput:
        texts = _check_input(input)
        api_kwargs = self._api_kwargs(texts, model_kwargs)
        try:
            response = call_with_timeout(
                self.model_client.call, self.effective_timeout(),
                api_kwargs=api_kwargs, model_type=ModelType.EMBEDDER,
            )
        except ModelCallTimeout as e:
            return _timed_out(e, texts)
        return self._finish(response, texts)

    async def acall(
        self, input: EmbedderInputType, model_kwargs: Optional[Dict[str, Any]] = None
    ) -> EmbedderOutput:
        texts = _check_input(input)
        api_kwargs = self._api_kwargs(texts, model_kwargs)
        try:
            response = await acall_with_timeout(
                self.model_client.acall(api_kwargs=api_kwargs, model_type=ModelType.EMBEDDER),
                self.effective_timeout(),
            )
        except ModelCallTimeout as e:
            return _timed_out(e, texts)
        return self._finish(response, texts)

    def _extra_repr(self) -> str:
        return f"model_kwargs={self.model_kwargs}, "


class BatchEmbedder(Component):
    """Embed a long list of texts in batches of ``batch_size``; returns one output per batch."""

    def __init__(self, embedder: Embedder, batch_size: int = 100) -> None:
        super().__init__()
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.embedder = embedder
        self.batch_size = batch_size

    def call(
        self, input: EmbedderInputType, model_kwargs: Optional[Dict[str, Any]] = None
    ) -> List[EmbedderOutput]:
        texts = _check_input(input)
        outputs = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            log.debug("embedding batch %d-%d of %d", start, start + len(batch), len(texts))
            outputs.append(self.embedder(batch, model_kwargs=model_kwargs))
        return outputs

    async def acall(
        self, input: EmbedderInputType, model_kwargs: Optional[Dict[str, Any]] = None
    ) -> List[EmbedderOutput]:
        texts = _check_input(input)
        return [
            await self.embedder.acall(texts[s : s + self.batch_size], model_kwargs=model_kwargs)
            for s in range(0, len(texts), self.batch_size)
        ]

    def _extra_repr(self) -> str:
        return f"batch_size={self.batch_size}"
