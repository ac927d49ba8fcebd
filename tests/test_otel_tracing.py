"""OpenTelemetry spans for Component calls (``lightrag.tracing.enable_tracing``), offline.

Spans are collected with the OpenTelemetry SDK's ``InMemorySpanExporter`` (through a
``tracer_provider`` of the test's own) or read back from the JSON-lines exporter; the model is a
scripted fake client. One test runs in a subprocess where ``opentelemetry`` cannot be imported,
for the built-in recorder.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import pytest

from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.types import CompletionUsage, GeneratorOutput, ModelType
from lightrag.tracing import (
    disable_tracing,
    enable_tracing,
    enable_tracing_from_env,
    is_tracing_enabled,
    trace_generator_call,
)

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode  # noqa: E402

SECRET_PROMPT = "my-private-question-7731"
SECRET_ANSWER = "confidential-answer-1187"


@dataclass
class RawCompletion:
    """What a provider SDK returns: text plus usage (OpenAI-shaped)."""

    text: str
    usage: CompletionUsage


class FakeClient(ModelClient):
    """A scripted model client: replies in order; an Exception in the script is raised."""

    def __init__(self, replies: Optional[List[Any]] = None) -> None:
        super().__init__()
        self.replies = list(replies or [])
        self.requests: List[Dict[str, Any]] = []

    def convert_inputs_to_api_kwargs(self, input=None, model_kwargs=None,
                                     model_type=ModelType.UNDEFINED):
        return {"prompt": input, **(model_kwargs or {})}

    def call(self, api_kwargs=None, model_type=ModelType.UNDEFINED):
        self.requests.append(dict(api_kwargs or {}))
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        usage = CompletionUsage(prompt_tokens=11, completion_tokens=3, total_tokens=14)
        return RawCompletion(reply, usage)

    async def acall(self, api_kwargs=None, model_type=ModelType.UNDEFINED):
        await asyncio.sleep(0.001)
        return self.call(api_kwargs, model_type)

    def parse_chat_completion(self, completion):
        return GeneratorOutput(data=completion.text, raw_response=completion.text,
                               usage=completion.usage)


class Shout(Component):
    def call(self, text: str) -> str:
        return text.upper()


class QA(Component):
    """root -> llm (Generator -> prompt, model_client) and post (a plain component)."""

    def __init__(self, replies: List[Any], timeout: Optional[float] = None) -> None:
        super().__init__()
        self.llm = Generator(model_client=FakeClient(replies), template="Q: {{q}}",
                             model_kwargs={"model": "fake-model-1"}, timeout=timeout)
        self.post = Shout()

    def call(self, q: str) -> Optional[str]:
        out = self.llm(prompt_kwargs={"q": q})
        return None if out.error else self.post(out.data)

    async def acall(self, q: str) -> Optional[str]:
        out = await self.llm.acall(prompt_kwargs={"q": q})
        return None if out.error else self.post(out.data)


class Broken(Component):
    def call(self, x: int) -> int:
        raise ValueError(f"bad input {x}")


@pytest.fixture
def memory():
    """(exporter, provider); tracing is disabled after the test whatever happens."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter, provider
    disable_tracing()


def by_name(spans) -> Dict[str, Any]:
    return {s.name: s for s in spans}


def all_attribute_text(spans) -> str:
    parts = []
    for s in spans:
        parts.extend(str(v) for v in (s.attributes or {}).values())
        for e in s.events:
            parts.extend(str(v) for v in (e.attributes or {}).values())
    return "\n".join(parts)


