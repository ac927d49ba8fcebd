"""Generator: prompt -> client -> processors, errors as data, cache, usage, streaming, callbacks."""

import asyncio
from unittest.mock import Mock

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.component import Component, FunComponent
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.parameter import Parameter
from lightrag.core.types import GeneratorOutput, ModelType


class Upper(Component):
    def call(self, text):
        return text.upper()


class Failing(Component):
    def call(self, text):
        raise ValueError("cannot parse")


def test_renders_prompt_and_returns_text():
    client = ScriptedClient(responses=["Paris"])
    gen = Generator(model_client=client, model_kwargs={"model": "m"}, template="Capital of {{c}}?")
    out = gen(prompt_kwargs={"c": "France"})
    assert isinstance(out, GeneratorOutput)
    assert out.data == "Paris" and out.raw_response == "Paris" and out.error is None
    assert client.requests == [{"prompt": "Capital of France?", "model": "m"}]


def test_model_kwargs_merge_call_overrides_defaults():
    client = ScriptedClient(responses=["a"])
    gen = Generator(model_client=client, model_kwargs={"model": "m", "temperature": 0})
    gen(prompt_kwargs={"input_str": "q"}, model_kwargs={"temperature": 1})
    assert client.requests[0]["temperature"] == 1 and client.requests[0]["model"] == "m"


def test_output_processors_applied_and_failures_become_errors():
    gen = Generator(model_client=ScriptedClient(responses=["yes"]), output_processors=Upper())
    assert gen({"input_str": "q"}).data == "YES"
    bad = Generator(model_client=ScriptedClient(responses=["raw"]), output_processors=Failing())
    out = bad({"input_str": "q"})
    assert out.data is None and "cannot parse" in out.error and out.raw_response == "raw"


def test_model_failure_never_raises():
    gen = Generator(model_client=ScriptedClient(responses=[RuntimeError("provider down")]))
    out = gen({"input_str": "q"})
    assert out.data is None and "provider down" in out.error
    assert gen.usage.failed_calls == 1


def test_parse_failure_keeps_raw_response():
    client = ScriptedClient(responses=["x"])
    client.parse_chat_completion = Mock(side_effect=KeyError("choices"))
    out = Generator(model_client=client)({"input_str": "q"})
    assert "parse error" in out.error and out.raw_response == "x"


def test_client_returning_plain_string_is_accepted():
    class OldStyle(ModelClient):
        def convert_inputs_to_api_kwargs(self, input=None, model_kwargs=None,
                                         model_type=ModelType.UNDEFINED):
            return {"input": input}

        def call(self, api_kwargs=None, model_type=ModelType.UNDEFINED):
            return {"text": "hi"}

        def parse_chat_completion(self, completion):
            return completion["text"]

    assert Generator(model_client=OldStyle())({"input_str": "q"}).data == "hi"


def test_model_client_type_checked():
    with pytest.raises(TypeError, match="ModelClient"):
        Generator(model_client=object())
    Generator(model_client=Mock(spec=ModelClient))


def test_cache_hits_skip_the_model_and_are_keyed_by_request(tmp_path):
    client = ScriptedClient(responses=["first", "second", "third"])
    gen = Generator(model_client=client, cache_path=str(tmp_path / "c.sqlite"))
    a = gen({"input_str": "q"})
    b = gen({"input_str": "q"})
    assert a.data == b.data == "first" and b.metadata["cached"] and not a.metadata["cached"]
    assert len(client.requests) == 1
    assert gen({"input_str": "q"}, model_kwargs={"temperature": 1}).data == "second"
    assert gen({"input_str": "q"}, use_cache=False).data == "third"
    fresh_client = ScriptedClient(responses=[])
    again = Generator(model_client=fresh_client, cache_path=str(tmp_path / "c.sqlite"))
    assert again({"input_str": "q"}).data == "first" and fresh_client.requests == []


def test_errors_are_not_cached():
    client = ScriptedClient(responses=[RuntimeError("x"), "ok"])
    gen = Generator(model_client=client, use_cache=True)
    assert gen({"input_str": "q"}).error
    assert gen({"input_str": "q"}).data == "ok"


def test_usage_totals():
    gen = Generator(model_client=ScriptedClient(responses=["one two", "three"]))
    gen({"input_str": "a"})
    gen({"input_str": "b"})
    assert gen.usage.calls == 2
    assert gen.usage.completion_tokens == 3
    assert gen.usage.total_tokens == gen.usage.prompt_tokens + 3


def test_streaming_sync_and_async_and_after_stream():
    client = ScriptedClient(responses=["hello world", "again", "plain"], stream_chunk_size=3)
    gen = Generator(model_client=client, output_processors=Upper())
    assert "".join(gen.stream({"input_str": "q"})) == "hello world"

    async def collect():
        return [piece async for piece in gen.astream({"input_str": "q"})]

    assert "".join(asyncio.run(collect())) == "again"
    assert gen({"input_str": "q"}).data == "PLAIN"


