"""The real provider SDKs against a fake server on loopback, through lightrag's sync and async APIs.

Each sync call (``rag.insert``, ``rag.query``, ``Generator.call`` of an async path) runs its own
event loop; an async SDK client kept from an earlier loop fails with "Event loop is closed". Only
a real SDK over a real socket shows it, so these tests use no scripted client.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_provider_server import FakeProvider
from graph_fakes import extraction_reply

from lightrag.components.graph_rag import EntityExtractor, GraphRAG, HeuristicKeywordExtractor
from lightrag.components.graph_rag.chunking import Chunker
from lightrag.components.model_client import OpenAIClient
from lightrag.core import Embedder, Generator

DOCS = [
    "Marie Curie was born in Warsaw. Marie Curie won the Nobel Prize in Physics in 1903.",
    "Pierre Curie worked in Paris. Pierre Curie shared the Nobel Prize with Marie Curie.",
    "The Sorbonne is a university in Paris. Marie Curie taught at the Sorbonne.",
]


def reply(prompt: str) -> str:
    if "Input text:" in prompt:
        return extraction_reply(prompt)
    return "Marie Curie was born in Warsaw [1]."


@pytest.fixture
def provider():
    with FakeProvider(reply) as server:
        yield server


def openai_rag(tmp_path, url: str) -> GraphRAG:
    client = OpenAIClient(api_key="sk-test", base_url=f"{url}/v1")
    return GraphRAG(
        embedder=Embedder(model_client=client, model_kwargs={"model": "text-embedding-3-small"}),
        extractor=EntityExtractor(
            generator=Generator(model_client=client, model_kwargs={"model": "gpt-4o-mini"}),
            max_gleaning=0,
        ),
        answer_generator=Generator(model_client=client, model_kwargs={"model": "gpt-4o-mini"}),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=60, chunk_overlap_token_size=0),
        working_dir=str(tmp_path),
        cosine_threshold=0.0,
    )


def test_one_openai_client_serves_insert_then_several_sync_queries(tmp_path, provider):
    rag = openai_rag(tmp_path, provider.url)
    first = rag.insert(DOCS[:2])
    assert first.failed == {} and len(first.processed) == 2
    second = rag.insert(DOCS[2:])  # a second loop: the embedder's client must not be stale
    assert second.failed == {} and len(second.processed) == 1
    for mode in ("naive", "local", "hybrid", "naive"):
        result = rag.query("Where was Marie Curie born?", mode=mode)
        assert result.content == "Marie Curie was born in Warsaw [1].", (mode, result)
    assert sum(p.endswith("/chat/completions") for p in provider.requests) >= 7


def test_sync_stream_then_async_queries_reuse_one_client(tmp_path, provider):
    rag = openai_rag(tmp_path, provider.url)
    rag.insert(DOCS)
    streamed = rag.query("Where was Marie Curie born?", mode="naive", stream=True)
    assert "".join(streamed.response_iterator) == "Marie Curie was born in Warsaw [1]."

    async def twice():
        a = await rag.aquery("Where was Marie Curie born?", mode="naive")
        b = await rag.aquery("Who taught at the Sorbonne?", mode="local")
        return a, b

    for _ in range(2):  # two loops in a row, each with two calls
        a, b = asyncio.run(twice())
        assert a.content == b.content == "Marie Curie was born in Warsaw [1]."
    assert rag.query("Where was Marie Curie born?").content.startswith("Marie Curie")


def test_generator_acall_across_loops_with_groq_sdk(provider, monkeypatch):
    from lightrag.components.model_client import GroqAPIClient

    monkeypatch.setenv("GROQ_BASE_URL", provider.url)
    generator = Generator(model_client=GroqAPIClient(api_key="gsk-test"),
                          model_kwargs={"model": "llama3-8b-8192"})
    for _ in range(3):
        output = asyncio.run(generator.acall({"input_str": "Where was Marie Curie born?"}))
        assert output.error is None and output.data.startswith("Marie Curie")
    assert generator.call({"input_str": "again"}).data.startswith("Marie Curie")


def test_anthropic_sdk_across_loops(provider, monkeypatch):
    pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
    from lightrag.components.model_client import AnthropicAPIClient

    monkeypatch.setenv("ANTHROPIC_BASE_URL", provider.url)
    generator = Generator(model_client=AnthropicAPIClient(api_key="sk-ant-test"),
                          model_kwargs={"model": "claude-3-haiku"})
    for _ in range(3):
        output = asyncio.run(generator.acall({"input_str": "Where?"}))
        assert output.error is None and output.data.startswith("Marie Curie")


def test_ollama_sdk_across_loops(provider):
    pytest.importorskip("ollama", reason="the ollama extra is not installed")
    from lightrag.components.model_client import OllamaClient

    generator = Generator(model_client=OllamaClient(host=provider.url),
                          model_kwargs={"model": "llama3"})
    for _ in range(3):
        output = asyncio.run(generator.acall({"input_str": "Where?"}))
        assert output.error is None and output.data.startswith("Marie Curie")
    embedder = Embedder(model_client=OllamaClient(host=provider.url),
                        model_kwargs={"model": "nomic-embed-text"})
    for _ in range(2):
        out = asyncio.run(embedder.acall(["a b", "c"]))
        assert out.error is None and len(out.data) == 2


def test_cli_index_and_query_with_openai_config(tmp_path, provider):
    """The CLI in a real process: index with one OpenAI client, then two queries."""
    config = tmp_path / "rag.yaml"
    llm = {"component_name": "OpenAIClient",
           "component_config": {"base_url": f"{provider.url}/v1"}}
    config.write_text(json.dumps({"component_name": "GraphRAG", "component_config": {
        "working_dir": str(tmp_path / "store"),
        "cosine_threshold": 0.0,
        "embedder": {"component_name": "Embedder", "component_config": {
            "model_client": llm, "model_kwargs": {"model": "text-embedding-3-small"}}},
        "extractor": {"component_name": "EntityExtractor", "component_config": {
            "generator": {"component_name": "Generator", "component_config": {
                "model_client": llm, "model_kwargs": {"model": "gpt-4o-mini"}}},
            "max_gleaning": 0}},
        "answer_generator": {"component_name": "Generator", "component_config": {
            "model_client": llm, "model_kwargs": {"model": "gpt-4o-mini"}}},
        "keyword_extractor": {"component_name": "HeuristicKeywordExtractor",
                              "component_config": {}},
    }}))
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(DOCS):
        (docs / f"d{i}.txt").write_text(text)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    lightrag = [str(Path(sys.executable).with_name("lightrag"))]
    done = subprocess.run([*lightrag, "index", str(docs), "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    for mode in ("naive", "hybrid"):
        done = subprocess.run(
            [*lightrag, "query", "Where was Marie Curie born?", "--config", str(config),
             "--mode", mode], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Marie Curie was born in Warsaw" in done.stdout, done.stdout + done.stderr
