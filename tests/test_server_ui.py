"""The web UI's pages, vendored assets and explorer endpoints (real uvicorn, httpx; no browser)."""

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402
from server_fixtures import DOCS, sse_events  # noqa: E402

from lightrag.components.graph_rag import schemas  # noqa: E402
from lightrag.server.ui import STATIC_DIR  # noqa: E402

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG

KEY = {"X-API-Key": "k"}


@pytest.fixture
def loaded(serve):
    _, client, rag = serve(api_keys=["k"])
    client.headers.update(KEY)
    done = client.post("/documents", json={"texts": list(DOCS.values()), "file_paths": list(DOCS),
                                           "wait": True})
    assert done.status_code == 200, done.text
    return client, rag


def test_pages_and_docs_are_served_from_the_package_without_a_cdn(serve):
    _, client, _ = serve(api_keys=["k"])
    index = client.get("/")
    assert index.status_code == 200 and "text/html" in index.headers["content-type"]
    key = {"X-API-Key": "k"}
    for page in ("/docs", "/redoc", "/openapi.json"):  # the API docs need the key (issue 26)
        assert client.get(page).status_code == 401, page
    for page in ("/", "/docs", "/redoc"):
        html = client.get(page, headers=key).text  # the UI page needs no key; its API does
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), page
        for asset in re.findall(r"""(?:src|href)=["']?(/static/[^"' >]+)""", html):
            response = client.get(asset)
            assert response.status_code == 200 and len(response.content) > 100, asset
    assert "/static/vendor/swagger-ui-bundle.js" in client.get("/docs", headers=key).text
    assert "/static/vendor/redoc.standalone.js" in client.get("/redoc", headers=key).text
    assert "fonts.googleapis" not in client.get("/redoc", headers=key).text
    assert client.get("/static/vendor/cytoscape.min.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/info").status_code == 401
    manifest = json.loads((STATIC_DIR / "vendor" / "manifest.json").read_text())
    assert manifest["cytoscape.min.js"]["package"].startswith("cytoscape@")


def test_ui_can_be_turned_off(serve):
    _, client, _ = serve(ui=False)
    for path in ("/", "/docs", "/redoc", "/static/app.js"):
        assert client.get(path).status_code == 404, path
    assert client.get("/info").status_code == 200


def test_info_lists_the_modes_of_the_installed_graph_rag(loaded, monkeypatch):
    client, _ = loaded
    info = client.get("/info").json()
    assert info["modes"] == list(schemas.QUERY_MODES) and info["query_defaults"]["mode"]
    bad = client.post("/query", json={"query": "q", "mode": "sideways"})
    assert bad.status_code == 422 and "use one of naive" in json.dumps(bad.json())
    monkeypatch.setattr(schemas, "QUERY_MODES", (*schemas.QUERY_MODES, "ppr"))
    assert "ppr" in client.get("/info").json()["modes"]  # a mode added later shows up


def test_search_entity_detail_and_chunks(loaded):
    client, rag = loaded
    assert client.get("/graph/search", params={"q": "saturn"}).json()[0] == "Saturn"
    assert client.get("/graph/search", params={"q": "zzz"}).json() == []
    assert client.get("/graph/search", params={"q": ""}).status_code == 422
    titan = client.get("/graph/entity/Titan").json()
    assert titan["name"] == "Titan" and any("Huygens" in d for d in titan["descriptions"])
    assert set(titan["file_paths"]) == {"voyager.md", "cassini.md"}
    assert {n["entity"] for n in titan["neighbours"]} >= {"Huygens"}
    assert titan["neighbour_count"] == len(titan["neighbours"]) >= 2
    heaviest = client.get("/graph/entity/Titan", params={"max_neighbours": 1}).json()
    assert heaviest["neighbours"] == titan["neighbours"][:1]  # the heaviest relation first
    assert heaviest["neighbour_count"] == titan["neighbour_count"]
    assert len(titan["chunks"]) == len(titan["source_ids"]) >= 2
    assert not any(k.startswith("context_line") for k in titan["properties"])
    chunk = client.get(f"/chunks/{titan['source_ids'][0]}").json()
    assert "Titan" in chunk["content"] and chunk["file_path"] in DOCS and chunk["full_doc_id"]
    assert client.get("/chunks/chunk-nope").status_code == 404
    missing = client.get("/graph/entity/Atlantis")
    assert missing.status_code == 404 and "Atlantis" in missing.json()["detail"]


def test_streamed_answer_names_its_chunks(loaded):
    client, _ = loaded
    with client.stream("POST", "/query", json={"query": "Titan", "mode": "local",
                                               "stream": True}) as stream:
        first = sse_events(stream.read().decode())[0]
    refs = {r["reference_id"] for r in first["references"]}
    assert first["chunks"] and {c["reference_id"] for c in first["chunks"]} <= refs
    for c in first["chunks"]:
        assert client.get(f"/chunks/{c['chunk_id']}").json()["file_path"] == c["file_path"]


def test_vendored_files_match_their_manifest():
    import hashlib

    manifest = json.loads((STATIC_DIR / "vendor" / "manifest.json").read_text())
    for name, entry in manifest.items():
        digest = hashlib.sha256(Path(STATIC_DIR / "vendor" / name).read_bytes()).hexdigest()
        assert digest == entry["sha256"], name
