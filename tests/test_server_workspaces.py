"""Several isolated workspaces in one server (issue 25 item 3): the LIGHTRAG-WORKSPACE header and
the /w/{name}/ prefix, per-workspace stores and intake, keys limited to workspaces, /workspaces.

FastAPI's TestClient over the scripted GraphRAG (no model, no network)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from server_fixtures import DOCS, make_rag  # noqa: E402

from lightrag.components.graph_rag.schemas import QueryParam  # noqa: E402
from lightrag.server.app import create_app  # noqa: E402
from lightrag.server.auth import KeyRing  # noqa: E402
from lightrag.server.middleware import api_keys_from_env  # noqa: E402
from lightrag.server.query_api import QueryRequest  # noqa: E402

A = {"LIGHTRAG-WORKSPACE": "team_a"}
B = {"LIGHTRAG-WORKSPACE": "team-b"}


@pytest.fixture
def app_for(tmp_path):
    opened = []

    def factory(name):
        opened.append(name)
        return make_rag(tmp_path, workspace=name)

    def make(**kwargs):
        kwargs.setdefault("api_keys", [])
        app = create_app(make_rag(tmp_path), workspace_factory=factory, **kwargs)
        app.opened = opened
        return app

    return make


def _insert_into_a(client, headers=A):
    done = client.post("/documents", headers=headers, json={
        "texts": list(DOCS.values()), "file_paths": list(DOCS), "ids": ["v", "c"], "wait": True})
    assert done.status_code == 200, done.text
    assert sorted(done.json()["processed"]) == ["c", "v"]


def test_nothing_of_a_is_visible_in_b_or_the_default(app_for, tmp_path):
    with TestClient(app_for()) as client:
        _insert_into_a(client)
        in_a = client.get("/documents", headers=A).json()
        assert in_a["counts"]["processed"] == 2 and len(in_a["documents"]) == 2
        labels_a = client.get("/graph/labels", headers=A).json()
        assert "Saturn" in labels_a
        chunk_id = client.get("/documents/v", headers=A).json()["chunks_list"][0]
        for other in (B, {}):
            listing = client.get("/documents", headers=other).json()
            assert listing["total"] == 0 and listing["documents"] == [], listing
            assert client.get("/documents/v", headers=other).status_code == 404
            assert client.get("/graph/labels", headers=other).json() == []
            assert client.get("/graph/search", params={"q": "Saturn"}, headers=other).json() == []
            assert client.get("/graph/entity/Saturn", headers=other).status_code == 404
            assert client.get(f"/chunks/{chunk_id}", headers=other).status_code == 404
            assert client.get("/graph", params={"label": "Saturn"}, headers=other).json()["nodes"] == []
            context = client.post("/query", headers=other, json={
                "query": "Which moon did Voyager 1 photograph?", "mode": "naive",
                "only_need_context": True, "include_raw_data": True}).json()
            assert "Voyager" not in (context["response"] or "") and not context["raw_data"]["chunks"]
            assert 'lightrag_documents{status="processed"} 2' not in client.get(
                "/metrics", headers=other).text
        assert 'lightrag_documents{status="processed"} 2' in client.get("/metrics", headers=A).text
        context = client.post("/query", headers=A, json={
            "query": "Voyager 1", "mode": "naive", "only_need_context": True}).json()
        assert "Voyager 1" in context["response"]
    assert (tmp_path / "team_a" / "lightrag.sqlite3").is_file()


def test_delete_from_another_workspace_is_404_and_leaves_a_intact(app_for):
    with TestClient(app_for()) as client:
        _insert_into_a(client)
        assert client.delete("/documents/v", headers=B).status_code == 404
        assert client.delete("/documents/v").status_code == 404
        assert client.get("/documents/v", headers=A).json()["status"] == "processed"
        assert client.get("/documents", headers=A).json()["counts"]["processed"] == 2
        assert client.delete("/documents/v", headers=A).status_code == 200
        assert client.get("/documents/v", headers=A).status_code == 404


def test_path_prefix_selects_the_workspace_like_the_header(app_for):
    with TestClient(app_for()) as client:
        _insert_into_a(client, headers={})
        assert client.get("/w/team_a/documents").json()["total"] == 0
        client.post("/w/team_a/documents", json={"texts": "Mars has Phobos.", "ids": "m",
                                                 "wait": True})
        assert client.get("/documents/m", headers=A).json()["status"] == "processed"
        assert client.get("/w/team_a/documents/m").json()["status"] == "processed"
        assert client.get("/documents/m").status_code == 404
        assert client.get("/w/default/documents").json()["total"] == 2
        answer = client.post("/w/team_a/query", json={"query": "Phobos", "mode": "naive",
                                                      "only_need_context": True})
        assert answer.status_code == 200 and "Phobos" in answer.json()["response"]
        same = client.get("/w/team_a/documents", headers=A)
        assert same.status_code == 200
        clash = client.get("/w/team_a/documents", headers=B)
        assert clash.status_code == 400 and "team-b" in clash.json()["detail"]


@pytest.mark.parametrize("name", ["../etc", "a b", "x" * 65, "é", "a.b"])
def test_bad_workspace_names_are_400(app_for, name):
    with TestClient(app_for()) as client:
        answer = client.get("/documents", headers={"LIGHTRAG-WORKSPACE": name.encode()})
        assert answer.status_code == 400 and "invalid workspace name" in answer.json()["detail"]
        if "/" not in name and " " not in name:
            by_path = client.get(f"/w/{name}/documents")
            assert by_path.status_code == 400, by_path.text
    assert not app_for().opened


def test_keys_limited_to_workspaces(app_for):
    app = app_for(api_keys=["admin", "a-key:team_a", "ab-key:team_a,team-b,default"])
    with TestClient(app) as client:
        admin, a_key = {"X-API-Key": "admin"}, {"Authorization": "Bearer a-key"}
        _insert_into_a(client, headers={**A, **admin})
        assert client.get("/documents", headers=A).status_code == 401
        assert client.get("/documents", headers={**A, **a_key}).json()["total"] == 2
        for forbidden in (B, {}, {"LIGHTRAG-WORKSPACE": "default"}):
            answer = client.get("/documents", headers={**forbidden, **a_key})
            assert answer.status_code == 403, (forbidden, answer.text)
        assert client.delete("/documents/v", headers={**B, **a_key}).status_code == 403
        assert client.get("/w/team-b/graph/labels", headers=a_key).status_code == 403
        assert client.post("/w/team-b/query", headers=a_key, json={"query": "x"}).status_code == 403
        assert client.get("/documents/v", headers={**A, **a_key}).json()["status"] == "processed"
        assert client.get("/documents", headers={**B, "X-API-Key": "ab-key"}).status_code == 200
        names = [w["name"] for w in client.get("/workspaces", headers=a_key).json()["workspaces"]]
        assert names == ["team_a"]
        names = [w["name"] for w in client.get("/workspaces", headers=admin).json()["workspaces"]]
        assert names == ["default", "team-b", "team_a"]
        assert client.get("/workspaces").status_code == 401
        assert client.get("/health").status_code == 200


def test_workspace_keys_from_the_environment():
    env = {"LIGHTRAG_API_KEYS": "admin; acme-key:acme,globex\nother:globex"}
    ring = KeyRing(api_keys_from_env(env))
    assert ring.scopes == {"admin": None, "acme-key": frozenset({"acme", "globex"}),
                           "other": frozenset({"globex"})}
    assert KeyRing(api_keys_from_env({"LIGHTRAG_API_KEYS": "k1,k2"})).scopes == {"k1": None,
                                                                                  "k2": None}
    assert KeyRing({"k": ["acme"], "root": None}).allows("k", "acme")
    with pytest.raises(ValueError, match="invalid workspace name"):
        KeyRing(["k:bad name"])
    with pytest.raises(ValueError, match="names none"):
        KeyRing(["k:"])


def test_each_workspace_has_its_own_background_runner(app_for):
    app = app_for()
    with TestClient(app) as client:
        accepted = client.post("/documents", headers=A, json={"texts": "Io orbits Jupiter.",
                                                               "ids": "io"})
        assert accepted.status_code == 202
        server = app.state.lightrag
        team_a = server.workspaces.states["team_a"]
        assert team_a.intake is not server.default.intake
        for _ in range(500):
            if client.get("/documents/io", headers=A).json()["status"] == "processed":
                break
            time.sleep(0.01)
        assert client.get("/documents/io", headers=A).json()["status"] == "processed"
        assert client.get("/documents", headers=B).json()["counts"].get("queued") == 0
        assert not server.default.intake.busy


def test_least_recently_used_idle_workspace_is_closed_and_reopens(app_for):
    app = app_for(max_workspaces=1)
    with TestClient(app) as client:
        _insert_into_a(client)
        assert client.get("/documents", headers=B).status_code == 200
        pool = app.state.lightrag.workspaces
        assert list(pool.states) == ["team-b"]
        assert client.get("/documents", headers=A).json()["counts"]["processed"] == 2
        assert list(pool.states) == ["team_a"]
        listed = client.get("/workspaces").json()["workspaces"]
        assert {w["name"]: w["open"] for w in listed} == {"default": True, "team-b": False,
                                                         "team_a": True}
    assert app.opened == ["team_a", "team-b", "team_a"]


def test_default_workspace_names_and_the_server_workspace(tmp_path):
    rag = make_rag(tmp_path, workspace="main")
    app = create_app(rag, api_keys=[], workspace_factory=lambda n: make_rag(tmp_path, workspace=n))
    with TestClient(app) as client:
        client.post("/documents", json={"texts": "Io orbits Jupiter.", "ids": "io", "wait": True})
        for headers in ({"LIGHTRAG-WORKSPACE": "main"}, {"LIGHTRAG-WORKSPACE": "default"}, {}):
            assert client.get("/documents/io", headers=headers).status_code == 200
        assert not app.state.lightrag.workspaces.states  # "main" is the default one, not reopened


def test_query_request_has_every_query_param_field():
    fields = set(QueryRequest.model_fields)
    assert set(QueryParam().to_dict()) <= fields
    assert {"query", "include_raw_data"} <= fields
    assert QueryRequest(query="q", drop_unsupported=True).drop_unsupported is True
    with pytest.raises(ValueError):
        QueryRequest(query="q", top_k="10")
    with pytest.raises(ValueError, match="related_chunk_number"):
        QueryRequest(query="q", related_chunk_number=0)


def test_the_web_ui_has_a_workspace_switch(app_for):
    with TestClient(app_for()) as client:
        page = client.get("/").text
        assert 'id="workspace"' in page and 'id="use-workspace"' in page
        script = client.get("/static/app.js").text
        assert '"LIGHTRAG-WORKSPACE"' in script and "lightrag.workspace" in script
        assert client.get("/w/team_a/").status_code == 200  # the UI under a workspace prefix


def test_without_a_factory_workspaces_are_built_from_the_rags_own_config(tmp_path):
    import graph_fakes  # noqa: F401  (registers the scripted model functions by name)
    from server_fixtures import SCRIPTED

    from lightrag.utils.config import build

    config = {**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                               "working_dir": str(tmp_path)}}
    with TestClient(create_app(build(config), api_keys=[])) as client:
        _insert_into_a(client)
        assert client.get("/documents", headers=A).json()["total"] == 2
        assert client.get("/documents").json()["total"] == 0
    assert (tmp_path / "team_a" / "lightrag.sqlite3").is_file()


def test_openapi_documents_the_workspace_header(app_for):
    with TestClient(app_for()) as client:
        schema = client.get("/openapi.json").json()
        params = schema["paths"]["/query"]["post"]["parameters"]
        assert any(p["name"] == "LIGHTRAG-WORKSPACE" and p["in"] == "header" for p in params)
        assert "/workspaces" in schema["paths"]


def test_a_running_insert_holds_up_only_its_own_workspace(tmp_path):
    import threading

    from graph_fakes import extraction_reply
    from server_fixtures import GatedAsyncClient

    gate = threading.Event()  # team_a's extraction waits for it

    def factory(name):
        if name == "team_a":
            return make_rag(tmp_path, workspace=name,
                            extraction_client=GatedAsyncClient(gate, response_fn=extraction_reply))
        return make_rag(tmp_path, workspace=name)

    with TestClient(create_app(make_rag(tmp_path), api_keys=[], workspace_factory=factory)) as client:
        assert client.post("/documents", headers=A, json={"texts": "Io orbits Jupiter.",
                                                          "ids": "io"}).status_code == 202
        assert client.post("/documents", headers=B, json={"texts": "Mars has Phobos.", "ids": "m",
                                                          "wait": True}).status_code == 200
        assert client.delete("/documents/m", headers=B).status_code == 200  # no wait on team_a
        busy = client.delete("/documents/io", headers=A)
        assert busy.status_code == 503 and int(busy.headers["Retry-After"]) >= 1
        gate.set()
        for _ in range(500):
            if client.get("/documents/io", headers=A).json()["status"] == "processed":
                break
            time.sleep(0.01)
        assert client.delete("/documents/io", headers=A).status_code == 200


def test_a_key_limited_to_the_servers_own_workspace_name_uses_it(tmp_path):
    """``lightrag serve --workspace acme``: the default workspace is acme, and a key limited to
    "acme" was refused on it (403) whatever it sent."""
    rag = make_rag(tmp_path, workspace="acme")
    app = create_app(rag, api_keys=["admin", "acme-key:acme", "globex-key:globex"],
                     workspace_factory=lambda n: make_rag(tmp_path, workspace=n))
    with TestClient(app) as client:
        client.post("/documents", headers={"X-API-Key": "admin"},
                    json={"texts": "Io orbits Jupiter.", "ids": "io", "wait": True})
        for headers in ({}, {"LIGHTRAG-WORKSPACE": "acme"}, {"LIGHTRAG-WORKSPACE": "default"}):
            assert client.get("/documents/io", headers={"X-API-Key": "acme-key", **headers}
                              ).status_code == 200, headers
            assert client.get("/documents/io", headers={"X-API-Key": "globex-key", **headers}
                              ).status_code == 403, headers
        listed = client.get("/workspaces", headers={"X-API-Key": "acme-key"}).json()["workspaces"]
        assert [w["name"] for w in listed] == ["default"]


def test_a_workspace_differing_only_in_case_from_a_stored_one_is_409(app_for, tmp_path):
    """Red team 5: on a case-insensitive file system ``Acme`` and ``acme`` were one store, so two
    keys each limited to one name reached the same data; now the second name is refused."""
    app = app_for(api_keys=["a-key:Acme", "b-key:acme"])
    with TestClient(app) as client:
        _insert_into_a(client, headers={"LIGHTRAG-WORKSPACE": "Acme", "X-API-Key": "a-key"})
        twin = client.get("/documents", headers={"LIGHTRAG-WORKSPACE": "acme", "X-API-Key": "b-key"})
        assert twin.status_code == 409, twin.text
        assert "'acme' differs only in case from 'Acme'" in twin.json()["detail"]
        own = client.get("/documents", headers={"LIGHTRAG-WORKSPACE": "Acme", "X-API-Key": "a-key"})
        assert own.json()["counts"]["processed"] == 2
    assert not (tmp_path / "acme").exists() or (tmp_path / "acme").samefile(tmp_path / "Acme")
