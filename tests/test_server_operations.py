"""Server operations of issue 26 (defect 10): a delete behind a running insert gets 503 with
Retry-After, huge page numbers are a 4xx, ids and entity names holding "/" work over HTTP."""

import threading

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402
from graph_fakes import extraction_reply  # noqa: E402
from server_fixtures import GatedAsyncClient, make_rag  # noqa: E402

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


def test_delete_behind_a_running_insert_gets_503_with_retry_after(serve, tmp_path):
    gate = threading.Event()
    server, client, rag = serve(make_rag(
        tmp_path, extraction_client=GatedAsyncClient(gate, response_fn=extraction_reply)))
    gate.set()
    assert client.post("/documents", json={"texts": "Saturn has Titan.", "ids": "a",
                                           "wait": True}).status_code == 200
    gate.clear()
    assert client.post("/documents", json={"texts": "Mars has Phobos.", "ids": "b"}).status_code == 202
    answer = client.delete("/documents/a")
    assert answer.status_code == 503 and int(answer.headers["Retry-After"]) >= 1
    gate.set()


def test_huge_page_number_is_a_client_error(serve):
    _, client, _ = serve()
    answer = client.get("/documents", params={"page": "99999999999999999999"})
    assert 400 <= answer.status_code < 500


def test_ids_and_entity_names_with_slashes(serve):
    _, client, rag = serve()
    answer = client.post("/documents", json={"texts": "Alpha/Beta met Gamma in Rome.",
                                             "ids": "team/a/doc-1", "wait": True})
    assert answer.status_code == 200, answer.text
    assert client.get("/documents/team/a/doc-1").json()["status"] == "processed"
    rag.index.edit_entity("Gamma", {}, rename_to="Gamma/Delta")
    entity = client.get("/graph/entity/Gamma/Delta")
    assert entity.status_code == 200, entity.text
    chunk_id = rag.doc_status.get_by_id("team/a/doc-1")["chunks_list"][0]
    assert client.get(f"/chunks/{chunk_id}").status_code == 200
    assert client.delete("/documents/team/a/doc-1").status_code == 200
    assert client.get("/documents/team/a/doc-1").status_code == 404


def test_shutdown_keeps_to_the_graceful_timeout(tmp_path):
    """A run that would never finish is cut at the timeout, and so is the final flush."""
    import asyncio
    import time

    from lightrag.server.app import AppState
    from lightrag.server.metrics import ServerMetrics

    gate = threading.Event()  # never set: extraction hangs
    rag = make_rag(tmp_path, extraction_client=GatedAsyncClient(gate, response_fn=extraction_reply))

    async def scenario():
        state = AppState(rag, ServerMetrics())
        await state.intake.enqueue(["Saturn has Titan."], ["a"], ["a.txt"])
        await asyncio.sleep(0.2)
        started = time.monotonic()
        await state.drain(1.0)
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 3.0
    assert rag.doc_status.get_by_id("a")["status"] in ("pending", "processing")
