"""Red team 5, workspaces: ``--workspace default`` on the command line is the server's default.

The server reads the workspace name ``default`` as its default store (``/w/default/``,
``LIGHTRAG-WORKSPACE: default``), and docs/workspaces.md says the command line uses the same
workspaces; but ``lightrag index --workspace default`` wrote to ``WORKING_DIR/default/``, a
store no server ever serves: the documents were indexed and invisible.
"""

from __future__ import annotations

import json

import pytest
import server_fixtures  # noqa: F401 - registers the scripted fakes
import yaml
from server_fixtures import SCRIPTED, make_rag

from lightrag.cli import main

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


def write_config(tmp_path):
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(SCRIPTED))
    return str(path)


def test_workspace_default_is_the_default_store(tmp_path, serve, capsys):
    config, store = write_config(tmp_path), tmp_path / "store"
    (tmp_path / "a.md").write_text("Voyager flew past Saturn. Voyager photographed Titan.")
    assert main(["index", str(tmp_path / "a.md"), "--config", config, "--working-dir", str(store),
                 "--workspace", "default"]) == 0
    assert not (store / "default").exists()
    capsys.readouterr()
    assert main(["docs", "--json", "--config", config, "--working-dir", str(store)]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1
    _, client, _ = serve(make_rag(store))
    listed = client.get("/w/default/documents").json()
    assert listed["total"] == 1, listed


def test_an_orphan_default_store_is_named_not_ignored(tmp_path, capsys):
    config, store = write_config(tmp_path), tmp_path / "store"
    make_rag(store, workspace="default").insert("Cassini orbited Saturn.")  # an older CLI's store
    code = main(["docs", "--config", config, "--working-dir", str(store), "--workspace", "default"])
    assert code == 2
    assert "no server serves" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["a.b", "w" * 100])
def test_a_workspace_the_server_cannot_serve_is_warned_about(tmp_path, caplog, name):
    config, store = write_config(tmp_path), tmp_path / "store"
    (tmp_path / "a.md").write_text("Voyager flew past Saturn.")
    assert main(["index", str(tmp_path / "a.md"), "--config", config, "--working-dir", str(store),
                 "--workspace", name]) == 0
    assert "cannot be served by `lightrag serve`" in caplog.text
