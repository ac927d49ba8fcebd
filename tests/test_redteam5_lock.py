"""Red team 5: the loser of the store's writer lock gets a clear answer.

Another process holding the SQLite writer lock past ``lock_timeout``: an insert got 503 already,
but a delete or a graph import got a plain 500 (``StoreLockedError`` reached no handler), and
``lightrag index`` an uncaught traceback. The error text also lost its folder: ``PWD`` is named
like a password (``pwd``), so the current directory was removed from every error and log line.
"""

from __future__ import annotations

import sqlite3

import pytest
import server_fixtures
import yaml
from graph_fakes import extraction_reply, the_answer
from server_fixtures import SCRIPTED

from lightrag.cli import main
from lightrag.components.graph_rag import Chunker, EntityExtractor, GraphRAG
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator
from lightrag.utils.secrets import redact_text

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


def locked_rag(workdir) -> GraphRAG:
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(workdir), cosine_threshold=0.05, lock_timeout=0.3)


@pytest.fixture
def held(tmp_path):
    """A store with one document, whose writer lock another connection holds."""
    rag = locked_rag(tmp_path / "store")
    doc_id = rag.insert("Voyager flew past Saturn.").doc_ids[0]
    holder = sqlite3.connect(tmp_path / "store" / "lightrag.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield rag, doc_id
    holder.execute("ROLLBACK")
    holder.close()


def test_a_delete_and_a_graph_import_behind_another_writer_get_503(serve, held):
    rag, doc_id = held
    _, client, _ = serve(rag)
    kg = {"chunks": [{"content": "Rhea orbits Saturn.", "source_id": "c1"}],
          "entities": [{"entity_name": "Rhea", "description": "a moon", "source_id": "c1"}]}
    for answer in (client.request("DELETE", "/documents", params={"doc_id": doc_id}),
                   client.post("/documents/custom_kg", json={"custom_kg": kg})):
        assert answer.status_code == 503, answer.text
        assert answer.headers["Retry-After"] == "5"
        assert "is being written by another process" in answer.json()["detail"]


def test_the_command_line_loser_of_the_lock_gets_one_line(tmp_path, held, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    config = yaml.safe_load(yaml.safe_dump(SCRIPTED))
    config["component_config"]["lock_timeout"] = 0.3
    (tmp_path / "graph.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "b.md").write_text("Cassini orbited Saturn.")
    code = main(["index", "b.md", "--config", "graph.yaml", "--working-dir", str(tmp_path / "store")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("lightrag: error: the store ") and "Traceback" not in err
    assert f"{tmp_path}/store" in err  # the folder, not "<redacted>/store"


def test_the_working_directory_is_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.setenv("OLDPWD", str(tmp_path / "before"))
    text = f"cannot open {tmp_path}/store and {tmp_path}/before"
    assert redact_text(text) == text
