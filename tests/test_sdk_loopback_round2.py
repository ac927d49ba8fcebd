"""The real OpenAI SDK against a scripted provider on loopback: what a user sees when the provider
misbehaves (round 2 of test_sdk_clients_loopback.py).

Each test scripts the provider's replies (``Provider.script``, one behaviour per request, then the
default reply) and checks lightrag's public API: async SDK clients closed with their event loop,
embeddings put in input order and counted, ``Retry-After`` honoured, a cut stream reported, an
unreadable reply and a dropped connection named, tool calls kept.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, List

import pytest
from fake_provider_server import bag_of_words
from loopback_server import LoopbackServer

from lightrag.components.model_client import OpenAIClient
from lightrag.core import Embedder, Generator

KEY = "sk-round2-secret-0123456789"
HEAD = {"id": "c1", "created": 0, "model": "m", "object": "chat.completion.chunk"}
Behaviour = Callable[["_Handler", dict], None]


class Provider(LoopbackServer):
    poll_interval = 0.05

    def __init__(self) -> None:
        self.script: List[Behaviour] = []
        self.requests: List[dict] = []
        super().__init__()

    def _handler(self) -> type:
        return type("Handler", (_Handler,), {"provider": self})


class _Handler(BaseHTTPRequestHandler):
    provider: Provider
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.provider.requests.append(body)
        behaviour = self.provider.script.pop(0) if self.provider.script else reply_ok
        behaviour(self, body)

    def send(self, payload: Any, status: int = 200, headers: tuple = ()) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def sse(self, chunks: List[dict], done: bool = True) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def reply_ok(handler: _Handler, body: dict) -> None:
    if "input" in body:
        data = [{"object": "embedding", "index": i, "embedding": bag_of_words(t)}
                for i, t in enumerate(body["input"])]
        handler.send({"object": "list", "model": "e", "data": data,
                      "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    elif body.get("stream"):
        handler.sse([{**HEAD, "choices": [{"index": 0, "delta": {"content": "Paris."},
                                           "finish_reason": "stop"}]}])
    else:
        handler.send({"id": "c1", "created": 0, "model": "m", "object": "chat.completion",
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": "Paris."}}],
                      "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})


def embeddings_as(transform: Callable[[list], list]) -> Behaviour:
    def behaviour(handler: _Handler, body: dict) -> None:
        data = [{"object": "embedding", "index": i, "embedding": bag_of_words(t)}
                for i, t in enumerate(body["input"])]
        handler.send({"object": "list", "model": "e", "data": transform(data),
                      "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    return behaviour


def status(code: int, headers: tuple = (), error: dict | None = None) -> Behaviour:
    return lambda h, body: h.send({"error": error or {"message": f"status {code}"}}, code, headers)


def stream_of(texts: List[str], done: bool = True) -> Behaviour:
    return lambda h, body: h.sse([{**HEAD, "choices": [{"index": 0, "delta": {"content": t}}]}
                                  for t in texts], done=done)


def reset(handler: _Handler, body: dict) -> None:
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


@pytest.fixture
def provider():
    with Provider() as server:
        yield server


def client_of(provider: Provider, **kwargs: Any) -> OpenAIClient:
    client = OpenAIClient(api_key=KEY, base_url=f"{provider.url}/v1", **kwargs)
    client.retry_policy.initial_delay = 0.01
    client.retry_policy.max_delay = 0.02
    return client


# ------------------------------------------------------------------- async clients per loop
def test_each_loops_async_client_is_closed_when_its_loop_ends(provider):
    """Every ``asyncio.run`` (each sync ``rag.query`` runs one) made an AsyncOpenAI that was never
    closed nor released: its sockets stayed open, a server ran out of file descriptors."""
    client = client_of(provider)
    made = []
    make = client.init_async_client

    def recording():
        made.append(make())
        return made[-1]

    client.init_async_client = recording
    generator = Generator(model_client=client, model_kwargs={"model": "m"})
    for _ in range(12):
        assert asyncio.run(generator.acall({"input_str": "x"})).data == "Paris."
        assert generator({"input_str": "y"}).data == "Paris."  # sync after async works too
    assert len(made) == 12
    assert all(sdk.is_closed() for sdk in made)
    assert len(client._async_client_loop) == 0  # nothing kept for the dead loops

    from openai import AsyncOpenAI  # a client assigned by hand is adopted, and left open

    mine = client.async_client = AsyncOpenAI(api_key=KEY, base_url=f"{provider.url}/v1")
    assert asyncio.run(generator.acall({"input_str": "x"})).data == "Paris."
    assert client.async_client is mine and not mine.is_closed() and len(made) == 12
    assert asyncio.run(generator.acall({"input_str": "x"})).data == "Paris."  # a new loop's own
    assert not mine.is_closed() and len(made) == 13 and made[-1].is_closed()


# ------------------------------------------------------------------------------ embeddings
def test_embeddings_sent_out_of_order_are_put_back_by_index(provider):
    texts = ["alpha", "beta gamma", "delta epsilon zeta"]
    embedder = Embedder(model_client=client_of(provider), model_kwargs={"model": "e"})
    provider.script = [embeddings_as(lambda data: data[::-1])] * 2
    for output in (embedder(texts), asyncio.run(embedder.acall(texts))):
        assert output.error is None
        assert [e.embedding for e in output.data] == [bag_of_words(t) for t in texts]
        assert [e.index for e in output.data] == [0, 1, 2]


@pytest.mark.parametrize("transform, message", [
    (lambda data: data[:2], "got 2 embeddings for 3 texts"),
    (lambda data: [dict(d, index=0) for d in data], "index fields are not 0..2"),
    (lambda data: [dict(d, embedding=d["embedding"][:8]) if d["index"] == 1 else d for d in data],
     "different lengths"),
])
def test_a_wrong_embedding_reply_is_an_error_not_shifted_vectors(provider, transform, message):
    embedder = Embedder(model_client=client_of(provider), model_kwargs={"model": "e"})
    provider.script = [embeddings_as(transform)]
    output = embedder(["a", "b c", "d"])
    assert output.error and message in output.error
    assert not output.data


# ---------------------------------------------------------------------------- Retry-After
def test_retry_after_is_waited_for(provider):
    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [status(429, (("Retry-After", "1"),))]
    started = time.monotonic()
    output = generator({"input_str": "x"})
    assert output.data == "Paris." and time.monotonic() - started >= 0.95
    provider.script = [status(503, (("retry-after-ms", "400"),))]
    started = time.monotonic()
    assert asyncio.run(generator.acall({"input_str": "x"})).data == "Paris."
    assert time.monotonic() - started >= 0.38


def test_a_long_retry_after_or_an_exhausted_quota_fails_at_once_and_says_why(provider):
    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [status(429, (("Retry-After", "3600"),))] * 4
    output = generator({"input_str": "x"})
    assert "retry after 3600 s" in output.error and len(provider.requests) == 1
    provider.script = [status(429, error={"message": "quota", "code": "insufficient_quota",
                                          "type": "insufficient_quota"})] * 4
    output = generator({"input_str": "x"})
    assert "quota" in output.error and len(provider.requests) == 2


# -------------------------------------------------------------------------------- streams
@pytest.mark.parametrize("behaviour, pieces", [
    (stream_of(["Hel", "lo"], done=False), ["Hel", "lo"]),  # the server stops mid-reply
    (stream_of(["Hel", "lo"]), ["Hel", "lo"]),  # [DONE] but never a finish_reason
    (stream_of([]), []),  # no chunk at all
])
def test_a_stream_cut_by_the_server_is_reported(provider, behaviour, pieces):
    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [behaviour]
    stream = generator.stream({"input_str": "x"})
    assert list(stream) == pieces
    assert stream.error and "without a finish_reason" in stream.error

    async def read():
        astream = generator.astream({"input_str": "x"})
        return [p async for p in astream], astream.error

    provider.script = [behaviour]
    got, error = asyncio.run(read())
    assert got == pieces and error and "StreamCutError" in error
    assert generator.usage.failed_calls == 2


def test_a_whole_stream_keeps_its_usage_and_tool_calls(provider):
    def tool_stream(handler: _Handler, body: dict) -> None:
        call = {"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "weather", "arguments": ""}}
        handler.sse([
            {**HEAD, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
            {**HEAD, "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]}}]},
            {**HEAD, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            {**HEAD, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 4,
                                              "total_tokens": 9}},
        ])

    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [tool_stream]
    stream = generator.stream({"input_str": "x"})
    assert list(stream) == [] and stream.error is None
    assert stream.output.metadata["finish_reason"] == "tool_calls"
    (call,) = stream.output.metadata["tool_calls"]
    assert call["function"] == {"name": "weather", "arguments": '{"city": "Paris"}'}
    assert generator.usage.total_tokens == 9 and generator.usage.failed_calls == 0


def test_tool_calls_of_a_whole_reply_are_kept(provider):
    def tool_reply(handler: _Handler, body: dict) -> None:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
        handler.send({"id": "c1", "created": 0, "model": "m", "object": "chat.completion",
                      "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                          "role": "assistant", "content": None, "tool_calls": [call]}}]})

    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [tool_reply]
    output = generator({"input_str": "x"})
    assert output.error is None and output.metadata["finish_reason"] == "tool_calls"
    assert output.metadata["tool_calls"][0]["function"]["name"] == "weather"


# ---------------------------------------------------------- unreadable replies, connections
@pytest.mark.parametrize("body, what", [
    (b"<html>502 Bad Gateway</html>", "not valid JSON"),
    (b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "caf\xe9"}}]}',
     "not UTF-8"),
])
def test_an_unreadable_reply_is_named(provider, body, what):
    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [lambda h, b: h.send(body)] * 2
    for output in (generator({"input_str": "x"}), asyncio.run(generator.acall({"input_str": "x"}))):
        assert "ProviderResponseError" in output.error and what in output.error
        assert provider.url in output.error and KEY not in output.error


def test_a_dropped_or_refused_connection_names_the_request_and_the_cause(provider):
    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"})
    provider.script = [reset] * 8
    output = generator({"input_str": "x"})
    assert "Connection reset" in output.error and "/v1/chat/completions" in output.error
    with socket.socket() as spare:  # a port nobody listens on
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    refused = OpenAIClient(api_key=KEY, base_url=f"http://bob:Hunter2pw@127.0.0.1:{port}/v1")
    refused.retry_policy.max_retries = 0
    output = Generator(model_client=refused, model_kwargs={"model": "m"})({"input_str": "x"})
    assert f"127.0.0.1:{port}/v1/chat/completions" in output.error and "refused" in output.error
    assert "Hunter2pw" not in output.error and KEY not in output.error


def test_a_timed_out_sync_call_sends_no_more_retries(provider):
    """The caller got ``timed out`` after 1 s: its abandoned worker thread must not go on
    waiting out Retry-After and sending requests nobody will read (red team 4)."""
    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"}, timeout=1.0)
    provider.script = [status(429, (("Retry-After", "0.3"),))] * 8
    started = time.monotonic()
    output = generator({"input_str": "x"})
    assert output.error  # timed out, gave up at the limit, or ran out of retries
    assert time.monotonic() - started < 3.0
    sent = len(provider.requests)
    time.sleep(1.5)  # what the worker would have retried meanwhile (0.3 s apart)
    assert len(provider.requests) == sent <= 4


def stall_after(texts: List[str], seconds: float) -> Behaviour:
    def behaviour(handler: _Handler, body: dict) -> None:
        handler.sse([{**HEAD, "choices": [{"index": 0, "delta": {"content": t}}]} for t in texts],
                    done=False)
        time.sleep(seconds)  # the reply stalls, the connection stays open
    return behaviour


def test_a_stream_stalled_past_the_timeout_frees_its_reader_at_the_limit(provider):
    """The Generator's timeout also reaches the SDK's reads: the thread reading a stalled stream
    ends at the limit, not at the client's own 60 s timeout (red team 4)."""
    import threading

    generator = Generator(model_client=client_of(provider), model_kwargs={"model": "m"}, timeout=1.0)
    provider.script = [stall_after(["Hel"], 6.0)]
    stream = generator.stream({"input_str": "x"})
    assert list(stream) == ["Hel"] and "Timeout" in stream.error  # ours or the SDK's, at the limit
    def reading() -> bool:
        return any(t.name == "lightrag-stream-read" for t in threading.enumerate())

    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and reading():
        time.sleep(0.05)
    assert not reading()
