"""``TracingSession``: one enabled tracing (what :func:`~lightrag.tracing.otel.enable_tracing`
returns): its settings, its exporters, and the span of each traced Component call (begin, the
result's attributes, errors, finish). :mod:`~lightrag.tracing.otel_wrapping` calls it from the
wrapped ``call``/``acall``.
"""

from __future__ import annotations

import contextvars
import logging
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

import lightrag.tracing.otel_wrapping as wrapping
from lightrag.core.component import Component
from lightrag.tracing.otel_attributes import (
    _attribute_in,
    _error_type,
    _OTelApi,
    _OTelSpan,
    _preview,
    _set_usage,
)

log = logging.getLogger(__name__)

__all__ = ["TracingSession"]


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
        return wrapping.active() is self

    def disable(self) -> None:
        """Stop tracing (if this session is still the active one) and flush its exporters."""
        with wrapping.LOCK:
            if wrapping.active() is self:
                wrapping.deactivate()
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
        token = wrapping.CURRENT.set((component, path))
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
            wrapping.CURRENT.reset(token)
        except ValueError:  # finished in another context than it began in
            wrapping.CURRENT.set(None)
        try:
            span.set_attribute("lightrag.latency_ms", round((time.perf_counter() - started) * 1e3, 3))
        finally:
            span.end()  # always: it also restores the context the span was started in
