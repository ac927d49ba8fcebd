"""HTTP requests are untrusted: the server's inputs fuzzed on loopback, in bounded loops.

A real uvicorn server on 127.0.0.1 serves :func:`lightrag.server.app.create_app` over the small
scripted GraphRAG of the tests (``graph_fakes``). Seeded random requests hit every route with
wrong types, out-of-range numbers, template and path tricks, broken JSON and oversized bodies.
Every answer must come back within the client timeout (no hang) with a status below 500, and
the server must still be healthy at the end.
"""

from __future__ import annotations

import json
import random
import string
import time
from typing import Any, List
from urllib.parse import quote

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

REQUESTS_PER_ROUTE = 30
MAX_BODY = 64 * 1024
ESCAPES = [
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ ''.__class__.__mro__ }}",
    "{% for i in range(99999) %}{% for j in range(99999) %}x{% endfor %}{% endfor %}",
    "{0.__class__.__mro__}", "%s%s%s%n", "../../etc/passwd", "..%2F..%2Fetc%2Fpasswd",
    "\x00", "\ud7ff\ue000", "' OR 1=1 --", "<script>alert(1)</script>", "*", "%", "",
    "a" * 5000, "Voyager 1", "Saturn",
]  # fmt: skip


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value: wrong types, extremes, tricky strings."""
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, -5, 1, 10, 2**31, 2**63, -(2**63), 10**30])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e308, -1e308, 3.14])
    if kind == 4:
        return rng.choice(ESCAPES)
    if kind == 5:
        return "".join(rng.choice(string.printable) for _ in range(rng.randrange(40)))
    if kind == 6:
        return [junk(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 7:
        return {rng.choice(["role", "content", "x", "__class__"]): junk(rng, depth + 1)
                for _ in range(rng.randrange(3))}  # fmt: skip
    return str(rng.randrange(-10, 10))


QUERY_FIELDS = ["query", "mode", "stream", "only_need_context", "only_need_prompt", "response_type",
                "top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens",
                "max_total_tokens", "hl_keywords", "ll_keywords", "conversation_history",
                "user_prompt", "enable_rerank", "chunk_pick_method", "related_chunk_number",
                "chunk_merge_method", "include_references", "include_raw_data", "unknown_field"]  # fmt: skip
MODES = ["naive", "local", "global", "hybrid", "mix", "bypass", "ppr", "LOCAL", "nope", ""]


def query_body(rng: random.Random) -> Any:
    body = {"query": rng.choice(ESCAPES[:-3] + ["Which moon did Voyager 1 photograph?"]),
            "mode": rng.choice(MODES)}  # fmt: skip
    for name in rng.sample(QUERY_FIELDS, rng.randrange(4)):
        body[name] = junk(rng)
    if body.get("stream") is not True:
        body["stream"] = False  # streams are checked below, one at a time
    return body


def insert_body(rng: random.Random) -> Any:
    body = {"texts": rng.choice([junk(rng), [junk(rng)], rng.choice(ESCAPES), []]), "wait": True}
    for name in rng.sample(["ids", "file_paths", "wait", "extra"], rng.randrange(3)):
        body[name] = junk(rng)
    return body


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(
            generator=Generator(model_client=ScriptedClient(response_fn=extraction_reply)),
            max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path_factory.mktemp("fuzz")), cosine_threshold=0.05,
    )
    running = BackgroundServer(create_app(rag, api_keys=[], max_request_bytes=MAX_BODY)).start()
    client = httpx.Client(base_url=running.url, timeout=20)
    seeded = client.post("/documents", json={
        "texts": ["NASA launched Voyager 1 in 1977. Voyager 1 photographed Titan, a moon of Saturn."],
        "file_paths": ["voyager.md"], "wait": True})
    assert seeded.status_code == 200, seeded.text
    yield client
    client.close()
    running.stop()


def check(response: httpx.Response, what: str, failures: List[str]) -> None:
    if response.status_code >= 500:
        failures.append(f"{what} -> {response.status_code}: {response.text[:300]}")
    text = response.text
    if "<class '" in text or "uid=" in text:  # a rendered __mro__, or the output of `id`
        failures.append(f"{what} leaked internals: {text[:300]}")


def test_fuzzed_requests_never_500_or_hang(server):
    rng = random.Random(16)
    failures: List[str] = []
    started = time.perf_counter()
    for k in range(REQUESTS_PER_ROUTE):
        body = query_body(rng)
        check(server.post("/query", json=body), f"POST /query {json.dumps(body)[:200]}", failures)
        body = insert_body(rng)
        check(server.post("/documents", json=body), f"POST /documents {json.dumps(body)[:200]}", failures)
        name = rng.choice(ESCAPES[:-3] + ["Voyager 1", "Titan"]) or "x"
        for method, path, params in [
            ("GET", "/graph", {"label": junk(rng), "max_depth": junk(rng), "max_nodes": junk(rng)}),
            ("GET", "/graph/search", {"q": junk(rng), "limit": junk(rng)}),
            ("GET", "/documents", {"page": junk(rng), "page_size": junk(rng), "status": junk(rng)}),
            ("GET", f"/documents/{quote(name, safe='') or 'x'}", {}),
            ("GET", f"/chunks/{quote(name, safe='') or 'x'}", {}),
            ("GET", f"/graph/entity/{quote(name, safe='') or 'x'}", {"max_chunks": junk(rng)}),
            ("DELETE", f"/documents/doc-{k}-{rng.randrange(100)}", {}),
        ]:
            params = {key: json.dumps(v) if not isinstance(v, str) else v
                      for key, v in params.items() if v is not None}  # fmt: skip
            check(server.request(method, path, params=params), f"{method} {path} {params}", failures)
    for raw, content_type in [
        (b"{not json", "application/json"), (b"\xff\xfe\x00", "application/json"),
        (b'{"query": "x"', "application/json"), (b"query=x", "application/x-www-form-urlencoded"),
        (b"[" * 5000 + b"]" * 5000, "application/json"), (b'"just a string"', "application/json"),
        (json.dumps({"query": "x" * (MAX_BODY + 10)}).encode(), "application/json"),
    ]:
        for path in ("/query", "/documents", "/query/stream", "/query/data",  # HKU's routes too
                     "/documents/text", "/documents/texts"):
            response = server.post(path, content=raw, headers={"content-type": content_type})
            check(response, f"POST {path} raw {raw[:40]!r}", failures)
            assert response.status_code in (400, 413, 415, 422), (path, raw[:40], response.text[:200])
    with server.stream("POST", "/query", json={"query": ESCAPES[0], "stream": True,
                                              "user_prompt": ESCAPES[1]}) as stream:  # fmt: skip
        assert stream.status_code < 500
        assert "<class '" not in stream.read().decode()
    assert not failures, "\n".join(failures[:10])
    assert server.get("/health").status_code == 200
    assert time.perf_counter() - started < 120


def test_an_overlong_question_and_deep_json_are_refused_in_each_api_shape(server):
    from lightrag.components.graph_rag.schemas import MAX_QUERY_CHARS

    long_question = "Who " + "photographed Titan " * (MAX_QUERY_CHARS // 19 + 2)
    response = server.post("/query", json={"query": long_question})
    assert response.status_code == 422 and "query" in response.text
    started = time.perf_counter()
    response = server.post("/api/chat", json={"model": "lightrag:latest", "stream": False,
                                              "messages": [{"role": "user", "content": long_question}]})
    assert response.status_code == 400 and f"at most {MAX_QUERY_CHARS}" in response.json()["error"]
    assert time.perf_counter() - started < 2  # refused before any extraction runs
    deep = b'{"model": "lightrag:latest", "messages": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    for path in ("/api/chat", "/api/generate", "/api/show"):
        response = server.post(path, content=deep, headers={"content-type": "application/json"})
        assert response.status_code == 400 and "error" in response.json(), (path, response.text[:200])
