"""Which chunks cite an entity: all of them kept as rows, a window of them in ``source_id``.

A hub's merges must not rewrite its whole citation list, and nothing may be lost when the
property holds only a window of the ids (all of them up to the cap, then a hub's smallest ids):
re-merges stay idempotent, deletes rebuild instead of dropping an entity other chunks still
cite, edits and renames keep every citation.
"""

from __future__ import annotations

import json

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.storage import node_sources
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage

SEP = "<SEP>"


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(node_sources, "SOURCE_ID_CAP", 5)


def test_the_property_keeps_a_window_of_the_ids_and_the_rows_keep_all(tmp_path, small_cap):
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))
    graph.upsert_node("Hub", {"entity_type": "person", "source_id": SEP.join(["c09", "c03", "c07"])})
    assert graph.add_node_sources("Hub", ["c05", "c09"]) == ["c05"]
    assert graph.get_node("Hub")["source_id"].split(SEP) == ["c09", "c03", "c07", "c05"]  # all, in order
    for i in (11, 1, 8, 4, 10, 0, 2, 6):
        assert graph.add_node_sources("Hub", [f"c{i:02d}", "c03"]) == [f"c{i:02d}"]
    node = graph.get_node("Hub")
    assert node["source_id"].split(SEP) == ["c00", "c01", "c02", "c03", "c04"]  # a hub: its smallest
    assert node["source_count"] == 12
    assert sorted(graph.node_source_ids(["Hub"])["Hub"]) == [f"c{i:02d}" for i in range(12)]
    assert graph.node_cites("Hub", ["c00", "c99"]) == {"c00"}
    reopened = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))
    assert len(reopened.node_source_ids(["Hub"])["Hub"]) == 12


def test_a_hubs_window_is_the_same_whatever_order_its_citations_came_in(tmp_path, small_cap):
    ids = [f"chunk-{i:03d}" for i in range(40)]
    windows = []
    for n, order in enumerate((ids, ids[::-1], ids[1::2] + ids[::2])):
        graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / f"g{n}.sqlite")))
        graph.upsert_node("Hub", {"entity_type": "person", "source_id": ""})
        for start in range(0, len(order), 3):
            graph.add_node_sources("Hub", order[start:start + 3])
        windows.append(graph.get_node("Hub")["source_id"])
    assert windows == [SEP.join(ids[:5])] * 3


def test_a_citation_outside_a_hubs_window_changes_only_its_count_in_place(tmp_path, small_cap):
    """The hub's record keeps its size: SQLite rewrites one page of it, not all of them."""
    db = SQLiteDatabase(str(tmp_path / "g.sqlite"))
    graph = SQLGraphStorage(db)
    graph.upsert_node("Hub", {"entity_type": "person", "description": "x" * 9000,
                              "source_id": SEP.join(f"c{i:03d}" for i in range(100, 120))})
    before = graph.get_node("Hub")
    _empty_log(db)
    graph.add_node_sources("Hub", ["c500"])  # sorts after the window
    after = graph.get_node("Hub")
    assert after["source_id"] == before["source_id"] and after["source_count"] == 21
    node_pages = {p for (p,) in db.query("SELECT pageno FROM dbstat WHERE name = 'nodes'")}
    assert len(_pages_in_log(db) & node_pages) == 1
    graph.add_node_sources("Hub", ["c050"])  # sorts first: enters, the last id leaves
    assert graph.get_node("Hub")["source_id"].split(SEP) == ["c050", "c100", "c101", "c102", "c103"]


def _empty_log(db):
    """Checkpoint the whole log and start it over (retried while the background checkpointer
    holds it)."""
    import time

    for _ in range(200):
        busy, frames, _copied = db._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy and frames == 0:
            return
        time.sleep(0.01)
    raise AssertionError("the log could not be emptied")


def _pages_in_log(db):
    import struct

    data = (db.path.parent / (db.path.name + "-wal")).read_bytes()
    size = struct.unpack(">I", data[8:12])[0]
    return {struct.unpack(">I", data[at:at + 4])[0] for at in range(32, len(data) - size, 24 + size)}


def test_deleting_citations_of_a_hubs_window_refills_it_from_the_rows(tmp_path, small_cap):
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))
    graph.upsert_node("Hub", {"entity_type": "person", "source_id": ""})
    graph.add_node_sources("Hub", [f"c{i:02d}" for i in range(9)])
    assert graph.remove_node_sources("Hub", ["c01", "c03", "c99"]) == ["c01", "c03"]
    node = graph.get_node("Hub")
    assert node["source_id"].split(SEP) == ["c00", "c02", "c04", "c05", "c06"]
    assert node["source_count"] == 7
    graph.remove_node_sources("Hub", ["c00", "c02", "c04"])
    assert graph.get_node("Hub")["source_id"].split(SEP) == ["c05", "c06", "c07", "c08"]  # all four left


