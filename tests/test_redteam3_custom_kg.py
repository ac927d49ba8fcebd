"""Red team 3: imported knowledge graphs (custom_kg_format.py) and the GraphML export.

* a relation weight of 1e308 imported twice summed to infinity, stored as ``"weight":
  Infinity``: no JSON for SQLite, so ``lightrag check`` crashed (``malformed JSON``); weights
  are at most ``MAX_WEIGHT``, chunk_order_index at most 2**31 - 1;
* control characters in descriptions, types, keywords, file paths and source ids were imported
  (names alone were checked), and the GraphML export then wrote a file no XML parser reads;
  the export replaces what XML cannot hold, whatever the way in;
* a JSON file nested 100,000 deep, a 400-digit number and a CSV folder whose ``chunks.csv``
  links to ``/etc/passwd`` were a RecursionError, an OverflowError and a read of the linked file.
"""

import json
import os
import xml.etree.ElementTree as ET

import pytest
from test_custom_kg import make_rag

from lightrag.cli import main
from lightrag.components.graph_rag.index.custom_kg import CustomKGError, load_custom_kg
from lightrag.components.storage.graph_export import export_graph

MAX_WEIGHT = 1_000_000.0  # custom_kg_format.MAX_WEIGHT


def two_entities(**relation):
    return {"entities": [{"entity_name": "Wa", "description": "a"},
                         {"entity_name": "Wb", "description": "b"}],
            "relationships": [{"src_id": "Wa", "tgt_id": "Wb", "description": "r", **relation}]}


@pytest.mark.parametrize("weight", [1e308, MAX_WEIGHT * 2, 10**400])
def test_a_weight_over_the_bound_is_refused(weight):
    with pytest.raises(CustomKGError,
                       match=r"relationships\[0\]: weight (must be a finite number|.* is over the limit)"):
        load_custom_kg(two_entities(weight=weight))


def test_two_imports_of_a_huge_weight_keep_the_store_checkable(tmp_path, capsys):
    rag = make_rag(tmp_path)
    for i in range(2):
        try:
            rag.insert_custom_kg(two_entities(weight=1e308), doc_id=f"w{i}")
        except CustomKGError:
            rag.insert_custom_kg(two_entities(weight=MAX_WEIGHT), doc_id=f"w{i}")
    assert rag.graph.get_edge("Wa", "Wb")["weight"] == 2 * MAX_WEIGHT
    rag.index.close()
    assert main(["check", "--working-dir", str(tmp_path)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("order", [2**31, 10**400, 1e300])
def test_a_huge_chunk_order_index_is_refused(order):
    kg = {"chunks": [{"content": "x", "source_id": "c", "chunk_order_index": order}]}
    with pytest.raises(CustomKGError,
                       match=r"chunks\[0\]: chunk_order_index (must be an integer|.* is over the limit)"):
        load_custom_kg(kg)


@pytest.mark.parametrize("field,value", [
    ("description", "bell\x07"), ("entity_type", "per\x01son"), ("file_path", "f\x1b[31m.md"),
    ("description", "vt\x0b"), ("description", "c1\x9b2J"), ("description", "half \ud800"),
    ("keywords", "k\x02")])
def test_control_characters_in_text_fields_are_refused_naming_the_record(field, value):
    record = {"entity_name": "Wa", field: value}
    kg = ({"entities": [{"entity_name": "Wa"}, {"entity_name": "Wb"}],
           "relationships": [{"src_id": "Wa", "tgt_id": "Wb", field: value}]}
          if field == "keywords" else {"entities": [record]})
    where = "relationships" if field == "keywords" else "entities"
    with pytest.raises(CustomKGError, match=rf"{where}\[0\]: {field} holds"):
        load_custom_kg(kg)
    # tabs, newlines and the form feeds of document text are kept
    kg = load_custom_kg({"chunks": [{"content": "page 1\x0cpage 2", "source_id": "c"}],
                         "entities": [{"entity_name": "Wa", "description": "a\tb\nc",
                                       "source_id": "c"}]})
    assert kg.chunks[0].content == "page 1\x0cpage 2" and kg.entities[0].description == "a\tb\nc"


def test_the_graphml_export_is_xml_whatever_the_store_holds(tmp_path):
    path = tmp_path / "g.graphml"
    export_graph(str(path), "graphml",
                 lambda: [("A\x01", {"description": "bell\x07 vt\x0b \ufffe", "file_path": "f\x1b.md"}),
                          ("B", {"description": "ok"})],
                 lambda: [("A\x01", "B", {"description": "r\x08", "weight": 1.0})])
    root = ET.parse(path).getroot()
    ids = [n.get("id") for n in root.iter("{http://graphml.graphdrawing.org/xmlns}node")]
    assert ids == ["A\ufffd", "B"]
    assert "bell\ufffd vt\ufffd \ufffd" in path.read_text(encoding="utf-8")


def test_a_deeply_nested_json_file_is_a_clear_error(tmp_path):
    source = tmp_path / "kg.json"
    source.write_text('{"entities": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(CustomKGError, match="nests too deeply"):
        load_custom_kg(source)
    with pytest.raises(CustomKGError, match="nests too deeply"):
        load_custom_kg(source.read_text())


def test_a_csv_folder_link_to_a_file_outside_is_not_read(tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_text("content,source_id\nthe secret,c1\n")
    folder = tmp_path / "kg"
    folder.mkdir()
    os.symlink(outside, folder / "chunks.csv")
    with pytest.raises(CustomKGError, match="a link to a file outside"):
        load_custom_kg(folder)
    inside = folder / "real_entities.csv"
    inside.write_text("entity_name,description\nWa,a\n")
    os.symlink(inside, folder / "entities.csv")  # a link inside the folder is read
    (folder / "chunks.csv").unlink()
    assert [e.entity_name for e in load_custom_kg(folder).entities] == ["Wa"]


def test_json_text_with_a_bad_weight_over_http_shape(tmp_path):
    text = json.dumps(two_entities(weight=1e308))
    with pytest.raises(CustomKGError, match="weight"):
        load_custom_kg(text)
