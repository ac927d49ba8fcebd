"""What the server tests share: the scripted GraphRAG, its YAML config, slow and gated model
clients, and the ``serve`` fixture (a real uvicorn on 127.0.0.1 driven with httpx).

Use it as ``from server_fixtures import DOCS, make_rag, serve`` (importing ``serve`` makes the
fixture available to the test module).
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from graph_fakes import extraction_reply, the_answer  # noqa: E402

from lightrag.components.graph_rag import Chunker, EntityExtractor, GraphRAG  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402
from lightrag.server.app import create_app  # noqa: E402
from lightrag.server.runner import BackgroundServer  # noqa: E402

DOCS = {
    "voyager.md": "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
                  "Voyager 1 photographed Titan, the largest moon of Saturn.",
    "cassini.md": "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
                  "Titan in 2005. Cassini found plumes on Enceladus.",
}


def _client(**config):
    return {"component_name": "ScriptedClient", "component_config": config}


SCRIPTED = {"component_name": "GraphRAG", "component_config": {
    "embedder": {"component_name": "Embedder", "component_config": {
        "model_client": _client(embedding_dim=256)}},
    "extractor": {"component_name": "EntityExtractor", "component_config": {
        "generator": {"component_name": "Generator", "component_config": {
            "model_client": _client(response_fn={"class": "extraction_reply"})}}}},
    "answer_generator": {"component_name": "Generator", "component_config": {
        "model_client": _client(response_fn={"class": "the_answer"})}},
    "cosine_threshold": 0.05}}


class SlowAsyncClient(ScriptedClient):
    """The scripted LLM taking ``delay`` seconds without blocking the event loop."""

    def __init__(self, delay=0.5, **kwargs):
        super().__init__(**kwargs)
        self.delay = delay

    async def acall(self, api_kwargs=None, model_type=None):
        await asyncio.sleep(self.delay)
        return await super().acall(api_kwargs, model_type)


class GatedAsyncClient(ScriptedClient):
    """The scripted LLM that waits (without blocking the event loop) until ``gate`` is set."""

    def __init__(self, gate, **kwargs):
        super().__init__(**kwargs)
        self.gate = gate

    async def acall(self, api_kwargs=None, model_type=None):
        while not self.gate.is_set():
            await asyncio.sleep(0.01)
        return await super().acall(api_kwargs, model_type)


def make_rag(tmp_path, answer_client=None, extraction=extraction_reply, extraction_client=None,
             workspace=""):
    """The scripted GraphRAG over ``tmp_path`` (optionally in a workspace)."""
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(generator=Generator(
            model_client=extraction_client or ScriptedClient(response_fn=extraction)),
            max_gleaning=0),
        answer_generator=Generator(model_client=answer_client
                                   or ScriptedClient(response_fn=the_answer)),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path), workspace=workspace, cosine_threshold=0.05)


def sse_events(text):
    """The JSON events of a Server-Sent Events body."""
    return [json.loads(block[len("data: "):]) for block in text.strip().split("\n\n")]


@pytest.fixture
def serve(tmp_path):
    """Start a server for a GraphRAG; every server started is stopped at the end.

    ``serve(rag=None, **create_app_kwargs)`` returns ``(server, httpx.Client, rag)``; no API keys
    unless given, and other workspaces are scripted GraphRAGs in the same ``tmp_path``."""
    started = []

    def start(rag=None, **app_kwargs):
        rag = rag or make_rag(tmp_path)
        app_kwargs.setdefault("api_keys", [])
        app_kwargs.setdefault("workspace_factory", lambda name: make_rag(tmp_path, workspace=name))
        server = BackgroundServer(create_app(rag, **app_kwargs)).start()
        started.append(server)
        return server, httpx.Client(base_url=server.url, timeout=60), rag

    yield start
    for server in started:
        server.stop()


def health_latencies(client, times: int = 3) -> list:
    """Seconds each of ``times`` ``GET /health`` took (each must answer 200)."""
    import time

    latencies = []
    for _ in range(times):
        started = time.perf_counter()
        assert client.get("/health").status_code == 200
        latencies.append(time.perf_counter() - started)
    return latencies
