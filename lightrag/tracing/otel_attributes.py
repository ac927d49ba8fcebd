"""What a span says: the adapter to OpenTelemetry's span API (:class:`_OTelSpan`, :class:`_OTelApi`)
and the attribute helpers of :mod:`lightrag.tracing.otel` (content previews with secrets
redacted, token usage in the ``gen_ai.*`` and ``llm.*`` conventions, a component's attribute
name in its parent, error types)."""

from __future__ import annotations

import json
import traceback
from typing import Any, Dict, Mapping, Optional, Tuple

from lightrag.core.component import Component
from lightrag.utils.secrets import redact_text


# ---------------------------------------------------------------------------------- backends
class _OTelSpan:
    """An OpenTelemetry span made current for its duration, with the built-in span's methods."""

    __slots__ = ("span", "_token", "_detach")

    def __init__(self, tracer: Any, name: str, attributes: Dict[str, Any], api: Any) -> None:
        self.span = tracer.start_span(name, attributes=attributes)
        self._token = api.context.attach(api.trace.set_span_in_context(self.span))
        self._detach = api.context.detach

    def set_attribute(self, key: str, value: Any) -> None:
        self.span.set_attribute(key, value)

    def add_event(self, name: str, attributes: Optional[Dict[str, Any]] = None) -> None:
        self.span.add_event(name, attributes=attributes or {})

    def record_exception(self, exc: BaseException) -> None:
        """OpenTelemetry's exception event, its message and stack trace without credentials."""
        self.span.add_event("exception", {
            "exception.type": type(exc).__name__,
            "exception.message": redact_text(str(exc)),
            "exception.stacktrace": redact_text("".join(
                traceback.format_exception(type(exc), exc, exc.__traceback__))),
        })

    def set_error(self, description: Optional[str]) -> None:
        from opentelemetry.trace import Status, StatusCode

        self.span.set_status(Status(StatusCode.ERROR, None if description is None
                                    else redact_text(description)))

    def end(self) -> None:
        self._detach(self._token)
        self.span.end()


class _OTelApi:
    """The few OpenTelemetry API modules the spans use, imported once per session."""

    def __init__(self) -> None:
        from opentelemetry import context, trace

        self.context = context
        self.trace = trace


# ------------------------------------------------------------------------------- attributes
def _preview(value: Any, limit: int) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            from lightrag.utils.secrets import redact

            text = json.dumps(redact(value), ensure_ascii=False, default=repr)
        except Exception:  # noqa: BLE001 - a preview never fails a call
            text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _usage_counts(usage: Any) -> Tuple[Optional[int], Optional[int], Optional[int]]:
    if usage is None:
        return None, None, None
    if isinstance(usage, Mapping):
        get = usage.get
    else:
        def get(key: str, default: Any = None) -> Any:
            return getattr(usage, key, default)
    prompt = get("prompt_tokens", None)
    if prompt is None:
        prompt = get("input_tokens", None)
    completion = get("completion_tokens", None)
    if completion is None:
        completion = get("output_tokens", None)
    total = get("total_tokens", None)
    if total is None and isinstance(prompt, int) and isinstance(completion, int):
        total = prompt + completion
    return (
        prompt if isinstance(prompt, int) else None,
        completion if isinstance(completion, int) else None,
        total if isinstance(total, int) else None,
    )


def _set_usage(span: Any, usage: Any) -> None:
    prompt, completion, total = _usage_counts(usage)
    if prompt is not None:
        span.set_attribute("gen_ai.usage.input_tokens", prompt)
        span.set_attribute("llm.token_count.prompt", prompt)
    if completion is not None:
        span.set_attribute("gen_ai.usage.output_tokens", completion)
        span.set_attribute("llm.token_count.completion", completion)
    if total is not None:
        span.set_attribute("llm.token_count.total", total)


def _attribute_in(parent: Optional[Tuple[Component, str]], component: Component) -> Optional[str]:
    """The attribute name under which the calling component holds ``component``, if it does."""
    if parent is None:
        return None
    children = parent[0].__dict__.get("_components") or {}
    for key, child in children.items():
        if child is component:
            return key
    return None


def _error_type(message: str, default: str) -> str:
    head = message.split(":", 1)[0].strip()
    return head if head.isidentifier() else default
