"""Generator streams bounded piece by piece, truncated JSON as an error, and OpenAIClient's
``response_format`` check."""

import asyncio
import threading
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from lightrag.components.model_client.openai_client import OpenAIClient
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.generator import Generator
from lightrag.core.string_parser import JsonParser, ListParser
from lightrag.core.types import ModelType


class StallingClient(ScriptedClient):
    """Streams ``pieces`` ``gap`` s apart, then stalls until ``release`` is set (or 3 s pass)."""

    def __init__(self, pieces, gap=0.0, stall=True):
        super().__init__()
        self.pieces, self.gap, self.stall = pieces, gap, stall
        self.release = threading.Event()

    def call(self, api_kwargs=None, model_type=None):
        def stream():
            for piece in self.pieces:
                time.sleep(self.gap)
                yield piece
            if self.stall:
                self.release.wait(3)
                yield "never read"

        return stream()

    async def acall(self, api_kwargs=None, model_type=None):
        async def stream():
            for piece in self.pieces:
                await asyncio.sleep(self.gap)
                yield piece
            if self.stall:
                await asyncio.sleep(3)
                yield "never read"

        return stream()


def test_a_sync_stream_that_stalls_midway_ends_with_a_timeout_error():
    steady = Generator(model_client=StallingClient(["a"] * 6, gap=0.05, stall=False), timeout=0.2)
    stream = steady.stream({"input_str": "q"})
    assert "".join(stream) == "aaaaaa" and stream.error is None  # 0.3 s in all, never 0.2 s silent

    client = StallingClient(["par"])
    gen = Generator(model_client=client, timeout=0.2)
    started = time.perf_counter()
    stream = gen.stream({"input_str": "q"})
    pieces = list(stream)
    client.release.set()
    assert time.perf_counter() - started < 2
    assert pieces == ["par"]
    assert stream.error == "stream broke: ModelCallTimeout: model call timed out after 0.2 s"
    assert gen.usage.failed_calls == 1 and steady.usage.failed_calls == 0


def test_an_async_stream_that_stalls_midway_ends_with_a_timeout_error():
    async def read(gen):
        stream = gen.astream({"input_str": "q"})
        return [piece async for piece in stream], stream.error

    steady = Generator(model_client=StallingClient(["a"] * 6, gap=0.05, stall=False), timeout=0.2)
    assert asyncio.run(read(steady)) == (["a"] * 6, None)

    gen = Generator(model_client=StallingClient(["par"]), timeout=0.2)
    started = time.perf_counter()
    pieces, error = asyncio.run(read(gen))
    assert time.perf_counter() - started < 2
    assert pieces == ["par"]
    assert error == "stream broke: ModelCallTimeout: model call timed out after 0.2 s"
    assert gen.usage.failed_calls == 1


# ---- JsonParser: a key left without a value is an error -----------------------------------
@pytest.mark.parametrize(
    "text,key",
    [('{"a": ', "a"), ('Sure: {"a": 1, "b": ', "b"), ('```json\n{"a": {"b":\n```', "b"),
     ('{"items": [{"n": 1}, {"n"', "n"), ('{"a": 1, "b', "b")],
)
def test_json_parser_refuses_a_reply_cut_off_after_a_key(text, key):
    for parser in (JsonParser(), JsonParser(lenient=True)):
        with pytest.raises(ValueError, match=f"cut off before the value of key '{key}'"):
            parser(text)


def test_json_parser_refuses_a_key_without_a_value_and_still_closes_other_truncation():
    with pytest.raises(ValueError, match="the value of key 'a' is missing"):
        JsonParser()('{"a":}')
    with pytest.raises(ValueError, match="cut off before the value of key 'b'"):
        ListParser()('[{"a": 1}, {"b": ')
    assert JsonParser()('{"a": [1, 2') == {"a": [1, 2]}
    assert JsonParser()('{"a": "unfinish') == {"a": "unfinish"}
    assert JsonParser()('{"a": null') == {"a": None}


def test_a_generator_reports_a_truncated_json_reply_as_an_error():
    gen = Generator(model_client=ScriptedClient(['{"answer": "Paris", "confidence": ']),
                    output_processors=JsonParser())
    out = gen({"input_str": "q"})
    assert out.data is None
    assert "cut off before the value of key 'confidence'" in out.error


# ---- OpenAIClient: a class as response_format --------------------------------------------
class Answer(BaseModel):
    city: str


@dataclass
class AnswerDC:
    city: str


def _recording_openai_client():
    sent = []
    client = OpenAIClient(api_key="sk-test")
    create = lambda **kwargs: sent.append(kwargs)  # noqa: E731
    client.sync_client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    return client, sent


@pytest.mark.parametrize("response_format", [Answer, AnswerDC, AnswerDC("x")])
def test_openai_client_refuses_a_class_as_response_format_before_any_request(response_format):
    client, sent = _recording_openai_client()
    gen = Generator(model_client=client, model_kwargs={"model": "m", "response_format": response_format})
    expected = r"response_format must be a dict.*'type': 'json_object'.*json_schema"
    with pytest.raises(TypeError, match=expected):
        gen({"input_str": "q"})
    request = {"model": "m", "messages": [{"role": "user", "content": "q"}],
               "response_format": response_format}
    with pytest.raises(TypeError, match="response_format must be a dict"):
        client.call(api_kwargs=request, model_type=ModelType.LLM)
    assert sent == []


def test_openai_client_names_the_schema_of_a_pydantic_class():
    client, sent = _recording_openai_client()
    with pytest.raises(TypeError, match=r"'name': 'Answer', 'schema': Answer\.model_json_schema\(\)"):
        client.convert_inputs_to_api_kwargs("q", {"model": "m", "response_format": Answer}, ModelType.LLM)
    kwargs = client.convert_inputs_to_api_kwargs(
        "q", {"model": "m", "response_format": {"type": "json_object"}}, ModelType.LLM)
    client.call(api_kwargs=kwargs, model_type=ModelType.LLM)
    assert sent[0]["response_format"] == {"type": "json_object"}
