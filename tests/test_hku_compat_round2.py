"""Round 2 of running HKU LightRAG programs unchanged on ``lightrag.LightRAG``: HKU's return
shapes (deletion results, edit records, ``aquery_llm``'s dict, an awaitable knowledge graph),
HKU's export files, status names and ``created_at`` type."""

from __future__ import annotations

import asyncio

import pytest
from test_hku_compat import DOCS, make


def loaded(tmp_path):
    rag, llm = make(tmp_path)
    rag.insert(list(DOCS.values()), ids=list(DOCS), file_paths=["one.txt", "two.txt"])
    return rag, llm


def test_deletes_return_hku_deletion_results(tmp_path):
    rag, _ = loaded(tmp_path)
    done = rag.delete_by_doc_id("d2")
    assert (done.status, done.status_code, done.doc_id, done.file_path) == ("success", 200, "d2", "two.txt")
    assert "Jonah Vell" in done.entities_deleted  # this package's record reads through
    missing = asyncio.run(rag.adelete_by_doc_id("no-such-doc"))  # was a KeyError
    assert (missing.status, missing.status_code) == ("not_found", 404)
    assert rag.delete_by_entity("Mira Oduya").status == "success"
    assert asyncio.run(rag.adelete_by_entity("Nobody Here")).status == "not_found"
    assert rag.delete_by_relation("Tallow Ferries", "Nobody Here").status_code == 404


def test_graph_edits_return_hku_records_and_missing_names_are_value_errors(tmp_path):
    rag, _ = loaded(tmp_path)
    created = asyncio.run(rag.acreate_entity("Grey Heron", {"description": "The flagship.",
                                                             "source_id": "manual"}))  # any label
    assert created["graph_data"]["description"] == "The flagship." and created["description"]
    edited = rag.edit_entity("Grey Heron", {"entity_name": "Grey Heron II"})
    assert edited["entity_name"] == "Grey Heron II" and edited["operation_summary"]["renamed"]
    relation = rag.create_relation("Grey Heron II", "Tallow Ferries", {"description": "flagship of"})
    assert (relation["src_entity"], relation["graph_data"]["description"]) == ("Grey Heron II", "flagship of")
    edited_relation = rag.edit_relation("Grey Heron II", "Tallow Ferries", {"weight": 3.0})
    assert edited_relation["graph_data"]["weight"] == 3.0
    merged = rag.merge_entities(["Grey Heron II"], "Tallow Ferries")
    assert merged["entity_name"] == "Tallow Ferries" and "graph_data" in merged
    with pytest.raises(ValueError, match="Nobody"):  # HKU raises ValueError; KeyError too
        rag.edit_entity("Nobody", {"description": "x"})
    with pytest.raises(ValueError):
        rag.create_relation("Nobody", "Tallow Ferries", {"description": "x"})


def test_get_knowledge_graph_awaits_and_has_hku_nodes(tmp_path):
    rag, _ = loaded(tmp_path)

    async def read():
        return await rag.get_knowledge_graph("Tallow Ferries", max_depth=1, max_nodes=10)

    kg = asyncio.run(read())  # HKU's method is async
    node, edge = kg.nodes[0], kg.edges[0]
    assert node.labels == [node.id] and "description" in node.properties
    assert edge.type == "DIRECTED" and {edge.source, edge.target} and kg.is_truncated is False
    assert set(kg.model_dump()) == {"nodes", "edges", "is_truncated"}
    assert rag.get_knowledge_graph("*").nodes  # and used without await


def test_aquery_llm_is_hku_dict(tmp_path):
    rag, _ = loaded(tmp_path)
    from lightrag import QueryParam

    result = asyncio.run(rag.aquery_llm("Who founded Tallow Ferries?", QueryParam(mode="local")))
    assert result["status"] == "success" and result["data"]["entities"]
    assert result["llm_response"]["content"] == "Mira Oduya founded Tallow Ferries."
    assert result["llm_response"]["is_streaming"] is False and result.content  # QueryResult's too


def test_export_data_writes_hkus_one_file_layouts(tmp_path):
    rag, _ = loaded(tmp_path)
    rag.export_data(str(tmp_path / "kg.csv"))
    text = (tmp_path / "kg.csv").read_text()
    assert text.startswith("# ENTITIES\nentity_name,source_id,graph_data\n") and "# RELATIONS" in text
    rag.export_data(str(tmp_path / "kg.md"), file_format="md")
    assert (tmp_path / "kg.md").read_text().startswith("# LightRAG Data Export")
    asyncio.run(rag.aexport_data(str(tmp_path / "kg.txt"), file_format="txt"))
    assert "Tallow Ferries" in (tmp_path / "kg.txt").read_text()


def test_status_names_track_ids_and_created_at_as_hku(tmp_path):
    rag, _ = make(tmp_path)
    track = rag.insert(DOCS["d1"], ids="d1")
    status = asyncio.run(rag.get_processing_status())
    assert {"parsing", "analyzing", "preprocessed"} <= set(status) and status["processed"] == 1
    assert set(asyncio.run(rag.aget_docs_by_track_id(track))) == {"d1"}
    data = rag.query_data("Who founded Tallow Ferries?")
    assert data["message"] == "Query processed successfully"
    assert all(isinstance(e["created_at"], int) for e in data["data"]["entities"])
