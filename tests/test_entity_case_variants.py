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
