"""Issue 26, defects 4 and 11 over HTTP: bounded query keywords, queries off the event loop,
strict query fields, security headers, and API docs behind the key."""

from __future__ import annotations

import re
import threading
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402
from server_fixtures import DOCS  # noqa: E402

from lightrag.components.graph_rag.schemas import (  # noqa: E402
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    QueryParam,
)

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


@pytest.mark.parametrize("field", ["ll_keywords", "hl_keywords"])
def test_query_param_bounds_keywords(field):
    QueryParam(**{field: ["k"] * MAX_KEYWORDS})
    with pytest.raises(ValueError, match=f"QueryParam.{field} has {MAX_KEYWORDS + 1} keywords"):
        QueryParam(**{field: ["k"] * (MAX_KEYWORDS + 1)})
    with pytest.raises(ValueError, match=f"QueryParam.{field} has a keyword of"):
        QueryParam(**{field: ["k" * (MAX_KEYWORD_CHARS + 1)]})
    with pytest.raises(TypeError) as info:
        QueryParam(**{field: ["k"] * 50_000 + [1]})
    assert len(str(info.value)) < 200  # the list is not echoed back


@pytest.mark.parametrize("body", [
    {"query": "x", "mode": "ppr", "ll_keywords": [f"kw{i}" for i in range(50_000)]},
    {"query": "x", "hl_keywords": [f"kw{i}" for i in range(MAX_KEYWORDS + 1)]},
    {"query": "x", "ll_keywords": ["k" * (MAX_KEYWORD_CHARS + 1)]},
])
def test_big_keyword_requests_are_refused_fast(serve, body):
    _, client, _ = serve()
    started = time.perf_counter()
    response = client.post("/query", json=body)
    assert response.status_code == 422, response.text
    assert "keywords" in response.text
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize("field,value", [("top_k", "10"), ("chunk_top_k", "5"), ("stream", "true"),
                                         ("include_references", 1), ("top_k", 10.5),
                                         ("related_chunk_number", 0)])
def test_query_fields_are_strict_like_query_param(serve, field, value):
    _, client, _ = serve()
    response = client.post("/query", json={"query": "x", field: value})
    assert response.status_code == 422, response.text
    assert field in response.text


def test_health_answers_while_a_slow_query_runs(serve, monkeypatch):
    rag = make_rag_with_docs(serve)
    original = rag.engine.acall

    async def cpu_bound(*args, **kwargs):
        time.sleep(3)  # retrieval work that never yields to the event loop
        return await original(*args, **kwargs)

    monkeypatch.setattr(rag.engine, "acall", cpu_bound)
    server, client, _ = serve(rag)
    answers = {}
    query = threading.Thread(target=lambda: answers.update(
        response=httpx.post(f"{server.url}/query", json={"query": "Voyager", "mode": "ppr"},
                            timeout=60)))
    query.start()
    time.sleep(0.5)
    latencies = server_fixtures.health_latencies(client)
    query.join()
    assert answers["response"].status_code == 200, answers["response"].text
    assert max(latencies) < 1, latencies


def make_rag_with_docs(serve):
    server, client, rag = serve()
    inserted = client.post("/documents", json={"texts": list(DOCS.values()), "wait": True})
    assert inserted.status_code == 200, inserted.text
    server.stop()
    return rag


def test_streamed_answers_still_work_from_the_worker_thread(serve):
    _, client, _ = serve()
    client.post("/documents", json={"texts": list(DOCS.values()), "wait": True})
    response = client.post("/query", json={"query": "Who launched Voyager 1?", "stream": True})
    assert response.status_code == 200
    assert '"done": true' in response.text and '"response"' in response.text


def test_security_headers_on_every_response(serve):
    _, client, _ = serve(api_keys=["k"])
    key = {"X-API-Key": "k"}
    for path, headers in (("/", {}), ("/health", {}), ("/static/app.js", {}), ("/documents", key),
                          ("/documents", {}), ("/docs", key), ("/redoc", key), ("/nope", {})):
        response = client.get(path, headers=headers)
        assert response.headers["x-content-type-options"] == "nosniff", path
        assert response.headers["x-frame-options"] == "DENY", path
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
        assert not re.search(r"https?:|\*", csp), path
    ui_csp = client.get("/").headers["content-security-policy"]
    script_src = ui_csp.split("script-src")[1].split(";")[0]
    assert "script-src 'self';" in ui_csp and "unsafe" not in script_src


def test_swagger_inline_script_is_allowed_by_its_hash_only(serve):
    import base64
    import hashlib

    _, client, _ = serve(api_keys=["k"])
    page = client.get("/docs", headers={"X-API-Key": "k"})
    script = re.search(r"<script>(.*?)</script>", page.text, re.DOTALL).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in page.headers["content-security-policy"]
    assert "'unsafe-inline'" not in page.headers["content-security-policy"].split("style-src")[0]


def test_api_docs_and_schema_need_the_key(serve):
    _, client, _ = serve(api_keys=["k"])
    for path in ("/openapi.json", "/docs", "/redoc"):
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer k"}).status_code == 200, path
    _, open_client, _ = serve(api_keys=[])
    assert open_client.get("/openapi.json").status_code == 200  # no keys: open, on loopback


def test_real_sdk_client_through_the_server_query_threads(serve, tmp_path):
    """Queries in the worker threads use the real OpenAI SDK across threads and loops: several
    in a row, concurrent ones, and a stream, after an insert on the server's own loop."""
    from concurrent.futures import ThreadPoolExecutor

    pytest.importorskip("openai")
    from fake_provider_server import FakeProvider
    from test_sdk_clients_loopback import DOCS as CURIE
    from test_sdk_clients_loopback import openai_rag, reply

    with FakeProvider(reply) as provider:
        server, client, _ = serve(openai_rag(tmp_path / "sdk", provider.url))
        assert client.post("/documents", json={"texts": CURIE, "wait": True}).status_code == 200
        for mode in ("naive", "local", "hybrid", "ppr"):
            answer = client.post("/query", json={"query": "Where was Marie Curie born?", "mode": mode})
            assert answer.status_code == 200 and answer.json()["response"].startswith("Marie Curie")
        with ThreadPoolExecutor(4) as pool:
            codes = list(pool.map(lambda _: httpx.post(
                f"{server.url}/query", json={"query": "Who taught at the Sorbonne?"},
                timeout=60).status_code, range(8)))
        assert codes == [200] * 8
        streamed = client.post("/query", json={"query": "Where was Marie Curie born?",
                                               "mode": "naive", "stream": True})
        assert "Warsaw" in streamed.text and '"done": true' in streamed.text
