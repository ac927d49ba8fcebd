"""While an insert writes, BLAS runs on one thread (a write's small products left an OpenBLAS
helper spinning on another core: 0.34 s of CPU per 100 documents at 1M chunks), and the
library's setting comes back after the last writer leaves, however writers overlap."""

from __future__ import annotations

import asyncio
import threading

import pytest

threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is in the faiss extra")

from graph_fakes import fake_graph_rag  # noqa: E402

from lightrag.components.graph_rag import merger as merger_module  # noqa: E402
from lightrag.utils.blas_threads import one_blas_thread  # noqa: E402


def blas_threads() -> set:
    return {lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"}


@pytest.fixture
def several_blas_threads():
    """The library's own setting, when it runs BLAS on more than one thread (numpy imported)."""
    import numpy  # noqa: F401  (loads its BLAS library)

    setting = blas_threads()
    if not setting or setting == {1}:
        pytest.skip(f"BLAS runs on {setting or 'no'} thread(s) here: nothing to limit")
    yield setting
    assert blas_threads() == setting


def test_one_thread_inside_and_the_setting_back_after(several_blas_threads):
    with one_blas_thread():
        assert blas_threads() == {1}
        with one_blas_thread():
            assert blas_threads() == {1}
        assert blas_threads() == {1}
    assert blas_threads() == several_blas_threads


def test_overlapping_writers_restore_the_setting_when_the_last_leaves(several_blas_threads):
    seen = {}

    async def writer(name, entered, leave):
        with one_blas_thread():
            entered.set()
            await leave.wait()
        seen[f"after {name} left"] = blas_threads()

    async def scenario():
        events = {n: (asyncio.Event(), asyncio.Event()) for n in ("first", "second")}
        tasks = [asyncio.create_task(writer(n, *events[n])) for n in events]
        for entered, _ in events.values():
            await entered.wait()
        events["first"][1].set()
        await tasks[0]
        events["second"][1].set()
        await tasks[1]

    asyncio.run(scenario())
    assert seen == {"after first left": {1}, "after second left": several_blas_threads}


def test_an_inserts_write_runs_on_one_blas_thread(several_blas_threads, tmp_path, monkeypatch):
    merging, checked = threading.Event(), threading.Event()
    original = merger_module.GraphMerger.acall

    async def watched(self, results, graph):
        merging.set()
        checked.wait(10)
        return await original(self, results, graph)

    monkeypatch.setattr(merger_module.GraphMerger, "acall", watched)
    rag = fake_graph_rag(tmp_path)

    async def scenario():
        insert = asyncio.create_task(rag.ainsert(["Alice Smith met Bob Jones in Paris."], ids=["doc-1"]))
        while not merging.is_set() and not insert.done():
            await asyncio.sleep(0.01)
        during = blas_threads()
        checked.set()
        result = await insert
        return during, result

    during, result = asyncio.run(scenario())
    assert result.processed == ["doc-1"]
    assert during == {1}
    assert blas_threads() == several_blas_threads
