"""Local model clients: request building offline, then the real packaged models (marked slow).

The slow tests load the real SmolLM2 GGUF (llama.cpp) and all-MiniLM-L6-v2 (sentence-transformers)
from their packages and check real outputs; they take a few seconds and run in CI.
"""

import asyncio
import json

import numpy as np
import pytest

from lightrag.components.model_client import LocalEmbedderClient, LocalLLMClient, local_llm_client
from lightrag.core import Embedder, Generator
from lightrag.core.types import ModelType


def test_llm_request_building_and_validation():
    client = LocalLLMClient()
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    kwargs = client.convert_inputs_to_api_kwargs(
        input="<SYS>Be brief.</SYS>Hi", model_kwargs={"model": "x", "max_tokens": 5,
                                                      "json_schema": schema},
        model_type=ModelType.LLM,
    )
    assert kwargs["messages"][0] == {"role": "system", "content": "Be brief."}
    assert kwargs["messages"][-1]["role"] == "user"
    assert kwargs["response_format"] == {"type": "json_object", "schema": schema}
    assert "model" not in kwargs and kwargs["max_tokens"] == 5
    with pytest.raises(ValueError, match="does not understand"):
        client.convert_inputs_to_api_kwargs("hi", {"temprature": 0}, ModelType.LLM)
    with pytest.raises(ValueError, match="LLM requests only"):
        client.convert_inputs_to_api_kwargs("hi", {}, ModelType.EMBEDDER)


def test_local_llm_default_max_tokens_and_timeout():
    """A request without max_tokens gets the client's limit (256 unless set): issue 17."""
    default = LocalLLMClient().convert_inputs_to_api_kwargs("hi", {}, ModelType.LLM)
    assert default["max_tokens"] == 256
    own = LocalLLMClient(max_tokens=64).convert_inputs_to_api_kwargs("hi", {}, ModelType.LLM)
    assert own["max_tokens"] == 64
    given = LocalLLMClient().convert_inputs_to_api_kwargs("hi", {"max_tokens": 8}, ModelType.LLM)
    assert given["max_tokens"] == 8
    assert LocalLLMClient().call_timeout() == 300.0 and LocalLLMClient(timeout=5).call_timeout() == 5


def test_llm_missing_model_errors_are_clear(monkeypatch):
    with pytest.raises(FileNotFoundError, match="GGUF model not found"):
        local_llm_client.resolve_gguf("no-such-model")
    assert local_llm_client.resolve_gguf("someone/some-repo:*Q4_K_M.gguf") == (
        "someone/some-repo", "*Q4_K_M.gguf")
    monkeypatch.setattr(local_llm_client.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[local\]'"):
        local_llm_client.resolve_gguf("smollm2-135m-instruct")


def test_parse_llama_cpp_shapes_offline():
    client = LocalLLMClient()
    out = client.parse_chat_completion({
        "choices": [{"message": {"role": "assistant", "content": "hi"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})
    assert out.data == "hi" and out.usage.total_tokens == 4
    assert "parse error" in client.parse_chat_completion({"oops": 1}).error
    chunks = iter([{"choices": [{"delta": {"role": "assistant"}}]},
                   {"choices": [{"delta": {"content": "a"}}]},
                   {"choices": [{"delta": {"content": "b"}}]}])
    assert "".join(client.parse_chat_completion(chunks).data) == "ab"


def test_embedder_request_building():
    client = LocalEmbedderClient()
    assert client.convert_inputs_to_api_kwargs("x", {"model": "m"}, ModelType.EMBEDDER) == {
        "input": ["x"]}
    with pytest.raises(ValueError):
        client.convert_inputs_to_api_kwargs("x", {}, ModelType.LLM)


@pytest.mark.slow
def test_real_embedder_ranks_paraphrase_above_unrelated():
    embedder = Embedder(model_client=LocalEmbedderClient())
    out = embedder([
        "Jupiter is the largest planet in the solar system.",
        "The biggest planet orbiting the Sun is Jupiter.",
        "I cooked pasta with tomato sauce for dinner.",
    ])
    assert out.error is None and out.embedding_dim == 384 and out.is_normalized
    m = np.array([e.embedding for e in out.data])
    assert m[0] @ m[1] > 0.7 > 0.2 > m[0] @ m[2]


@pytest.mark.slow
def test_real_llm_answers_from_context():
    gen = Generator(
        model_client=LocalLLMClient(),
        model_kwargs={"max_tokens": 30, "temperature": 0.0},
        template="CONTEXT: {{context}}\nQUESTION: {{question}}\nANSWER:",
    )
    out = gen({"context": "Jupiter is the biggest planet in our solar system.",
               "question": "Which planet is the biggest?"})
    assert out.error is None and "Jupiter" in out.data
    assert out.usage.completion_tokens > 0


@pytest.mark.slow
def test_real_llm_json_schema_streaming_and_async():
    gen = Generator(model_client=LocalLLMClient(), model_kwargs={"max_tokens": 40,
                                                                 "temperature": 0.0})
    schema = {"type": "object", "properties": {"planet": {"type": "string"},
                                               "color": {"type": "string"}},
              "required": ["planet", "color"]}
    out = gen({"input_str": "Mars is red. Give the planet and its color."},
              model_kwargs={"json_schema": schema})
    parsed = json.loads(out.data)
    assert set(parsed) == {"planet", "color"} and "mars" in parsed["planet"].lower()
    pieces = list(gen.stream({"input_str": "Say hello."}))
    assert len(pieces) > 1 and "".join(pieces).strip()

    async def run():
        answer = await gen.acall({"input_str": "Say hello."})
        streamed = [p async for p in gen.astream({"input_str": "Say hello."})]
        return answer, streamed

    answer, streamed = asyncio.run(run())
    assert answer.data and "".join(streamed) == answer.data
