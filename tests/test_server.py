"""The HTTP server on a real uvicorn on 127.0.0.1, driven with httpx, with the scripted LLM."""

import asyncio
import json
import logging
import threading
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402
import yaml  # noqa: E402
from graph_fakes import extraction_reply, the_answer  # noqa: E402
from server_fixtures import (  # noqa: E402,F401  (make_rag: also imported from here elsewhere)
    DOCS,
    SCRIPTED,
    GatedAsyncClient,
    SlowAsyncClient,
    make_rag,
    sse_events,
)

from lightrag.components.graph_rag.schemas import DocStatus  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.server.app import create_app  # noqa: E402
from lightrag.server.metrics import ServerMetrics  # noqa: E402
from lightrag.server.middleware import JsonLogFormatter  # noqa: E402
from lightrag.server.runner import BackgroundServer  # noqa: E402

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


def test_insert_status_query_graph_delete(serve):
    _, client, _ = serve()
    inserted = client.post("/documents", json={"texts": list(DOCS.values()),
                                               "file_paths": list(DOCS), "wait": True})
    assert inserted.status_code == 200, inserted.text
    body = inserted.json()
    assert len(body["processed"]) == 2 and not body["failed"]
    voyager_id = body["doc_ids"][0]

    listing = client.get("/documents", params={"page_size": 1}).json()
    assert listing["counts"]["processed"] == 2 and listing["total"] == 2
    assert len(listing["documents"]) == 1 and listing["documents"][0]["status"] == "processed"
    assert client.get("/documents", params={"status": "failed"}).json()["documents"] == []
    doc = client.get(f"/documents/{voyager_id}").json()
    assert doc["id"] == voyager_id and doc["file_path"] == "voyager.md" and doc["chunks_count"] >= 1

    answer = client.post("/query", json={"query": "Which moon did Voyager 1 photograph?",
                                         "mode": "local", "include_raw_data": True})
    assert answer.status_code == 200, answer.text
    answer = answer.json()
    assert answer["response"] == "The answer."
    assert answer["references"] and answer["raw_data"]["entities"]
    context = client.post("/query", json={"query": "Voyager 1", "mode": "naive",
                                          "only_need_context": True}).json()
    assert "Voyager 1" in context["response"]

    with client.stream("POST", "/query", json={"query": "Saturn moons", "stream": True}) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = sse_events(stream.read().decode())
    assert "references" in events[0] and events[-1] == {"done": True}
    pieces = [e["response"] for e in events if "response" in e]
    assert len(pieces) > 1 and "".join(pieces) == "The answer."

    graph = client.get("/graph", params={"label": "Jupiter", "max_depth": 1, "max_nodes": 50}).json()
    names = {n["id"] for n in graph["nodes"]}
    assert "Saturn" in names and "Voyager 1" in names and graph["edges"]
    assert "Titan" in client.get("/graph/labels").json()
    nowhere = client.get("/graph", params={"label": "Atlantis"}).json()
    assert nowhere["nodes"] == [] and nowhere["edges"] == []

    deleted = client.delete(f"/documents/{voyager_id}")
    assert deleted.status_code == 200 and "Voyager 1" in deleted.json()["entities_deleted"]
    assert client.delete(f"/documents/{voyager_id}").status_code == 404
    assert client.get(f"/documents/{voyager_id}").status_code == 404
    assert "Voyager 1" not in client.get("/graph/labels").json()


def test_background_insert_and_graceful_shutdown(serve, tmp_path):
    gate = threading.Event()
    server, client, rag = serve(make_rag(
        tmp_path, extraction_client=GatedAsyncClient(gate, response_fn=extraction_reply)))
    texts = [f"Probe {i} of Agency{i} visited Planet{i}. Planet{i} has Moon{i}." for i in range(6)]
    accepted = [client.post("/documents", json={"texts": t}) for t in texts]
    assert all(r.status_code == 202 for r in accepted)
    doc_ids = [r.json()["doc_ids"][0] for r in accepted]
    assert client.get(f"/documents/{doc_ids[-1]}").json()["status"] in (
        "queued", "pending", "processing")
    assert rag.doc_status.get_status_counts()["processed"] < 6, "inserts must still be running"
    gate.set()
    server.stop()  # shutdown waits for the queued and running inserts
    statuses = {d: rag.doc_status.get_by_id(d)["status"] for d in doc_ids}
    assert set(statuses.values()) == {"processed"}, statuses
    reloaded = make_rag(tmp_path)
    assert reloaded.doc_status.get_status_counts()["processed"] == 6
    assert reloaded.graph.has_node("Planet5")


