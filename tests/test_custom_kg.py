"""Importing a knowledge graph built elsewhere (issue 25 item 1) and editing relations by hand:
lightrag/components/graph_rag/index/custom_kg.py and relation_edits.py, driven through a
GraphRAG's index with fake (offline, deterministic) models."""

import json

import pytest
from graph_fakes import extraction_reply, the_answer

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.index.custom_kg import (
    CustomKG,
    CustomKGError,
    ainsert_custom_kg,
    load_custom_kg,
)
from lightrag.components.graph_rag.index.relation_edits import (
    create_relation,
    delete_relation,
    edit_relation,
)
from lightrag.components.graph_rag.index.vectors import pending_key
from lightrag.components.graph_rag.merger import relation_vector_id, split_field
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator
from lightrag.utils.run_sync import run_sync

MODES = ["naive", "local", "global", "hybrid", "mix", "ppr"]


def make_rag(tmp_path, **kwargs):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path), cosine_threshold=0.05, **kwargs)


def sample_kg():
    return {
        "chunks": [
            {"content": "Zorblax Corporation builds quantum turbines in Velmora.",
             "source_id": "c1", "file_path": "zorblax.md"},
            {"content": "Quillon Freya founded Zorblax Corporation in 1998.", "source_id": "c2",
             "file_path": "zorblax.md"},
        ],
        "entities": [
            {"entity_name": "Zorblax Corporation", "entity_type": "organization",
             "description": "A maker of quantum turbines.", "source_id": "c1"},
            {"entity_name": "Velmora", "entity_type": "location",
             "description": "The city where Zorblax builds turbines.", "source_id": "c1"},
            {"entity_name": "Quillon Freya", "entity_type": "person",
             "description": "Founder of Zorblax Corporation.", "source_id": "c2"},
            {"entity_name": "Turbine Guild", "entity_type": "organization",
             "description": "A trade body of turbine makers."},
        ],
        "relationships": [
            {"src_id": "Quillon Freya", "tgt_id": "Zorblax Corporation",
             "description": "Quillon Freya founded Zorblax Corporation.", "keywords": "founder",
             "weight": 2.0, "source_id": "c2"},
            {"src_id": "Zorblax Corporation", "tgt_id": "Velmora",
             "description": "Zorblax builds turbines in Velmora.", "keywords": ["factory", "site"],
             "source_id": ["c1"]},
            {"src_id": "Zorblax Corporation", "tgt_id": "Turbine Guild",
             "description": "Zorblax Corporation is a member of the Turbine Guild.",
             "keywords": "membership"},
        ],
    }


def imported(tmp_path, kg=None, **kwargs):
    rag = make_rag(tmp_path)
    result = run_sync(ainsert_custom_kg(rag.index, kg if kg is not None else sample_kg(), **kwargs))
    return rag, result


def snapshot(rag):
    """Everything an import or a delete may change, comparable across states."""
    index = rag.index
    index.refresh()
    s = index.stores
    return {
        "nodes": {n["id"]: {k: v for k, v in n.items() if k != "created_at"}
                  for n in s.graph.get_all_nodes()},
        "edges": {(e["source"], e["target"]): {k: v for k, v in e.items() if k != "created_at"}
                  for e in s.graph.get_all_edges()},
        "chunks": dict(s.text_chunks.items()),
        "docs": sorted(s.full_docs.keys()),
        "status": sorted(s.doc_status.keys()),
        "items": dict(s.doc_graph_items.items()),
        "chunk_vectors": sorted(s.chunks_vdb._ids),
        "entity_vectors": sorted(s.entities_vdb._ids),
        "relation_vectors": sorted(s.relations_vdb._ids),
        "extractions": sorted(s.extractions.results.keys()),
        "pending": sorted(s.pending_vectors.keys()),
    }


# ------------------------------------------------------------------------------- loading
def test_load_dict_json_text_and_file_agree(tmp_path):
    from_dict = load_custom_kg(sample_kg())
    from_text = load_custom_kg(json.dumps(sample_kg()))
    path = tmp_path / "kg.json"
    path.write_text(json.dumps(sample_kg()), encoding="utf-8")
    from_file = load_custom_kg(path)
    assert from_dict == from_text == from_file and load_custom_kg(from_dict) is from_dict
    assert isinstance(from_dict, CustomKG)
    assert [e.entity_name for e in from_dict.entities][:3] == [
        "Zorblax Corporation", "Velmora", "Quillon Freya"]
    assert from_dict.relationships[1].keywords == "factory,site"
    assert from_dict.relationships[1].source_ids == ["c1"]
    assert from_dict.entities[3].source_ids == []
    assert from_dict.document_id() == load_custom_kg(json.dumps(sample_kg(), indent=2)).document_id()


