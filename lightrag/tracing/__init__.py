"""Tracing: record Generators' prompt changes and calls to files under ``./traces/``.

* :mod:`~lightrag.tracing.records`: ``GeneratorStatesRecord`` and ``GeneratorCallRecord``;
* :mod:`~lightrag.tracing.state_logger`: ``GeneratorStateLogger``, prompt history in one JSON file;
* :mod:`~lightrag.tracing.call_logger`: ``GeneratorCallLogger``, one JSON-lines file per generator;
* :mod:`~lightrag.tracing.decorators`: ``@trace_generator_states`` and ``@trace_generator_call``,
  which attach those loggers to a component's Generators;
* :mod:`~lightrag.tracing.otel`: ``enable_tracing``/``disable_tracing``, OpenTelemetry spans for
  every Component call, exported over OTLP (``pip install 'lightrag[otel]'``) or to a JSON-lines
  file (works offline, without OpenTelemetry).

The names and file layout are lightrag 0.1's; see ``docs/tracing.md``.

Example:
    >>> from lightrag.tracing import trace_generator_call, trace_generator_states
    >>> @trace_generator_states()  # prompts -> ./traces/MyPipeline/generator_state_trace.json
    ... @trace_generator_call()  # failed calls -> ./traces/MyPipeline/<attribute>_call.jsonl
    ... class MyPipeline:
    ...     pass
    >>> p = MyPipeline()  # no Generator attributes: nothing is written
    >>> p.generator_logger.get_log_location()
    'traces/MyPipeline/generator_state_trace.json'
"""

from lightrag.tracing.call_logger import GeneratorCallLogger
from lightrag.tracing.decorators import (
    find_generators,
    trace_generator_call,
    trace_generator_states,
)
from lightrag.tracing.otel import (
    TracingSession,
    disable_tracing,
    enable_tracing,
    enable_tracing_from_env,
    is_tracing_enabled,
    trace_span,
)
from lightrag.tracing.records import GeneratorCallRecord, GeneratorStatesRecord
from lightrag.tracing.state_logger import GeneratorStateLogger
from lightrag.utils.registry import register_all

__all__ = [
    "GeneratorCallLogger",
    "GeneratorCallRecord",
    "GeneratorStateLogger",
    "GeneratorStatesRecord",
    "TracingSession",
    "disable_tracing",
    "enable_tracing",
    "enable_tracing_from_env",
    "find_generators",
    "is_tracing_enabled",
    "trace_generator_call",
    "trace_generator_states",
    "trace_span",
]

register_all(globals(), [n for n in __all__ if n != "TracingSession"])  # not a config class
