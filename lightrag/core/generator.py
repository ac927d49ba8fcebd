"""``Generator``: prompt -> model client -> output processors, returning a ``GeneratorOutput``.

A Generator never raises because of the model: a failed request, a request that takes longer
than ``timeout`` seconds, an unparseable reply or a failing output processor comes back as
``GeneratorOutput(error=...)`` (with ``raw_response`` when there was one). It tracks token usage,
can cache responses by the full request (a reply whose output processing failed is never cached;
:meth:`Generator.forget` drops one that a caller rejects), and streams.

Example:
    >>> from lightrag.components.model_client import OpenAIClient
    >>> gen = Generator(
    ...     model_client=OpenAIClient(),
    ...     model_kwargs={"model": "gpt-4o-mini"},
    ...     template="Answer briefly: {{input_str}}",
    ... )
    >>> out = gen(prompt_kwargs={"input_str": "What is LightRAG?"})  # doctest: +SKIP
    >>> out.data  # doctest: +SKIP
    'A graph-based retrieval-augmented generation method.'
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional

from lightrag.core.cache import ResponseCache
from lightrag.core.component import Component
from lightrag.core.default_prompt_template import DEFAULT_LIGHTRAG_SYSTEM_PROMPT
from lightrag.core.generator_stream import AsyncGeneratorStream, GeneratorStream
from lightrag.core.messages import build_chat_messages
from lightrag.core.model_client import ModelClient
from lightrag.core.parameter import Parameter
from lightrag.core.prompt_builder import Prompt
from lightrag.core.stream_watch import watch_stream
from lightrag.core.timeouts import ModelCallTimeout, acall_with_timeout, call_with_timeout
from lightrag.core.types import CompletionUsage, GeneratorOutput, ModelType
from lightrag.utils.registry import EntityMapping
from lightrag.utils.secrets import check_not_redacted, redact, redact_text

__all__ = ["CALLBACK_EVENTS", "DEFAULT_LIGHTRAG_SYSTEM_PROMPT", "Generator", "GeneratorUsage"]

log = logging.getLogger(__name__)

CALLBACK_EVENTS = ("on_success", "on_failure", "on_complete")


@dataclass
class GeneratorUsage:
    """Running totals of one Generator's model calls (``calls`` includes ``streamed_calls``;
    a stream's tokens are added once it has been read, when the provider reports them)."""

    calls: int = 0
    streamed_calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def add(self, usage: Optional[CompletionUsage]) -> None:
        if usage is None:
            return
        self.prompt_tokens += usage.prompt_tokens or 0
        self.completion_tokens += usage.completion_tokens or 0
        self.total_tokens += usage.total_tokens or 0

    def to_dict(self) -> Dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, int]) -> GeneratorUsage:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


EntityMapping.register("GeneratorUsage", GeneratorUsage)


@dataclass
class _Request:
    """One call's request, its cache key and, once known, its output."""

    prompt_kwargs: Optional[Dict[str, Any]]
    model_kwargs: Optional[Dict[str, Any]]
    api_kwargs: Dict[str, Any]
    key: Optional[str]
    started: float
    output: Optional[GeneratorOutput]
    cached: bool


