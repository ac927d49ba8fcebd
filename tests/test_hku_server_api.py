"""HKU LightRAG's REST routes (``lightrag/server/hku_api.py``), driven as an HKU script drives
``lightrag-server``: httpx against a real server on 127.0.0.1.

:func:`hku_script` is written against HKU's API only (``POST /documents/text``, ``/texts``,
``GET /documents/pipeline_status``, ``POST /query``, ``/query/stream``, ``/query/data``,
``GET /graph/label/list``, ``/graphs``, ``/graph/entity/exists``, ``DELETE
/documents/delete_document``). It runs against ``lightrag serve`` on the packaged offline defaults
(a child process) and against the scripted in-process server; the other tests check that this
server's own ``POST /query`` clients see no change, and that keys and workspaces apply.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from server_fixtures import serve  # noqa: F401  (the fixture)

httpx = pytest.importorskip("httpx")

log = logging.getLogger(__name__)

VOYAGER = ("NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
           "Voyager 1 photographed Titan, the largest moon of Saturn.")
CASSINI = ("The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
           "Titan in 2005. Cassini found plumes on Enceladus.")
QUESTION = "What did Voyager 1 fly past?"


def wait_for_pipeline(client: Any, timeout: float = 60) -> Dict[str, Any]:
    """Poll ``GET /documents/pipeline_status`` as HKU scripts do, until nothing is left."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.get("/documents/pipeline_status").json()
        if not status["busy"] and not status["docs"]:
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.1)


def hku_script(client: Any) -> Dict[str, Any]:
    """What a script written for HKU's ``lightrag-server`` does; returns what it read."""
    seen: Dict[str, Any] = {}
    inserted = client.post("/documents/text", json={"text": VOYAGER, "file_source": "voyager.md"})
    assert inserted.status_code == 200, inserted.text
    seen["insert"] = inserted.json()
    many = client.post("/documents/texts", json={"texts": [CASSINI, "Enceladus orbits Saturn."],
                                                  "file_sources": ["cassini.md", "enceladus.md"]})
    assert many.status_code == 200, many.text
    seen["inserts"] = many.json()
    seen["pipeline"] = wait_for_pipeline(client)

    answer = client.post("/query", json={"query": QUESTION, "mode": "mix", "top_k": 10,
                                         "response_type": "Single Paragraph", "stream": False,
                                         "include_references": True, "include_chunk_content": True,
                                         "enable_rerank": False})
    assert answer.status_code == 200, answer.text
    seen["query"] = answer.json()
    plain = client.post("/query", json={"query": QUESTION, "mode": "hybrid",
                                        "include_references": False})
    seen["query_no_refs"] = plain.json()

    lines: List[Dict[str, Any]] = []
    with client.stream("POST", "/query/stream", json={"query": QUESTION, "mode": "mix"}) as stream:
        assert stream.status_code == 200
        seen["stream_type"] = stream.headers["content-type"]
        lines = [json.loads(line) for line in stream.iter_lines() if line.strip()]
    seen["stream"] = lines

    data = client.post("/query/data", json={"query": QUESTION, "mode": "local", "top_k": 5})
    assert data.status_code == 200, data.text
    seen["data"] = data.json()

    labels = client.get("/graph/label/list").json()
    seen["labels"] = labels
    graph = client.get("/graphs", params={"label": "Voyager 1", "max_depth": 2, "max_nodes": 100})
    assert graph.status_code == 200, graph.text
    seen["graph"] = graph.json()
    seen["exists"] = [client.get("/graph/entity/exists", params={"name": name}).json()["exists"]
                      for name in ("Voyager 1", "No Such Entity")]

    doc_id = seen["insert"]["doc_ids"][0]
    deleted = client.request("DELETE", "/documents/delete_document", json={"doc_ids": [doc_id]})
    assert deleted.status_code == 200, deleted.text
    seen["delete"] = deleted.json()
    seen["after_delete"] = client.get("/graph/label/list").json()
    return seen


def check_hku_shapes(seen: Dict[str, Any]) -> None:
    """The shapes an HKU script reads."""
    for insert in (seen["insert"], seen["inserts"]):
        assert insert["status"] == "success" and insert["track_id"] and insert["message"]
    assert len(seen["inserts"]["doc_ids"]) == 2
    pipeline = seen["pipeline"]
    assert {"busy", "job_name", "job_start", "docs", "batchs", "cur_batch", "latest_message",
            "history_messages"} <= set(pipeline)
    assert pipeline["counts"]["processed"] == 3

    query = seen["query"]
    assert isinstance(query["response"], str) and query["response"]
    files = {ref["file_path"] for ref in query["references"]}
    assert "voyager.md" in files
    assert all(set(ref) == {"reference_id", "file_path", "content"} for ref in query["references"])
    voyager = next(ref for ref in query["references"] if ref["file_path"] == "voyager.md")
    assert any("Voyager 1" in text for text in voyager["content"])
    assert seen["query_no_refs"]["references"] is None and seen["query_no_refs"]["response"]

    assert seen["stream_type"].startswith("application/x-ndjson")
    stream = seen["stream"]
    assert set(stream[0]) == {"references"} and stream[0]["references"]
    assert len(stream) >= 2 and all(set(line) == {"response"} for line in stream[1:])
    assert "".join(line["response"] for line in stream[1:])

    data = seen["data"]
    assert data["status"] == "success" and {"query_mode", "keywords"} <= set(data["metadata"])
    assert set(data["data"]) == {"entities", "relationships", "chunks", "references"}
    assert data["data"]["entities"] and data["data"]["chunks"]

    assert "Voyager 1" in seen["labels"] and seen["labels"] == sorted(seen["labels"])
    graph = seen["graph"]
    assert set(graph) == {"nodes", "edges", "is_truncated"}
    assert "Voyager 1" in {node["id"] for node in graph["nodes"]}
    assert all({"id", "labels", "properties"} <= set(node) for node in graph["nodes"])
    assert all({"id", "type", "source", "target", "properties"} <= set(edge) for edge in graph["edges"])
    assert seen["exists"] == [True, False]

    assert seen["delete"]["status"] == "deletion_started"
    assert seen["delete"]["doc_id"] == seen["insert"]["doc_ids"][0]
    assert "Jupiter" in seen["labels"] and "Jupiter" not in seen["after_delete"]