def write_csv(folder, kg):
    import csv

    folder.mkdir(exist_ok=True)
    for kind in ("chunks", "entities", "relationships"):
        rows = kg[kind]
        columns = sorted({k for r in rows for k in r})
        with open(folder / f"{kind}.csv", "w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: ",".join(v) if k == "keywords" and isinstance(v, list)
                                 else "<SEP>".join(v) if isinstance(v, list) else v
                                 for k, v in row.items()})


def test_load_csv_folder_and_paths(tmp_path):
    write_csv(tmp_path / "kg", sample_kg())
    from_folder = load_custom_kg(tmp_path / "kg")
    assert from_folder == load_custom_kg(sample_kg())
    paths = [str(tmp_path / "kg" / f"{k}.csv") for k in ("entities", "chunks", "relationships")]
    assert load_custom_kg(paths) == from_folder
    with pytest.raises(CustomKGError, match=r"entities\[0\]: unknown source_id 'c1'"):
        load_custom_kg([tmp_path / "kg" / "entities.csv"])  # its chunks are not given


@pytest.mark.parametrize("change, message", [
    (lambda kg: kg["entities"][0].update(entity_name="  "), "entities[0]: empty entity_name"),
    (lambda kg: kg["relationships"][2].update(tgt_id="Acme"), "relationships[2]: unknown endpoint 'Acme'"),
    (lambda kg: kg["relationships"][2].update(weight="x"),
     "relationships[2]: weight must be a finite number >= 0, got 'x'"),
    (lambda kg: kg["relationships"][0].update(weight=-1), "relationships[0]: weight must be a finite"),
    (lambda kg: kg["relationships"][0].update(weight=float("nan")), "relationships[0]: weight must be"),
    (lambda kg: kg["relationships"][0].update(weight=True), "relationships[0]: weight must be"),
    (lambda kg: kg["entities"][1].update(source_id="c9"), "entities[1]: unknown source_id 'c9'"),
    (lambda kg: kg["chunks"][1].update(source_id="c1"), "chunks[1]: duplicate source_id 'c1'"),
    (lambda kg: kg["chunks"][0].update(content=""), "chunks[0]: empty content"),
    (lambda kg: kg["entities"][2].update(entity_nme="x"), "entities[2]: unknown field(s) ['entity_nme']"),
    (lambda kg: kg["entities"][2].update(description=7), "entities[2]: description must be a string"),
    (lambda kg: kg["relationships"][0].update(tgt_id="quillon freya"),
     "relationships[0]: src_id and tgt_id are the same entity 'Quillon Freya'"),
    (lambda kg: kg["entities"].__setitem__(1, "Velmora"), "entities[1]: must be an object, got str"),
    (lambda kg: kg.update(relations=[]), "unknown key(s) ['relations']"),
    (lambda kg: kg.update(entities={}), "entities: must be a list, got dict"),
    (lambda kg: kg["entities"][0].update(entity_name="N" * 300), "entities[0]: entity_name has 300"),
    (lambda kg: kg["entities"][3].update(entity_name="Turbine\x00Guild"),
     "entities[3]: entity_name 'Turbine\\x00Guild' holds a control character"),
    (lambda kg: kg["entities"][0].update(file_path="other.md"),
     "entities[0]: file_path 'other.md' differs from that of its chunk 'c1'"),
])
def test_each_validation_error_names_the_record(change, message):
    kg = sample_kg()
    change(kg)
    with pytest.raises(CustomKGError) as caught:
        load_custom_kg(kg)
    assert str(caught.value).startswith(message), str(caught.value)


