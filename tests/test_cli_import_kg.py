"""`lightrag import-kg`: a graph from a JSON file becomes one document of the store, found by
a query and removed by `lightrag delete` (issue 25 item 1, from the command line)."""

import json

import yaml
from test_graph_cli_and_defaults import SCRIPTED

from lightrag.cli import main
from lightrag.utils import build

KG = {
    "chunks": [{"content": "Zorblax Prime orbits the star Vega Minor.", "source_id": "c1"}],
    "entities": [
        {"entity_name": "Zorblax Prime", "entity_type": "planet",
         "description": "A planet orbiting Vega Minor.", "source_id": "c1"},
        {"entity_name": "Vega Minor", "entity_type": "star",
         "description": "The star of Zorblax Prime.", "source_id": "c1"},
    ],
    "relationships": [
        {"src_id": "Zorblax Prime", "tgt_id": "Vega Minor", "description": "orbits",
         "keywords": "orbit", "weight": 1.0, "source_id": "c1"},
    ],
}


def test_import_kg_from_the_command_line(tmp_path, capsys):
    import graph_fakes  # noqa: F401  (registers the fake model functions)

    config = tmp_path / "graph.yaml"
    config.write_text(yaml.safe_dump(SCRIPTED))
    source = tmp_path / "kg.json"
    source.write_text(json.dumps(KG))
    common = ["--config", str(config), "--working-dir", str(tmp_path / "store")]
    assert main(["import-kg", str(source), "--id", "my-kg", *common]) == 0
    assert "imported my-kg: 1 chunks, 2 entities, 1 relations" in capsys.readouterr().out
    assert main(["import-kg", str(source), "--id", "my-kg", *common]) == 0  # same content again
    assert "imported before" in capsys.readouterr().out
    rag = build({**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                                  "working_dir": str(tmp_path / "store")}})
    assert rag.graph.has_node("Zorblax Prime") and rag.index.verify() == []
    context = rag.query("Zorblax Prime Vega Minor", mode="naive", only_need_context=True)
    assert "Zorblax Prime orbits" in context.content
    rag.close()
    assert main(["delete", "my-kg", *common]) == 0
    rag = build({**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                                  "working_dir": str(tmp_path / "store")}})
    assert not rag.graph.has_node("Zorblax Prime") and rag.index.verify() == []


def test_import_kg_names_a_bad_record(tmp_path, capsys):
    import graph_fakes  # noqa: F401

    config = tmp_path / "graph.yaml"
    config.write_text(yaml.safe_dump(SCRIPTED))
    source = tmp_path / "kg.json"
    bad = {**KG, "relationships": [{**KG["relationships"][0], "tgt_id": "Nowhere"}]}
    source.write_text(json.dumps(bad))
    assert main(["import-kg", str(source), "--config", str(config),
                 "--working-dir", str(tmp_path / "store")]) == 2
    assert "relationships[0]" in capsys.readouterr().err