def test_hku_script_against_scripted_server(serve):  # noqa: F811
    """The HKU script against the in-process server over the scripted models."""
    _, client, _ = serve()
    check_hku_shapes(hku_script(client))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lightrag_serve(tmp_path):
    """``lightrag serve`` on the packaged offline defaults in a child process; killed at the end."""
    command = Path(sys.executable).with_name("lightrag")
    if not command.exists():
        pytest.skip("the lightrag command is not installed next to this Python")
    port = free_port()
    log_path = tmp_path / "serve.log"
    with open(log_path, "w") as out:
        proc = subprocess.Popen(
            [str(command), "serve", "--working-dir", str(tmp_path / "store"), "--port", str(port),
             "--log-level", "warning"], stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "LIGHTRAG_API_KEYS": "", "HF_HUB_OFFLINE": "1"})
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log_path.read_text()
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "lightrag serve did not start"
            time.sleep(0.1)
        yield client
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.info("lightrag serve log:\n%s", log_path.read_text())


@pytest.mark.slow
@pytest.mark.subprocess
def test_hku_script_against_lightrag_serve(lightrag_serve):
    """The HKU script against a real ``lightrag serve`` (spaCy extraction, MiniLM embeddings,
    quoted answers: the packaged defaults, offline)."""
    seen = hku_script(lightrag_serve)
    check_hku_shapes(seen)
    assert "Jupiter" in seen["query"]["response"]


def test_own_query_clients_unchanged(serve):  # noqa: F811
    """``POST /query`` answers this server's clients as before: the same keys, SSE with
    ``stream: true``, strict fields (unknown ones and wrong types are 422)."""
    _, client, _ = serve()
    assert client.post("/documents", json={"texts": [VOYAGER], "file_paths": ["voyager.md"],
                                           "wait": True}).status_code == 200
    answer = client.post("/query", json={"query": QUESTION})
    assert answer.status_code == 200 and set(answer.json()) == {"response", "references", "usage"}
    assert answer.json()["references"][0] == {"reference_id": "1", "file_path": "voyager.md"}
    raw = client.post("/query", json={"query": QUESTION, "include_raw_data": True}).json()
    assert "raw_data" in raw
    sse = client.post("/query", json={"query": QUESTION, "stream": True})
    assert sse.headers["content-type"].startswith("text/event-stream")
    assert sse.text.startswith("data: ") and '"done": true' in sse.text
    for bad in ({"query": QUESTION, "top_k": "10"}, {"query": QUESTION, "no_such_field": 1},
                {"query": ""}, {"query": QUESTION, "mode": "nonsense"}):
        response = client.post("/query", json=bad)
        assert response.status_code == 422, (bad, response.text)
        assert response.json()["detail"][0]["loc"][0] == "body"
    assert client.post("/query", content=b"{not json",
                       headers={"content-type": "application/json"}).status_code == 422


def test_hku_routes_need_the_key_and_use_the_workspace(serve):  # noqa: F811
    """The HKU routes check keys as the others do and work in the request's workspace."""
    _, client, _ = serve(api_keys=["secret", "acme-key:acme"])
    assert client.post("/documents/text", json={"text": VOYAGER}).status_code == 401
    assert client.get("/graph/label/list").status_code == 401
    acme = {"X-API-Key": "acme-key", "LIGHTRAG-WORKSPACE": "acme"}
    assert client.get("/documents/pipeline_status", headers={"X-API-Key": "acme-key"}).status_code == 403
    inserted = client.post("/documents/text", json={"text": VOYAGER, "file_source": "v.md"}, headers=acme)
    assert inserted.status_code == 200, inserted.text
    wait_for_pipeline(httpx.Client(base_url=str(client.base_url), headers=acme, timeout=60))
    assert "Voyager 1" in client.get("/graph/label/list", headers=acme).json()
    assert client.get("/graph/label/list", headers={"X-API-Key": "secret"}).json() == []
    missing = client.request("DELETE", "/documents/delete_document", json={"doc_ids": ["nope"]},
                             headers={"Authorization": "Bearer secret"})
    assert missing.status_code == 200 and missing.json()["not_found"] == ["nope"]


def test_hku_request_errors(serve):  # noqa: F811
    """Bad HKU requests are 4xx with a reason, never 500."""
    _, client, _ = serve()
    assert client.post("/documents/text", json={"text": "   "}).status_code == 400
    assert client.post("/documents/texts", json={"texts": []}).status_code == 422
    assert client.post("/documents/texts", json={"texts": ["a b c"], "file_sources": ["x", "y"]}
                       ).status_code == 400
    assert client.request("DELETE", "/documents/delete_document", json={"doc_ids": []}).status_code == 422
    assert client.post("/query/stream", json={"query": QUESTION, "top_k": 0}).status_code == 422
    assert client.post("/query/data", json=[QUESTION]).status_code == 422
    assert client.get("/graphs").status_code == 422
