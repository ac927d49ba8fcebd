"""Red team 5: keys never reach a terminal, a log or an HTTP answer, with real processes.

A provider on loopback answers every request with an error that echoes the request's
``Authorization`` header (a ``Basic`` value, since the base URL carries a password) and the
key itself. ``lightrag index``, ``lightrag query`` and ``lightrag serve`` run as subprocesses with
``OPENAI_API_KEY`` and ``OPENAI_BASE_URL=http://user:password@...``; their outputs, logs (DEBUG)
and HTTP answers are searched for the key, the password and the ``Basic`` value.

Before this round the SDK's own exception (its message holds the echoed key) reached the
terminal as a traceback (``lightrag query``: an uncaught ``openai.InternalServerError``; a
logged traceback of ``lightrag index``), the server's JSON log (uvicorn's ``Exception in ASGI
application`` and the insert's ``log.exception``), and the client got a plain-text 500.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Dict

import pytest
from fake_provider_server import bag_of_words
from graph_fakes import extraction_reply
from loopback_server import LoopbackServer

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("openai")

KEY = "zzRT5keyVALUE0123"  # no known key shape: only its exact value can find it
USER, PASSWORD = "rt5user", "RT5urlPASSWORD99"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SERVER_KEY = "RT5serverKEY-admin-9999"
SECRETS = (KEY, PASSWORD, BASIC, SERVER_KEY)


class EchoingProvider(LoopbackServer):
    """OpenAI-compatible; while ``failing``, every request gets a 500 (or ``status``) whose body
    echoes the request's headers and the key."""

    poll_interval = 0.05

    def __init__(self) -> None:
        self.failing = False
        self.status = 500
        super().__init__()

    def _handler(self) -> type:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if provider.failing:
                    echo = (f"Incorrect API key provided: {self.headers.get('Authorization')} "
                            f"(key {KEY}); headers={dict(self.headers)}")
                    return self._json({"error": {"message": echo}}, provider.status)
                if self.path.endswith("/embeddings"):
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    return self._json({"object": "list", "model": "m", "usage": {
                        "prompt_tokens": 1, "total_tokens": 1}, "data": [
                        {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
                        for i, t in enumerate(texts)]})
                prompt = "\n".join(str(m.get("content")) for m in body.get("messages") or [])
                reply = extraction_reply(prompt)
                return self._json({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                       "role": "assistant", "content": reply}}]})

            def _json(self, payload: Dict[str, Any], status: int = 200) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _client(model: str) -> Dict[str, Any]:
    return {"component_name": "Generator", "component_config": {
        "model_client": {"component_name": "OpenAIClient", "component_config": {}},
        "model_kwargs": {"model": model}}}


def write_config(tmp_path: Path) -> Path:
    config = {"component_name": "GraphRAG", "component_config": {
        "working_dir": str(tmp_path / "store"),
        "embedder": {"component_name": "Embedder", "component_config": {
            "model_client": {"component_name": "OpenAIClient", "component_config": {}},
            "model_kwargs": {"model": "e"}}},
        "extractor": {"component_name": "EntityExtractor", "component_config": {
            "generator": _client("x"), "max_gleaning": 0}},
        "keyword_extractor": {"component_name": "HeuristicKeywordExtractor", "component_config": {}},
        "answer_generator": _client("a"),
        "cosine_threshold": 0.05}}
    path = tmp_path / "graph.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


@pytest.fixture
def provider():
    with EchoingProvider() as server:
        yield server


def environment(provider: EchoingProvider) -> Dict[str, str]:
    base = provider.url.replace("http://", f"http://{USER}:{PASSWORD}@") + "/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LIGHTRAG_"))}
    return {**env, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": base, "LIGHTRAG_API_KEYS": "",
            "PYTHONPATH": str(Path(__file__).parent)}


def lightrag(env: Dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lightrag.cli", *args], env=env, text=True,
                          capture_output=True, timeout=120)


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} holds a secret: ...{text[text.index(secret) - 200:][:300]}"


