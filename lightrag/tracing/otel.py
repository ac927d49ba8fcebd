"""OpenTelemetry spans for Component calls: ``enable_tracing`` / ``disable_tracing``.

While tracing is enabled, every ``Component`` call (``component(...)``, ``.call`` or ``.acall``)
is one span; a component called inside another's call is its child (through the OpenTelemetry
context, so nesting follows asyncio tasks and threads started with a copied context). A span is
named after the component's class, with its attribute name in the parent when it has one
(``"Generator (llm)"``), and carries:

* ``lightrag.component``, ``lightrag.component.attribute``, ``lightrag.component.path``
  (``"QA.llm.model_client"``), ``lightrag.method`` (``call``/``acall``), ``lightrag.latency_ms``;
* the model, where a Generator's or Embedder's ``model_kwargs`` or a ModelClient's
  ``api_kwargs`` name one: ``gen_ai.request.model`` and ``llm.model_name``;
* token counts where a Generator's ``GeneratorOutput.usage`` (or a ModelClient's raw reply,
  when it is not called by a Generator that already reports them) has them:
  ``gen_ai.usage.input_tokens``/``output_tokens`` and ``llm.token_count.prompt``/``completion``/
  ``total`` (the OpenTelemetry GenAI and the OpenInference names, read by Langfuse and Phoenix);
* errors: an exception marks the span ERROR with an ``exception`` event (and is re-raised, as
  always); a returned ``GeneratorOutput``/``EmbedderOutput`` with ``error`` set also marks it
  ERROR, with an ``exception`` event whose ``exception.message`` is that error;
* prompt and completion text only with ``capture_content=True`` (``input.value`` /
  ``output.value``, cut to ``max_content_chars``).

Spans go to the exporters named: ``jsonl_path`` (one JSON object per finished span, works
offline), ``otlp_endpoint`` (Jaeger, Phoenix, Langfuse, an OpenTelemetry collector; needs
``pip install 'lightrag[otel]'``), a ``tracer_provider`` of your own, or, with none of these, the
global OpenTelemetry tracer provider. Without the OpenTelemetry SDK, ``jsonl_path`` still works
through a small built-in span recorder (:mod:`lightrag.tracing.spans`).

How it hooks in: enabling wraps the ``call``/``acall`` functions defined by ``Component`` and its
subclasses (and by subclasses defined while it is on); disabling puts the originals back. So
when tracing is off nothing is wrapped and a call costs exactly what it did.

Example:
    >>> import json, tempfile, os
    >>> from lightrag.components.model_client import ScriptedClient
    >>> from lightrag.core import Component, Generator
    >>> class QA(Component):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.llm = Generator(model_client=ScriptedClient(["Paris"]),
    ...                              model_kwargs={"model": "scripted-1"})
    ...     def call(self, q):
    ...         return self.llm(prompt_kwargs={"input_str": q}).data
    >>> path = os.path.join(tempfile.mkdtemp(), "spans.jsonl")
    >>> with enable_tracing(jsonl_path=path):
    ...     QA()("Capital of France?")
    'Paris'
    >>> spans = [json.loads(line) for line in open(path)]
    >>> [s["name"] for s in spans if s["name"] != "Prompt (prompt)"]
    ['ScriptedClient (model_client)', 'Generator (llm)', 'QA']
    >>> spans[-2]["attributes"]["gen_ai.request.model"], spans[-2]["parent_id"] == spans[-1]["span_id"]
    ('scripted-1', True)
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
import os
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from lightrag.core.component import Component
from lightrag.tracing.otel_attributes import (
    _attribute_in,
    _error_type,
    _OTelApi,
    _OTelSpan,
    _preview,
    _set_usage,
)

__all__ = [
    "TracingSession",
    "disable_tracing",
    "enable_tracing",
    "enable_tracing_from_env",
    "is_tracing_enabled",
    "trace_span",
]

log = logging.getLogger(__name__)

_OTEL_EXTRA_HINT = "pip install 'lightrag[otel]' (opentelemetry-sdk, opentelemetry-exporter-otlp)"

#: (component, path) of the component whose call is running in this context
_CURRENT: contextvars.ContextVar[Optional[Tuple[Component, str]]] = contextvars.ContextVar(
    "lightrag_traced_component", default=None
)

_LOCK = threading.RLock()
_ACTIVE: Optional[TracingSession] = None
#: (class, method name) -> (original function, wrapper) for everything wrapped while enabled
_WRAPPED: Dict[Tuple[type, str], Tuple[Any, Any]] = {}
_ORIGINAL_INIT_SUBCLASS: Any = None


# ---------------------------------------------------------------------------------- session
class TracingSession:
    """What :func:`enable_tracing` returns: the settings in force, and ``disable()``.

    Use it as a context manager to trace a block: ``with enable_tracing(jsonl_path=p): ...``.
    """

    def __init__(
        self,
        *,
        capture_content: bool,
        max_content_chars: int,
        exclude: Tuple[type, ...],
        jsonl_path: Optional[str],
        otlp_endpoint: Optional[str],
    ) -> None:
        self.capture_content = capture_content
        self.max_content_chars = max_content_chars
        self.exclude = exclude
        self.jsonl_path = jsonl_path
        self.otlp_endpoint = otlp_endpoint
        self.backend = "builtin"
        self.tracer_provider: Any = None
        self._tracer: Any = None
        self._api: Optional[_OTelApi] = None
        self._owns_provider = False
        self._processors: List[Any] = []
        self._writer: Any = None
        from lightrag.core.embedder import Embedder
        from lightrag.core.generator import Generator
        from lightrag.core.model_client import ModelClient
        from lightrag.core.retriever import Retriever
        from lightrag.core.types import EmbedderOutput, GeneratorOutput

        self._generator = Generator
        self._model_client = ModelClient
        self._embedder = Embedder
        self._retriever = Retriever
        self._outputs = (GeneratorOutput, EmbedderOutput)

    # -- context manager / lifecycle
    def __enter__(self) -> TracingSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.disable()

    @property
    def active(self) -> bool:
        return _ACTIVE is self

    def disable(self) -> None:
        """Stop tracing (if this session is still the active one) and flush its exporters."""
        with _LOCK:
            if _ACTIVE is self:
                _deactivate()
            self._close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Export the spans still buffered (the OTLP exporter sends in batches)."""
        ok = True
        for processor in self._processors:
            ok = processor.force_flush(timeout_millis) and ok
        if self._owns_provider and self.tracer_provider is not None:
            ok = self.tracer_provider.force_flush(timeout_millis) and ok
        return ok

    def _close(self) -> None:
        for processor in self._processors:
            try:
                processor.detach()
            except Exception:  # noqa: BLE001
                log.warning("could not flush a span processor", exc_info=True)
        self._processors = []
        if self._owns_provider and self.tracer_provider is not None:
            try:
                self.tracer_provider.shutdown()
            except Exception:  # noqa: BLE001
                log.warning("could not shut the tracer provider down", exc_info=True)
            self._owns_provider = False
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __repr__(self) -> str:
        where = [f"jsonl_path={self.jsonl_path!r}"] if self.jsonl_path else []
        if self.otlp_endpoint:
            where.append(f"otlp_endpoint={self.otlp_endpoint!r}")
        state = "active" if self.active else "disabled"
        return f"TracingSession({', '.join(where)}, backend={self.backend!r}, {state})"

    # -- spans
    def _start(self, name: str, attributes: Dict[str, Any]) -> Any:
        if self._tracer is not None:
            return _OTelSpan(self._tracer, name, attributes, self._api)
        from lightrag.tracing.spans import BuiltinSpan

        return BuiltinSpan(name, attributes, self._writer)

    def begin(
        self, component: Component, method: str, parent: Optional[Tuple[Component, str]],
        args: tuple, kwargs: Dict[str, Any],
    ) -> Tuple[Any, contextvars.Token, float]:
        cls_name = type(component).__name__
        attribute = _attribute_in(parent, component)
        path = f"{parent[1]}.{attribute}" if attribute is not None else cls_name
        attrs: Dict[str, Any] = {
            "lightrag.component": cls_name,
            "lightrag.component.path": path,
            "lightrag.method": method,
        }
        if attribute is not None:
            attrs["lightrag.component.attribute"] = attribute
        if isinstance(component, self._model_client):
            model, content = self._client_request(attrs, args, kwargs)
        else:
            model, content = self._component_request(component, attrs, args, kwargs)
        if isinstance(model, str):
            attrs["gen_ai.request.model"] = model
            attrs["llm.model_name"] = model
        if self.capture_content and content is not None:
            attrs["input.value"] = _preview(content, self.max_content_chars)
        name = f"{cls_name} ({attribute})" if attribute is not None else cls_name
        span = self._start(name, attrs)
        token = _CURRENT.set((component, path))
        return span, token, time.perf_counter()

    @staticmethod
    def _client_request(attrs: Dict[str, Any], args: tuple, kwargs: Dict[str, Any]) -> Tuple[Any, Any]:
        """A ModelClient's model (from ``api_kwargs``) and request."""
        attrs["openinference.span.kind"] = "LLM"
        api_kwargs = kwargs.get("api_kwargs", args[0] if args else None)
        model_type = kwargs.get("model_type", args[1] if len(args) > 1 else None)
        if model_type is not None:
            attrs["lightrag.model_type"] = str(getattr(model_type, "name", model_type))
        if isinstance(api_kwargs, Mapping):
            return api_kwargs.get("model"), api_kwargs
        return None, api_kwargs

    def _component_request(
        self, component: Component, attrs: Dict[str, Any], args: tuple, kwargs: Dict[str, Any]
    ) -> Tuple[Any, Any]:
        """Another component's model (from its and the call's ``model_kwargs``) and input."""
        is_generator = isinstance(component, self._generator)
        if is_generator:
            kind = "LLM"
        elif isinstance(component, self._embedder):
            kind = "EMBEDDING"
        elif isinstance(component, self._retriever):
            kind = "RETRIEVER"
        else:
            kind = "CHAIN"
        attrs["openinference.span.kind"] = kind
        model = None
        state = component.__dict__
        preset = state.get("model_kwargs")
        if isinstance(preset, Mapping):
            per_call = kwargs.get("model_kwargs", args[1] if len(args) > 1 else None)
            if isinstance(per_call, Mapping) and per_call.get("model") is not None:
                model = per_call.get("model")
            else:
                model = preset.get("model")
            client = state.get("model_client")
            if client is not None:
                attrs["lightrag.model_client"] = type(client).__name__
        if not self.capture_content:
            return model, None
        if is_generator:
            return model, kwargs.get("prompt_kwargs", args[0] if args else None)
        return model, ({"args": list(args), "kwargs": kwargs} if kwargs else list(args))

    def succeed(
        self, span: Any, component: Component, parent: Optional[Tuple[Component, str]],
        result: Any,
    ) -> None:
        usage = None
        if isinstance(result, self._outputs):
            usage = self._output_result(span, component, result)
        elif isinstance(component, self._model_client):
            under_llm = parent is not None and isinstance(
                parent[0], (self._generator, self._embedder)
            )
            if not under_llm:  # else the Generator/Embedder reports the tokens, once
                try:
                    usage = getattr(result, "usage", None)
                except Exception:  # noqa: BLE001
                    usage = None
            if self.capture_content and isinstance(result, (str, list, dict)):
                span.set_attribute("output.value", _preview(result, self.max_content_chars))
        elif self.capture_content and result is not None:
            span.set_attribute("output.value", _preview(result, self.max_content_chars))
        if usage is not None:
            _set_usage(span, usage)

    def _output_result(self, span: Any, component: Component, result: Any) -> Any:
        """Mark a GeneratorOutput/EmbedderOutput's error; return the usage to report."""
        error = result.error
        if error:
            message = str(error)
            error_type = _error_type(message, type(result).__name__)
            span.set_attribute("error.type", error_type)
            span.add_event("exception", {"exception.type": error_type, "exception.message": message})
            span.set_error(message)
        metadata = getattr(result, "metadata", None)
        if isinstance(metadata, dict) and metadata.get("cached"):
            span.set_attribute("lightrag.cached", True)
        if self.capture_content:
            raw = getattr(result, "raw_response", None)
            shown = raw if isinstance(raw, str) else getattr(result, "data", None)
            if shown is not None and not isinstance(shown, (list, tuple, dict, str, int, float)):
                shown = f"<{type(shown).__name__}>"  # a stream: its text is not known yet
            if shown is not None:
                span.set_attribute("output.value", _preview(shown, self.max_content_chars))
        if isinstance(component, (self._generator, self._embedder)):
            return result.usage
        return None

    @staticmethod
    def fail(span: Any, exc: BaseException) -> None:
        span.record_exception(exc)
        span.set_attribute("error.type", type(exc).__name__)
        span.set_error(f"{type(exc).__name__}: {exc}")

    @staticmethod
    def finish(span: Any, token: contextvars.Token, started: float) -> None:
        try:
            _CURRENT.reset(token)
        except ValueError:  # finished in another context than it began in
            _CURRENT.set(None)
        try:
            span.set_attribute("lightrag.latency_ms", round((time.perf_counter() - started) * 1e3, 3))
        finally:
            span.end()  # always: it also restores the context the span was started in


