"""OpenAIClient against a fake SDK client: requests, replies, streaming, retries, keys, imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace
from typing import Any

import httpx2
import openai
import pytest
from openai.types import CreateEmbeddingResponse
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage

from lightrag.components.model_client import ModelClientType, OpenAIClient
from lightrag.components.model_client.openai_client import (
    LOCAL_SERVER_API_KEY,
    get_all_messages_content,
    get_probabilities,
)
from lightrag.core.generator import Generator
from lightrag.core.types import CompletionUsage, EmbedderOutput, GeneratorOutput, ModelType

LLM = ModelType.LLM


# ------------------------------------------------------------------------------- fakes
def completion(
    *texts: str, usage: tuple[int, int] = (5, 3), logprobs: Any = None
) -> ChatCompletion:
    reply = {"finish_reason": "stop", "logprobs": logprobs}
    choices = [
        {**reply, "index": i, "message": {"role": "assistant", "content": t}}
        for i, t in enumerate(texts)
    ]
    tokens = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    head = {"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini"}
    return ChatCompletion.model_validate({**head, "choices": choices, "usage": tokens})


def chunk(text: str | None = None, usage: dict | None = None,
          finish: str | None = None) -> ChatCompletionChunk:
    choices = [] if text is None else [{"index": 0, "delta": {"content": text},
                                        "finish_reason": finish}]
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini"}
    return ChatCompletionChunk.model_validate({**head, "choices": choices, "usage": usage})


FINAL_USAGE = {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}
# as OpenAI streams: the last text chunk has a finish_reason (a stream without one was cut)
STREAM = [chunk("Hel"), chunk("lo"), chunk("!", finish="stop"), chunk(usage=FINAL_USAGE)]


def embeddings(*vectors: list[float]) -> CreateEmbeddingResponse:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    usage = {"prompt_tokens": 6, "total_tokens": 6}
    return CreateEmbeddingResponse.model_validate(
        {"object": "list", "model": "text-embedding-3-small", "data": data, "usage": usage}
    )


class FakeEndpoint:
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


def fake_sdk(chat: list[Any] = (), embed: list[Any] = (), is_async: bool = False) -> Any:
    return SimpleNamespace(
        chat=SimpleNamespace(completions=FakeEndpoint(list(chat), is_async)),
        embeddings=FakeEndpoint(list(embed), is_async),
    )


def status_error(cls: type, code: int) -> Exception:
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    return cls(f"HTTP {code}", response=httpx2.Response(code, request=request), body=None)


@pytest.fixture
def client() -> OpenAIClient:
    c = OpenAIClient(api_key="sk-test")
    c.retry_policy.initial_delay = 0
    return c


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# ------------------------------------------------------------------------------ requests
def test_sys_block_becomes_system_message_and_rest_user(client: OpenAIClient) -> None:
    prompt = "<SYS>\nYou are terse.\n</SYS>\n<User>What is RAG?</User>\nYou:"
    api_kwargs = client.convert_inputs_to_api_kwargs(prompt, {"model": "gpt-4o-mini"}, LLM)
    assert api_kwargs == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "<User>What is RAG?</User>\nYou:"},
        ],
    }


def test_plain_prompt_is_one_system_message_unchanged_as_in_01(client: OpenAIClient) -> None:
    api_kwargs = client.convert_inputs_to_api_kwargs("  Hi there ", {"model": "m"}, LLM)
    assert api_kwargs == {"model": "m", "messages": [{"role": "system", "content": "  Hi there "}]}
    assert client.convert_inputs_to_api_kwargs("", {}, LLM) == {"messages": []}
    assert client.convert_inputs_to_api_kwargs(None, {}, LLM) == {"messages": []}


def test_tagged_messages_prompt_is_unwrapped() -> None:
    client = OpenAIClient(api_key="k", input_type="messages")
    api_kwargs = client.convert_inputs_to_api_kwargs("<SYS>S</SYS><USER>U</USER>", {}, LLM)
    assert api_kwargs["messages"] == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
    ]
    only_sys = client.convert_inputs_to_api_kwargs("<SYS>S</SYS>", {}, LLM)
    assert only_sys["messages"] == [{"role": "system", "content": "S"}]


def test_message_lists_pass_through(client: OpenAIClient) -> None:
    history = [
        {"role": "system", "content": "Be brief."},
        SimpleNamespace(role="user", content="Hi"),
        ChatCompletionMessage(role="assistant", content="Hello!"),
        {"role": "user", "content": "Bye", "name": "ann"},
    ]
    model_kwargs = {"model": "m", "temperature": 0}
    api_kwargs = client.convert_inputs_to_api_kwargs(history, model_kwargs, LLM)
    assert api_kwargs["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye", "name": "ann"},
    ]
    assert api_kwargs["temperature"] == 0
    assert model_kwargs == {"model": "m", "temperature": 0}


def test_bad_messages_and_input_type_are_rejected(client: OpenAIClient) -> None:
    with pytest.raises(ValueError, match="role"):
        client.convert_inputs_to_api_kwargs([{"content": "no role"}], {}, LLM)
    with pytest.raises(TypeError, match="message 0"):
        client.convert_inputs_to_api_kwargs([42], {}, LLM)
    with pytest.raises(ValueError, match="input_type"):
        OpenAIClient(input_type="chat")
    with pytest.raises(ValueError, match="model_type"):
        client.convert_inputs_to_api_kwargs("x", {}, ModelType.RERANKER)


def test_embedding_requests_and_response(client: OpenAIClient) -> None:
    one = client.convert_inputs_to_api_kwargs("a", {"model": "e"}, ModelType.EMBEDDER)
    many = client.convert_inputs_to_api_kwargs(("a", "b"), {"model": "e"}, ModelType.EMBEDDER)
    assert one == {"model": "e", "input": ["a"]}
    assert many == {"model": "e", "input": ["a", "b"]}

    client.sync_client = fake_sdk(embed=[embeddings([0.1, 0.2], [0.3, 0.4])])
    out = client.parse_embedding_response(client.call(many, ModelType.EMBEDDER))
    assert client.sync_client.embeddings.requests == [many]
    assert isinstance(out, EmbedderOutput) and out.error is None
    assert [e.embedding for e in out.data] == [[0.1, 0.2], [0.3, 0.4]]
    assert [e.index for e in out.data] == [0, 1]
    assert out.model == "text-embedding-3-small"
    assert (out.usage.prompt_tokens, out.usage.total_tokens) == (6, 6)

    broken = client.parse_embedding_response(SimpleNamespace(data=None))
    assert broken.error and "parse error" in broken.error


# ----------------------------------------------------------------------------- replies
def test_call_and_parse_chat_completion(client: OpenAIClient) -> None:
    client.sync_client = fake_sdk(chat=[completion("Paris", usage=(10, 2))])
    api_kwargs = client.convert_inputs_to_api_kwargs("Capital of France?", {"model": "m"}, LLM)
    out = client.parse_chat_completion(client.call(api_kwargs, LLM))
    assert client.sync_client.chat.completions.requests == [api_kwargs]
    assert isinstance(out, GeneratorOutput)
    assert (out.data, out.raw_response, out.error) == ("Paris", "Paris", None)
    assert out.usage == CompletionUsage(completion_tokens=2, prompt_tokens=10, total_tokens=12)
    assert client.track_completion_usage(completion("x", usage=(1, 1))).total_tokens == 2


def test_parse_errors_become_output_errors(client: OpenAIClient) -> None:
    empty = completion()
    out = client.parse_chat_completion(empty)
    assert out.data is None and "parse error" in out.error


def test_custom_parser_and_probabilities() -> None:
    client = OpenAIClient(api_key="k", chat_completion_parser=get_all_messages_content)
    assert client.parse_chat_completion(completion("a", "b")).data == ["a", "b"]
    logprobs = {"content": [{"token": "Hi", "logprob": -0.1, "bytes": None, "top_logprobs": []}]}
    probs = get_probabilities(completion("Hi", logprobs=logprobs))
    assert [(p.token, p.logprob) for p in probs[0]] == [("Hi", -0.1)]


# --------------------------------------------------------------------------- streaming
def test_streaming_then_non_streaming_calls_both_work(client: OpenAIClient) -> None:
    client.sync_client = fake_sdk(chat=[STREAM, completion("Non-stream")])
    api_kwargs = client.convert_inputs_to_api_kwargs("Hi", {"model": "m", "stream": True}, LLM)
    assert api_kwargs["stream_options"] == {"include_usage": True}

    out = client.parse_chat_completion(client.call(api_kwargs, LLM))
    assert out.error is None and out.raw_response is out.data
    assert out.usage is None
    assert list(out.data) == ["Hel", "lo", "!"]
    assert out.usage == CompletionUsage(completion_tokens=3, prompt_tokens=4, total_tokens=7)

    plain = client.convert_inputs_to_api_kwargs("Hi", {"model": "m"}, LLM)
    assert "stream_options" not in plain
    again = client.parse_chat_completion(client.call(plain, LLM))
    assert again.data == "Non-stream"

    switched_off = {"model": "m", "stream": True, "stream_options": None}
    assert "stream_options" not in client.convert_inputs_to_api_kwargs("Hi", switched_off, LLM)


async def test_async_call_and_async_streaming(client: OpenAIClient) -> None:
    client.async_client = fake_sdk(chat=[completion("async"), STREAM], is_async=True)
    out = client.parse_chat_completion(await client.acall({"model": "m", "messages": []}, LLM))
    assert out.data == "async"

    streamed = client.parse_chat_completion(
        await client.acall({"model": "m", "messages": [], "stream": True}, LLM)
    )
    assert [piece async for piece in streamed.data] == ["Hel", "lo", "!"]
    assert streamed.usage.total_tokens == 7


def test_generator_streams_then_calls(client: OpenAIClient) -> None:
    client.sync_client = fake_sdk(chat=[STREAM, completion("Done")])
    gen = Generator(model_client=client, model_kwargs={"model": "m"}, template="Say {{x}}")
    assert "".join(gen.stream(prompt_kwargs={"x": "hello"})) == "Hello!"
    out = gen(prompt_kwargs={"x": "done"})
    assert out.error is None and out.data == "Done"
    sent = client.sync_client.chat.completions.requests
    assert sent[0]["stream"] is True and "stream" not in sent[1]


# ----------------------------------------------------------------------------- retries
@pytest.mark.parametrize(
    "error",
    [
        status_error(openai.RateLimitError, 429),
        status_error(openai.InternalServerError, 500),
        openai.APITimeoutError(request=httpx2.Request("POST", "https://api.openai.com")),
        openai.APIConnectionError(request=httpx2.Request("POST", "https://api.openai.com")),
    ],
    ids=["429", "500", "timeout", "connection"],
)
def test_transient_errors_are_retried(client: OpenAIClient, error: Exception) -> None:
    client.sync_client = fake_sdk(chat=[error, error, completion("ok")])
    assert client.parse_chat_completion(client.call({"model": "m"}, LLM)).data == "ok"
    assert len(client.sync_client.chat.completions.requests) == 3


@pytest.mark.parametrize(
    "error",
    [status_error(openai.BadRequestError, 400), status_error(openai.AuthenticationError, 401)],
    ids=["400", "401"],
)
def test_client_errors_are_not_retried(client: OpenAIClient, error: Exception) -> None:
    client.sync_client = fake_sdk(chat=[error, completion("never")])
    with pytest.raises(type(error)):
        client.call({"model": "m"}, LLM)
    assert len(client.sync_client.chat.completions.requests) == 1


async def test_async_retries_give_up_after_max_retries(client: OpenAIClient) -> None:
    error = status_error(openai.RateLimitError, 429)
    client.retry_policy.max_retries = 2
    client.async_client = fake_sdk(chat=[error] * 5, is_async=True)
    with pytest.raises(openai.RateLimitError):
        await client.acall({"model": "m"}, LLM)
    assert len(client.async_client.chat.completions.requests) == 3


# ---------------------------------------------------------------------- keys and config
def test_missing_key_is_reported_on_first_use_only(no_env: None) -> None:
    client = OpenAIClient()
    assert repr(client) == "OpenAIClient()"
    assert client.to_config() == {"component_name": "OpenAIClient", "component_config": {}}
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        client.call({"model": "m", "messages": []}, LLM)
    out = Generator(model_client=client, model_kwargs={"model": "m"})(prompt_kwargs={})
    assert "OPENAI_API_KEY" in out.error
    with pytest.raises(ValueError, match="MY_KEY"):
        OpenAIClient(env_api_key_name="MY_KEY").init_async_client()


def test_real_sdk_clients_from_env_and_base_url(
    no_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    sync = OpenAIClient(timeout=7.0, organization="org-1").init_sync_client()
    assert isinstance(sync, openai.OpenAI)
    assert (sync.api_key, sync.max_retries, sync.timeout) == ("sk-env", 0, 7.0)
    assert sync.organization == "org-1"

    monkeypatch.delenv("OPENAI_API_KEY")
    local = OpenAIClient(base_url="http://localhost:11434/v1")
    assert repr(local) == "OpenAIClient(base_url='http://localhost:11434/v1')"
    async_client = local.init_async_client()
    assert isinstance(async_client, openai.AsyncOpenAI)
    assert str(async_client.base_url).startswith("http://localhost:11434/v1")
    assert async_client.api_key == LOCAL_SERVER_API_KEY

    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm:8000/v1")
    assert "http://vllm:8000/v1" in repr(OpenAIClient())
    assert str(OpenAIClient().init_sync_client().base_url).startswith("http://vllm:8000/v1")


def test_api_key_never_serialised() -> None:
    secret = "sk-very-secret-123"
    client = OpenAIClient(api_key=secret, base_url="http://x/v1")
    client.sync_client = client.init_sync_client()
    as_dict = client.to_dict()
    assert "sync_client" not in as_dict["data"] and "_api_key" not in as_dict["data"]
    for text in (repr(client), json.dumps(as_dict), json.dumps(client.to_config())):
        assert secret not in text
    restored = OpenAIClient.from_dict(as_dict)
    assert restored.sync_client is None and restored.base_url == "http://x/v1"
    assert ModelClientType.OPENAI is OpenAIClient
    assert isinstance(ModelClientType.OPENAI(api_key="k"), OpenAIClient)


# ----------------------------------------------------------------------- optional SDK
def test_sdk_import_error_only_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    client = OpenAIClient(api_key="k")
    with pytest.raises(ImportError, match=r"pip install -e '\.\[openai\]'"):
        client.call({"model": "m", "messages": []}, LLM)


def test_modules_import_without_sdks() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["openai"] = None
        sys.modules["groq"] = None
        from lightrag.components.model_client import GroqAPIClient, OpenAIClient
        from lightrag.core.generator import Generator
        gen = Generator(model_client=OpenAIClient(api_key="k"), model_kwargs={"model": "m"})
        print(repr(gen.model_client), GroqAPIClient().to_config()["component_name"])
        print(gen(prompt_kwargs={"input_str": "hi"}).error)
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.strip().splitlines()
    assert first == "OpenAIClient() GroqAPIClient"
    assert "ImportError" in second and "pip install -e '.[openai]'" in second


# ---------------------------------------------------------------------------- real API
@pytest.mark.needs_api_key
def test_real_openai_call() -> None:
    if not os.getenv("OPENAI_API_KEY"):
        pytest.skip("OPENAI_API_KEY is not set: skipping the real OpenAI call")
    client = OpenAIClient()
    api_kwargs = client.convert_inputs_to_api_kwargs(
        "<SYS>Reply with one word.</SYS> Say yes.", {"model": "gpt-4o-mini", "max_tokens": 5}, LLM
    )
    out = client.parse_chat_completion(client.call(api_kwargs, LLM))
    assert out.error is None and out.data and out.usage.total_tokens > 0