def test_a_store_written_before_the_rows_gets_them_when_opened(tmp_path):
    db = SQLiteDatabase(str(tmp_path / "old.sqlite"))
    SQLGraphStorage(db)
    with db.transaction():  # as an older version wrote it: the joined list only
        db.execute("DELETE FROM node_chunks")
        db.execute("DELETE FROM meta WHERE name LIKE 'node_chunks:%'")
        db.execute("INSERT INTO nodes (ns, id, data) VALUES (?, ?, ?)",
                   ("chunk_entity_relation", "Old", json.dumps({"source_id": "a<SEP>b<SEP>c"})))
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "old.sqlite")))
    assert graph.node_cites("Old", ["a", "c", "z"]) == {"a", "c"}
    assert graph.add_node_sources("Old", ["b", "d"]) == ["d"]


def _insert_hub_documents(rag, n):
    docs = [f"Zorblat met Person{i} in Town{i}. Person{i} wrote a letter." for i in range(n)]
    result = rag.insert(docs, ids=[f"doc-{i}" for i in range(n)])
    assert not result.failed


def test_merging_into_a_hub_keeps_every_citation_and_stays_bounded(tmp_path, small_cap):
    rag = fake_graph_rag(str(tmp_path))
    _insert_hub_documents(rag, 12)
    node = rag.graph.get_node("Zorblat")
    assert node["source_count"] == 12
    assert len(node["source_id"].split(SEP)) == 5
    assert len(rag.graph.node_source_ids(["Zorblat"])["Zorblat"]) == 12
    # the same documents again change nothing (idempotent per chunk, old chunks included)
    again = rag.insert([f"Zorblat met Person{i} in Town{i}. Person{i} wrote a letter." for i in range(12)],
                       ids=[f"doc-{i}" for i in range(12)])
    assert not again.failed
    assert rag.graph.get_node("Zorblat")["source_count"] == 12


def test_deleting_an_old_document_rebuilds_the_hub_instead_of_dropping_it(tmp_path, small_cap):
    rag = fake_graph_rag(str(tmp_path))
    _insert_hub_documents(rag, 12)
    rag.delete_by_doc_id("doc-0")  # its chunk is no longer among the hub's recent ids
    assert rag.graph.has_node("Zorblat")
    assert not rag.graph.has_node("Person0")
    cited = rag.graph.node_source_ids(["Zorblat"])["Zorblat"]
    assert len(cited) == 11
    assert rag.graph.get_node("Zorblat")["source_count"] == 11


def test_editing_and_renaming_a_hub_keep_all_its_citations(tmp_path, small_cap):
    rag = fake_graph_rag(str(tmp_path))
    _insert_hub_documents(rag, 12)
    before = rag.graph.get_node("Zorblat")
    rag.edit_entity("Zorblat", {"description": "A traveller."})
    assert len(rag.graph.node_source_ids(["Zorblat"])["Zorblat"]) == 12
    edited = rag.graph.get_node("Zorblat")
    assert edited["description"] == "A traveller." and edited["source_count"] == before["source_count"]
    assert edited["source_id"] == before["source_id"] and rag.index.verify() == []
    rag.edit_entity("Zorblat", {}, rename_to="Zorblat the Great")
    assert len(rag.graph.node_source_ids(["Zorblat the Great"])["Zorblat the Great"]) == 12
    assert rag.graph.node_source_ids(["Zorblat"])["Zorblat"] == []


def test_opening_an_old_store_cuts_its_hubs_to_their_windows(tmp_path, small_cap):
    db = SQLiteDatabase(str(tmp_path / "old.sqlite"))
    SQLGraphStorage(db)
    ids = [f"c{i}" for i in range(8, -1, -1)]
    with db.transaction():
        db.execute("DELETE FROM meta WHERE name LIKE 'node_chunks:%'")
        db.execute("INSERT INTO nodes (ns, id, data) VALUES (?, ?, ?)",
                   ("chunk_entity_relation", "Hub",
                    json.dumps({"entity_type": "x", "source_id": SEP.join(ids)})))
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "old.sqlite")))
    node = graph.get_node("Hub")
    assert node["source_id"].split(SEP) == sorted(ids)[:5] and node["source_count"] == 9
    assert node["entity_type"] == "x"
    assert sorted(graph.node_source_ids(["Hub"])["Hub"]) == sorted(ids)


