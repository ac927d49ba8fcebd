"""GroqAPIClient against a fake SDK client: requests, replies, streaming, retries, keys, imports."""

from __future__ import annotations

import json
import os
import sys
from types import SimpleNamespace
from typing import Any

import groq
import httpx
import pytest
from groq.types.chat import ChatCompletion, ChatCompletionChunk

from lightrag.components.model_client import GroqAPIClient, ModelClientType
from lightrag.core.generator import Generator
from lightrag.core.types import CompletionUsage, ModelType

LLM = ModelType.LLM


# ------------------------------------------------------------------------------- fakes
def completion(text: str) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "llama-3.1-8b-instant",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
        }
    )


def chunk(text: str, final: bool = False) -> ChatCompletionChunk:
    data: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "llama-3.1-8b-instant",
        "choices": [
            {"index": 0, "delta": {"content": text}, "finish_reason": "stop" if final else None}
        ],
    }
    if final:
        usage = {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}
        data["x_groq"] = {"id": "req_1", "usage": usage}
    return ChatCompletionChunk.model_validate(data)


STREAM = [chunk("Hel"), chunk("lo"), chunk("", final=True)]


class FakeCompletions:
    """Records each request; replies in order (an exception in the list is raised)."""

    def __init__(self, replies: list[Any], is_async: bool = False) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.is_async = is_async

    def _next(self, kwargs: dict[str, Any]) -> Any:
        self.requests.append(kwargs)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if kwargs.get("stream"):
            return aiterate(reply) if self.is_async else iter(reply)
        return reply

    def create(self, **kwargs: Any) -> Any:
        return self._acreate(kwargs) if self.is_async else self._next(kwargs)

    async def _acreate(self, kwargs: dict[str, Any]) -> Any:
        return self._next(kwargs)


async def aiterate(items: list[Any]) -> Any:
    for item in items:
        yield item


def fake_sdk(replies: list[Any], is_async: bool = False) -> Any:
    return SimpleNamespace(chat=SimpleNamespace(completions=FakeCompletions(replies, is_async)))


def status_error(cls: type, code: int) -> Exception:
    request = httpx.Request("POST", "https://api.groq.com/openai/v1/chat/completions")
    return cls(f"HTTP {code}", response=httpx.Response(code, request=request), body=None)


@pytest.fixture
def client() -> GroqAPIClient:
    c = GroqAPIClient(api_key="gsk-test")
    c.retry_policy.initial_delay = 0
    return c


# ------------------------------------------------------------------------------ requests
def test_request_building(client: GroqAPIClient) -> None:
    api_kwargs = client.convert_inputs_to_api_kwargs(
        "<SYS>Be brief.</SYS>\nWhat is Groq?", {"model": "llama", "stream": True}, LLM
    )
    assert api_kwargs == {
        "model": "llama",
        "stream": True,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is Groq?"},
        ],
    }
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hey"}]
    sent = client.convert_inputs_to_api_kwargs(messages, {"model": "llama"}, LLM)
    assert sent["messages"] == messages
    assert client.convert_inputs_to_api_kwargs("t", {"model": "e"}, ModelType.EMBEDDER) == {
        "model": "e",
        "input": ["t"],
    }
    with pytest.raises(ValueError, match="model_type"):
        client.convert_inputs_to_api_kwargs("x", {}, ModelType.RERANKER)


# ----------------------------------------------------------------------------- replies
def test_call_and_parse(client: GroqAPIClient) -> None:
    client.sync_client = fake_sdk([completion("Fast")])
    api_kwargs = client.convert_inputs_to_api_kwargs("Hi", {"model": "llama"}, LLM)
    out = client.parse_chat_completion(client.call(api_kwargs, LLM))
    assert client.sync_client.chat.completions.requests == [api_kwargs]
    assert (out.data, out.raw_response, out.error) == ("Fast", "Fast", None)
    assert out.usage == CompletionUsage(completion_tokens=1, prompt_tokens=9, total_tokens=10)


