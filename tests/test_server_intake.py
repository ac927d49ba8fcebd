"""Durable, bounded server intake: a 202 means the document is stored; kill -9 loses nothing.

The crash test runs ``lightrag serve`` (its ``serve`` command, as a real subprocess) over a GraphRAG
built from YAML with the scripted fakes, SIGKILLs it right after the 202s (and once more while it
resumes), restarts it on the same working directory and checks that every acknowledged document
ends PROCESSED.
"""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import yaml  # noqa: E402
from graph_fakes import extraction_reply  # noqa: E402
from server_fixtures import SCRIPTED, SlowAsyncClient, make_rag  # noqa: E402

from lightrag.server.app import create_app  # noqa: E402
from lightrag.server.intake import IntakeQueue  # noqa: E402
from lightrag.server.runner import BackgroundServer  # noqa: E402

TESTS = Path(__file__).parent

SERVE = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    import graph_fakes
    from lightrag.utils.registry import register

    @register
    def slow_extraction_reply(prompt):
        time.sleep(0.05)  # blocks the loop like a CPU-bound extractor would
        return graph_fakes.extraction_reply(prompt)

    import argparse
    from lightrag.cli.serve import add_serve_parser
    parser = argparse.ArgumentParser(prog="lightrag")
    add_serve_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(sys.argv[1:])
    sys.exit(args.func(args))
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(tmp_path):
    config = yaml.safe_load(yaml.safe_dump(SCRIPTED))
    extractor = config["component_config"]["extractor"]["component_config"]
    extractor["generator"]["component_config"]["model_client"]["component_config"]["response_fn"] = {
        "class": "slow_extraction_reply"}
    extractor["max_gleaning"] = 0
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_server(tmp_path, port, workdir, *options):
    """``lightrag serve`` in a child process (``options``: more of its flags), once /health answers."""
    script = tmp_path / "serve.py"
    script.write_text(SERVE.format(tests=str(TESTS)))
    log = open(tmp_path / f"server-{time.monotonic_ns()}.log", "w")
    proc = subprocess.Popen(
        [sys.executable, str(script), "serve", "--config", str(write_config(tmp_path)),
         "--working-dir", str(workdir), "--port", str(port), "--log-level", "warning", *options],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "LIGHTRAG_API_KEYS": ""})
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, Path(log.name).read_text()
        try:
            if client.get("/health").status_code == 200:
                return proc, client
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)


def kill(proc):
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def statuses(client, doc_ids):
    found = {}
    for doc_id in doc_ids:
        response = client.get(f"/documents/{doc_id}")
        found[doc_id] = response.json()["status"] if response.status_code == 200 else response.status_code
    return found


def test_acknowledged_documents_survive_sigkill(tmp_path):
    port, workdir = free_port(), tmp_path / "store"
    proc, client = start_server(tmp_path, port, workdir)
    acknowledged = []
    try:
        for batch in range(4):
            texts = [f"Probe{i} of Agency{i} visited Planet{i}. Planet{i} has Moon{i}. "
                     f"Moon{i} orbits Planet{i} near Star{i}." for i in range(batch * 10, batch * 10 + 10)]
            response = client.post("/documents", json={
                "texts": texts, "file_paths": [f"p{batch}-{i}.md" for i in range(10)]})
            assert response.status_code == 202, response.text
            acknowledged.extend(response.json()["doc_ids"])
    finally:
        kill(proc)  # right after the last 202

    on_disk = make_rag(workdir).doc_status  # what the killed server left
    left = {d: (on_disk.get_by_id(d) or {}).get("status") for d in acknowledged}
    assert None not in left.values(), "an acknowledged document is not in the store"
    assert list(left.values()).count("processed") < len(acknowledged), "nothing was left to resume"

    proc, client = start_server(tmp_path, port, workdir)
    time.sleep(0.3)
    kill(proc)  # again, while it resumes

    proc, client = start_server(tmp_path, port, workdir)
    try:
        deadline = time.monotonic() + 120
        while True:
            seen = statuses(client, acknowledged)
            if set(seen.values()) == {"processed"}:
                break
            assert time.monotonic() < deadline, seen
            time.sleep(0.2)
        listing = client.get("/documents", params={"page_size": 100}).json()
        assert listing["counts"]["processed"] == 40 and listing["total"] == 40
        assert "Planet39" in client.get("/graph/labels").json()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