def test_insert_cut_by_shutdown_timeout_is_retried_at_next_start(tmp_path):
    texts = [f"Probe {i} of Agency{i} visited Planet{i}. Planet{i} has Moon{i}." for i in range(6)]
    rag = make_rag(tmp_path, extraction_client=SlowAsyncClient(response_fn=extraction_reply))
    server = BackgroundServer(create_app(rag, api_keys=[]), timeout_graceful_shutdown=0.2).start()
    outcome = {}

    def post():
        try:
            outcome["response"] = httpx.post(server.url + "/documents", timeout=30,
                                             json={"texts": texts, "wait": True})
        except httpx.HTTPError as e:
            outcome["error"] = e

    request = threading.Thread(target=post)
    request.start()
    deadline = time.monotonic() + 10
    while rag.doc_status.get_status_counts().get("processing", 0) == 0:
        assert time.monotonic() < deadline, "the insert did not start"
        time.sleep(0.01)
    server.stop()  # the waiting request outlives the 0.2 s grace and is cancelled
    request.join(10)
    assert "error" in outcome or outcome["response"].status_code >= 500, outcome
    on_disk = make_rag(tmp_path).doc_status
    statuses = {k: v["status"] for k, v in on_disk.items()}
    assert len(statuses) == 6 and set(statuses.values()) <= {"pending", "processing"}, statuses

    restarted = make_rag(tmp_path)
    BackgroundServer(create_app(restarted, api_keys=[])).start().stop()  # resumes, then drains
    counts = restarted.doc_status.get_status_counts()
    assert counts["processed"] == 6 and sum(counts.values()) == 6, counts
    assert all(restarted.graph.has_node(f"Planet{i}") for i in range(6))


def test_unfinished_documents_resume_at_startup(serve, tmp_path):
    crashed = make_rag(tmp_path)
    text = "Ada Lovelace wrote about the Analytical Engine of Charles Babbage."
    crashed.enqueue_documents(text, ids="doc-crashed", file_paths="ada.md")  # stored PENDING
    asyncio.run(crashed.index.aset_statuses({"doc-crashed": {"status": DocStatus.PROCESSING}}))
    crashed.index.close()  # the process "crashed" mid-run
    server, client, rag = serve(make_rag(tmp_path))
    server.stop()
    assert rag.doc_status.get_by_id("doc-crashed")["status"] == "processed"
    assert rag.graph.has_node("Ada Lovelace")


def test_upload_files(serve):
    _, client, rag = serve()
    files = [("files", (name, text.encode(), "text/markdown")) for name, text in DOCS.items()]
    uploaded = client.post("/documents/upload", files=files, data={"wait": "true"})
    assert uploaded.status_code == 200, uploaded.text
    assert len(uploaded.json()["processed"]) == 2
    assert "cassini.md" in rag.graph.get_node("Saturn")["file_path"]
    page = (b"<html><body><nav>Home | About | Contact</nav><main><p>Grace Hopper wrote the "
            b"first compiler for the Harvard Mark I.</p></main></body></html>")
    html = client.post("/documents/upload", data={"wait": "true"},
                       files=[("files", ("hopper.html", page, "text/html"))])
    assert html.status_code == 200 and html.json()["processed"], html.text
    assert rag.graph.get_node("Grace Hopper") is not None
    stored = rag.full_docs.get_by_id(html.json()["doc_ids"][0])["content"]
    assert "Harvard Mark" in stored and "Contact" not in stored  # main text, not the menu
    binary = client.post("/documents/upload", files=[("files", ("x.bin", b"\xff\xfe\x00", "x/y"))])
    assert binary.status_code == 415 and "x.bin: binary file" in binary.json()["detail"]
    empty = client.post("/documents/upload", files=[("files", ("blank.txt", b" \n", "text/plain"))])
    assert empty.status_code == 400 and "blank.txt: empty file" in empty.json()["detail"]
    single = client.post("/documents/upload", data={"wait": "true"},  # curl -F file=@notes.md
                         files=[("file", ("notes.md", b"Ada Lovelace wrote notes.", "text/markdown"))])
    assert single.status_code == 200 and single.json()["processed"], single.text
    nothing = client.post("/documents/upload", data={"wait": "true"})
    assert nothing.status_code == 422 and "'files'" in nothing.json()["detail"]


