"""OpenTelemetry SDK pieces: the JSON-lines span exporter and the OTLP exporter factory.

Imported only when the OpenTelemetry SDK is installed (``pip install 'lightrag[otel]'``); the
rest of :mod:`lightrag.tracing` does not need it.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Union

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from lightrag.tracing.spans import JsonlWriter, format_time_ns, span_record

__all__ = ["DetachableSpanProcessor", "JsonlSpanExporter", "make_otlp_exporter", "readable_span_record"]


def readable_span_record(span: ReadableSpan) -> Dict[str, Any]:
    """The JSON-lines record of a finished SDK span (same fields as the built-in recorder's)."""
    context = span.context
    parent = span.parent
    status = span.status
    events: List[Dict[str, Any]] = [
        {
            "name": event.name,
            "time": format_time_ns(event.timestamp),
            "attributes": dict(event.attributes or {}),
        }
        for event in span.events
    ]
    start = span.start_time or 0
    return span_record(
        span.name,
        context.trace_id if context is not None else 0,
        context.span_id if context is not None else 0,
        parent.span_id if parent is not None else None,
        start,
        span.end_time or start,
        dict(span.attributes or {}),
        status.status_code.name,
        status.description,
        events,
    )


class JsonlSpanExporter(SpanExporter):
    """Write each finished span as one JSON line (see :mod:`lightrag.tracing.spans`).

    Example:
        >>> import io, json
        >>> from opentelemetry.sdk.trace import TracerProvider
        >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        >>> buf = io.StringIO()
        >>> provider = TracerProvider()
        >>> provider.add_span_processor(SimpleSpanProcessor(JsonlSpanExporter(buf)))
        >>> with provider.get_tracer("demo").start_as_current_span("outer"):
        ...     pass
        >>> json.loads(buf.getvalue())["name"]
        'outer'
    """

    def __init__(self, target: Union[str, os.PathLike, TextIO]) -> None:
        self._writer = JsonlWriter(target)

    @property
    def path(self) -> Optional[str]:
        return self._writer.path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            for span in spans:
                self._writer.write(readable_span_record(span))
        except (OSError, ValueError):
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._writer.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def make_otlp_exporter(
    endpoint: str, protocol: str = "http/protobuf", headers: Optional[Mapping[str, str]] = None
) -> SpanExporter:
    """An OTLP span exporter (``http/protobuf``, the default, or ``grpc``) for ``endpoint``."""
    kwargs: Dict[str, Any] = {"endpoint": endpoint}
    if headers:
        kwargs["headers"] = dict(headers)
    if protocol in ("http", "http/protobuf"):
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as e:
            raise ImportError(
                "OTLP export needs the OTLP exporter: pip install 'lightrag[otel]' "
                "(opentelemetry-exporter-otlp)"
            ) from e
        return OTLPSpanExporter(**kwargs)
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError as e:
            raise ImportError(
                "OTLP/gRPC export needs the OTLP exporter: pip install 'lightrag[otel]' "
                "(opentelemetry-exporter-otlp)"
            ) from e
        return OTLPSpanExporter(**kwargs)
    raise ValueError(f"unknown OTLP protocol {protocol!r}: use 'http/protobuf' or 'grpc'")


class DetachableSpanProcessor(SpanProcessor):
    """Forwards to a span processor until :meth:`detach`: for processors added to a provider we
    do not own (an SDK provider cannot remove a processor), so disabling silences them."""

    def __init__(self, processor: Any) -> None:
        self.processor = processor
        self.active = True

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.active:
            self.processor.on_start(span, parent_context=parent_context)

    def _on_ending(self, span: Any) -> None:
        if self.active and hasattr(self.processor, "_on_ending"):
            self.processor._on_ending(span)

    def on_end(self, span: Any) -> None:
        if self.active:
            self.processor.on_end(span)

    def shutdown(self) -> None:
        self.processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.processor.force_flush(timeout_millis)

    def detach(self) -> None:
        self.active = False
        try:
            self.processor.force_flush()
        finally:
            self.processor.shutdown()
