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
``pip install -e '.[otel]'`` in the checkout), a ``tracer_provider`` of your own, or, with none of these, the
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
import logging
import os
import time
from typing import Any, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

import lightrag.tracing.otel_wrapping as wrapping
from lightrag.tracing.otel_attributes import (
    _OTelApi,
)
from lightrag.tracing.otel_session import TracingSession

__all__ = [
    "TracingSession",
    "disable_tracing",
    "enable_tracing",
    "enable_tracing_from_env",
    "is_tracing_enabled",
    "trace_span",
]

log = logging.getLogger(__name__)

#: (``pip install 'lightrag[otel]'`` would fetch the unrelated ``lightrag`` on PyPI: the extra is
#: this checkout's)
_OTEL_EXTRA_HINT = ("pip install -c constraints.txt -e '.[otel]' in the lightrag checkout "
                    "(opentelemetry-sdk, opentelemetry-exporter-otlp)")


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
            Needs ``pip install -e '.[otel]'`` (in the checkout). Headers also come from the standard
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
    with wrapping.LOCK:
        current = wrapping.active()
        if current is not None:
            current.disable()
        if use_sdk:
            _setup_otel(session, jsonl_path, otlp_endpoint, tracer_provider, otlp_headers,
                        otlp_protocol, service_name)
        else:
            from lightrag.tracing.spans import JsonlWriter

            session._writer = JsonlWriter(jsonl_path)
            session.backend = "builtin"
        wrapping.activate(session)
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
    with wrapping.LOCK:
        session = wrapping.active()
        if session is not None:
            session.disable()
        else:
            wrapping.deactivate()


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
    session = wrapping.active()
    if session is None:
        yield None
        return
    attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
    span = session._start(name, attrs)
    started = time.perf_counter()
    try:
        yield span
    except BaseException as e:
        wrapping.quietly(session.fail, span, e)
        raise
    finally:
        span.set_attribute("lightrag.latency_ms", round((time.perf_counter() - started) * 1e3, 3))
        span.end()


def is_tracing_enabled() -> bool:
    """Whether Component calls are being traced now."""
    return wrapping.active() is not None


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
