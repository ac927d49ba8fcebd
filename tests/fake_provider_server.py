"""A fake model provider on loopback, speaking the wire formats of the real SDKs.

The real ``openai``, ``groq``, ``anthropic`` and ``ollama`` SDK clients talk to it over HTTP, so
the code between lightrag and the socket (connection pools, event loops, streaming) runs for
real; scripted clients skip all of that and hid a client kept across closed event loops.

Routes: ``*/chat/completions`` and ``*/embeddings`` (OpenAI, Groq; SSE when ``stream``),
``/v1/messages`` (Anthropic), ``/api/generate``, ``/api/embed``, ``/api/embeddings`` (Ollama).
The reply text comes from ``reply(prompt)``; embeddings are hashed bags of words (word overlap
keeps its meaning).

``reply`` may also return a :class:`Reply` to script a chat completion's latency, HTTP status
(an error such as a 429 with ``Retry-After``), headers and token usage; ``server.bodies`` keeps
every JSON request body and ``server.max_in_flight`` the most requests served at once::

    def reply(prompt):
        if "slow" in prompt:
            return Reply("Paris", delay_s=0.2, usage={"prompt_tokens": 40, "completion_tokens": 2})
        return Reply(status=429, headers={"Retry-After": "0"})
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np
from loopback_server import LoopbackServer

DIM = 64


def bag_of_words(text: str) -> List[float]:
    """A unit vector of hashed lower-cased words."""
    vector = np.zeros(DIM)
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
    norm = float(np.linalg.norm(vector)) or 1.0
    return (vector / norm).tolist()


def _prompt_of(body: Dict[str, Any]) -> str:
    if "messages" in body:
        parts = [body.get("system") or ""]
        for message in body["messages"]:
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            parts.append(str(content or ""))
        return "\n".join(p for p in parts if p)
    return "\n".join(str(body.get(k) or "") for k in ("system", "prompt"))


@dataclass
class Reply:
    """A scripted chat completion: its text, a delay before answering, an HTTP status (an error
    status answers an OpenAI-style error body), extra headers and the usage reported."""

    text: str = ""
    delay_s: float = 0.0
    status: int = 200
    headers: Dict[str, str] = field(default_factory=dict)
    usage: Optional[Dict[str, int]] = None


class FakeProvider(LoopbackServer):
    """Start with ``with FakeProvider(reply) as server:``; ``server.url`` is its base URL."""

    def __init__(self, reply: Callable[[str], Union[str, Reply]] = lambda prompt: "Paris.") -> None:
        self.reply = reply
        self.requests: List[str] = []
        self.bodies: List[Dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._count_lock = threading.Lock()
        super().__init__()

    def enter(self) -> None:
        with self._count_lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._count_lock:
            self.in_flight -= 1

    def _handler(self) -> type:
        return type("Handler", (_Handler,), {"provider": self})


class _Handler(BaseHTTPRequestHandler):
    """The routes; ``provider`` is set on the subclass each FakeProvider makes."""

    provider: FakeProvider
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [], "models": []})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.provider.requests.append(self.path)
        self.provider.bodies.append(body)
        path = self.path.split("?")[0]
        routes = [
            (path.endswith("/chat/completions"), self._chat),
            (path.endswith("/embeddings") and "prompt" not in body, self._embeddings),
            (path.endswith("/v1/messages"), self._anthropic_message),
            (path == "/api/generate", self._ollama_generate),
            (path == "/api/embed", self._ollama_embed),
            (path == "/api/embeddings", self._ollama_embedding),
        ]
        route = next((serve for matches, serve in routes if matches), None)
        if route is None:
            self._json({"error": {"message": f"no route {path}"}}, status=404)
        else:
            route(body)

    def _embeddings(self, body: Dict[str, Any]) -> None:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
            for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        self._json({"object": "list", "model": body.get("model", "m"), "data": data,
                    "usage": usage})

    def _anthropic_message(self, body: Dict[str, Any]) -> None:
        text = self.provider.reply(_prompt_of(body))
        self._json({
            "id": "msg_1", "type": "message", "role": "assistant",
            "model": body.get("model", "m"), "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 5, "output_tokens": 3},
        })

    def _ollama_generate(self, body: Dict[str, Any]) -> None:
        text = self.provider.reply(_prompt_of(body))
        self._json({"model": body.get("model", "m"), "response": text, "done": True,
                    "prompt_eval_count": 5, "eval_count": 3})

    def _ollama_embed(self, body: Dict[str, Any]) -> None:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self._json({"model": body.get("model", "m"),
                    "embeddings": [bag_of_words(t) for t in texts]})

    def _ollama_embedding(self, body: Dict[str, Any]) -> None:
        self._json({"embedding": bag_of_words(body.get("prompt", ""))})

    def _chat(self, body: Dict[str, Any]) -> None:
        self.provider.enter()
        try:
            scripted = self.provider.reply(_prompt_of(body))
            reply = scripted if isinstance(scripted, Reply) else Reply(text=scripted)
            if reply.delay_s:
                time.sleep(reply.delay_s)
        finally:
            self.provider.leave()
        if reply.status != 200:
            kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
            self._json({"error": {"message": f"scripted {reply.status}", "type": kind,
                                  "code": kind}}, status=reply.status, headers=reply.headers)
            return
        text = reply.text
        head = {"id": "c1", "created": 0, "model": body.get("model", "m")}
        if not body.get("stream"):
            usage = reply.usage or {"prompt_tokens": 5, "completion_tokens": 3}
            usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
            self._json({
                **head, "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": usage,
            }, headers=reply.headers)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for piece in re.findall(r"\S+\s*", text) or [""]:
            chunk = {**head, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": {"content": piece}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        last = {**head, "object": "chat.completion.chunk",  # as OpenAI ends every stream
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _json(self, payload: Any, status: int = 200,
              headers: Optional[Dict[str, str]] = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
