"""Red team 6: a Generator's ``to_dict()`` (and ``pickle_to_file``, ``serialize``) kept the
``extra_headers`` and key-like ``model_kwargs`` a user set in code; a saved pipeline held the
secret. They are redacted, and a rebuilt Generator refuses to send the ``<redacted>`` marker
(checked against a loopback HTTP server that records what it receives)."""

from __future__ import annotations

import json
import logging
import pickle
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List

import pytest

from lightrag.components.model_client import OpenAIClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.utils.secrets import REDACTED, RedactedValueError
from lightrag.utils.serialization import serialize

SECRETS = ("hunter2-header-value", "tok-user-abc12345", "plain-model-key-12345")
REPLY = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop",
                      "message": {"role": "assistant", "content": "Paris"}}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.fixture()
def provider() -> Iterator[Dict[str, Any]]:
    """A loopback chat-completions endpoint recording each request's headers."""
    seen: List[Dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            body = json.dumps(REPLY).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_address[1]}/v1", "seen": seen}
    finally:
        server.shutdown()
        server.server_close()


def _generator(url: str) -> Generator:
    client = OpenAIClient(api_key="sk-test-abcdefghijklmnopqrstu", base_url=url)
    return Generator(model_client=client, template="Capital of {{country}}?",
                     model_kwargs={"model": "m", "extra_query": {"api-key": SECRETS[1]},
                                   "extra_body": {"api_key": SECRETS[2]},
                                   "extra_headers": {"X-Custom-Auth": SECRETS[0], "X-Trace": "t1"}})


def test_to_dict_pickle_and_serialize_hold_no_header_or_key(tmp_path, provider):
    gen = _generator(provider["url"])
    path = tmp_path / "gen.pkl"
    gen.pickle_to_file(str(path))
    dumps = json.dumps(gen.to_dict(), default=str), serialize(gen), path.read_bytes().decode("latin-1")
    for written in dumps:
        for secret in SECRETS + ("sk-test-abcdefghijklmnopqrstu",):
            assert secret not in written
    kwargs = gen.to_dict()["data"]["model_kwargs"]
    assert kwargs == {"model": "m", "extra_query": {"api-key": REDACTED},
                      "extra_body": {"api_key": REDACTED},
                      "extra_headers": {"X-Custom-Auth": REDACTED, "X-Trace": "t1"}}
    assert gen.model_kwargs["extra_headers"]["X-Custom-Auth"] == SECRETS[0]  # the live one kept


def test_a_rebuilt_generator_refuses_to_send_the_marker(tmp_path, provider, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-abcdefghijklmnopqrstu")
    path = tmp_path / "gen.pkl"
    _generator(provider["url"]).pickle_to_file(str(path))
    with caplog.at_level(logging.WARNING, logger="lightrag.utils.serialization"):
        gen = Generator.load_from_pickle(str(path))
    assert "model_kwargs['extra_headers']['X-Custom-Auth']" in caplog.text
    with pytest.raises(RedactedValueError, match=r"model_kwargs\['extra_headers'\]\['X-Custom-Auth'\]"):
        gen(prompt_kwargs={"country": "France"})
    assert provider["seen"] == []  # nothing sent
    gen.model_kwargs.update(extra_query={"api-key": SECRETS[1]}, extra_body={"api_key": SECRETS[2]})
    gen.model_kwargs["extra_headers"]["X-Custom-Auth"] = SECRETS[0]
    out = gen(prompt_kwargs={"country": "France"})
    assert out.error is None and out.data == "Paris"
    assert provider["seen"][-1]["x-custom-auth"] == SECRETS[0]
    assert provider["seen"][-1]["path"].endswith(f"?api-key={SECRETS[1]}")


def test_other_attributes_are_written_as_they_are():
    class Notes(Component):
        def __init__(self) -> None:
            super().__init__()
            self.index = {"password": [1, 2], "sk-live-abcdefghijklmnopqrst": [3]}  # terms
            self.texts = ["the key was sk-live-abcdefghijklmnopqrst"]
            self.token = "a-saved-token-value"
            self.client_kwargs = {"timeout": 5, "default_headers": {"Authorization": "Bearer abcdefgh"}}
            self.headers = {"X-Session-Id": "s-123456789", "Accept": "json"}  # a reranker's
            self.prompt_kwargs = {"password_policy": "twelve characters"}  # prompt variables

        def call(self) -> None:
            return None

    data = Notes().to_dict()["data"]
    assert data["index"] == {"password": [1, 2], "sk-live-abcdefghijklmnopqrst": [3]}
    assert data["texts"] == ["the key was sk-live-abcdefghijklmnopqrst"]
    assert data["token"] == REDACTED
    assert data["client_kwargs"] == {"timeout": 5, "default_headers": {"Authorization": REDACTED}}
    assert data["headers"] == {"X-Session-Id": REDACTED, "Accept": "json"}
    assert data["prompt_kwargs"] == {"password_policy": "twelve characters"}
    assert pickle.loads(pickle.dumps(data))["token"] == REDACTED