def test_nested_spans_names_parents_model_and_tokens(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    assert QA(["paris"])(SECRET_PROMPT) == "PARIS"
    spans = exporter.get_finished_spans()
    named = by_name(spans)
    assert set(named) == {"QA", "Generator (llm)", "Prompt (prompt)",
                          "FakeClient (model_client)", "Shout (post)"}
    root, gen, client = named["QA"], named["Generator (llm)"], named["FakeClient (model_client)"]
    assert root.parent is None
    assert gen.parent.span_id == root.context.span_id
    assert client.parent.span_id == gen.context.span_id
    assert named["Prompt (prompt)"].parent.span_id == gen.context.span_id
    assert named["Shout (post)"].parent.span_id == root.context.span_id
    assert len({s.context.trace_id for s in spans}) == 1

    assert gen.attributes["gen_ai.request.model"] == "fake-model-1"
    assert client.attributes["gen_ai.request.model"] == "fake-model-1"
    assert gen.attributes["gen_ai.usage.input_tokens"] == 11
    assert gen.attributes["gen_ai.usage.output_tokens"] == 3
    assert gen.attributes["llm.token_count.total"] == 14
    # the Generator reports the tokens: its client's span does not count them twice
    assert "gen_ai.usage.input_tokens" not in client.attributes
    assert gen.attributes["lightrag.component.path"] == "QA.llm"
    assert client.attributes["lightrag.component.path"] == "QA.llm.model_client"
    assert gen.attributes["lightrag.component.attribute"] == "llm"
    assert gen.attributes["lightrag.latency_ms"] >= 0
    assert gen.attributes["openinference.span.kind"] == "LLM"
    assert all(s.status.status_code is not StatusCode.ERROR for s in spans)
    # no prompt or completion text by default
    text = all_attribute_text(spans)
    assert SECRET_PROMPT not in text and "paris" not in text.lower()


def test_client_reports_tokens_when_called_directly(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    FakeClient(["hi"]).call({"prompt": "x", "model": "direct-model"}, ModelType.LLM)
    (span,) = exporter.get_finished_spans()
    assert span.name == "FakeClient"
    assert span.attributes["gen_ai.request.model"] == "direct-model"
    assert span.attributes["gen_ai.usage.input_tokens"] == 11
    assert span.attributes["lightrag.model_type"] == "LLM"


def test_client_error_marks_client_and_generator_spans(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    assert QA([TimeoutError("provider timed out")])("q") is None  # errors are data
    named = by_name(exporter.get_finished_spans())
    client, gen, root = (named["FakeClient (model_client)"], named["Generator (llm)"],
                         named["QA"])
    assert client.status.status_code is StatusCode.ERROR
    assert [e.name for e in client.events] == ["exception"]
    assert client.events[0].attributes["exception.type"] == "TimeoutError"
    # the Generator caught it and returned GeneratorOutput(error=...): still an error span
    assert gen.status.status_code is StatusCode.ERROR
    assert "provider timed out" in gen.status.description
    assert gen.attributes["error.type"] == "TimeoutError"
    assert gen.events[0].name == "exception"
    assert root.status.status_code is not StatusCode.ERROR


def test_exception_is_recorded_and_reraised(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    with pytest.raises(ValueError, match="bad input 3"):
        Broken()(3)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.events[0].name == "exception"
    assert span.events[0].attributes["exception.message"] == "bad input 3"


def test_capture_content_records_prompt_and_completion(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider, capture_content=True)
    QA([SECRET_ANSWER])(SECRET_PROMPT)
    named = by_name(exporter.get_finished_spans())
    gen, client = named["Generator (llm)"], named["FakeClient (model_client)"]
    assert SECRET_PROMPT in gen.attributes["input.value"]
    assert gen.attributes["output.value"] == SECRET_ANSWER
    assert f"Q: {SECRET_PROMPT}" in client.attributes["input.value"]  # the rendered prompt
    assert SECRET_ANSWER.upper() in named["Shout (post)"].attributes["output.value"]


async def test_async_nesting_across_concurrent_tasks(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    qa = QA(["a", "b"])
    assert sorted(await asyncio.gather(qa.acall("one"), qa.acall("two"))) == ["A", "B"]
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == "QA"]
    assert len(roots) == 2 and len({r.context.trace_id for r in roots}) == 2
    by_id = {s.context.span_id: s for s in spans}
    for span in spans:
        if span.name == "QA":
            continue
        parent = by_id[span.parent.span_id]
        assert span.context.trace_id == parent.context.trace_id
        expected = {"Generator (llm)": "QA", "Shout (post)": "QA", "Prompt (prompt)":
                    "Generator (llm)", "FakeClient (model_client)": "Generator (llm)"}
        assert parent.name == expected[span.name]
    # acall -> call on the same component is one span, not two
    assert sum(s.name == "FakeClient (model_client)" for s in spans) == 2
    assert {s.attributes["lightrag.method"] for s in roots} == {"acall"}


def test_model_call_in_a_timeout_thread_keeps_its_parent(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    QA(["x"], timeout=5.0)("q")  # the client runs in a worker thread (call_with_timeout)
    named = by_name(exporter.get_finished_spans())
    assert (named["FakeClient (model_client)"].parent.span_id
            == named["Generator (llm)"].context.span_id)


def test_disable_stops_spans_and_restores_the_methods(memory):
    exporter, provider = memory
    original_call, original_acall = Generator.__dict__["call"], Generator.__dict__["acall"]
    original_init_subclass = Component.__dict__["__init_subclass__"]
    session = enable_tracing(tracer_provider=provider)
    assert is_tracing_enabled() and session.active
    assert Generator.__dict__["call"] is not original_call

    class DefinedWhileOn(Component):  # a class defined while tracing is on is traced too
        def call(self, x):
            return x

    assert DefinedWhileOn()(1) == 1
    assert [s.name for s in exporter.get_finished_spans()] == ["DefinedWhileOn"]
    disable_tracing()
    assert not is_tracing_enabled() and not session.active
    assert Generator.__dict__["call"] is original_call
    assert Generator.__dict__["acall"] is original_acall
    assert not hasattr(DefinedWhileOn.__dict__["call"], "__lightrag_traced__")
    assert Component.__dict__["__init_subclass__"] is original_init_subclass
    exporter.clear()
    QA(["x"])("q")
    DefinedWhileOn()(2)
    assert exporter.get_finished_spans() == ()


def test_mock_patch_while_tracing_is_on(memory):
    from unittest import mock

    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    with mock.patch.object(Shout, "call", lambda self, text: "patched"):
        assert Shout()("a") == "patched"  # the patch wins (and is not traced)
    assert Shout()("a") == "A"
    disable_tracing()
    assert Shout()("b") == "B" and not hasattr(Shout.__dict__["call"], "__lightrag_traced__")
    assert [s.name for s in exporter.get_finished_spans()] == ["Shout"]


def test_context_manager_and_exclude(memory):
    exporter, provider = memory
    with enable_tracing(tracer_provider=provider, exclude=[Generator]):
        QA(["x"])("q")
    assert not is_tracing_enabled()
    named = by_name(exporter.get_finished_spans())
    assert "Generator (llm)" not in named and "QA" in named
    # the excluded Generator's client is still traced, under the nearest traced ancestor
    client = next(s for s in exporter.get_finished_spans() if s.name.startswith("FakeClient"))
    assert client.parent.span_id == named["QA"].context.span_id


def test_generator_call_logger_decorator_still_works(memory, tmp_path):
    exporter, provider = memory

    @trace_generator_call(save_dir=str(tmp_path), error_only=False)
    class Logged(QA):
        pass

    enable_tracing(tracer_provider=provider)
    pipeline = Logged(["ok"])
    assert pipeline("q") == "OK"
    assert [r.output.data for r in pipeline.generator_call_logger.load("llm")] == ["ok"]
    assert "Logged" in by_name(exporter.get_finished_spans())


def read_jsonl(path) -> List[Dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("backend", ["otel", "builtin"])
def test_jsonl_exporter_writes_one_parseable_span_per_line(tmp_path, backend):
    path = tmp_path / "traces" / "spans.jsonl"
    session = enable_tracing(jsonl_path=path, backend=backend)
    try:
        QA(["paris", RuntimeError("boom")])("q1")
        QA(["x"]).call("q2")
        qa = QA([RuntimeError("boom")])
        qa("q3")
    finally:
        session.disable()
    records = read_jsonl(path)
    assert session.backend == backend
    assert len(records) == 3 * 5 - 1  # the failing call has no Shout span
    keys = {"name", "trace_id", "span_id", "parent_id", "start", "end", "duration_ms",
            "attributes", "status", "events"}
    assert all(keys <= set(r) for r in records)
    ids = {r["span_id"]: r for r in records}
    for r in records:
        assert len(r["trace_id"]) == 32 and len(r["span_id"]) == 16
        assert r["duration_ms"] >= 0 and r["start"] <= r["end"]
        if r["name"] == "QA":
            assert r["parent_id"] is None
        else:
            assert ids[r["parent_id"]]["trace_id"] == r["trace_id"]
    gens = [r for r in records if r["name"] == "Generator (llm)"]
    assert gens[0]["attributes"]["gen_ai.request.model"] == "fake-model-1"
    assert gens[0]["attributes"]["gen_ai.usage.output_tokens"] == 3
    assert gens[-1]["status"]["code"] == "ERROR" and "boom" in gens[-1]["status"]["description"]
    failed_client = [r for r in records if r["name"].startswith("FakeClient")][-1]
    assert failed_client["events"][0]["name"] == "exception"
    assert failed_client["events"][0]["attributes"]["exception.type"] == "RuntimeError"
    # disabled: nothing more is written
    QA(["x"])("q4")
    assert len(read_jsonl(path)) == len(records)


def test_builtin_recorder_without_opentelemetry(tmp_path):
    """With ``opentelemetry`` not importable, JSONL tracing works and OTLP says what to install."""
    script = textwrap.dedent(
        """
        import json, sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        from lightrag.components.model_client import ScriptedClient
        from lightrag.core import Component, Generator
        from lightrag.tracing import enable_tracing, disable_tracing

        class QA(Component):
            def __init__(self):
                super().__init__()
                self.llm = Generator(model_client=ScriptedClient(["Paris"]),
                                     model_kwargs={"model": "m"})
            def call(self, q):
                return self.llm(prompt_kwargs={"input_str": q}).data

        try:
            enable_tracing(otlp_endpoint="http://localhost:4318/v1/traces")
        except ImportError as e:
            print("OTLP:", e)
        session = enable_tracing(jsonl_path=sys.argv[1])
        print("backend:", session.backend)
        print("answer:", QA()("France?"))
        disable_tracing()
        assert not any(m.startswith("opentelemetry") for m in sys.modules)
        """
    )
    path = tmp_path / "spans.jsonl"
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "'.[otel]'" in result.stdout
    assert "backend: builtin" in result.stdout and "answer: Paris" in result.stdout
    records = read_jsonl(path)
    named = {r["name"]: r for r in records}
    assert named["Generator (llm)"]["parent_id"] == named["QA"]["span_id"]
    assert named["Generator (llm)"]["attributes"]["gen_ai.request.model"] == "m"


def test_enable_tracing_from_env(tmp_path):
    assert enable_tracing_from_env({}) is None and not is_tracing_enabled()
    path = tmp_path / "env.jsonl"
    session = enable_tracing_from_env({"LIGHTRAG_TRACE_JSONL": str(path),
                                       "LIGHTRAG_TRACE_CAPTURE_CONTENT": "1"})
    try:
        assert session.capture_content and session.jsonl_path == str(path)
        Shout()("abc")
    finally:
        disable_tracing()
    (record,) = read_jsonl(path)
    assert record["name"] == "Shout" and record["attributes"]["output.value"] == "ABC"


def test_bad_arguments():
    with pytest.raises(ValueError, match="backend"):
        enable_tracing(jsonl_path="x.jsonl", backend="nope")
    with pytest.raises(ValueError, match="JSON lines only"):
        enable_tracing(otlp_endpoint="http://localhost:4318", backend="builtin")
    with pytest.raises(ValueError, match="jsonl_path"):
        enable_tracing(backend="builtin")
    assert not is_tracing_enabled()


async def test_trace_span_groups_component_calls(memory):
    exporter, provider = memory
    from lightrag.tracing import trace_span

    with trace_span("off") as span:
        assert span is None  # tracing off: nothing
    enable_tracing(tracer_provider=provider)
    with trace_span("insert", {"docs": 2, "skipped": None}):
        Shout()("a")
        await QA(["x"]).acall("q")
    with pytest.raises(KeyError), trace_span("failing"):
        raise KeyError("k")
    named = by_name(exporter.get_finished_spans())
    root = named["insert"]
    assert root.attributes["docs"] == 2 and "skipped" not in root.attributes
    assert named["Shout"].parent.span_id == root.context.span_id
    assert named["QA"].parent.span_id == root.context.span_id
    assert named["failing"].status.status_code is StatusCode.ERROR


def test_otlp_http_export_to_a_loopback_collector(monkeypatch):
    """Spans reach an OTLP/HTTP endpoint (a fake collector on 127.0.0.1) when tracing stops."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    received: List[Any] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, dict(self.headers), body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_port}/v1/traces"
        session = enable_tracing(otlp_endpoint=endpoint, otlp_headers={"x-team": "rag"},
                                 service_name="qa-service")
        QA(["paris"])("q")
        session.disable()  # flushes the batch
    finally:
        server.shutdown()
        thread.join(5)
    assert received and received[0][0] == "/v1/traces"
    assert received[0][1].get("x-team") == "rag"
    names, models, services = set(), set(), set()
    for _, _, body in received:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for attr in resource_spans.resource.attributes:
                if attr.key == "service.name":
                    services.add(attr.value.string_value)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    names.add(span.name)
                    models.update(a.value.string_value for a in span.attributes
                                  if a.key == "gen_ai.request.model")
    assert {"QA", "Generator (llm)", "FakeClient (model_client)"} <= names
    assert models == {"fake-model-1"} and services == {"qa-service"}


def test_no_exporter_uses_the_global_provider():
    session = enable_tracing()  # no global provider set here: OpenTelemetry's no-op one
    try:
        assert session.backend == "otel-global"
        assert QA(["x"])("q") == "X"
    finally:
        disable_tracing()


def test_a_key_echoed_by_a_provider_error_reaches_no_span(memory):
    exporter, provider = memory
    enable_tracing(tracer_provider=provider)
    key = "sk-proj-LEAKCANARY0123456789abcdefABCDEF"
    assert QA([RuntimeError(f"500 bad upstream; you sent Authorization: Bearer {key}")])("q") is None
    spans = exporter.get_finished_spans()
    text = all_attribute_text(spans) + "".join(str(s.status.description) for s in spans)
    assert "LEAKCANARY" not in text and "<redacted>" in text
