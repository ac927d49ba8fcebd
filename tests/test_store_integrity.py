"""Store integrity defects of issue 26: relation vector ids that collided (7), leftovers of
deleted documents (6), a killed delete's queued vectors (10)."""

import numpy as np
from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag import (
    Chunker,
)
from lightrag.components.graph_rag.index.vectors import RELATION_IDS_META
from lightrag.components.graph_rag.merger import legacy_relation_vector_id, relation_vector_id


def make_rag(tmp_path, **kwargs):
    return fake_graph_rag(tmp_path, embedding_dim=64, max_gleaning=0, **kwargs)


def test_relation_vector_ids_do_not_collide():
    assert relation_vector_id("A", "BC") != relation_vector_id("AB", "C")
    assert legacy_relation_vector_id("A", "BC") == legacy_relation_vector_id("AB", "C")
    assert relation_vector_id("X", "Y") == relation_vector_id("Y", "X")


def test_colliding_relations_each_get_their_own_vector(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Ab met CdEf. AbCd met Ef."], ids=["d1"])
    relations = {(h["src_id"], h["tgt_id"]) for h in
                 (rag.relations_vdb.get_by_id(i) for i in rag.relations_vdb._ids)}
    assert relations == {("Ab", "CdEf"), ("AbCd", "Ef")}
    assert rag.index.verify() == []


def _legacy_store(tmp_path):
    """A store as the old code wrote it: relation vectors under the ambiguous ids."""
    rag = make_rag(tmp_path)
    rag.insert(["Ab met CdEf. AbCd met Ef. Saturn has Titan."], ids=["d1"])
    store = rag.index.relations_vdb  # written directly: the index's own code of old
    with rag.index.db.transaction():
        for vid in list(store._ids):
            record = store.get_by_id(vid)
            vector = store.get_vectors_by_ids([vid])[vid]
            store.delete([vid])
            old = legacy_relation_vector_id(record["src_id"], record["tgt_id"])
            if store.get_by_id(old) is None:  # the collision: one vector survives
                store.upsert({old: {k: v for k, v in record.items() if k != "id"}},
                             vectors=vector[None, :])
        rag.index.db.execute("DELETE FROM meta WHERE name = ?", (RELATION_IDS_META,))
    rag.index.close()
    return len(rag.graph.all_edge_pairs())


def test_old_store_checks_clean_then_is_rekeyed_on_first_write(tmp_path):
    edges = _legacy_store(tmp_path)
    rag = make_rag(tmp_path)
    assert rag.index.verify() == []  # no false damage before the upgrade
    assert len(rag.relations_vdb) == edges - 1
    rag.insert(["Venus is hot."], ids=["d2"])  # the first write re-keys and queues the lost one
    assert rag.index.verify() == []
    wanted = {relation_vector_id(s, t) for s, t in rag.graph.all_edge_pairs()}
    assert set(rag.relations_vdb._ids) == wanted
    for vid in wanted:
        record = rag.relations_vdb.get_by_id(vid)
        assert relation_vector_id(record["src_id"], record["tgt_id"]) == vid
    rag.index.close()
    again = make_rag(tmp_path)
    assert again.index.verify() == []
    assert np.isfinite(again.relations_vdb.rows()[1]).all()


def _all_text(db_path):
    """Every string the store's tables hold, but the change log (keys that changed, kept a while
    so other processes learn of the deletion)."""
    import sqlite3

    conn = sqlite3.connect(str(db_path))
    try:
        found = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            if table == "changes":
                continue
            for row in conn.execute(f"SELECT * FROM {table}"):
                found += [v for v in row if isinstance(v, str)]
        return found
    finally:
        conn.close()


SHARED = "Saturn has rings."
DOC_A = "Probe7 flew past Saturn. Zorblax Prime photographed Zorblax Moon. " + SHARED
DOC_B = "Cassini orbited Saturn. " + SHARED


def test_delete_leaves_none_of_the_documents_content(tmp_path):
    rag = make_rag(tmp_path, synonym_threshold=0.3)
    rag.chunker = Chunker(chunk_token_size=6, chunk_overlap_token_size=0)
    rag.insert([DOC_A, DOC_B], ids=["a", "b"])
    assert rag.index.stores.synonyms.pairs() and len(rag.index.stores.extractions.results) >= 3
    rag.delete_by_doc_id("a")
    assert rag.index.verify() == []
    texts = _all_text(tmp_path / "lightrag.sqlite3")
    assert not [t for t in texts if "Zorblax" in t or "Probe7" in t]
    names = set(rag.index.entity_names._ids)
    assert "Zorblax Prime" not in names and names <= {n["id"] for n in rag.graph.get_all_nodes()}
    # the chunk text both documents hold keeps its cached extraction (b still uses it)
    assert any(SHARED in t for t in texts if t.startswith("{\"chunk_id\""))
    rag.delete_by_doc_id("b")
    assert rag.index.verify() == []
    assert len(rag.index.stores.extractions.results) == 0 and len(rag.index.entity_names) == 0
    assert rag.index.stores.synonyms.pairs() == []


def test_verify_flags_leftovers_of_deleted_documents(tmp_path):
    rag = make_rag(tmp_path, synonym_threshold=0.3)
    rag.insert([DOC_A], ids=["a"])
    leftovers = {"extractions": dict(rag.index.stores.extractions.results.items()),
                 "synonyms": {(a, b): s for a, b, s in rag.index.stores.synonyms.pairs()}}
    ids, matrix = rag.index.entity_names.rows()
    names = {i: matrix[r].copy() for r, i in enumerate(ids)}
    rag.delete_by_doc_id("a")
    with rag.index.db.transaction():  # what the old delete left behind
        rag.index.stores.extractions.results.replace(leftovers["extractions"])
        rag.index.stores.synonyms.add(leftovers["synonyms"])
        rag.index.entity_names.upsert({n: {"content": n} for n in names},
                                      vectors=np.stack(list(names.values())))
        rag.index.stores.pending_vectors.replace({"e\x1fZorblax Prime": {}})
    problems = rag.index.verify()
    for what in ("cached extraction", "entity name vector 'Zorblax Prime'", "synonym pair",
                 "queued vector ['Zorblax Prime']"):
        assert any(p.startswith(what) for p in problems), (what, problems)


def test_a_full_disk_is_reported_as_such_and_nothing_is_half_written(tmp_path):
    import pytest

    from lightrag.components.storage.sql_db import StoreFullError

    rag = make_rag(tmp_path)
    rag.insert(["Saturn has Titan."], ids=["small"])
    pages = rag.index.db.query("PRAGMA page_count")[0][0]
    rag.index.db._conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    big = " ".join(f"Probe{i} flew past Planet{i}." for i in range(3000))
    with pytest.raises(StoreFullError, match="the disk is full"):
        rag.insert([big], ids=["big"])
    rag.index.db._conn.execute("PRAGMA max_page_count = 1073741823")
    assert rag.index.verify() == []
    assert rag.doc_status.get_by_id("small")["status"] == "processed"
