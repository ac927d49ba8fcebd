"""The documents of an insert batch are recorded several per transaction: the same store as one
transaction per document, fewer commits, and a document whose recording fails fails alone."""

from __future__ import annotations

from graph_fakes import fake_graph_rag, with_pipeline

DOCS = [f"Person{i} met Person{i + 1} in Town{i % 3}. Person{i} wrote to Acme{i % 2}." for i in range(12)]
IDS = [f"doc-{i}" for i in range(12)]


def _fields(item):
    return sorted((k, v) for k, v in item.items() if k not in ("created_at", "updated_at"))


def _store(rag):
    nodes = sorted((n["id"], _fields(n)) for n in rag.graph.get_all_nodes())
    edges = sorted((e["source"], e["target"], _fields(e)) for e in rag.graph.get_all_edges())
    return nodes, edges, rag.status()["chunks"], rag.status()["entities"]


def _commits(rag):
    return int(rag.index.db.commit_token())


def test_a_batch_gives_the_store_of_one_commit_per_document_in_fewer_commits(tmp_path):
    stores, commits = {}, {}
    for name, seconds in (("together", 60.0), ("apart", 0.0), ("out_of_time", 1e-9)):
        rag = with_pipeline(fake_graph_rag(tmp_path / name), commit_seconds=seconds)
        before = _commits(rag)
        result = rag.insert(DOCS, ids=IDS)
        assert sorted(result.processed) == sorted(IDS) and not result.failed
        commits[name] = _commits(rag) - before
        stores[name] = _store(rag)
        assert all(rag.index.doc_status.get_by_id(d)["status"] == "processed" for d in IDS)
    assert stores["together"] == stores["apart"] == stores["out_of_time"]
    assert commits["together"] <= commits["apart"] - len(DOCS) + 1
    assert commits["out_of_time"] == commits["apart"]  # the time bound ends each group at once


def test_a_document_that_fails_to_record_fails_alone(tmp_path):
    rag = fake_graph_rag(tmp_path / "rag")
    docs = [*DOCS[:3], "Poisonia met Person1 in Town1.", *DOCS[3:6]]
    ids = [*IDS[:3], "bad", *IDS[3:6]]
    items = rag.index.stores.doc_graph_items
    add = items.add

    def failing_add(doc_id, *args, **kwargs):
        if doc_id == "bad":  # after its merge wrote the graph (in the open transaction)
            raise OSError("the disk went away")
        return add(doc_id, *args, **kwargs)

    items.add = failing_add
    result = rag.insert(docs, ids=ids)
    assert list(result.failed) == ["bad"] and sorted(result.processed) == sorted(i for i in ids if i != "bad")
    assert "the disk went away" in rag.index.doc_status.get_by_id("bad")["error_msg"]
    assert not rag.graph.has_node("Poisonia")  # its merge was rolled back
    assert rag.graph.has_node("Person6") and rag.graph.has_node("Acme1")  # the others kept
    items.add = add
    again = rag.insert(docs, ids=ids)
    assert "bad" in again.processed and rag.graph.has_node("Poisonia")
    assert rag.index.verify() == []