def test_api_keys(serve, monkeypatch):
    monkeypatch.setenv("LIGHTRAG_API_KEYS", "k-one, k-two")
    _, client, _ = serve(api_keys=None)
    assert client.get("/health").json()["auth"] is True
    for path in ["/documents", "/metrics", "/graph/labels"]:
        denied = client.get(path)
        assert denied.status_code == 401 and "API key" in denied.json()["detail"], path
    assert client.get("/documents", headers={"X-API-Key": "wrong"}).status_code == 401
    assert client.get("/documents", headers={"X-API-Key": "k-two"}).status_code == 200
    assert client.get("/documents", headers={"Authorization": "Bearer k-one"}).status_code == 200
    query = client.post("/query", json={"query": "x"}, headers={"Authorization": "Bearer k-one"})
    assert query.status_code == 200
    assert client.get("/openapi.json").status_code == 401  # the schema needs a key too
    schema = client.get("/openapi.json", headers={"X-API-Key": "k-two"}).json()
    assert {"/query", "/documents", "/documents/upload", "/graph", "/metrics"} <= set(schema["paths"])
    assert {"APIKeyHeader", "HTTPBearer"} <= set(schema["components"]["securitySchemes"])


def test_size_limit_and_bad_input(serve):
    _, client, _ = serve(max_request_bytes=2000)
    big = client.post("/documents", json={"texts": "x" * 5000})
    assert big.status_code == 413 and "limit of 2000 bytes" in big.json()["detail"]
    chunked = client.post("/documents", content=iter([b'{"texts": "', b"y" * 3000, b'"}']),
                          headers={"content-type": "application/json"})
    assert chunked.status_code == 413
    for payload in [{}, {"query": ""}, {"query": "q", "mode": "sideways"},
                    {"query": "q", "colour": "red"}, {"query": "q", "top_k": 0}]:
        response = client.post("/query", json=payload)
        assert response.status_code == 422 and response.json()["detail"], payload
    assert client.post("/query", content=b"{not json", headers={
        "content-type": "application/json"}).status_code == 422
    assert client.get("/documents", params={"page": 0}).status_code == 422
    mismatch = client.post("/documents", json={"texts": ["a text"], "ids": ["a", "b"]})
    assert mismatch.status_code == 400 and "2 ids for 1 documents" in mismatch.json()["detail"]
    empty = client.post("/documents", json={"texts": ["  "]})
    assert empty.status_code == 400 and "empty" in empty.json()["detail"]
    nothing = client.post("/documents", json={"texts": []})
    assert nothing.status_code == 400 and "no documents" in nothing.json()["detail"]
    not_text = client.post("/documents", json={"texts": [3]})
    assert not_text.status_code == 422
    assert client.post("/query", json={"query": "   "}).status_code == 400
    assert client.get("/documents/doc-nope").status_code == 404
    assert client.get("/nowhere").status_code == 404


def test_metrics_and_json_access_logs(serve, caplog, tmp_path):
    failing = ScriptedClient(responses=[RuntimeError("provider down")], response_fn=the_answer)
    _, client, rag = serve(make_rag(tmp_path / "metrics", failing))
    with caplog.at_level(logging.INFO, logger="lightrag.server.access"):
        client.post("/documents", json={"texts": list(DOCS.values()), "wait": True})
        failed = client.post("/query", json={"query": "Saturn", "mode": "local"},
                             headers={"X-Request-ID": "req-42"})
        assert failed.status_code == 502 and failed.headers["x-request-id"] == "req-42"
        assert client.post("/query", json={"query": "Saturn", "mode": "local"}).status_code == 200
        client.get("/documents/doc-nope")
        metrics = client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = metrics.text
    for line in [
        'lightrag_http_requests_total{method="POST",route="/query",status="200"} 1',
        'lightrag_http_requests_total{method="POST",route="/query",status="502"} 1',
        'lightrag_http_requests_total{method="GET",route="/documents/{doc_id}",status="404"} 1',
        'lightrag_http_request_duration_seconds_count{method="POST",route="/query"} 2',
        'lightrag_http_request_duration_seconds_bucket{method="POST",route="/query",le="+Inf"} 2',
        'lightrag_errors_total{kind="http_5xx"} 1',
        'lightrag_errors_total{kind="llm_failed"} 1',
        'lightrag_documents{status="processed"} 2',
        'lightrag_insert_in_progress 0',
        f'lightrag_graph_entities {len(rag.graph.get_all_labels())}',
        f'lightrag_graph_relations {len(rag.graph.get_all_edges())}',
    ]:
        assert line in text, line
    assert 'lightrag_llm_calls_total{generator="extractor.generator",outcome="completed"}' in text
    assert 'lightrag_llm_tokens_total{generator="engine.answer_generator",kind="prompt"}' in text
    assert 'lightrag_llm_calls_total{generator="engine.answer_generator",outcome="failed"} 1' in text
    assert "# TYPE lightrag_http_request_duration_seconds histogram" in text
    records = [r for r in caplog.records if r.name == "lightrag.server.access"]
    fields = [r.fields for r in records]
    assert {"method": "POST", "route": "/query", "status": 502, "request_id": "req-42"}.items() \
        <= next(f for f in fields if f["request_id"] == "req-42").items()
    line = json.loads(JsonLogFormatter().format(records[0]))
    assert line["logger"] == "lightrag.server.access" and line["duration_ms"] >= 0