# ---------------------------------------------------------------------------------- wrapping
def _skip(tracing: Optional[TracingSession], component: Any) -> bool:
    if tracing is None:
        return True
    parent = _CURRENT.get()
    if parent is not None and parent[0] is component:  # super().call(), acall -> call, ...
        return True
    return bool(tracing.exclude) and isinstance(component, tracing.exclude)


def _sync_wrapper(fn: Any, method: str) -> Any:
    @functools.wraps(fn)
    def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracing = _ACTIVE
        if _skip(tracing, self):
            return fn(self, *args, **kwargs)
        parent = _CURRENT.get()
        try:
            span, token, started = tracing.begin(self, method, parent, args, kwargs)
        except Exception:  # noqa: BLE001 - tracing never breaks a call
            log.debug("could not start a span for %s", type(self).__name__, exc_info=True)
            return fn(self, *args, **kwargs)
        try:
            result = fn(self, *args, **kwargs)
        except BaseException as e:
            _quietly(tracing.fail, span, e)
            raise
        else:
            _quietly(tracing.succeed, span, self, parent, result)
            return result
        finally:
            _quietly(tracing.finish, span, token, started)

    traced.__lightrag_traced__ = fn  # type: ignore[attr-defined]
    return traced


def _async_wrapper(fn: Any, method: str) -> Any:
    @functools.wraps(fn)
    async def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracing = _ACTIVE
        if _skip(tracing, self):
            return await fn(self, *args, **kwargs)
        parent = _CURRENT.get()
        try:
            span, token, started = tracing.begin(self, method, parent, args, kwargs)
        except Exception:  # noqa: BLE001
            log.debug("could not start a span for %s", type(self).__name__, exc_info=True)
            return await fn(self, *args, **kwargs)
        try:
            result = await fn(self, *args, **kwargs)
        except BaseException as e:
            _quietly(tracing.fail, span, e)
            raise
        else:
            _quietly(tracing.succeed, span, self, parent, result)
            return result
        finally:
            _quietly(tracing.finish, span, token, started)

    traced.__lightrag_traced__ = fn  # type: ignore[attr-defined]
    return traced


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        log.debug("tracing hook %s failed", getattr(fn, "__name__", fn), exc_info=True)