@pytest.fixture
def slow_server(tmp_path):
    started = []

    def start(max_pending, delay=0.3):
        rag = make_rag(tmp_path, extraction_client=SlowAsyncClient(delay=delay,
                                                                   response_fn=extraction_reply))
        server = BackgroundServer(create_app(rag, api_keys=[], max_pending=max_pending)).start()
        started.append(server)
        return httpx.Client(base_url=server.url, timeout=30), rag

    yield start
    for server in started:
        server.stop()


def test_queue_is_bounded_with_retry_after(slow_server):
    client, rag = slow_server(max_pending=3)
    texts = [f"Rover{i} landed on Crater{i}. Crater{i} lies on Mars." for i in range(5)]
    accepted = client.post("/documents", json={"texts": texts[:3]})
    assert accepted.status_code == 202, accepted.text
    # the three are stored PENDING before the 202 came back
    assert all(rag.doc_status.get_by_id(d) is not None for d in accepted.json()["doc_ids"])
    full = client.post("/documents", json={"texts": texts[3]})
    assert full.status_code == 429, full.text
    assert int(full.headers["Retry-After"]) >= 1
    assert "intake queue is full" in full.json()["detail"] and "limit of 3" in full.json()["detail"]
    waited = client.post("/documents", json={"texts": texts[3], "wait": True})
    assert waited.status_code == 429
    listing = client.get("/documents").json()
    assert listing["max_pending"] == 3 and listing["counts"]["queued"] >= 1
    deadline = time.monotonic() + 30
    while client.post("/documents", json={"texts": texts[3:]}).status_code == 429:
        assert time.monotonic() < deadline, "the queue never drained"
        time.sleep(0.1)
    while rag.doc_status.get_status_counts().get("processed", 0) < 5:
        assert time.monotonic() < deadline, rag.doc_status.get_status_counts()
        time.sleep(0.1)


def test_progress_is_exposed_per_document(slow_server):
    client, rag = slow_server(max_pending=10, delay=0.0)
    done = client.post("/documents", json={"texts": "Ada met Charles in London.", "wait": True}).json()
    doc_id = done["doc_ids"][0]
    rag.insert_progress = {doc_id: {"stage": "extracting", "chunks_done": 1, "chunks_total": 3}}
    assert client.get(f"/documents/{doc_id}").json()["progress"] == {
        "stage": "extracting", "chunks_done": 1, "chunks_total": 3}
    row = client.get("/documents").json()["documents"][0]
    assert row["id"] == doc_id and row["progress"]["chunks_total"] == 3
    del rag.insert_progress
    assert client.get(f"/documents/{doc_id}").json()["progress"] is None


def test_intake_rejects_a_bad_bound_and_counts_only_waiting_documents(tmp_path):
    rag = make_rag(tmp_path)
    with pytest.raises(ValueError, match="max_pending must be at least 1"):
        IntakeQueue(rag, max_pending=0)
    with pytest.raises(ValueError, match="--max-pending must be at least 1"):
        import argparse

        from lightrag.cli.serve import add_serve_parser, build_server
        parser = argparse.ArgumentParser()
        add_serve_parser(parser.add_subparsers(dest="command"))
        build_server(parser.parse_args(["serve", "--max-pending", "0"]), api_keys=[])
    queue = IntakeQueue(rag, max_pending=2)
    rag.enqueue_documents(["Ada met Charles.", "Grace met Alan."], ids=["a", "b"])
    assert queue.unfinished() == 2
    rag.set_document_status("a", status="failed", error_msg="boom")
    assert queue.unfinished() == 1  # a FAILED document waits for a retry, not in line
    queue.check_capacity(1)


