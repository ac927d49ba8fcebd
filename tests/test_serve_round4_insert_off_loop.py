"""Red team 4, finding 1: an insert's write step (merging into the graph, the synonym search of
new names) runs in a worker thread, not on the event loop; a cancelled insert still waits for
that thread's transaction, and a server's drain waits for a cancelled request's write."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from graph_fakes import fake_graph_rag

import lightrag.components.graph_rag.index.recording as recording
from lightrag.server.intake import IntakeQueue

DOCS = ["Alice Smith met Bob Jones in Paris. Bob Jones founded Acme Corp in Berlin.",
        "Carol White joined Acme Corp. Carol White met Alice Smith in Rome."]
STALL = 0.5  # seconds of CPU a slowed step spends without yielding


async def _worst_gap(work) -> float:
    """Run ``work`` while a 10 ms ticker runs on the same loop; the longest the loop stalled."""
    gaps = [0.0]

    async def tick() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last - 0.01)
            last = now

    ticker = asyncio.ensure_future(tick())
    try:
        await work
    finally:
        ticker.cancel()
    return max(gaps)


def _slow_merge(rag, monkeypatch, before=None):
    """Make the merger spend STALL seconds of blocking work per call (``before()`` first)."""
    original = rag.index.merger.acall
    threads = []

    async def merge(results, graph):
        threads.append(threading.get_ident())
        if before is not None:
            before()
        time.sleep(STALL)
        return await original(results, graph)

    monkeypatch.setattr(rag.index.merger, "acall", merge)
    return threads


def test_merging_runs_in_a_worker_thread_not_on_the_loop(tmp_path, monkeypatch):
    rag = fake_graph_rag(tmp_path, max_gleaning=0)
    threads = _slow_merge(rag, monkeypatch)

    async def scenario():
        loop_thread = threading.get_ident()
        gap = await _worst_gap(rag.ainsert(DOCS, ids=["a", "b"]))
        return loop_thread, gap

    loop_thread, gap = asyncio.run(scenario())
    assert threads and loop_thread not in threads
    assert gap < STALL / 2, f"the event loop stalled {gap:.2f} s"
    assert rag.index.doc_status.get_by_id("a")["status"] == "processed"
    assert rag.index.graph.has_node("Alice Smith")


def test_synonym_search_runs_in_a_worker_thread_not_on_the_loop(tmp_path, monkeypatch):
    rag = fake_graph_rag(tmp_path, max_gleaning=0)
    original = recording.add_synonyms
    calls = []

    def slow_synonyms(*args, **kwargs):
        calls.append(threading.get_ident())
        time.sleep(STALL)
        return original(*args, **kwargs)

    monkeypatch.setattr(recording, "add_synonyms", slow_synonyms)

    async def scenario():
        return threading.get_ident(), await _worst_gap(rag.ainsert(DOCS, ids=["a", "b"]))

    loop_thread, gap = asyncio.run(scenario())
    assert calls and loop_thread not in calls
    assert gap < STALL / 2, f"the event loop stalled {gap:.2f} s"
    assert rag.index.status()["pending_vectors"] == 0


def test_a_cancelled_insert_waits_for_its_write_then_ends(tmp_path, monkeypatch):
    rag = fake_graph_rag(tmp_path, max_gleaning=0)
    entered, release = threading.Event(), threading.Event()
    _slow_merge(rag, monkeypatch, before=lambda: (entered.set(), release.wait(5)))

    async def scenario():
        task = asyncio.ensure_future(rag.ainsert(DOCS[:1], ids=["a"]))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0.2)
        waited = not task.done()  # the transaction in the worker thread is not finished
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        return waited

    assert asyncio.run(scenario()), "the cancelled insert ended while its write was running"
    # the write it waited for committed whole: the document is recorded, the store closes
    assert rag.index.doc_status.get_by_id("a")["status"] == "processed"
    rag.index.close()


def test_drain_waits_for_a_cancelled_requests_write(tmp_path, monkeypatch):
    rag = fake_graph_rag(tmp_path, max_gleaning=0)
    entered, release = threading.Event(), threading.Event()
    _slow_merge(rag, monkeypatch, before=lambda: (entered.set(), release.wait(5)))

    async def scenario():
        queue = IntakeQueue(rag)
        request = asyncio.ensure_future(queue.insert_now(DOCS[:1], ["a"], ["a.txt"]))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        request.cancel()  # a shutdown past its graceful timeout
        await asyncio.sleep(0.1)
        answered, busy = request.done(), queue.busy  # it answers; its write still runs
        drain = asyncio.ensure_future(queue.drain())
        await asyncio.sleep(0.2)
        drained_early = drain.done()
        release.set()
        await drain
        return answered, busy, drained_early, queue.busy

    answered, busy, drained_early, busy_after = asyncio.run(scenario())
    assert answered and busy and not drained_early and not busy_after
    assert rag.index.doc_status.get_by_id("a")["status"] == "processed"
    rag.index.close()


def test_health_answers_during_a_background_insert(tmp_path, monkeypatch):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    httpx = pytest.importorskip("httpx")
    from lightrag.server import create_app
    from lightrag.server.runner import BackgroundServer

    rag = fake_graph_rag(tmp_path, max_gleaning=0)
    _slow_merge(rag, monkeypatch)
    with BackgroundServer(create_app(rag, api_keys=[])) as server:
        client = httpx.Client(base_url=server.url, timeout=30)
        texts = [f"{d} Document {i} names Dave Brown{i}." for i, d in enumerate(DOCS * 2)]
        assert client.post("/documents", json={"texts": texts}).status_code == 202
        latencies, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline:
            started = time.perf_counter()
            health = client.get("/health").json()
            latencies.append(time.perf_counter() - started)
            if not health["insert_in_progress"]:
                break
            time.sleep(0.02)
        counts = client.get("/documents").json()["counts"]
    assert counts["processed"] == len(texts), counts
    assert max(latencies) < STALL / 2, f"/health took up to {max(latencies):.2f} s"
