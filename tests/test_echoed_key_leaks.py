"""A provider that echoes the request's key in its error: the key reaches neither a library
user's own log handlers (the insert logged the SDK error's traceback raw) nor a prompt
benchmark's stored item errors (red team 5's repros)."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lightrag.components.graph_rag import EntityExtractor, GraphRAG, HeuristicKeywordExtractor
from lightrag.components.model_client import OpenAIClient
from lightrag.core import Embedder, Generator
from lightrag.core.component import Component
from lightrag.optim.evaluation import evaluate_pipeline

KEY = "zzEchoedKEYvalue0123456"


class Echoing(BaseHTTPRequestHandler):
    """Answers every request 401, echoing its Authorization header."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": "Incorrect API key provided: "
                                     f"{self.headers.get('Authorization')}"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echoing_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echoing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_library_users_own_log_handler_gets_no_echoed_key(tmp_path, echoing_url, caplog) -> None:
    def client():
        return OpenAIClient(api_key=KEY, base_url=echoing_url)

    rag = GraphRAG(embedder=Embedder(model_client=client(), model_kwargs={"model": "e"}),
                   extractor=EntityExtractor(generator=Generator(model_client=client(),
                                                                 model_kwargs={"model": "x"})),
                   keyword_extractor=HeuristicKeywordExtractor(),
                   answer_generator=Generator(model_client=client(), model_kwargs={"model": "a"}),
                   working_dir=str(tmp_path))
    with caplog.at_level(logging.DEBUG):  # the user's handler, tracebacks included
        result = rag.insert("Voyager flew past Saturn.")
    assert result.failed
    logged = "\n".join(caplog.messages + [caplog.text])
    assert "Incorrect API key provided" in logged and KEY not in logged
    assert KEY not in json.dumps(result.failed)


def test_a_benchmark_item_error_keeps_no_echoed_key(echoing_url) -> None:
    class Pipe(Component):  # its client holds the key (the provider then echoes it back)
        def __init__(self):
            super().__init__()
            self.generator = Generator(model_client=OpenAIClient(api_key=KEY, base_url=echoing_url),
                                       model_kwargs={"model": "a"})

        def call(self, *args, **kwargs):
            self.generator(prompt_kwargs={"input_str": "q"})  # the provider answers 401
            raise RuntimeError(f"Error code: 401 - Incorrect API key provided: {KEY}")

    items = evaluate_pipeline(Pipe(), [{"question": "q", "answer": "a"}], lambda out, item: 1.0,
                              inputs="question", concurrency=1)
    assert "Incorrect API key provided" in items[0].error and KEY not in items[0].error
