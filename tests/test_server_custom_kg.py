"""`POST /documents/custom_kg`: a knowledge graph imported over HTTP, in the request's
workspace, found by a query, deleted as a document; a bad record is a 400 naming it."""

import pytest

pytest.importorskip("fastapi")

import server_fixtures  # noqa: E402
from test_cli_import_kg import KG  # noqa: E402

serve = server_fixtures.serve


def test_import_query_and_delete_a_graph_over_http(serve):
    _, client, _ = serve()
    imported = client.post("/documents/custom_kg", json={"custom_kg": KG, "doc_id": "my-kg"})
    assert imported.status_code == 200, imported.text
    assert imported.json()["doc_id"] == "my-kg" and "Zorblax Prime" in imported.json()["entities"]
    answer = client.post("/query", json={"query": "Zorblax Prime Vega Minor", "mode": "naive",
                                         "only_need_context": True})
    assert answer.status_code == 200 and "Zorblax Prime orbits" in answer.json()["response"]
    other = client.get("/graph/search", params={"q": "Zorblax"},
                       headers={"LIGHTRAG-WORKSPACE": "other"})
    assert "Zorblax Prime" not in other.text  # imported into the default workspace only
    assert client.delete("/documents/my-kg").status_code == 200
    assert client.get("/documents/my-kg").status_code == 404


def test_a_bad_record_is_a_400_naming_it(serve):
    _, client, _ = serve()
    bad = {**KG, "relationships": [{**KG["relationships"][0], "tgt_id": "Nowhere"}]}
    reply = client.post("/documents/custom_kg", json={"custom_kg": bad})
    assert reply.status_code == 400 and "relationships[0]" in reply.json()["detail"]
    assert client.get("/documents").json()["total"] == 0