def _wrap_class(cls: type) -> None:
    for method in ("call", "acall"):
        fn = cls.__dict__.get(method)
        if fn is None or not inspect.isfunction(fn) or hasattr(fn, "__lightrag_traced__"):
            continue
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            continue  # the span would end before the iteration does
        if inspect.iscoroutinefunction(fn):
            wrapper = _async_wrapper(fn, method)
        else:
            wrapper = _sync_wrapper(fn, method)
        type.__setattr__(cls, method, wrapper)
        _WRAPPED[(cls, method)] = (fn, wrapper)


def _all_component_classes() -> List[type]:
    seen: List[type] = []
    stack = [Component]
    visited = set()
    while stack:
        cls = stack.pop()
        if cls in visited:
            continue
        visited.add(cls)
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return seen


def _traced_init_subclass(cls: type, **kwargs: Any) -> None:
    _ORIGINAL_INIT_SUBCLASS.__get__(None, cls)(**kwargs)
    if _ACTIVE is not None:
        _wrap_class(cls)


def _activate(session: TracingSession) -> None:
    global _ACTIVE, _ORIGINAL_INIT_SUBCLASS
    for cls in _all_component_classes():
        _wrap_class(cls)
    if _ORIGINAL_INIT_SUBCLASS is None:
        _ORIGINAL_INIT_SUBCLASS = Component.__dict__["__init_subclass__"]
        type.__setattr__(Component, "__init_subclass__", classmethod(_traced_init_subclass))
    _ACTIVE = session


