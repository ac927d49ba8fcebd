"""`lightrag delete` re-run after an interruption (issue 26, defect 10): targets already gone
are success, and vectors a killed delete left queued are embedded by the re-run."""

import yaml
from test_graph_cli_and_defaults import SCRIPTED

from lightrag.cli import main
from lightrag.utils import build


def test_rerunning_a_delete_whose_targets_are_partly_gone_succeeds(tmp_path, capsys):
    import graph_fakes  # noqa: F401  (registers the fake model functions)

    config = tmp_path / "graph.yaml"
    config.write_text(yaml.safe_dump(SCRIPTED))
    common = ["--config", str(config), "--working-dir", str(tmp_path / "store")]
    rag = build({**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                                  "working_dir": str(tmp_path / "store")}})
    rag.insert(["Alice met Bob in Paris.", "Bob flew to Rome.", "Carol saw Rome."],
               ids=["A", "B", "C"])
    rag.index.close()
    assert main(["delete", "A", *common]) == 0
    capsys.readouterr()
    # a killed delete of B: committed, but its rebuilt vectors were never embedded
    rag = build({**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                                  "working_dir": str(tmp_path / "store")}})
    from lightrag.components.graph_rag.insert_result import run_sync

    run_sync(rag.index.delete_document("B"))
    assert rag.status()["pending_vectors"] > 0
    rag.index.close()

    assert main(["delete", "A", "B", "C", *common]) == 0
    out = capsys.readouterr().out
    assert "not found A" in out and "not found B" in out and out.count("deleted C") == 1
    rag = build({**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                                  "working_dir": str(tmp_path / "store")}})
    assert rag.status()["pending_vectors"] == 0 and rag.index.verify() == []
    assert main(["delete", "A", "B", "C", *common]) == 0  # all gone, empty store: still success