def test_streaming_with_groq_usage_then_plain_call(client: GroqAPIClient) -> None:
    client.sync_client = fake_sdk([STREAM, completion("Plain")])
    out = client.parse_chat_completion(
        client.call({"model": "llama", "messages": [], "stream": True}, LLM)
    )
    assert "".join(out.data) == "Hello"
    assert out.usage == CompletionUsage(completion_tokens=3, prompt_tokens=4, total_tokens=7)
    again = client.parse_chat_completion(client.call({"model": "llama", "messages": []}, LLM))
    assert again.data == "Plain"


async def test_async_streaming_through_generator(client: GroqAPIClient) -> None:
    client.async_client = fake_sdk([STREAM, completion("Async")], is_async=True)
    gen = Generator(model_client=client, model_kwargs={"model": "llama"}, template="{{q}}")
    pieces = [piece async for piece in gen.astream(prompt_kwargs={"q": "hi"})]
    assert pieces == ["Hel", "lo"]
    out = await gen.acall(prompt_kwargs={"q": "again"})
    assert out.error is None and out.data == "Async"


# ----------------------------------------------------------------------------- retries
@pytest.mark.parametrize(
    "error",
    [
        status_error(groq.RateLimitError, 429),
        status_error(groq.InternalServerError, 503),
        groq.APITimeoutError(request=httpx.Request("POST", "https://api.groq.com")),
    ],
    ids=["429", "503", "timeout"],
)
async def test_transient_errors_are_retried(client: GroqAPIClient, error: Exception) -> None:
    client.sync_client = fake_sdk([error, completion("ok")])
    assert client.parse_chat_completion(client.call({"model": "m"}, LLM)).data == "ok"
    client.async_client = fake_sdk([error, completion("ok")], is_async=True)
    assert client.parse_chat_completion(await client.acall({"model": "m"}, LLM)).data == "ok"
    assert len(client.async_client.chat.completions.requests) == 2


@pytest.mark.parametrize(
    "error",
    [status_error(groq.BadRequestError, 400), status_error(groq.AuthenticationError, 401)],
    ids=["400", "401"],
)
def test_client_errors_are_not_retried(client: GroqAPIClient, error: Exception) -> None:
    client.sync_client = fake_sdk([error, completion("never")])
    with pytest.raises(type(error)):
        client.call({"model": "m"}, LLM)
    assert len(client.sync_client.chat.completions.requests) == 1


# ---------------------------------------------------------------------- keys and config
def test_missing_key_names_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    client = GroqAPIClient()
    assert repr(client) == "GroqAPIClient()"
    with pytest.raises(ValueError, match="GROQ_API_KEY"):
        client.call({"model": "m", "messages": []}, LLM)


def test_real_sdk_client_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-env")
    sync = GroqAPIClient().init_sync_client()
    assert isinstance(sync, groq.Groq) and (sync.api_key, sync.max_retries) == ("gsk-env", 0)
    assert isinstance(GroqAPIClient().init_async_client(), groq.AsyncGroq)


def test_api_key_never_serialised() -> None:
    client = GroqAPIClient(api_key="gsk-secret-42", input_type="messages")
    client.sync_client = client.init_sync_client()
    for text in (repr(client), json.dumps(client.to_dict()), json.dumps(client.to_config())):
        assert "gsk-secret-42" not in text
    assert client.to_config() == {
        "component_name": "GroqAPIClient",
        "component_config": {"input_type": "messages"},
    }
    assert ModelClientType.GROQ is GroqAPIClient


def test_sdk_import_error_only_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "groq", None)
    client = GroqAPIClient(api_key="k")
    with pytest.raises(ImportError, match=r"pip install -e '\.\[groq\]'"):
        client.call({"model": "m", "messages": []}, LLM)


# ---------------------------------------------------------------------------- real API
@pytest.mark.needs_api_key
def test_real_groq_stream() -> None:
    if not os.getenv("GROQ_API_KEY"):
        pytest.skip("GROQ_API_KEY is not set: skipping the real Groq call")
    client = GroqAPIClient()
    api_kwargs = client.convert_inputs_to_api_kwargs(
        "Say yes.", {"model": "llama-3.1-8b-instant", "max_tokens": 5, "stream": True}, LLM
    )
    out = client.parse_chat_completion(client.call(api_kwargs, LLM))
    assert "".join(out.data)
    assert out.usage is not None and out.usage.total_tokens > 0