def _deactivate() -> None:
    global _ACTIVE, _ORIGINAL_INIT_SUBCLASS
    _ACTIVE = None
    for (cls, method), (original, wrapper) in list(_WRAPPED.items()):
        if cls.__dict__.get(method) is wrapper:  # not replaced since (e.g. by mock.patch)
            type.__setattr__(cls, method, original)
    _WRAPPED.clear()
    if _ORIGINAL_INIT_SUBCLASS is not None:
        type.__setattr__(Component, "__init_subclass__", _ORIGINAL_INIT_SUBCLASS)
        _ORIGINAL_INIT_SUBCLASS = None


# -------------------------------------------------------------------------------- public API
def _sdk_available() -> bool:
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        return False
    return True


def enable_tracing(
    jsonl_path: Union[str, os.PathLike, Any, None] = None,
    otlp_endpoint: Optional[str] = None,
    *,
    capture_content: bool = False,
    tracer_provider: Any = None,
    otlp_headers: Optional[Mapping[str, str]] = None,
    otlp_protocol: str = "http/protobuf",
    service_name: str = "lightrag",
    exclude: Iterable[type] = (),
    max_content_chars: int = 4096,
    backend: str = "auto",
) -> TracingSession:
    """Trace every Component call as an OpenTelemetry span until :func:`disable_tracing`.

    Args:
        jsonl_path: write each finished span as one JSON line to this file (appended to; an open
            text stream works too). Needs nothing installed.
        otlp_endpoint: send spans over OTLP to this URL, e.g. ``http://localhost:4318/v1/traces``
            (Jaeger, an OpenTelemetry collector), ``http://localhost:6006/v1/traces`` (Phoenix).
            Needs ``pip install 'lightrag[otel]'``. Headers also come from the standard
            ``OTEL_EXPORTER_OTLP_HEADERS`` variable.
        capture_content: also record inputs and outputs (prompt variables, the request sent to
            the model, the completion) as ``input.value``/``output.value``. Off by default:
            prompts and answers often hold private data.
        tracer_provider: an OpenTelemetry ``TracerProvider`` to create the spans with (yours
            keeps its processors; ``jsonl_path``/``otlp_endpoint`` add theirs until disabled).
            With no provider and no exporter, the global provider is used (set up by Phoenix's
            ``register()``, Langfuse, ``opentelemetry-instrument``, ...).
        otlp_headers: extra OTLP headers (e.g. Langfuse's ``Authorization: Basic ...``).
        otlp_protocol: ``"http/protobuf"`` (default) or ``"grpc"``.
        service_name: the ``service.name`` resource of the provider created here.
        exclude: component classes not to trace (their children still are).
        max_content_chars: longest ``input.value``/``output.value`` kept with
            ``capture_content``.
        backend: ``"auto"`` (the OpenTelemetry SDK when installed, else the built-in recorder),
            ``"otel"`` or ``"builtin"`` (JSON lines only, without OpenTelemetry).

    Returns:
        The :class:`TracingSession`; ``session.disable()`` or ``with enable_tracing(...):``
        ends it. Enabling again replaces the session in force.

    Raises:
        ImportError: an OTLP endpoint (or ``backend="otel"``) without the ``otel`` extra.
        ValueError: nowhere to send the spans (no exporter, no provider and no OpenTelemetry).
    """
    if backend not in ("auto", "otel", "builtin"):
        raise ValueError(f"backend must be 'auto', 'otel' or 'builtin', not {backend!r}")
    path = os.fspath(jsonl_path) if isinstance(jsonl_path, (str, os.PathLike)) else None
    session = TracingSession(
        capture_content=capture_content,
        max_content_chars=max_content_chars,
        exclude=tuple(exclude),
        jsonl_path=path,
        otlp_endpoint=otlp_endpoint,
    )
    if backend == "builtin":
        use_sdk = False
        if otlp_endpoint or tracer_provider is not None:
            raise ValueError("backend='builtin' writes JSON lines only: drop otlp_endpoint/"
                             "tracer_provider or use backend='otel'")
    elif backend == "otel":
        use_sdk = True
    else:
        use_sdk = tracer_provider is not None or otlp_endpoint is not None or _sdk_available()
    if not use_sdk and jsonl_path is None:
        raise ValueError(
            "enable_tracing needs somewhere to send spans: jsonl_path=... (works without "
            f"OpenTelemetry), or otlp_endpoint=... / tracer_provider=... ({_OTEL_EXTRA_HINT})"
        )
    with _LOCK:
        if _ACTIVE is not None:
            _ACTIVE.disable()
        if use_sdk:
            _setup_otel(session, jsonl_path, otlp_endpoint, tracer_provider, otlp_headers,
                        otlp_protocol, service_name)
        else:
            from lightrag.tracing.spans import JsonlWriter

            session._writer = JsonlWriter(jsonl_path)
            session.backend = "builtin"
        _activate(session)
    return session


