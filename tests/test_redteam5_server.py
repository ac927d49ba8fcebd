"""Red team 5, the server: deletes under a steady stream of inserts, errors nobody handled.

A delete waited for the workspace's intake to be idle (at most 2 s, then 503); under a steady
trickle of inserts (a 202 every ~0.1 s) the intake never was, and 25 of 25 deletes of a
two-server race got 503. A delete now takes its turn between two processing runs.
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402
from graph_fakes import extraction_reply  # noqa: E402
from server_fixtures import SlowAsyncClient, make_rag  # noqa: E402

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


def test_a_delete_is_not_starved_by_a_steady_stream_of_inserts(serve, tmp_path):
    server, client, rag = serve(make_rag(
        tmp_path, extraction_client=SlowAsyncClient(delay=0.05, response_fn=extraction_reply)))
    assert client.post("/documents", json={"texts": "Saturn has Titan.", "ids": "victim",
                                           "wait": True}).status_code == 200
    stop = threading.Event()

    def trickle() -> None:
        feed = httpx.Client(base_url=server.url, timeout=30)
        for i in range(1000):
            if stop.is_set():
                return
            feed.post("/documents", json={"texts": f"Probe{i} visited Planet{i}.", "ids": f"p{i}"})
            time.sleep(0.05)

    feeder = threading.Thread(target=trickle, daemon=True)
    feeder.start()
    try:
        time.sleep(0.5)  # the stream is going
        assert rag.doc_status.get_by_id("p1") is not None
        answers = []
        for _ in range(3):
            answers.append(client.delete("/documents/victim"))
            if answers[-1].status_code == 200:
                break
            time.sleep(0.2)
    finally:
        stop.set()
        feeder.join(10)
    assert answers[-1].status_code == 200, [(a.status_code, a.text) for a in answers]
    assert client.get("/documents/victim").status_code == 404


def test_an_unhandled_error_is_json_and_keeps_the_connection(serve, tmp_path):
    """A route's unexpected exception: JSON 500 without its text (which may name files and
    settings), and the client's kept-alive connection still serves the next request (Starlette's
    own 500 re-raised, and uvicorn closed the connection: ``Connection reset by peer``)."""
    server, client, rag = serve()

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals at /srv/private/config.yaml")

    rag.get_knowledge_graph = broken
    answer = client.get("/graph", params={"label": "*"})
    assert answer.status_code == 500
    assert answer.json() == {"detail": "internal server error; the server log has the details"}
    assert client.get("/health").status_code == 200  # the same connection