def test_failed_documents_can_be_retried(tmp_path):
    from lightrag.components.model_client import ScriptedClient

    flaky = ScriptedClient(responses=[RuntimeError("provider down")], response_fn=extraction_reply)
    rag = make_rag(tmp_path, extraction_client=flaky)
    with BackgroundServer(create_app(rag, api_keys=[])) as server:
        client = httpx.Client(base_url=server.url, timeout=30)
        assert client.post("/documents/retry").json() == {"status": "nothing to retry", "failed": 0}
        done = client.post("/documents", json={"texts": "Ada met Charles in London.",
                                               "wait": True}).json()
        doc_id = done["doc_ids"][0]
        failed = client.get(f"/documents/{doc_id}").json()
        assert failed["status"] == "failed" and "provider down" in failed["error_msg"]
        retried = client.post("/documents/retry")
        assert retried.status_code == 202 and retried.json()["failed"] == 1
        deadline = time.monotonic() + 20
        while client.get(f"/documents/{doc_id}").json()["status"] != "processed":
            assert time.monotonic() < deadline, client.get(f"/documents/{doc_id}").json()
            time.sleep(0.05)
        assert "Ada" in client.get("/graph/labels").json()


def test_shutdown_leaves_the_backlog_pending_after_drain_timeout(tmp_path):
    texts = [f"Probe {i} of Agency{i} visited Planet{i}. Planet{i} has Moon{i}." for i in range(8)]
    rag = make_rag(tmp_path, extraction_client=SlowAsyncClient(delay=0.5,
                                                               response_fn=extraction_reply))
    server = BackgroundServer(create_app(rag, api_keys=[], drain_timeout=0.3)).start()
    accepted = httpx.post(server.url + "/documents", json={"texts": texts}, timeout=30)
    assert accepted.status_code == 202
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 10  # not the ~4 s x 2 the backlog needs
    counts = make_rag(tmp_path).doc_status.get_status_counts()
    assert counts.get("processed", 0) < 8 and sum(counts.values()) == 8, counts

    restarted = make_rag(tmp_path)
    BackgroundServer(create_app(restarted, api_keys=[])).start().stop()  # resumes, drains
    assert restarted.doc_status.get_status_counts()["processed"] == 8


def _post_then_sigterm(proc, url, body, after, wait):
    """POST ``body`` to ``url`` in a thread, SIGTERM the server ``after`` seconds, wait for
    it to stop (``wait`` s) and return the response the client got."""
    got = {}
    thread = threading.Thread(target=lambda: got.update(response=httpx.post(url, json=body, timeout=120)))
    thread.start()
    time.sleep(after)
    proc.send_signal(signal.SIGTERM)
    proc.wait(wait)
    thread.join(60)
    return got["response"]


@pytest.mark.subprocess
def test_a_waiting_insert_cut_by_shutdown_gets_the_json_503(tmp_path):
    proc, client = start_server(tmp_path, free_port(), tmp_path / "store", "--graceful-timeout", "1")
    url = str(client.base_url).rstrip("/")
    text = " ".join(f"Probe{i} of Agency{i} visited Planet{i}." for i in range(3000))  # ~15 s of work
    response = _post_then_sigterm(proc, url + "/documents",
                                  {"texts": [text], "ids": ["W0"], "wait": True}, after=1.5, wait=60)
    assert response.status_code == 503 and response.headers["content-type"] == "application/json"
    assert "shutting down" in response.json()["detail"]


@pytest.mark.subprocess
def test_a_graph_import_cut_by_shutdown_gets_the_json_503_and_commits_whole(tmp_path):
    """SIGTERM while a large custom-KG import runs: the client gets the JSON 503 of a shutdown
    (was a plain 500), and the import, one transaction, is in the store after the restart."""
    store = tmp_path / "store"
    proc, client = start_server(tmp_path, free_port(), store, "--graceful-timeout", "1")
    url = str(client.base_url).rstrip("/")
    kg = {"entities": [{"entity_name": f"Node{i}", "description": f"node {i}"} for i in range(20000)]}
    response = _post_then_sigterm(proc, url + "/documents/custom_kg",
                                  {"custom_kg": kg, "doc_id": "big-kg"}, after=2.0, wait=90)
    assert response.status_code == 503 and response.headers["content-type"] == "application/json"
    assert "shutting down" in response.json()["detail"]
    import graph_fakes  # noqa: F401  (registers the fake model functions)

    from lightrag.utils import build

    config = yaml.safe_load(yaml.safe_dump(SCRIPTED))
    config["component_config"]["working_dir"] = str(store)
    restarted = build(config)
    assert restarted.graph.get_node("Node19999") is not None  # committed whole
    restarted.close()