def test_stream_errors_are_data_not_raised():
    gen = Generator(model_client=ScriptedClient(responses=[RuntimeError("rate limited")]))
    stream = gen.stream({"input_str": "q"})
    assert list(stream) == [] and "rate limited" in stream.error
    assert stream.output.error == stream.error and gen.usage.failed_calls == 1

    async def collect():
        s = Generator(model_client=ScriptedClient(responses=[RuntimeError("down")])).astream({})
        return [piece async for piece in s], s.error

    pieces, error = asyncio.run(collect())
    assert pieces == [] and "down" in error


def test_stream_broken_midway_stops_with_an_error():
    class Breaking(ScriptedClient):
        def call(self, api_kwargs=None, model_type=None):
            def pieces():
                yield "par"
                raise ConnectionError("connection reset")
            return pieces()

    gen = Generator(model_client=Breaking())
    stream = gen.stream({"input_str": "q"})
    assert list(stream) == ["par"] and "connection reset" in stream.error
    assert gen.usage.failed_calls == 1


def test_usage_counts_streamed_calls():
    gen = Generator(model_client=ScriptedClient(responses=["one two", "three"]))
    assert "".join(gen.stream({"input_str": "q"})) == "one two"
    gen({"input_str": "q"})
    assert (gen.usage.calls, gen.usage.streamed_calls, gen.usage.failed_calls) == (2, 1, 0)


def test_acall_matches_call():
    gen = Generator(model_client=ScriptedClient(responses=["async answer"]), output_processors=Upper())
    out = asyncio.run(gen.acall({"input_str": "q"}))
    assert out.data == "ASYNC ANSWER"


def test_trainable_params_and_prompt_parameters():
    gen = Generator(
        model_client=ScriptedClient(),
        template="{{task_desc_str}} | {{examples_str}} | {{input_str}}",
        prompt_kwargs={"task_desc_str": "Be brief.", "examples_str": Parameter(data="ex1")},
        trainable_params=["task_desc_str"],
    )
    names = [n for n, _ in gen.named_parameters()]
    assert set(names) == {"task_desc_str", "examples_str"}
    assert gen({"input_str": "q"}).data == "Be brief. | ex1 | q"
    gen.load_state_dict({"task_desc_str": "Be verbose.", "examples_str": "ex2"})
    assert gen({"input_str": "q"}).data == "Be verbose. | ex2 | q"
    with pytest.raises(ValueError, match="not a variable"):
        Generator(model_client=ScriptedClient(), template="{{a}}", trainable_params=["b"])


def test_callbacks():
    events = []
    gen = Generator(model_client=ScriptedClient(responses=["ok", RuntimeError("no")]))
    gen.register_callback("on_success", lambda output, **_: events.append(("s", output.data)))
    gen.register_callback("on_failure", lambda output, **_: events.append(("f", output.error)))
    gen.register_callback("on_complete", lambda output, **_: events.append(("c", None)))
    gen({"input_str": "a"})
    gen({"input_str": "b"})
    assert [e[0] for e in events] == ["s", "c", "f", "c"]
    with pytest.raises(ValueError):
        gen.register_callback("on_whatever", print)


def test_repr_matches_seed_format():
    gen = Generator(
        model_client=ScriptedClient(), model_kwargs={"model": "m"}, template="Q: {{input_str}}",
        output_processors=FunComponent(str.strip),
    )
    assert repr(gen) == (
        "Generator(\n"
        "  model_kwargs={'model': 'm'}, \n"
        "  (prompt): Prompt(template: Q: {{input_str}}, prompt_variables: ['input_str'])\n"
        "  (model_client): ScriptedClient(responses=0, cycle=False)\n"
        "  (output_processors): FunComponent(fun_name=strip)\n"
        ")"
    )


def test_conversation_is_sent_as_chat_messages():
    from lightrag.core.types import AssistantResponse, Conversation, DialogTurn, UserQuery

    client = ScriptedClient(responses=["6", "8"])
    gen = Generator(model_client=client, template="<SYS>You do arithmetic.</SYS>{{input_str}}")
    history = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    assert gen({"input_str": "3+3?"}, conversation=history).data == "6"
    assert client.requests[0]["prompt"] == [
        {"role": "system", "content": "You do arithmetic."},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "3+3?"},
    ]
    conv = Conversation()
    conv.append_dialog_turn(DialogTurn(user_query=UserQuery("2+2?"),
                                       assistant_response=AssistantResponse("4")))
    gen({"input_str": "4+4?"}, conversation=conv)
    assert client.requests[1]["prompt"][1:3] == history
    with pytest.raises(ValueError, match="role"):
        gen({"input_str": "x"}, conversation=[{"role": "wizard", "content": "hi"}])


def test_openai_client_receives_native_messages():
    from lightrag.components.model_client import OpenAIClient

    client = OpenAIClient(api_key="sk-test")
    api_kwargs = Generator(model_client=client, model_kwargs={"model": "m"},
                           template="<SYS>Be kind.</SYS>{{input_str}}")._pre_call(
        {"input_str": "Hi again"}, None, [{"role": "user", "content": "Hi"},
                                          {"role": "assistant", "content": "Hello"}])
    assert api_kwargs["messages"] == [
        {"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Hi again"}]
    assert api_kwargs["model"] == "m"


