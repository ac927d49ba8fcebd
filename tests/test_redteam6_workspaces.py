"""Red team 6: with ``--max-workspaces`` reached, a workspace with a steady stream of inserts
was never closed (only idle ones were), so every request for another workspace got 503 for as
long as the stream went on. The least recently used workspace no request is using is now closed
even while it processes inserts (its run going ends first; what was queued after it stays
PENDING and resumes when it opens again); a request waits for that up to ``open_wait`` seconds,
else gets 503 with ``Retry-After``.

FastAPI's TestClient over the scripted GraphRAG, the insert stream from a thread of its own."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from server_fixtures import (
    extraction_reply,  # noqa: E402
    make_rag,  # noqa: E402
)

from lightrag.components.model_client.scripted_client import ScriptedClient  # noqa: E402
from lightrag.server.app import create_app  # noqa: E402

A = {"LIGHTRAG-WORKSPACE": "team_a"}
B = {"LIGHTRAG-WORKSPACE": "team-b"}


class SlowAsyncClient(ScriptedClient):
    """The scripted LLM taking 0.5 s a call (without blocking the event loop)."""

    async def acall(self, api_kwargs=None, model_type=None):
        await asyncio.sleep(0.5)
        return await super().acall(api_kwargs, model_type)


def _factory(tmp_path):
    def factory(name):
        if name == "team_a":
            return make_rag(tmp_path, workspace=name,
                            extraction_client=SlowAsyncClient(response_fn=extraction_reply))
        return make_rag(tmp_path, workspace=name)
    return factory


def _one_slot_app(tmp_path):
    """A server that keeps one workspace open beside the default one."""
    return create_app(make_rag(tmp_path), api_keys=[], workspace_factory=_factory(tmp_path),
                      max_workspaces=1)


def test_a_steady_insert_stream_does_not_keep_other_workspaces_out(tmp_path):
    app = _one_slot_app(tmp_path)
    with TestClient(app) as client:
        pool = app.state.lightrag.workspaces
        pool.open_wait = 2.0
        stop, acknowledged, refused = threading.Event(), [], []

        def stream():
            n = 0
            while not stop.is_set():
                n += 1
                answer = client.post("/documents", headers=A, json={
                    "texts": f"Moon {n} orbits planet {n}.", "ids": f"m{n}"})
                if answer.status_code == 202:
                    acknowledged.append(f"m{n}")
                else:
                    refused.append((answer.status_code, answer.headers.get("Retry-After")))
                time.sleep(0.03)

        writer = threading.Thread(target=stream)
        writer.start()
        try:
            for _ in range(200):  # until team_a is open and processing
                if "team_a" in pool.states and pool.states["team_a"].intake.busy:
                    break
                time.sleep(0.01)
            time.sleep(0.5)
            started, answers = time.monotonic(), []
            while time.monotonic() - started < 8:
                answer = client.get("/documents", headers=B)
                answers.append((answer.status_code, answer.headers.get("Retry-After")))
                if answer.status_code == 200:
                    break
                time.sleep(0.2)
            assert answers[-1][0] == 200, answers  # it was 503 for as long as the stream went on
        finally:
            stop.set()
            writer.join()
        assert acknowledged
        for status, retry_after in answers[:-1] + refused:
            assert status == 503 and int(retry_after) >= 1, (answers, refused)
        # every insert answered 202 is processed: team_a reopens and resumes what was queued
        for _ in range(600):
            listing = client.get("/documents", headers=A, params={"limit": 1000}).json()
            done = {d["id"] for d in listing["documents"] if d["status"] == "processed"}
            if set(acknowledged) <= done:
                break
            time.sleep(0.05)
        assert set(acknowledged) <= done, sorted(set(acknowledged) - done)


def test_every_open_workspace_in_use_gets_503_with_retry_after(tmp_path):
    app = _one_slot_app(tmp_path)
    with TestClient(app) as client:
        pool = app.state.lightrag.workspaces
        pool.open_wait = 0.3
        assert client.get("/documents", headers=B).status_code == 200
        pool.states["team-b"].users += 1  # a request using team-b (a stream, a wait: true insert)
        started = time.monotonic()
        answer = client.get("/documents", headers=A)
        assert answer.status_code == 503 and answer.headers["Retry-After"] == "5"
        assert 0.25 < time.monotonic() - started < 2
        assert "in use" in answer.json()["detail"]
        pool.states["team-b"].users -= 1
        assert client.get("/documents", headers=A).status_code == 200
        assert list(pool.states) == ["team_a"]


def test_a_long_run_in_a_workspace_closed_to_make_room_stops_after_its_write_in_progress(tmp_path):
    """A run of many documents used to go on to its end before its workspace closed (100
    documents at 0.5 s an LLM call: every other workspace at 503 for their whole run). The run is now
    cancelled after a short grace, once its write in progress is done; the documents it had not
    finished stay in the store and are processed when the workspace opens again."""
    app = _one_slot_app(tmp_path)
    with TestClient(app) as client:
        pool = app.state.lightrag.workspaces
        pool.open_wait = 5.0
        ids = [f"m{n}" for n in range(100)]
        answer = client.post("/documents", headers=A, json={
            "texts": [f"Moon {n} orbits planet {n}." for n in range(100)], "ids": ids})
        assert answer.status_code == 202
        for _ in range(300):  # until team_a is processing its run
            if "team_a" in pool.states and pool.states["team_a"].intake.busy:
                break
            time.sleep(0.01)
        time.sleep(0.3)
        started = time.monotonic()
        assert client.get("/documents", headers=B).status_code == 200
        assert time.monotonic() - started < 3.0
        for _ in range(1200):  # team_a reopens and finishes every document it took
            counts = client.get("/documents", headers=A).json()["counts"]
            if counts["processed"] == len(ids):
                break
            time.sleep(0.05)
        assert counts["processed"] == len(ids) and counts["failed"] == 0, counts
        assert pool.states["team_a"].rag.index.verify() == []