def test_what_a_writer_read_in_one_transaction_is_not_served_in_the_next(tmp_path):
    path = str(tmp_path / "g.sqlite")
    writer, other = SQLGraphStorage(SQLiteDatabase(path)), SQLGraphStorage(SQLiteDatabase(path))
    writer.upsert_node("Hub", {"entity_type": "person", "source_id": "c1"})
    with writer.db.transaction():
        assert writer.get_node("Hub")["entity_type"] == "person"
        assert writer.node_cites("Hub", ["c1", "c2"]) == {"c1"}
    other.upsert_node("Hub", {"entity_type": "organization"})  # another process commits
    other.add_node_sources("Hub", ["c2"])
    with writer.db.transaction():
        assert writer.get_node("Hub")["entity_type"] == "organization"
        assert writer.node_cites("Hub", ["c1", "c2"]) == {"c1", "c2"}


def test_a_rolled_back_merge_leaves_no_trace_in_later_reads(tmp_path):
    graph = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))
    graph.upsert_node("Hub", {"entity_type": "person", "source_id": "c1"})
    with pytest.raises(RuntimeError):
        with graph.db.transaction():
            assert graph.add_node_sources("Hub", ["c2", "c3"]) == ["c2", "c3"]
            graph.upsert_node("Hub", {"entity_type": "place"})
            raise RuntimeError("crash before the commit")
    with graph.db.transaction():
        assert graph.node_cites("Hub", ["c2", "c3"]) == set()
        assert graph.get_node("Hub")["entity_type"] == "person"
        assert graph.add_node_sources("Hub", ["c2"]) == ["c2"]
    assert graph.get_node("Hub")["source_count"] == 2


@pytest.mark.parametrize("doc", ["doc-0", "doc-7", "doc-11"])
def test_a_hub_rebuilt_from_its_first_citations_matches_a_full_rebuild(tmp_path, monkeypatch, doc):
    from lightrag.components.graph_rag.index import maintenance

    rebuilt = {}
    for label, limit in (("full", 10_000), ("bounded", 4)):
        monkeypatch.setattr(maintenance, "REBUILD_CITATIONS", limit)
        rag = fake_graph_rag(str(tmp_path / label))
        # what a rebuild keeps of the chunks read first: 4 fragments and 4 file paths (the
        # defaults, 24 and 75, are far below the 512 citations a hub is rebuilt from)
        rag.index.merger.max_description_fragments = rag.index.merger.max_file_paths = 4
        _insert_hub_documents(rag, 12)
        rag.delete_by_doc_id(doc)
        node = rag.graph.get_node("Zorblat")
        rows = rag.graph.node_source_ids(["Zorblat"])["Zorblat"]
        assert len(rows) == 11 and node["source_count"] == 11
        assert f"{doc}-" not in "".join(rows)
        assert rag.index.verify() == []
        rebuilt[label] = {k: node[k] for k in ("entity_type", "description", "file_path")}
    assert rebuilt["bounded"] == rebuilt["full"]


def test_a_hub_cited_only_by_the_deleted_document_goes_with_it(tmp_path, monkeypatch):
    from lightrag.components.graph_rag.index import maintenance

    monkeypatch.setattr(maintenance, "REBUILD_CITATIONS", 1)
    rag = fake_graph_rag(str(tmp_path), chunk_tokens=12, chunk_overlap=0)
    text = " ".join(f"Zorblat met Person{i} in Town{i}." for i in range(6))
    rag.insert([text], ids=["only"])
    assert rag.graph.get_node("Zorblat")["source_count"] > 1
    rag.delete_by_doc_id("only")
    assert not rag.graph.has_node("Zorblat")
    assert rag.graph.node_source_ids(["Zorblat"])["Zorblat"] == []
    assert rag.index.verify() == []


def test_the_citation_count_is_bounded_and_namespaces_are_counted_apart(tmp_path):
    """``count_citations(at_most)`` (the size check of ppr/mix) never exceeds ``at_most``, is
    exact for a store that never deleted, and a namespace sharing the table with another counts
    only its own rows."""
    db = SQLiteDatabase(str(tmp_path / "g.sqlite"))
    graph = SQLGraphStorage(db)
    with db.transaction():
        graph.upsert_node("Hub", {"entity_type": "person", "source_id": ""})
        graph.add_node_sources("Hub", [f"c{i}" for i in range(30)])
    assert graph.count_citations(100) == 30
    assert graph.count_citations(10) == 10
    other = SQLGraphStorage(db, namespace="other")
    with db.transaction():
        other.upsert_node("Solo", {"entity_type": "person", "source_id": ""})
        other.add_node_sources("Solo", ["d1", "d2"])
    assert other.count_citations(100) == 2
    assert graph.count_citations(100) == 30