def test_csv_errors_name_the_record_and_line(tmp_path):
    kg = sample_kg()
    kg["relationships"][1]["weight"] = "heavy"
    write_csv(tmp_path / "kg", kg)
    with pytest.raises(CustomKGError, match=r"relationships\[1\]: weight must be a finite number "
                                            r">= 0, got 'heavy' \(relationships.csv line 3\)"):
        load_custom_kg(tmp_path / "kg")
    (tmp_path / "kg" / "entities.csv").write_text("entity_name,colour\nAcme,red\n")
    with pytest.raises(CustomKGError, match=r"unknown column\(s\) \['colour'\]"):
        load_custom_kg(tmp_path / "kg")
    with pytest.raises(CustomKGError, match="no chunks.csv"):
        load_custom_kg(tmp_path)
    with pytest.raises(CustomKGError, match="not valid JSON"):
        load_custom_kg("{not json")
    with pytest.raises(CustomKGError, match="an object with chunks, entities and relationships, got list"):
        load_custom_kg("[]")
    with pytest.raises(CustomKGError, match="cannot read"):
        load_custom_kg(tmp_path / "missing.json")
    with pytest.raises(CustomKGError, match="no chunks and no entities"):
        load_custom_kg({})
    with pytest.raises(CustomKGError, match="cannot read a knowledge graph from a int"):
        load_custom_kg(42)
    with pytest.raises(CustomKGError, match="must end with chunks.csv"):
        load_custom_kg([tmp_path / "kg" / "nodes.csv"])


def test_csv_paths_may_carry_a_prefix(tmp_path):
    write_csv(tmp_path / "kg", sample_kg())
    paths = []
    for kind in ("chunks", "entities", "relationships"):
        target = tmp_path / f"acme_{kind}.csv"
        target.write_bytes((tmp_path / "kg" / f"{kind}.csv").read_bytes())
        paths.append(target)
    assert load_custom_kg(paths) == load_custom_kg(sample_kg())


def test_sizes_are_bounded(monkeypatch):
    import lightrag.components.graph_rag.index.custom_kg_format as module

    monkeypatch.setattr(module, "MAX_RECORDS", 2)
    with pytest.raises(CustomKGError, match=r"entities: 4 records; at most 2"):
        load_custom_kg(sample_kg())


# -------------------------------------------------------------------------------- import
def test_import_writes_a_consistent_document_found_in_every_mode(tmp_path):
    rag, result = imported(tmp_path)
    assert result.status == "processed" and result.doc_id.startswith("kg-")
    assert result.chunks == 3 and result.synthetic_chunks == 1
    assert {"Zorblax Corporation", "Velmora", "Quillon Freya", "Turbine Guild"} <= set(result.entities)
    assert rag.index.verify() == []
    status = rag.doc_status.get_by_id(result.doc_id)
    assert status["status"] == "processed" and status["metadata"]["source"] == "custom_kg"
    node = rag.graph.get_node("Zorblax Corporation")
    assert node["entity_type"] == "organization"
    assert split_field(node["source_id"]) == [f"{result.doc_id}-chunk-000"]
    edge = rag.graph.get_edge("Quillon Freya", "Zorblax Corporation")
    assert edge["weight"] == 2.0 and edge["keywords"] == "founder"
    guild = rag.graph.get_node("Turbine Guild")
    synthetic = rag.text_chunks.get_by_id(guild["source_id"])
    assert "Turbine Guild (organization): A trade body" in synthetic["content"]
    assert "Zorblax Corporation -- Turbine Guild [membership]" in synthetic["content"]
    assert len(rag.entities_vdb) == 4 and len(rag.relations_vdb) == 3
    assert rag.index.stores.pending_vectors.keys() == []
    for mode in MODES:
        raw = rag.query("Who founded Zorblax Corporation?", mode=mode).raw_data
        found = " ".join(c["content"] for c in raw["chunks"])
        assert "Zorblax" in found, mode
        if mode != "naive":
            assert "Zorblax Corporation" in [e["entity_name"] for e in raw["entities"]], mode
    raw = rag.query("Turbine Guild membership", mode="global").raw_data
    assert any({r["src_id"], r["tgt_id"]} == {"Zorblax Corporation", "Turbine Guild"}
               for r in raw["relationships"])


def test_reimport_is_skipped_and_new_version_replaces(tmp_path):
    rag, first = imported(tmp_path, doc_id="my-kg")
    assert first.doc_id == "my-kg"
    again = run_sync(ainsert_custom_kg(rag.index, sample_kg(), doc_id="my-kg"))
    assert again.status == "skipped"
    changed = sample_kg()
    changed["entities"] = changed["entities"][:3]
    changed["relationships"] = changed["relationships"][:2]
    second = run_sync(ainsert_custom_kg(rag.index, changed, doc_id="my-kg"))
    assert second.status == "processed" and second.replaced and second.synthetic_chunks == 0
    assert not rag.graph.has_node("Turbine Guild")
    assert rag.index.verify() == []
    counts = rag.index.status()["documents"]
    assert counts["processed"] == 1 and sum(counts.values()) == 1