def test_serve_command_refuses_public_host_and_serves(tmp_path):
    import argparse

    import graph_fakes  # noqa: F401  (registers the fake model functions)

    from lightrag.cli.serve import add_serve_parser, build_server

    parser = argparse.ArgumentParser(prog="lightrag")
    add_serve_parser(parser.add_subparsers(dest="command"))
    config = tmp_path / "graph.yaml"
    config.write_text(yaml.safe_dump(SCRIPTED))
    public = parser.parse_args(["serve", "--config", str(config), "--host", "0.0.0.0"])
    with pytest.raises(ValueError, match="refusing to serve on 0.0.0.0 without API keys"):
        build_server(public, api_keys=[])
    assert build_server(public, api_keys=["k"]).config.host == "0.0.0.0"

    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = parser.parse_args(["serve", "--config", str(config), "--working-dir", str(tmp_path / "w"),
                              "--port", str(port)])
    server = build_server(args, api_keys=[])
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            thread.join(0.01)
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        assert client.get("/health").json()["status"] == "ok"
        inserted = client.post("/documents", json={"texts": DOCS["voyager.md"], "wait": True})
        assert inserted.json()["processed"]
    finally:
        server.should_exit = True
        thread.join(30)
    assert (tmp_path / "w").is_dir()


def test_streamed_answer_failure_is_an_sse_error_event(serve, tmp_path):
    failing = ScriptedClient(responses=[RuntimeError("provider down")], response_fn=the_answer)
    _, client, _ = serve(make_rag(tmp_path / "stream", failing))
    client.post("/documents", json={"texts": DOCS["voyager.md"], "wait": True})
    with client.stream("POST", "/query", json={"query": "Voyager 1", "stream": True}) as stream:
        assert stream.status_code == 200
        events = sse_events(stream.read().decode())
    assert "references" in events[0] and "provider down" in events[-1]["error"]
    assert 'lightrag_errors_total{kind="stream_failed"} 1' in client.get("/metrics").text


def test_cli_serve_refuses_public_host_without_keys(monkeypatch, capsys):
    from lightrag.cli import main

    monkeypatch.delenv("LIGHTRAG_API_KEYS", raising=False)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        code = main(["serve", "--host", "0.0.0.0"])
    finally:  # `serve` installs the JSON log handler on the root logger
        root.handlers[:] = handlers
        root.setLevel(level)
    assert code == 2
    assert "refusing to serve on 0.0.0.0 without API keys" in capsys.readouterr().err


def test_create_app_rejects_bad_size_limit(tmp_path):
    with pytest.raises(ValueError, match="max_request_bytes must be positive"):
        create_app(make_rag(tmp_path), api_keys=[], max_request_bytes=0)


def test_histogram_buckets_are_cumulative():
    metrics = ServerMetrics(buckets=(0.01, 1.0))
    for seconds in (0.005, 0.5, 30.0):
        metrics.observe_request("GET", "/x", 200, seconds)
    text = metrics.render()
    for line in ['_bucket{method="GET",route="/x",le="0.01"} 1',
                 '_bucket{method="GET",route="/x",le="1"} 2',
                 '_bucket{method="GET",route="/x",le="+Inf"} 3',
                 '_sum{method="GET",route="/x"} 30.505',
                 '_count{method="GET",route="/x"} 3']:
        assert "lightrag_http_request_duration_seconds" + line in text, line