def test_cli_errors_of_a_provider_that_echoes_the_key_hold_no_key(tmp_path, provider):
    env, config = environment(provider), str(write_config(tmp_path))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Voyager flew past Saturn. Voyager photographed Titan.")
    indexed = lightrag(env, "index", str(tmp_path / "docs"), "--config", config)
    assert indexed.returncode == 0, indexed.stderr

    provider.failing = True
    (tmp_path / "docs" / "b.txt").write_text("Cassini orbited Saturn.")
    failed_insert = lightrag(env, "-v", "index", str(tmp_path / "docs"), "--config", config)
    asked = lightrag(env, "query", "Who flew past Saturn?", "--config", config)
    asked_verbose = lightrag(env, "-v", "query", "Who flew past Saturn?", "--config", config)
    listed = lightrag(env, "docs", "--json", "--config", config)
    for name, run in [("index", failed_insert), ("query", asked), ("query -v", asked_verbose),
                      ("docs", listed)]:
        assert_no_secret(run.stdout + run.stderr, name)
    assert "<redacted>" in failed_insert.stdout + failed_insert.stderr

    # the query's embedding call fails: one line naming the failure, no traceback (exit 1) ...
    assert asked.returncode == 1, asked.stderr
    assert "Traceback" not in asked.stderr
    assert "lightrag: error: InternalServerError: Error code: 500" in asked.stderr
    # ... and with -v the traceback, redacted like the rest
    assert asked_verbose.returncode == 1
    assert "Traceback" in asked_verbose.stderr and "<redacted>" in asked_verbose.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_answers_a_provider_failure_with_a_json_502_and_logs_no_key(tmp_path, provider):
    env, config, port = environment(provider), str(write_config(tmp_path)), free_port()
    env["LIGHTRAG_API_KEYS"] = SERVER_KEY
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "lightrag.cli", "serve", "--config", config,
                                 "--port", str(port), "--log-level", "debug", "--no-ui"],
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                          headers={"X-API-Key": SERVER_KEY})
    answers = []
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        inserted = client.post("/documents", json={"texts": ["Voyager flew past Saturn."], "wait": True})
        assert inserted.status_code == 200, inserted.text

        provider.failing = True
        answers.append(client.post("/query", json={"query": "Who flew past Saturn?"}))
        answers.append(client.post("/query", json={"query": "Who flew past Saturn?", "stream": True}))
        answers.append(client.post("/api/chat", json={"model": "lightrag", "stream": False, "messages": [
            {"role": "user", "content": "Who flew past Saturn?"}]}))
        answers.append(client.post("/documents/custom_kg", json={"custom_kg": {
            "chunks": [{"content": "Rhea orbits Saturn.", "source_id": "c1"}],
            "entities": [{"entity_name": "Rhea", "description": "a moon", "source_id": "c1"}]}}))
        provider.status = 401
        answers.append(client.post("/documents", json={"texts": ["Mimas orbits Saturn."], "wait": True}))
        answers.append(client.get("/documents"))
        answers.append(client.get("/health"))
        answers.append(client.get("/info"))
    finally:
        proc.terminate()
        proc.wait(30)
    for response in answers:
        assert_no_secret(response.text, f"{response.request.method} {response.request.url.path}")
    for response in answers[:4]:  # the model failed: 502 saying so, in JSON
        assert response.status_code == 502, response.text
        assert response.json()["detail"].startswith("a model provider failed: InternalServerError")
    assert answers[4].status_code == 200 and answers[4].json()["failed"]
    assert "<redacted>" in json.dumps(answers[5].json())  # the stored error_msg
    text = log.read_text()
    assert_no_secret(text, "the server log")
    assert "<redacted>" in text and "Traceback" in text


def test_redact_error_scrubs_an_sdk_error_and_its_causes(monkeypatch):
    """``redact_error`` (for where SDK errors are raised: the insert's ``log.exception`` still
    prints a raw one to a library user's own log handlers) leaves no key in the error, its
    parsed body, its notes or the error it was raised from."""
    import traceback

    openai = pytest.importorskip("openai")
    from lightrag.utils.secrets import redact_error

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    echoed = f"Incorrect API key provided: {KEY}; Authorization: Basic {BASIC}"
    response = httpx.Response(401, request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat"),
                              json={"error": {"message": echoed}})
    try:
        try:
            raise KeyError(f"lookup of {KEY}")
        except KeyError as cause:
            error = openai.AuthenticationError(f"Error code: 401 - {echoed}", response=response,
                                               body={"message": echoed})
            error.add_note(f"while calling with {KEY}")
            raise error from cause
    except openai.AuthenticationError as raised:
        assert redact_error(raised) is raised
        text = "".join(traceback.format_exception(raised)) + json.dumps(raised.body)
    assert_no_secret(text, "the redacted error")
    assert "Incorrect API key provided: <redacted>" in text