def test_import_merges_with_an_extracted_entity_and_delete_rebuilds_it(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River."], ids=["doc-velmora"], file_paths=["geo.md"])
    before = snapshot(rag)
    extracted = rag.graph.get_node("Velmora")
    result = run_sync(ainsert_custom_kg(rag.index, sample_kg()))
    merged = rag.graph.get_node("Velmora")
    assert "Velmora lies on the Amber River." in merged["description"]
    assert "The city where Zorblax builds turbines." in merged["description"]
    assert len(split_field(merged["source_id"])) == 2
    assert rag.index.verify() == []

    deleted = rag.delete_by_doc_id(result.doc_id)
    assert "Velmora" in deleted.entities_rebuilt
    assert "Zorblax Corporation" in deleted.entities_deleted
    assert rag.graph.get_node("Velmora")["description"] == extracted["description"]
    assert rag.index.verify() == []
    assert snapshot(rag) == before


def test_deleting_the_extracted_document_rebuilds_from_the_import(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River."], ids=["doc-velmora"])
    run_sync(ainsert_custom_kg(rag.index, sample_kg()))
    rag.delete_by_doc_id("doc-velmora")
    node = rag.graph.get_node("Velmora")
    assert node["description"] == "The city where Zorblax builds turbines."
    assert node["entity_type"] == "location"
    assert rag.index.verify() == []


def test_delete_of_an_import_into_an_empty_store_leaves_it_empty(tmp_path):
    rag = make_rag(tmp_path)
    empty = snapshot(rag)
    result = run_sync(ainsert_custom_kg(rag.index, sample_kg()))
    rag.delete_by_doc_id(result.doc_id)
    assert snapshot(rag) == empty and rag.index.verify() == []


def test_a_failed_import_writes_nothing(tmp_path, monkeypatch):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River."], ids=["doc-velmora"])
    before = snapshot(rag)
    bad = sample_kg()
    bad["relationships"][1]["tgt_id"] = "Nowhere"
    with pytest.raises(CustomKGError, match=r"relationships\[1\]: unknown endpoint 'Nowhere'"):
        run_sync(ainsert_custom_kg(rag.index, bad))
    assert snapshot(rag) == before

    async def broken(*args, **kwargs):  # fails inside the transaction, after the chunks
        raise RuntimeError("merge failed")

    monkeypatch.setattr(rag.index.merger, "acall", broken)
    with pytest.raises(RuntimeError, match="merge failed"):
        run_sync(ainsert_custom_kg(rag.index, sample_kg()))
    assert snapshot(rag) == before and rag.index.verify() == []


def test_chunk_text_of_another_document_with_other_records_is_refused(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River."], ids=["doc-velmora"])
    before = snapshot(rag)
    kg = {"chunks": [{"content": "Velmora lies on the Amber River.", "source_id": "v"}],
          "entities": [{"entity_name": "Velmora", "description": "A city.", "source_id": "v"}]}
    with pytest.raises(CustomKGError, match=r"chunks\[0\]: its text is already stored "
                                            r"\(chunk 'doc-velmora-chunk-000'\)"):
        run_sync(ainsert_custom_kg(rag.index, kg))
    assert snapshot(rag) == before
    same_text_other_doc = run_sync(ainsert_custom_kg(rag.index, {
        "chunks": [{"content": "Velmora lies on the Amber River.", "source_id": "v"}],
        "entities": [{"entity_name": "Velmora", "description": "A city."}]}))
    assert same_text_other_doc.status == "processed" and rag.index.verify() == []


def test_doc_id_of_a_normal_document_is_refused(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River."], ids=["doc-velmora"])
    with pytest.raises(CustomKGError, match="is not a custom knowledge graph import"):
        run_sync(ainsert_custom_kg(rag.index, sample_kg(), doc_id="doc-velmora"))
    with pytest.raises(CustomKGError, match="doc_id must be a non-empty string"):
        run_sync(ainsert_custom_kg(rag.index, sample_kg(), doc_id=" "))
    assert rag.index.verify() == []


def test_equal_chunk_texts_collapse_and_synthetic_chunks_are_bounded(tmp_path, monkeypatch):
    import lightrag.components.graph_rag.index.custom_kg as module

    monkeypatch.setattr(module, "SYNTHETIC_CHUNK_CHARS", 120)
    kg = sample_kg()
    kg["chunks"].append({"content": kg["chunks"][0]["content"], "source_id": "c1-again",
                         "file_path": "zorblax.md"})
    kg["entities"][1]["source_id"] = "c1-again"
    kg["entities"] += [{"entity_name": f"Guild Member {i}", "description": f"Member number {i}."}
                       for i in range(6)]
    rag, result = imported(tmp_path, kg=kg)
    velmora, zorblax = rag.graph.get_node("Velmora"), rag.graph.get_node("Zorblax Corporation")
    assert velmora["source_id"] == zorblax["source_id"]  # c1 and c1-again are one chunk
    synthetic = [c for _, c in rag.index.stores.text_chunks.items() if c["file_path"] == "custom_kg"]
    assert result.synthetic_chunks == len(synthetic) >= 3
    assert all(len(c["content"]) < 120 + 80 for c in synthetic)
    assert rag.index.verify() == []


def test_import_from_csv_folder(tmp_path):
    write_csv(tmp_path / "kg", sample_kg())
    rag, result = imported(tmp_path / "store", kg=tmp_path / "kg")
    assert result.status == "processed" and rag.graph.has_node("Turbine Guild")
    assert rag.index.verify() == []


# ---------------------------------------------------------------------- relation edits
def test_create_edit_delete_relation(tmp_path):
    rag, result = imported(tmp_path)
    index = rag.index
    with index.writing_sync():
        edge = create_relation(index.stores, "Velmora", "quillon freya",
                               {"description": "Quillon Freya lives in Velmora.",
                                "keywords": ["residence", "home"], "weight": 3})
    assert edge["source_id"] == "" and edge["keywords"] == "home,residence" and edge["weight"] == 3.0
    pair = ("Quillon Freya", "Velmora")
    assert pending_key("r", *pair) in index.stores.pending_vectors.keys()
    assert index.verify() == []
    run_sync(index.index_pending())
    raw = rag.query("Where does Quillon Freya live? residence", mode="global").raw_data
    assert any({r["src_id"], r["tgt_id"]} == set(pair) for r in raw["relationships"])
    for mode in MODES:  # a relation citing no chunk breaks no mode
        assert rag.query("Quillon Freya Velmora residence", mode=mode).raw_data["chunks"], mode

    with index.writing_sync():
        edited = edit_relation(index.stores, "Velmora", "Quillon Freya",
                               {"description": "Quillon Freya was born in Velmora.", "weight": 0.5})
    assert edited["description"] == "Quillon Freya was born in Velmora." and edited["weight"] == 0.5
    run_sync(index.index_pending())
    vector = index.stores.relations_vdb.get_by_id(relation_vector_id(*pair))
    assert "born" in vector["content"]

    # the relation belongs to no document: deleting the import (which removes both entities'
    # only chunks) removes it with its entities, and leaves the store consistent
    with index.writing_sync():
        delete_relation(index.stores, "Zorblax Corporation", "Velmora")
    assert rag.graph.get_edge("Zorblax Corporation", "Velmora") is None
    assert rag.graph.has_node("Velmora") and rag.graph.has_node("Zorblax Corporation")
    assert index.stores.relations_vdb.get_by_id(relation_vector_id("Velmora", "Zorblax Corporation")) is None
    items = index.stores.doc_graph_items.get_by_id(result.doc_id)
    assert ["Velmora", "Zorblax Corporation"] not in items["relations"]
    assert index.verify() == []
    rag.delete_by_doc_id(result.doc_id)
    assert rag.index.verify() == [] and rag.graph.node_count() == 0


def test_a_created_relation_survives_deleting_a_document(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River.", "Quillon Freya met Orlin Vask."],
               ids=["d1", "d2"])
    index = rag.index
    rag.insert(["Velmora hosts Quillon Freya."], ids=["d3"])
    with index.writing_sync():  # stale: d3 listed the pair; deleting the relation forgets it
        delete_relation(index.stores, "Velmora", "Quillon Freya")
        create_relation(index.stores, "Velmora", "Quillon Freya", {"description": "Manual link."})
    run_sync(index.index_pending())
    rag.delete_by_doc_id("d3")
    assert rag.graph.get_edge("Velmora", "Quillon Freya")["description"] == "Manual link."
    assert index.verify() == []


def test_items_a_document_does_not_cite_change_nothing_when_it_is_deleted(tmp_path):
    rag = make_rag(tmp_path)
    rag.insert(["Velmora lies on the Amber River.", "Quillon Freya met Orlin Vask.",
                "Orlin Vask sailed the Amber River."], ids=["d1", "d2", "d3"])
    index = rag.index
    with index.writing_sync():
        create_relation(index.stores, "Velmora", "Quillon Freya", {"description": "Manual link."})
        # stale items (as a relation deleted with an entity and created again leaves them)
        index.stores.doc_graph_items.add("d3", ["Velmora", "Quillon Freya"],
                                         [("Quillon Freya", "Velmora")])
    velmora = rag.graph.get_node("Velmora")
    deletion = rag.delete_by_doc_id("d3")
    assert "Velmora" not in deletion.entities_rebuilt + deletion.entities_deleted
    assert rag.graph.get_node("Velmora") == velmora
    assert rag.graph.get_edge("Velmora", "Quillon Freya")["description"] == "Manual link."
    assert index.verify() == []


def test_relation_edit_errors(tmp_path):
    rag, _ = imported(tmp_path)
    stores = rag.index.stores
    before = snapshot(rag)
    cases = [
        (KeyError, "no entity named 'Nobody'",
         lambda: create_relation(stores, "Nobody", "Velmora", {})),
        (ValueError, "exists already",
         lambda: create_relation(stores, "Velmora", "Zorblax Corporation", {})),
        (ValueError, "both ends are 'Velmora'", lambda: create_relation(stores, "Velmora", "velmora", {})),
        (ValueError, r"cannot set relation fields \['source_id'\]",
         lambda: create_relation(stores, "Velmora", "Quillon Freya", {"source_id": "x"})),
        (ValueError, "weight must be a finite number >= 0, got -2",
         lambda: edit_relation(stores, "Velmora", "Zorblax Corporation", {"weight": -2})),
        (ValueError, "weight must be", lambda: edit_relation(stores, "Velmora", "Zorblax Corporation",
                                                             {"weight": "1"})),
        (TypeError, "description must be a string",
         lambda: edit_relation(stores, "Velmora", "Zorblax Corporation", {"description": 5})),
        (KeyError, "no relation between 'Quillon Freya' and 'Velmora'",
         lambda: edit_relation(stores, "Velmora", "Quillon Freya", {"weight": 1})),
        (KeyError, "no relation between", lambda: delete_relation(stores, "Velmora", "Quillon Freya")),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=message):
            with rag.index.writing_sync():
                call()
    assert snapshot(rag) == before and rag.index.verify() == []


def test_a_relation_edited_while_its_vector_is_embedded_is_embedded_again(tmp_path, monkeypatch):
    rag, _ = imported(tmp_path)
    index = rag.index
    run_sync(index.index_pending())
    with index.writing_sync():
        create_relation(index.stores, "Velmora", "Quillon Freya",
                        {"description": "Quillon Freya lives in Velmora."})
    real, calls, edits = index.embed_texts, [], ["Quillon Freya was born in Velmora."]

    async def embed_then_edit(texts):
        calls.append(list(texts))
        if edits:  # another writer commits while the first batch is embedded
            with index.writing_sync():
                edit_relation(index.stores, "Velmora", "Quillon Freya", {"description": edits.pop()})
        return await real(texts)

    monkeypatch.setattr(index, "embed_texts", embed_then_edit)
    run_sync(index.index_pending())  # the vector of the old text is not written: still queued
    pair = ("Quillon Freya", "Velmora")
    assert index.stores.relations_vdb.get_by_id(relation_vector_id(*pair)) is None
    assert index.pending_vector_count() == 1
    run_sync(index.index_pending())
    assert "born" in index.stores.relations_vdb.get_by_id(relation_vector_id(*pair))["content"]
    assert len(calls) == 2 and index.pending_vector_count() == 0

    calls.clear()
    with index.writing_sync():
        edit_relation(index.stores, "Velmora", "Quillon Freya", {"description": "Velmora is home."})
    run_sync(index.index_pending())  # nothing committed meanwhile: embedded once
    assert len(calls) == 1 and "home" in index.stores.relations_vdb.get_by_id(
        relation_vector_id(*pair))["content"]
