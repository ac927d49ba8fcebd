"""Red team 4, finding 2: CSV exports quote cells a spreadsheet would run as formulas, and the
custom-KG CSV import removes exactly that quote again, so an export re-imports to the same graph."""

from __future__ import annotations

import csv

from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag.hku_results import write_hku_export
from lightrag.components.graph_rag.index.custom_kg_format import load_custom_kg
from lightrag.components.storage.graph_export import csv_cell, csv_uncell

NAMES = ["=HYPERLINK(\"http://evil.example\")", "+Plus Corp", "-Minus Corp", "@Sum Corp",
         "Plain Corp"]
KG = {"entities": [{"entity_name": n, "entity_type": "organization",
                    "description": f"=1+{i} described" if i % 2 else f"A company {i}."}
                   for i, n in enumerate(NAMES)],
      "relationships": [{"src_id": NAMES[0], "tgt_id": NAMES[4], "description": "-owns it",
                         "keywords": "@k,x", "weight": 2.0},
                        {"src_id": NAMES[1], "tgt_id": NAMES[2], "description": "Merged.",
                         "weight": 1.0}]}


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_the_cell_rule_round_trips():
    for value in ["=1+1", "+1", "-1", "@A1", "\tx", "\rx", "'=1", "''+x", "'tis", "plain", "", "'"]:
        cell = csv_cell(value)
        assert csv_uncell(cell) == value
        if value.lstrip("'")[:1] in ("=", "+", "-", "@", "\t", "\r"):
            assert cell == "'" + value
        else:
            assert cell == value
    assert csv_cell(-2.5) == -2.5 and csv_cell(3) == 3  # numbers stay numbers


def test_graph_csv_export_quotes_formula_cells(tmp_path):
    rag = fake_graph_rag(tmp_path / "store")
    rag.insert_custom_kg(KG, doc_id="kg")
    entities, relations = rag.index.export(str(tmp_path / "out.csv"))
    rows = read_rows(entities)
    header, cells = rows[0], [c for row in rows[1:] for c in row]
    names = {row[header.index("id")] for row in rows[1:]}
    assert names == {"'" + n for n in NAMES[:4]} | {"Plain Corp"}
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], cells
    relation_cells = [c for row in read_rows(relations)[1:] for c in row]
    assert "'-owns it" in relation_cells and "'@k,x" in relation_cells
    assert "2.0" in relation_cells  # the weight is written as a number


def test_an_exported_csv_reimports_to_the_same_graph(tmp_path):
    rag = fake_graph_rag(tmp_path / "a")
    rag.insert_custom_kg(KG, doc_id="kg")
    entities, relations = rag.index.export(str(tmp_path / "out.csv"))
    folder = tmp_path / "kg"
    folder.mkdir()
    # the export's cells as they are (quoted), under the import's column names
    for source, target, columns in (
            (entities, "entities.csv", {"id": "entity_name", "entity_type": "entity_type",
                                        "description": "description"}),
            (relations, "relationships.csv", {"source": "src_id", "target": "tgt_id",
                                              "description": "description",
                                              "keywords": "keywords", "weight": "weight"})):
        rows = read_rows(source)
        keep = [rows[0].index(c) for c in columns]
        with open(folder / target, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(list(columns.values()))
            writer.writerows([row[i] for i in keep] for row in rows[1:])
    assert "'=HYPERLINK" in (folder / "entities.csv").read_text(encoding="utf-8")  # quoted cells
    kg = load_custom_kg(str(folder))
    assert sorted(e.entity_name for e in kg.entities) == sorted(NAMES)
    copy = fake_graph_rag(tmp_path / "b")
    copy.insert_custom_kg(str(folder), doc_id="kg")
    for name in NAMES:
        original, again = rag.index.graph.get_node(name), copy.index.graph.get_node(name)
        assert again is not None, name
        assert again["description"] == original["description"]
    edge = copy.index.graph.get_edge(NAMES[0], NAMES[4])
    assert edge["description"] == "-owns it" and edge["keywords"] == "@k,x"


def test_csv_import_keeps_a_quote_it_did_not_add(tmp_path):
    (tmp_path / "entities.csv").write_text(
        "entity_name,description\nAcme,'tis a company\nBeta,''=x\nGamma,'@y\n", encoding="utf-8")
    kg = load_custom_kg(str(tmp_path))
    assert [e.description for e in kg.entities] == ["'tis a company", "'=x", "@y"]


class _Graph:
    def get_all_nodes(self):
        return [{"id": "=cmd|' /C calc'!A0", "source_id": "-c1", "description": "x"},
                {"id": "Plain", "source_id": "c2"}]

    def get_all_edges(self):
        return [{"source": "+a", "target": "@b", "source_id": "c1"}]


def test_hku_csv_export_quotes_formula_cells(tmp_path):
    out = tmp_path / "hku.csv"
    write_hku_export(_Graph(), str(out), "csv")
    cells = [c for row in csv.reader(out.read_text(encoding="utf-8").splitlines()) for c in row]
    assert "'=cmd|' /C calc'!A0" in cells and "'-c1" in cells
    assert "'+a" in cells and "'@b" in cells and "Plain" in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")], cells