def _setup_otel(
    session: TracingSession, jsonl_path: Any, otlp_endpoint: Optional[str],
    tracer_provider: Any, otlp_headers: Optional[Mapping[str, str]], otlp_protocol: str,
    service_name: str,
) -> None:
    try:
        session._api = _OTelApi()
    except ImportError as e:
        raise ImportError(f"OpenTelemetry tracing needs the otel extra: {_OTEL_EXTRA_HINT}") from e
    exporters: List[Tuple[Any, bool]] = []  # (exporter, batch)
    if jsonl_path is not None or otlp_endpoint is not None or tracer_provider is None:
        if not _sdk_available():
            if jsonl_path is None and otlp_endpoint is None:
                provider = session._api.trace.get_tracer_provider()
                session.tracer_provider = provider
                session._tracer = provider.get_tracer("lightrag")
                session.backend = "otel-global"
                return
            raise ImportError(f"OTLP export needs the OpenTelemetry SDK: {_OTEL_EXTRA_HINT}")
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        from lightrag.tracing.otel_export import (
            DetachableSpanProcessor,
            JsonlSpanExporter,
            make_otlp_exporter,
        )

        if otlp_endpoint is not None:
            exporters.append((make_otlp_exporter(otlp_endpoint, otlp_protocol, otlp_headers), True))
        if jsonl_path is not None:
            exporters.append((JsonlSpanExporter(jsonl_path), False))
    if tracer_provider is None and not exporters:
        provider = session._api.trace.get_tracer_provider()
        session.backend = "otel-global"
    elif tracer_provider is None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        session._owns_provider = True
        session.backend = "otel"
    else:
        provider = tracer_provider
        session.backend = "otel"
    for exporter, batch in exporters:
        processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
        detachable = DetachableSpanProcessor(processor)
        provider.add_span_processor(detachable)
        session._processors.append(detachable)
    session.tracer_provider = provider
    try:
        from lightrag import __version__
    except ImportError:  # pragma: no cover
        __version__ = None
    session._tracer = provider.get_tracer("lightrag", __version__)