class Generator(Component):
    """Run an LLM on a rendered prompt and post-process its reply.

    Args:
        model_client: the :class:`ModelClient` to send requests to.
        model_kwargs: default request arguments (``model``, ``temperature``, ``stream``…).
        template: Jinja2 prompt template; the lightrag default template when None.
        prompt_kwargs: preset prompt variables; values may be :class:`Parameter` s.
        output_processors: a Component (parser or ``Sequential``) applied to the reply text.
        trainable_params: prompt variables to expose as trainable Parameters.
        name: a name for logs and traces.
        cache_path: an SQLite file for the response cache (implies ``use_cache``).
        use_cache: reuse replies to identical requests.
        timeout: seconds one model request may take before the call returns
            ``GeneratorOutput(error="model call timed out after N s")``; None uses the client's
            (``model_client.timeout``, else 60 s for API clients and 300 s for local models);
            0 means no limit. A timed-out request cannot be killed: it finishes in a background
            thread and its reply is dropped. A stream gets ``timeout`` s per piece, not in all (a
            long reply that keeps coming is never cut off): a longer wait for the next piece
            ends it, with ``stream.error`` naming the timeout.
    """

    _trainable_from = "prompt_kwargs"  # its Parameters go into a config as trainable_params

    def __init__(
        self,
        *,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        template: Optional[str] = None,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        output_processors: Optional[Component] = None,
        trainable_params: Optional[List[str]] = None,
        name: Optional[str] = None,
        cache_path: Optional[str] = None,
        use_cache: bool = False,
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__()
        if not isinstance(model_client, ModelClient):
            raise TypeError(
                f"Generator: model_client must be a ModelClient, got {type(model_client).__name__}"
            )
        if output_processors is not None and not isinstance(output_processors, Component):
            raise TypeError("Generator: output_processors must be a Component")
        self.name = name or type(self).__name__
        self.model_kwargs: Dict[str, Any] = dict(model_kwargs or {})
        # a shallow copy, as in 0.1: values such as components or clients are kept as they are
        preset = {k: v for k, v in (prompt_kwargs or {}).items() if not isinstance(v, Parameter)}
        self.prompt = Prompt(template=template, prompt_kwargs=preset)
        self.template = self.prompt.template
        self.timeout = timeout
        self.model_client = model_client
        self.output_processors = output_processors
        self._prompt_parameters: Dict[str, Parameter] = {}
        for key, value in (prompt_kwargs or {}).items():
            if isinstance(value, Parameter):
                self.register_parameter(key, value)
                self._prompt_parameters[key] = value
        for key in trainable_params or []:
            if key not in self.prompt.prompt_variables:
                raise ValueError(
                    f"trainable param {key!r} is not a variable of the template "
                    f"({self.prompt.prompt_variables})"
                )
            if key not in self._prompt_parameters:
                param = Parameter(data=self.prompt.prompt_kwargs.pop(key, None), role_desc=key)
                self.register_parameter(key, param)
                self._prompt_parameters[key] = param
        self.use_cache = use_cache or cache_path is not None
        self.cache_path = cache_path
        self.usage = GeneratorUsage()
        self._init_runtime_state()

    _to_dict_exclude = ("_cache", "_usage_lock", "_callbacks")

    def _init_runtime_state(self) -> None:
        self._cache: Optional[ResponseCache] = (
            ResponseCache(self.cache_path) if self.use_cache else None
        )
        self._usage_lock = threading.Lock()
        self._callbacks: Dict[str, List[Callable[..., None]]] = {e: [] for e in CALLBACK_EVENTS}

    def _after_from_dict(self) -> None:
        """Recreate what :meth:`to_dict` leaves out (cache, lock, callbacks)."""
        for name, default in (("timeout", None), ("use_cache", False), ("cache_path", None)):
            if name not in self.__dict__:
                object.__setattr__(self, name, default)
        if not isinstance(self.__dict__.get("usage"), GeneratorUsage):
            self.usage = GeneratorUsage()
        if "prompt" in self.__dict__ and "template" not in self.__dict__:
            self.template = self.prompt.template
        self._init_runtime_state()

    def set_cache(self, cache: Optional[ResponseCache]) -> None:
        """Cache replies in ``cache`` (None turns caching off).

        ``cache`` is a :class:`ResponseCache` or any object with the same ``get(key)`` and
        ``set(key, value)`` methods, e.g. one cache shared by several Generators.
        """
        self._cache = cache
        self.use_cache = cache is not None

    # ------------------------------------------------------------------ prompt
    @property
    def prompt_kwargs(self) -> Dict[str, Any]:
        """The preset prompt variables (0.1's attribute): the prompt's own dict, so a change to
        it changes what later calls render. A trainable variable is not in it: its value is the
        :class:`Parameter` of the same name (``gen.task_desc_str.data``)."""
        return self.prompt.prompt_kwargs

    @prompt_kwargs.setter
    def prompt_kwargs(self, value: Optional[Dict[str, Any]]) -> None:
        self.prompt.prompt_kwargs = {k: v for k, v in (value or {}).items()
                                     if k not in self._prompt_parameters}

    def _compose_prompt_kwargs(self, prompt_kwargs: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        composed = {k: p.data for k, p in self._prompt_parameters.items()}
        composed.update(prompt_kwargs or {})
        return composed

    def get_prompt(self, **prompt_kwargs: Any) -> str:
        """The prompt text that would be sent for ``prompt_kwargs``."""
        return self.prompt(**self._compose_prompt_kwargs(prompt_kwargs)).strip()

    def print_prompt(self, **prompt_kwargs: Any) -> str:
        """Print the rendered prompt to stdout (as 0.1 did) and return it."""
        text = self.get_prompt(**prompt_kwargs)
        sys.stdout.write(f"Prompt:\n______________________\n{text}\n")
        return text

    def forget(
        self,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        conversation: Any = None,
    ) -> bool:
        """Drop the cached reply of this request, so the next call asks the model again.

        For callers that reject a reply the Generator accepted (unparseable or truncated by
        their own rules). Returns True when a reply was cached.

        Example:
            >>> from lightrag.components.model_client import ScriptedClient
            >>> gen = Generator(model_client=ScriptedClient(["a", "b"]), use_cache=True,
            ...                 template="{{q}}")
            >>> gen({"q": "x"}).data, gen({"q": "x"}).data
            ('a', 'a')
            >>> gen.forget({"q": "x"})
            True
            >>> gen({"q": "x"}).data
            'b'
        """
        if self._cache is None:
            return False
        key = self._cache_key(self._pre_call(prompt_kwargs, model_kwargs, conversation))
        delete = getattr(self._cache, "delete", None)
        if key is None or delete is None:
            if key is not None:
                raise TypeError(
                    f"the cache {type(self._cache).__name__} has no delete(key) method"
                )
            return False
        return bool(delete(key))

    def _pre_call(
        self,
        prompt_kwargs: Optional[Dict[str, Any]],
        model_kwargs: Optional[Dict[str, Any]],
        conversation: Any = None,
    ) -> Dict[str, Any]:
        prompt_str = self.get_prompt(**(prompt_kwargs or {}))
        merged = {**self.model_kwargs, **(model_kwargs or {})}
        check_not_redacted(merged, "model_kwargs")  # a saved secret is not sent as '<redacted>'
        model_input: Any = prompt_str
        if conversation is not None:
            model_input = build_chat_messages(prompt_str, conversation)
        return self.model_client.convert_inputs_to_api_kwargs(
            input=model_input, model_kwargs=merged, model_type=ModelType.LLM
        )

    # --------------------------------------------------------------- callbacks
    def register_callback(self, event: str, callback: Callable[..., None]) -> None:
        """Call ``callback(output=..., input=..., model_kwargs=...)`` on ``event``."""
        if event not in self._callbacks:
            raise ValueError(f"unknown event {event!r}; use one of {CALLBACK_EVENTS}")
        self._callbacks[event].append(callback)

    def _trigger(self, output: GeneratorOutput, prompt_kwargs: Any, model_kwargs: Any) -> None:
        events = ["on_failure" if output.error else "on_success", "on_complete"]
        for event in events:
            for callback in self._callbacks[event]:
                try:
                    callback(output=output, input=prompt_kwargs, model_kwargs=model_kwargs)
                except Exception:
                    log.exception("Generator callback %s failed", event)

    # ------------------------------------------------------------------ output
    def _cache_key(self, api_kwargs: Dict[str, Any]) -> Optional[str]:
        if self._cache is None or api_kwargs.get("stream"):
            return None
        return ResponseCache.key(self.model_client.cache_namespace(), api_kwargs)

    def _from_cache(self, key: Optional[str]) -> Optional[GeneratorOutput]:
        cached = self._cache.get(key) if (self._cache is not None and key) else None
        if cached is None:
            return None
        usage = CompletionUsage(**cached["usage"]) if cached.get("usage") else None
        with self._usage_lock:
            self.usage.cached_calls += 1
        return GeneratorOutput(data=cached["text"], raw_response=cached["text"], usage=usage)

    def _parse_completion(self, completion: Any) -> GeneratorOutput:
        try:
            parsed = self.model_client.parse_chat_completion(completion)
        except Exception as e:
            log.warning("parse_chat_completion failed: %s", e)
            return GeneratorOutput(raw_response=str(completion), error=redact_text(f"parse error: {e}"))
        if not isinstance(parsed, GeneratorOutput):
            parsed = GeneratorOutput(data=parsed, raw_response=parsed)
        with self._usage_lock:
            self.usage.calls += 1
            self.usage.add(parsed.usage)
        return parsed

    def _store(self, key: Optional[str], output: GeneratorOutput, cached: bool) -> None:
        """Cache a fresh reply only once it went through the output processors without error."""
        if key is None or cached or output.error is not None or self._cache is None:
            return
        if not isinstance(output.raw_response, str):
            return
        usage = asdict(output.usage) if output.usage is not None else None
        self._cache.set(key, {"text": output.raw_response, "usage": usage})

    def effective_timeout(self) -> Optional[float]:
        """The limit in seconds for one request (None or <= 0: no limit)."""
        if self.timeout is not None:
            return self.timeout
        get = getattr(self.model_client, "call_timeout", None)
        return get() if get is not None else ModelClient.default_timeout

    def _timed_out(self, e: ModelCallTimeout) -> GeneratorOutput:
        log.warning("%s: %s", self.name, e)
        return GeneratorOutput(error=redact_text(str(e)))

    def _call_model(self, api_kwargs: Dict[str, Any]) -> GeneratorOutput:
        """The parsed reply; a failure or a timeout becomes ``GeneratorOutput(error=...)``."""
        try:
            completion = call_with_timeout(
                self.model_client.call, self.effective_timeout(),
                api_kwargs=api_kwargs, model_type=ModelType.LLM,
            )
            return self._parse_completion(completion)
        except ModelCallTimeout as e:
            return self._timed_out(e)
        except Exception as e:
            return self._failed(e)

    async def _acall_model(self, api_kwargs: Dict[str, Any]) -> GeneratorOutput:
        """Async :meth:`_call_model`."""
        try:
            request = self.model_client.acall(api_kwargs=api_kwargs, model_type=ModelType.LLM)
            completion = await acall_with_timeout(request, self.effective_timeout())
            return self._parse_completion(completion)
        except ModelCallTimeout as e:
            return self._timed_out(e)
        except Exception as e:
            return self._failed(e)

    def _count_stream_usage(self, output: GeneratorOutput) -> None:
        """Wrap a streamed reply so its usage (known once the stream ends) reaches ``self.usage``
        and a piece that takes longer than :meth:`effective_timeout` raises ModelCallTimeout."""
        with self._usage_lock:
            self.usage.streamed_calls += 1

        def count() -> None:
            with self._usage_lock:
                self.usage.add(output.usage)

        output.data = output.raw_response = watch_stream(output.data, count, self.effective_timeout())

    def _post_process(
        self, output: GeneratorOutput, started: float, cached: bool
    ) -> GeneratorOutput:
        is_stream = isinstance(output.data, (Iterator, AsyncIterator))
        if is_stream:
            self._count_stream_usage(output)
        if output.error is None and not is_stream and self.output_processors is not None:
            try:
                output.data = self.output_processors(output.data)
            except Exception as e:
                log.info("output processor failed: %s", e)
                output.data = None
                output.error = redact_text(f"{type(e).__name__}: {e}")
        if output.error is not None:
            with self._usage_lock:
                self.usage.failed_calls += 1
        metadata = dict(output.metadata or {})
        metadata.update(latency_s=round(time.perf_counter() - started, 6), cached=cached)
        output.metadata = metadata
        return output

    def _begin(
        self,
        prompt_kwargs: Optional[Dict[str, Any]],
        model_kwargs: Optional[Dict[str, Any]],
        use_cache: Optional[bool],
        conversation: Any,
    ) -> _Request:
        """Build the request and look it up in the cache (``output`` is set on a hit)."""
        started = time.perf_counter()
        api_kwargs = self._pre_call(prompt_kwargs, model_kwargs, conversation)
        key = self._cache_key(api_kwargs) if use_cache is not False else None
        output = self._from_cache(key)
        return _Request(prompt_kwargs, model_kwargs, api_kwargs, key, started, output, output is not None)

    @staticmethod
    def _failed(e: Exception) -> GeneratorOutput:
        """The error of a failed request, credentials removed (a provider's error body may echo
        the request's ``Authorization`` header; the message reaches logs, HTTP clients and traces)."""
        error = redact_text(f"{type(e).__name__}: {e}")
        log.warning("model call failed: %s", error)
        return GeneratorOutput(error=error)

    def _finish(self, request: _Request, id: Optional[str]) -> GeneratorOutput:
        """Output processors, metadata, cache and callbacks of a reply."""
        output = request.output
        assert output is not None
        output.id = id
        output = self._post_process(output, request.started, request.cached)
        self._store(request.key, output, request.cached)
        self._trigger(output, request.prompt_kwargs, request.model_kwargs)
        return output

    # ----------------------------------------------------------------- calling
    def call(
        self,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        use_cache: Optional[bool] = None,
        id: Optional[str] = None,
        conversation: Any = None,
    ) -> GeneratorOutput:
        """Render the prompt, call the model, run the output processors.

        Args:
            conversation: earlier turns (a ``Conversation``, ``DialogTurn`` s,
                ``{"role", "content"}`` dicts or a memory component); the request is then sent
                as chat messages:
                the prompt's ``<SYS>`` block as the system message, the turns, then the rest of
                the prompt as the last user message.
        """
        request = self._begin(prompt_kwargs, model_kwargs, use_cache, conversation)
        if request.output is None:
            request.output = self._call_model(request.api_kwargs)
        return self._finish(request, id)

    async def acall(
        self,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        use_cache: Optional[bool] = None,
        id: Optional[str] = None,
        conversation: Any = None,
    ) -> GeneratorOutput:
        """Async :meth:`call`, through ``model_client.acall``."""
        request = self._begin(prompt_kwargs, model_kwargs, use_cache, conversation)
        if request.output is None:
            request.output = await self._acall_model(request.api_kwargs)
        return self._finish(request, id)

    def stream(
        self,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        conversation: Any = None,
    ) -> GeneratorStream:
        """Send the request now and iterate over the reply text piece by piece.

        Errors are data: a failed request yields no piece, a stream that breaks midway stops,
        and ``stream.error`` (also ``stream.output.error``) says why.
        """
        output = self.call(prompt_kwargs, {**(model_kwargs or {}), "stream": True},
                           conversation=conversation)
        return GeneratorStream(output, on_error=self._stream_broke)

    def astream(
        self,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        conversation: Any = None,
    ) -> AsyncGeneratorStream:
        """Async :meth:`stream`: the request is sent when the iteration starts."""
        kwargs = {**(model_kwargs or {}), "stream": True}
        return AsyncGeneratorStream(
            lambda: self.acall(prompt_kwargs, kwargs, conversation=conversation),
            on_error=self._stream_broke,
        )

    def _stream_broke(self, output: GeneratorOutput) -> None:
        with self._usage_lock:
            self.usage.failed_calls += 1

    def _extra_repr(self) -> str:
        return f"model_kwargs={redact(self.model_kwargs)}, "
