"""A small built-in span recorder and the JSON-lines span file, for tracing without OpenTelemetry.

:func:`~lightrag.tracing.otel.enable_tracing` uses the OpenTelemetry SDK when it is installed
(``pip install 'lightrag[otel]'``). Without it, ``enable_tracing(jsonl_path=...)`` still works:
spans are recorded by :class:`BuiltinSpan` (parent/child through a ``contextvars`` variable, so
nesting follows threads started with a copied context and asyncio tasks) and written by
:class:`JsonlWriter` in the same format as the SDK path's ``JsonlSpanExporter``.

One JSON object per finished span, one per line::

    {"name": "Generator (llm)", "trace_id": "<32 hex>", "span_id": "<16 hex>",
     "parent_id": "<16 hex>" | null, "start": "2026-01-01T12:00:00.000001Z", "end": "...",
     "duration_ms": 1.234, "attributes": {...}, "status": {"code": "OK" | "ERROR" | "UNSET",
     "description": null | "..."}, "events": [{"name": "exception", "time": "...",
     "attributes": {...}}]}

Example:
    >>> import io, json
    >>> buf = io.StringIO()
    >>> writer = JsonlWriter(buf)
    >>> span = BuiltinSpan("Root", {"k": 1}, writer)
    >>> span.end()
    >>> record = json.loads(buf.getvalue())
    >>> record["name"], record["parent_id"], record["attributes"], record["status"]["code"]
    ('Root', None, {'k': 1}, 'UNSET')
"""

from __future__ import annotations

import contextvars
import datetime as _dt
import io
import json
import os
import random
import threading
import time
import traceback
from typing import Any, Dict, List, Optional, TextIO, Tuple, Union

from lightrag.utils.secrets import redact_text

__all__ = ["BuiltinSpan", "JsonlWriter", "format_time_ns"]

#: the built-in recorder's current span (the parent of the next one started in this context)
CURRENT_BUILTIN_SPAN: contextvars.ContextVar[Optional[BuiltinSpan]] = contextvars.ContextVar(
    "lightrag_builtin_span", default=None
)


_second_text: Tuple[int, str] = (-1, "")  # (epoch second, its "%Y-%m-%dT%H:%M:%S"), read at once


def format_time_ns(ns: Optional[int]) -> Optional[str]:
    """``1700000000123456789`` -> ``'2023-11-14T22:13:20.123456Z'`` (UTC, microseconds)."""
    global _second_text
    if ns is None:
        return None
    seconds, rest = divmod(int(ns), 1_000_000_000)
    cached_second, text = _second_text
    if cached_second != seconds:  # formatting is the dearest part of a record: once per second
        text = _dt.datetime.fromtimestamp(seconds, tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        _second_text = (seconds, text)
    return f"{text}.{rest // 1000:06d}Z"


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


class JsonlWriter:
    """Append one JSON object per line to a file (or a text stream); thread-safe, flushed per line.

    Args:
        target: a path (parent folders are created; the file is appended to) or an open text
            stream (not closed by :meth:`close`).
    """

    def __init__(self, target: Union[str, os.PathLike, TextIO]) -> None:
        self._lock = threading.Lock()
        if isinstance(target, (str, os.PathLike)):
            path = os.fspath(target)
            folder = os.path.dirname(os.path.abspath(path))
            os.makedirs(folder, exist_ok=True)
            self.path: Optional[str] = path
            self._stream: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = True
        else:
            self.path = getattr(target, "name", None) if not isinstance(target, io.StringIO) else None
            self._stream = target
            self._owned = False

    def write(self, record: Dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            if self._stream.closed:
                return
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        with self._lock:
            if self._owned and not self._stream.closed:
                self._stream.close()


def span_record(
    name: str,
    trace_id: int,
    span_id: int,
    parent_id: Optional[int],
    start_ns: int,
    end_ns: int,
    attributes: Dict[str, Any],
    status_code: str,
    status_description: Optional[str],
    events: List[Dict[str, Any]],
) -> Dict[str, Any]:
    """The JSON object written for one finished span (both the built-in and the SDK path)."""
    return {
        "name": name,
        "trace_id": f"{trace_id:032x}",
        "span_id": f"{span_id:016x}",
        "parent_id": f"{parent_id:016x}" if parent_id else None,
        "start": format_time_ns(start_ns),
        "end": format_time_ns(end_ns),
        "duration_ms": round((end_ns - start_ns) / 1e6, 3),
        "attributes": {k: _jsonable(v) for k, v in attributes.items()},
        "status": {"code": status_code, "description": status_description},
        "events": events,
    }


class BuiltinSpan:
    """A finished-on-:meth:`end` span with the OpenTelemetry ``Span`` methods lightrag uses.

    Starting one makes it the current span of this context (its children find it there);
    :meth:`end` restores the previous one and hands the record to the writer.
    """

    __slots__ = (
        "name", "trace_id", "span_id", "parent_id", "start_ns", "_t0", "attributes", "events",
        "status_code", "status_description", "_writer", "_token",
    )

    def __init__(self, name: str, attributes: Optional[Dict[str, Any]], writer: Any) -> None:
        parent = CURRENT_BUILTIN_SPAN.get()
        self.name = name
        self.trace_id = parent.trace_id if parent is not None else random.getrandbits(128) or 1
        self.span_id = random.getrandbits(64) or 1
        self.parent_id = parent.span_id if parent is not None else None
        self.start_ns = time.time_ns()
        self._t0 = time.perf_counter_ns()
        self.attributes: Dict[str, Any] = dict(attributes or {})
        self.events: List[Dict[str, Any]] = []
        self.status_code = "UNSET"
        self.status_description: Optional[str] = None
        self._writer = writer
        self._token: Optional[contextvars.Token] = CURRENT_BUILTIN_SPAN.set(self)

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def add_event(self, name: str, attributes: Optional[Dict[str, Any]] = None) -> None:
        self.events.append(
            {"name": name, "time": format_time_ns(time.time_ns()), "attributes": dict(attributes or {})}
        )

    def record_exception(self, exc: BaseException) -> None:
        self.add_event(
            "exception",
            {
                "exception.type": type(exc).__name__,
                "exception.message": redact_text(str(exc)),
                "exception.stacktrace": redact_text("".join(
                    traceback.format_exception(type(exc), exc, exc.__traceback__)
                )),
            },
        )

    def set_error(self, description: Optional[str]) -> None:
        self.status_code = "ERROR"
        self.status_description = None if description is None else redact_text(description)

    def end(self) -> None:
        if self._token is not None:
            try:
                CURRENT_BUILTIN_SPAN.reset(self._token)
            except ValueError:  # ended in another context than it started in
                CURRENT_BUILTIN_SPAN.set(None)
            self._token = None
        end_ns = self.start_ns + (time.perf_counter_ns() - self._t0)
        self._writer.write(
            span_record(
                self.name, self.trace_id, self.span_id, self.parent_id, self.start_ns, end_ns,
                self.attributes, self.status_code, self.status_description, self.events,
            )
        )
