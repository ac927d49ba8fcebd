"""Keys of unknown shape stay out of errors and logs (red team, issue 21 follow-up): a provider that
echoes the key it was sent ("Incorrect API key provided: token-abc123") must not put it into a
Generator's error, and credentials in a base URL must not reach the HTTP client's log lines.
The real OpenAI SDK talks to a server on loopback."""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler

import pytest
from loopback_server import LoopbackServer

from lightrag.components.model_client import OpenAIClient
from lightrag.core import Generator
from lightrag.utils.secrets import REDACTED, redact_text

KEY = "token-abc123"  # vLLM's documented example key: no provider shape


class EchoingProvider(LoopbackServer):
    """Refuses every request with a 401 that quotes the key it got (as OpenAI's API does)."""

    def _handler(self) -> type:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                return

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}.",
                                             "type": "invalid_request_error", "code": "invalid_api_key"}})
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

        return Handler


@pytest.fixture
def provider():
    with EchoingProvider() as server:
        yield server


def test_a_key_of_any_shape_echoed_by_the_provider_is_not_in_the_error(provider):
    client = OpenAIClient(api_key=KEY, base_url=f"{provider.url}/v1")
    output = Generator(model_client=client, model_kwargs={"model": "m"})(prompt_kwargs={"input_str": "hi"})
    assert output.error and "Incorrect API key provided" in output.error
    assert KEY not in output.error


def test_a_key_from_the_environment_is_redacted_from_text(monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "0123456789abcdef0123456789abcdef")
    text = redact_text("bad key=0123456789abcdef0123456789abcdef for this project")
    assert "0123456789abcdef" not in text and REDACTED in text
    assert redact_text("max_tokens=12345678") == "max_tokens=12345678"  # not a secret's value


def test_credentials_in_the_base_url_are_not_logged_by_the_http_client(provider, caplog):
    client = OpenAIClient(api_key="sk-test-key-value", base_url=f"http://alice:Pa55wordXYZ@{provider.url[7:]}/v1")
    with caplog.at_level(logging.INFO):
        Generator(model_client=client, model_kwargs={"model": "m"})(prompt_kwargs={"input_str": "hi"})
    lines = [r.getMessage() for r in caplog.records if r.name.startswith(("httpx", "openai"))]
    assert any("HTTP Request" in line for line in lines)
    assert not any("Pa55wordXYZ" in line for line in lines)
    assert "Pa55wordXYZ" not in json.dumps(client.to_dict())


def test_basic_credentials_are_redacted_and_prose_is_not():
    assert redact_text("Basic arithmetic explains everything") == "Basic arithmetic explains everything"
    assert redact_text("sent Basic dXNlcjpwdy1acTk=") == f"sent Basic {REDACTED}"


def test_a_base_url_password_and_its_basic_value_are_redacted_when_echoed_bare():
    client = OpenAIClient(base_url="http://user:pw-Zq9_unique77@127.0.0.1:9/v1")
    client._client_kwargs()
    text = redact_text("401: got dXNlcjpwdy1acTlfdW5pcXVlNzc= (pw-Zq9_unique77)")
    assert "dXNlcjpwdy1acTlfdW5pcXVlNzc=" not in text and "pw-Zq9_unique77" not in text


def test_secret_named_variables_with_spaces_do_not_eat_text(monkeypatch):
    monkeypatch.setenv("API_TOKEN", "        ")
    monkeypatch.setenv("SERVICE_PASSWORD", "not a key at all")
    assert redact_text("        File 'x.py', line 3") == "        File 'x.py', line 3"
