"""Readers see committed state only, and never wait for the writer (issue 26, defect 11; issue
22: the store is read by key, not loaded). A write transaction held open in one thread: the
graph, the vectors, the explorer and a whole query in another thread see none of it, without
blocking; after the commit they see all of it. Opening a store reads nothing of it."""

import threading
import time

import numpy as np
from graph_fakes import fake_graph_rag

DOC = "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn."


def make_rag(tmp_path):
    return fake_graph_rag(tmp_path, embedding_dim=64, max_gleaning=0)


def hold_write(rag, started: threading.Event, release: threading.Event) -> threading.Thread:
    """A writer that adds an entity, a relation and a vector, then waits before committing."""

    def run():
        with rag.index.writing_sync():
            rag.index.graph.upsert_node("Ghost Entity", {"entity_type": "concept",
                                                         "description": "uncommitted"})
            rag.index.graph.upsert_edge("Ghost Entity", "Voyager 1", {"weight": 1.0})
            rag.index.entities_vdb.upsert({"ghost": {"content": "Ghost Entity",
                                                     "entity_name": "Ghost Entity"}},
                                          vectors=np.ones((1, 64), dtype=np.float32))
            started.set()
            release.wait(10)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(10)
    return thread


def test_readers_see_committed_state_only_and_do_not_wait(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert([DOC], ids=["d1"])
    started, release = threading.Event(), threading.Event()
    writer = hold_write(rag, started, release)
    try:
        began = time.perf_counter()
        assert not rag.graph.has_node("Ghost Entity")
        assert rag.graph.get_node_edges("Voyager 1") and all(
            "Ghost Entity" not in pair for pair in rag.graph.get_node_edges("Voyager 1"))
        assert rag.get_knowledge_graph("Ghost Entity").nodes == []
        assert rag.entities_vdb.get_by_id("ghost") is None
        hits = rag.entities_vdb.query(np.ones(64, dtype=np.float32), top_k=50)
        assert all(h["id"] != "ghost" for h in hits)
        result = rag.query("Who is Ghost Entity?", mode="local", only_need_context=True)
        assert "uncommitted" not in result.content
        assert time.perf_counter() - began < 5  # no reader waited for the writer
    finally:
        release.set()
        writer.join(10)
    assert rag.graph.has_node("Ghost Entity")
    assert ("Voyager 1", "Ghost Entity") in rag.graph.get_node_edges("Voyager 1")
    assert rag.entities_vdb.get_by_id("ghost")["entity_name"] == "Ghost Entity"


def test_a_rolled_back_transaction_leaves_nothing(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert([DOC], ids=["d1"])
    try:
        with rag.index.writing_sync():
            rag.index.graph.upsert_node("Ghost Entity", {"entity_type": "concept"})
            rag.index.entities_vdb.upsert({"ghost": {"content": "Ghost"}},
                                          vectors=np.ones((1, 64), dtype=np.float32))
            assert rag.index.graph.has_node("Ghost Entity")  # the writer sees its own writes
            raise RuntimeError("crash before commit")
    except RuntimeError:
        pass
    assert not rag.graph.has_node("Ghost Entity")
    assert rag.entities_vdb.get_by_id("ghost") is None
    assert rag.index.verify() == []


def test_opening_a_store_reads_nothing_of_it(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert([DOC, "Cassini reached Saturn in 2004. Cassini found plumes on Enceladus."],
               ids=["d1", "d2"])
    rag.close()
    reopened = make_rag(tmp_path)
    graph, vectors = reopened.index.graph, reopened.index.chunks_vdb
    assert not hasattr(graph, "_graph")  # no in-memory copy of the graph
    assert vectors._map is None  # the vector file is mapped on the first search, not read
    assert reopened.graph.has_node("Cassini")
    assert reopened.query("Cassini Saturn", mode="naive", only_need_context=True).raw_data["chunks"]


def test_a_workspace_differing_only_in_case_from_a_stored_one_is_refused(tmp_path):
    """``Acme`` beside ``acme`` would be one folder on a case-insensitive file system (red team
    5): the second name is refused on every file system, before anything is created."""
    import pytest

    from lightrag.components.storage.databases import WorkspaceCaseConflict, open_database

    open_database("sqlite", str(tmp_path), "Acme").close()
    with pytest.raises(WorkspaceCaseConflict, match="'acme' differs only in case from 'Acme'"):
        open_database("sqlite", str(tmp_path), "acme")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Acme"]
    open_database("sqlite", str(tmp_path), "Acme").close()
