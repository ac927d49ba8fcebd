"""Entity names that differ only in letter case become one node (issue 26, defect 11:
"AcmeCorp" / "Acmecorp" were two): the first spelling stays, later ones join it, in one
insert or across inserts, and a delete rebuilds the joined entity from what remains."""

from graph_fakes import fake_graph_rag


def make_rag(tmp_path):
    return fake_graph_rag(tmp_path, embedding_dim=64, max_gleaning=0)


def test_case_variants_across_inserts_join_the_first_spelling(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["AcmeCorp hired Bob Stone in Paris."], ids=["a"])
    rag.insert(["Acmecorp fired Bob Stone in Lyon."], ids=["b"])
    assert rag.graph.has_node("AcmeCorp") and not rag.graph.has_node("Acmecorp")
    sources = rag.graph.get_node("AcmeCorp")["source_id"]
    assert len(sources.split("<SEP>")) == 2  # cited by the chunks of both documents
    assert rag.index.verify() == []
    rag.delete_by_doc_id("a")
    assert rag.graph.has_node("AcmeCorp")  # rebuilt from document b
    assert rag.index.verify() == []


def test_case_variants_in_one_insert_become_one_node(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["AcmeCorp hired Bob Stone. Later ACMECORP and Acmecorp merged offices."], ids=["a"])
    names = [n for n in rag.graph.get_all_labels() if n.lower() == "acmecorp"]
    assert names == ["AcmeCorp"]
    assert rag.index.verify() == []


def test_case_variants_inside_a_write_transaction_see_stored_and_pending_nodes(tmp_path):
    """The writer's check reads whole rows and keeps them for the merge that follows: the names
    it found must read as stored, and the transaction's own later writes must win over them."""
    from lightrag.components.storage.sql_db import SQLiteDatabase
    from lightrag.components.storage.sql_graph import SQLGraphStorage

    db = SQLiteDatabase(tmp_path / "graph.sqlite3")
    graph = SQLGraphStorage(db)
    graph.upsert_node("AcmeCorp", {"entity_type": "org", "description": "first", "source_id": "c1"})
    with db.transaction():
        graph.upsert_node("Bob Stone", {"entity_type": "person", "description": "b", "source_id": "c2"})
        found = graph.find_case_variants(["Acmecorp", "BOB STONE", "AcmeCorp", "Nobody"])
        assert found == {"Acmecorp": "AcmeCorp", "BOB STONE": "Bob Stone"}
        assert graph.get_node("AcmeCorp")["description"] == "first"
        assert graph.get_node("Nobody") is None
        graph.upsert_node("AcmeCorp", {"entity_type": "org", "description": "second", "source_id": "c1"})
        assert graph.get_node("AcmeCorp")["description"] == "second"
    reopened = SQLGraphStorage(SQLiteDatabase(tmp_path / "graph.sqlite3"))
    assert reopened.get_node("AcmeCorp")["description"] == "second"
    assert reopened.find_case_variants(["ACMECORP", "bob stone"]) == {"ACMECORP": "AcmeCorp",
                                                                     "bob stone": "Bob Stone"}
