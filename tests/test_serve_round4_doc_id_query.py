"""Red team 4, finding 3: a document whose id is ``.`` or ``..`` can be read and deleted: the
document routes also take the id as the query parameter ``doc_id`` (a URL path loses such
segments), and the web UI uses that form."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_fakes import fake_graph_rag

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

import lightrag.server as server_package  # noqa: E402
from lightrag.server import create_app  # noqa: E402

IDS = [".", "..", "a/b", "x?y&z#w"]
TEXTS = ["Alice met Bob in Paris.", "Carol met Dan in Rome.", "Erin met Frank in Oslo.",
         "Grace met Heidi in Lisbon."]


@pytest.fixture
def client(tmp_path):
    rag = fake_graph_rag(tmp_path, max_gleaning=0)
    app = create_app(rag, api_keys=[], resume_pending=False,
                     workspace_factory=lambda name: fake_graph_rag(tmp_path, workspace=name,
                                                                   max_gleaning=0))
    with TestClient(app) as client:
        inserted = client.post("/documents", json={"texts": TEXTS, "ids": IDS, "wait": True})
        assert inserted.status_code == 200, inserted.text
        yield client


def test_every_id_reads_and_deletes_by_query(client):
    # what the red team saw: the client drops the segment and another route answers
    assert client.get("/documents/..").headers["content-type"].startswith("text/html")
    assert "documents" in client.get("/documents/.").json()  # the listing
    for doc_id in IDS:
        got = client.get("/documents", params={"doc_id": doc_id})
        assert got.status_code == 200, got.text
        assert got.json()["id"] == doc_id and got.json()["status"] == "processed"
    for doc_id in (".", ".."):
        deleted = client.delete("/documents", params={"doc_id": doc_id})
        assert deleted.status_code == 200, deleted.text
        assert client.get("/documents", params={"doc_id": doc_id}).status_code == 404
    listing = client.get("/documents").json()
    assert sorted(d["id"] for d in listing["documents"]) == ["a/b", "x?y&z#w"]
    assert client.delete("/documents", params={"doc_id": ".."}).status_code == 404
    assert client.delete("/documents").status_code == 422  # the id is required
    # the path routes still work for ids a path carries
    assert client.get("/documents/x%3Fy%26z%23w").json()["id"] == "x?y&z#w"
    assert client.get("/documents/a/b").json()["id"] == "a/b"
    assert client.delete("/documents/a/b").status_code == 200
    assert client.get("/documents/a/b").status_code == 404
    assert client.get("/documents", params={"page_size": 1}).json()["page_size"] == 1


def test_the_query_form_works_in_another_workspace(client):
    headers = {"LIGHTRAG-WORKSPACE": "other"}
    assert client.post("/documents", headers=headers,
                       json={"texts": ["Ivan met Judy."], "ids": [".."], "wait": True}).status_code == 200
    assert client.get("/w/other/documents", params={"doc_id": ".."}).json()["id"] == ".."
    assert client.delete("/documents", params={"doc_id": ".."}, headers=headers).status_code == 200
    assert client.get("/w/other/documents", params={"doc_id": ".."}).status_code == 404
    assert client.get("/documents", params={"doc_id": ".."}).status_code == 200  # default kept


def test_the_web_ui_deletes_by_query(client):
    script = client.get("/static/app.js").text
    assert "/documents?doc_id=${encodeURIComponent(id)}" in script
    assert "/documents/${" not in script
    source = Path(server_package.__file__).parent / "static" / "app.js"
    assert source.read_text(encoding="utf-8") == script