def test_cache_is_not_shared_between_local_models(tmp_path):
    from lightrag.components.model_client import LocalLLMClient

    a = Generator(model_client=LocalLLMClient(model="smollm2-135m-instruct"), cache_path=str(tmp_path / "c"))
    b = Generator(model_client=LocalLLMClient(model="other/repo:*.gguf"), cache_path=str(tmp_path / "c"))
    request = a._pre_call({"input_str": "q"}, None)
    assert request == b._pre_call({"input_str": "q"}, None)
    assert a._cache_key(request) != b._cache_key(request)


# ---- issue 16: timeouts, never caching failed replies, forget ------------------------------


def test_a_model_call_that_hangs_returns_a_timeout_error_as_data():
    import time as _time

    def slow(prompt):
        _time.sleep(2)
        return "late"

    gen = Generator(model_client=ScriptedClient(response_fn=slow), template="{{q}}", timeout=0.2)
    started = _time.perf_counter()
    out = gen({"q": "x"})
    assert _time.perf_counter() - started < 1.5
    assert out.data is None and out.error == "model call timed out after 0.2 s"


async def test_async_model_call_times_out_too():
    import asyncio as _asyncio

    from lightrag.core.model_client import ModelClient

    class Hanging(ScriptedClient):
        async def acall(self, api_kwargs=None, model_type=None):
            await _asyncio.sleep(5)

    gen = Generator(model_client=Hanging(), template="{{q}}", timeout=0.1)
    out = await gen.acall({"q": "x"})
    assert out.error == "model call timed out after 0.1 s"
    assert ModelClient.default_timeout == 60.0


def test_default_timeouts_per_client_kind():
    from lightrag.components.model_client import (
        LocalEmbedderClient,
        LocalLLMClient,
        OpenAIClient,
    )

    assert Generator(model_client=OpenAIClient()).effective_timeout() == 60.0
    assert Generator(model_client=LocalLLMClient()).effective_timeout() == 300.0
    assert LocalEmbedderClient().call_timeout() == 300.0
    assert Generator(model_client=OpenAIClient(timeout=5)).effective_timeout() == 5
    assert Generator(model_client=LocalLLMClient(), timeout=7).effective_timeout() == 7


def test_a_reply_whose_output_processing_failed_is_never_cached():
    from lightrag.core.string_parser import JsonParser

    client = ScriptedClient(responses=["not json at all", '{"a": 1}'])
    gen = Generator(model_client=client, template="{{q}}", output_processors=JsonParser(),
                    use_cache=True)
    first = gen({"q": "x"})
    assert first.error is not None and first.data is None
    second = gen({"q": "x"})
    assert second.error is None and second.data == {"a": 1}
    third = gen({"q": "x"})
    assert third.data == {"a": 1} and third.metadata["cached"] and len(client.requests) == 2


def test_forget_drops_one_cached_reply(tmp_path):
    client = ScriptedClient(responses=["truncated", "complete"])
    gen = Generator(model_client=client, template="{{q}}", cache_path=str(tmp_path / "c.db"))
    assert gen({"q": "x"}, model_kwargs={"temperature": 0}).data == "truncated"
    assert gen.forget({"q": "y"}, {"temperature": 0}) is False
    assert gen.forget({"q": "x"}, {"temperature": 0}) is True
    assert gen({"q": "x"}, model_kwargs={"temperature": 0}).data == "complete"
    assert gen({"q": "x"}, model_kwargs={"temperature": 0}).metadata["cached"]
    assert Generator(model_client=client, template="{{q}}").forget({"q": "x"}) is False


# ---- lightrag 0.1 behaviour ---------------------------------------------------------------


def test_0_1_generator_surface(capsys):
    from lightrag.core.component import Component
    from lightrag.core.parameter import Parameter

    class Tool(Component):
        def call(self, x):
            return x

    tool = Tool()
    gen = Generator(model_client=ScriptedClient(responses=["a"]), template="Q: {{q}} {{tool}}",
                    prompt_kwargs={"tool": tool, "q": Parameter(data="p")})
    assert gen.template == "Q: {{q}} {{tool}}"
    assert gen.prompt.prompt_kwargs["tool"] is tool  # not deep-copied
    text = gen.print_prompt(q="hello")
    assert "Q: hello" in capsys.readouterr().out and text.startswith("Q: hello")
    assert isinstance(gen.state_dict()["q"], Parameter)


def test_from_dict_round_trip_gives_a_working_generator():
    gen = Generator(model_client=ScriptedClient(cycle=True, responses=["r"]), template="{{q}}",
                    use_cache=True)
    rebuilt = Generator.from_dict(gen.to_dict())
    out = rebuilt({"q": "x"})
    assert out.error is None and out.data == "r"
    assert rebuilt({"q": "x"}).metadata["cached"]
    rebuilt.register_callback("on_complete", lambda **kw: None)