def disable_tracing() -> None:
    """Stop tracing: flush the exporters and put the untraced ``call``/``acall`` back."""
    with _LOCK:
        session = _ACTIVE
        if session is not None:
            session.disable()
        else:
            _deactivate()


@contextlib.contextmanager
def trace_span(name: str, attributes: Optional[Mapping[str, Any]] = None) -> Iterator[Any]:
    """A span of your own around a block, the parent of the component calls inside it.

    Groups what is not a Component call into one trace: e.g. ``GraphRAG.insert`` runs the
    chunker, the extractor and the merger one after another. Does nothing (yields None) when
    tracing is off. An exception leaving the block marks the span ERROR and propagates.

    Example:
        >>> with trace_span("not traced now") as span:
        ...     print(span)
        None
    """
    session = _ACTIVE
    if session is None:
        yield None
        return
    attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
    span = session._start(name, attrs)
    started = time.perf_counter()
    try:
        yield span
    except BaseException as e:
        _quietly(session.fail, span, e)
        raise
    finally:
        span.set_attribute("lightrag.latency_ms", round((time.perf_counter() - started) * 1e3, 3))
        span.end()


def is_tracing_enabled() -> bool:
    """Whether Component calls are being traced now."""
    return _ACTIVE is not None


def _truthy(value: Optional[str]) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def enable_tracing_from_env(environ: Optional[Mapping[str, str]] = None) -> Optional[TracingSession]:
    """Enable tracing from environment variables, as the CLI and the server do at startup.

    ``LIGHTRAG_TRACE_JSONL`` (a file path), ``LIGHTRAG_TRACE_OTLP_ENDPOINT`` (a URL),
    ``LIGHTRAG_TRACE_OTLP_PROTOCOL`` (``http/protobuf`` or ``grpc``),
    ``LIGHTRAG_TRACE_CAPTURE_CONTENT`` (``1``/``true``). Returns None (and does nothing) when
    neither a JSONL path nor an endpoint is set.

    Example:
        >>> enable_tracing_from_env({}) is None
        True
    """
    env = os.environ if environ is None else environ
    jsonl = env.get("LIGHTRAG_TRACE_JSONL") or None
    endpoint = env.get("LIGHTRAG_TRACE_OTLP_ENDPOINT") or None
    if not jsonl and not endpoint:
        return None
    return enable_tracing(
        jsonl_path=jsonl,
        otlp_endpoint=endpoint,
        otlp_protocol=env.get("LIGHTRAG_TRACE_OTLP_PROTOCOL") or "http/protobuf",
        capture_content=_truthy(env.get("LIGHTRAG_TRACE_CAPTURE_CONTENT")),
    )