def test_citations_read_at_once_answer_as_lookups_do_within_the_transaction(tmp_path):
    db = SQLiteDatabase(str(tmp_path / "g.sqlite"))
    graph = SQLGraphStorage(db)
    graph.upsert_node("Hub", {"source_id": "c1<SEP>c2"})
    graph.upsert_node("Moon", {"source_id": "c2"})
    with db.transaction():
        graph.prefetch_node_sources(["c1", "c2", "c3"])
        assert graph.node_cites("Hub", ["c1", "c2", "c3"]) == {"c1", "c2"}
        assert graph.node_cites("Moon", ["c1", "c2", "c3"]) == {"c2"}
        assert graph.add_node_sources("Moon", ["c3", "c2"]) == ["c3"]
        assert graph.remove_node_sources("Hub", ["c1"]) == ["c1"]
        assert graph.node_cites("Moon", ["c3"]) == {"c3"} and graph.node_cites("Hub", ["c1"]) == set()
        assert graph.add_node_sources("Hub", ["c1"]) == ["c1"]  # cited again
    other = SQLGraphStorage(SQLiteDatabase(str(tmp_path / "g.sqlite")))  # another writer
    assert other.add_node_sources("Moon", ["c1"]) == ["c1"]
    with db.transaction():  # what the first transaction read is not served any more
        assert graph.node_cites("Moon", ["c1", "c4"]) == {"c1"}
    assert graph.node_cites("Hub", ["c1", "c2", "c3"]) == {"c1", "c2"}
    assert sorted(graph.node_source_ids(["Moon"])["Moon"]) == ["c1", "c2", "c3"]


def test_citations_added_in_a_transaction_are_read_in_it_and_only_committed_with_it(tmp_path):
    import threading

    db = SQLiteDatabase(str(tmp_path / "g.sqlite"))
    graph = SQLGraphStorage(db)
    graph.upsert_node("Hub", {"source_id": "c1"})
    seen_elsewhere = {}
    with pytest.raises(RuntimeError):
        with db.transaction():
            graph.add_node_sources("Hub", ["c2", "c3"])
            assert sorted(graph.node_source_ids(["Hub"])["Hub"]) == ["c1", "c2", "c3"]
            assert graph.chunk_entities(["c3"]) == {"c3": ["Hub"]}
            reader = threading.Thread(target=lambda: seen_elsewhere.update(
                graph.node_source_ids(["Hub"])))
            reader.start()
            reader.join()
            raise RuntimeError("rolled back")
    assert seen_elsewhere == {"Hub": ["c1"]}  # another thread: committed rows only
    assert graph.node_source_ids(["Hub"])["Hub"] == ["c1"]
    with db.transaction():
        graph.add_node_sources("Hub", ["c4"])
        graph.remove_node_sources("Hub", ["c4"])  # removed before its row was written
        graph.add_node_sources("Hub", ["c5"])
    assert graph.node_source_ids(["Hub"])["Hub"] == ["c1", "c5"]
    assert graph.get_node("Hub")["source_count"] == 2


def test_a_transactions_citation_rows_are_written_once_unless_a_read_needs_them(tmp_path, monkeypatch):
    db = SQLiteDatabase(str(tmp_path / "g.sqlite"))
    graph = SQLGraphStorage(db)
    graph.upsert_node("Old", {"source_id": "c0"})
    writes: list = []  # the rows of each statement writing citations
    executemany = db.executemany

    def counted(sql, rows):
        rows = list(rows)
        if "INTO node_chunks" in sql:
            writes.append(rows)
        executemany(sql, rows)

    monkeypatch.setattr(db, "executemany", counted)
    with db.transaction():
        for chunk in ["c1", "c2", "c3"]:
            graph.prefetch_node_sources([chunk])  # each document's merge reads its chunks
            for node in ("A", "B", "Old"):
                assert graph.node_cites(node, [chunk]) == set()
                graph.add_node_sources(node, [chunk])
        assert graph.node_cites("A", ["c2", "c0"]) == {"c2"}
        written_before_a_read_needs_them = len(writes)
        assert graph.chunk_entities(["c3"]) == {"c3": ["A", "B", "Old"]}  # the rows are read
        assert len(writes) == 1 and len(writes[0]) == 9
    assert written_before_a_read_needs_them == 0
    assert graph.node_source_ids(["Old", "A"]) == {"Old": ["c0", "c1", "c2", "c3"], "A": ["c1", "c2", "c3"]}
