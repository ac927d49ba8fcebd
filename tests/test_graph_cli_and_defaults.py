"""The `lightrag` graph commands on a scripted config, and the packaged default config with its
real offline models (spaCy extraction, MiniLM embeddings)."""

import json

import pytest
import yaml

from lightrag.cli import _packaged_config, main
from lightrag.components.storage import JsonDocStatusStorage
from lightrag.data import load_sample_docs
from lightrag.utils import build

SCRIPTED = {
    "component_name": "GraphRAG",
    "component_config": {
        "embedder": {"component_name": "Embedder", "component_config": {
            "model_client": {"component_name": "ScriptedClient",
                             "component_config": {"embedding_dim": 256}}}},
        "extractor": {"component_name": "EntityExtractor", "component_config": {
            "generator": {"component_name": "Generator", "component_config": {
                "model_client": {"component_name": "ScriptedClient",
                                 "component_config": {"response_fn": {"class": "extraction_reply"}}}}}}},
        "answer_generator": {"component_name": "Generator", "component_config": {
            "model_client": {"component_name": "ScriptedClient",
                             "component_config": {"response_fn": {"class": "the_answer"}}}}},
        "cosine_threshold": 0.05,
    },
}


@pytest.fixture
def scripted_config(tmp_path):
    import graph_fakes  # noqa: F401  (registers the fake model functions)

    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(SCRIPTED))
    return path


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_index_query_status_export_delete(tmp_path, scripted_config, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "voyager.md").write_text("NASA launched Voyager 1 in 1977. Voyager 1 flew past Saturn.")
    (docs / "cassini.txt").write_text("Cassini reached Saturn in 2004. Huygens landed on Titan.")
    (docs / "ignored.pdf").write_text("not indexed")
    store = str(tmp_path / "store")
    common = ["--config", str(scripted_config), "--working-dir", store]

    code, out, _ = run(capsys, "index", str(docs), *common)
    assert code == 0 and "documents: 2 processed" in out and "entities" in out
    code, out, _ = run(capsys, "index", str(docs), *common)
    assert "2 already indexed" in out

    code, out, _ = run(capsys, "query", "Which spacecraft flew past Saturn?", "--mode", "local", *common)
    assert code == 0 and "The answer." in out and "Sources:" in out
    code, out, _ = run(capsys, "query", "Saturn", "--context-only", *common)
    assert "Document Chunks" in out
    code, out, _ = run(capsys, "query", "Saturn", "--stream", *common)
    assert "The answer." in out

    code, out, _ = run(capsys, "status", *common)
    assert yaml.safe_load(out)["documents"]["processed"] == 2

    code, out, _ = run(capsys, "export", str(tmp_path / "kg.json"), "--format", "json", *common)
    assert code == 0 and json.loads((tmp_path / "kg.json").read_text())["nodes"]

    doc_ids = JsonDocStatusStorage(namespace="doc_status", working_dir=store).keys()
    code, out, _ = run(capsys, "delete", doc_ids[0], *common)
    assert code == 0 and out.startswith(f"deleted {doc_ids[0]}")
    assert JsonDocStatusStorage(namespace="doc_status", working_dir=store).keys() == doc_ids[1:]
    code, out, err = run(capsys, "delete", "doc-nope", *common)
    assert code == 2 and "no document" in err


def test_cli_input_errors(tmp_path, scripted_config, capsys):
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "s")]
    code, _, err = run(capsys, "index", str(tmp_path / "missing"), *common)
    assert code == 2 and "no such file" in err
    bad = tmp_path / "a.pdf"
    bad.write_text("x")
    code, _, err = run(capsys, "index", str(bad), *common)
    assert code == 2 and "only .txt and .md" in err


def test_default_config_builds_and_round_trips(tmp_path):
    config = yaml.safe_load(_packaged_config("graph_rag_default.yaml").read_text())
    config["component_config"]["working_dir"] = str(tmp_path)
    rag = build(config)
    assert type(rag.extractor).__name__ == "SpacyEntityExtractor"
    assert repr(build(rag.to_config())) == repr(rag)


@pytest.mark.slow
def test_default_offline_pipeline_builds_a_real_graph(tmp_path):
    config = yaml.safe_load(_packaged_config("graph_rag_default.yaml").read_text())
    config["component_config"]["working_dir"] = str(tmp_path)
    rag = build(config)
    docs = load_sample_docs()
    result = rag.insert([t for _, t in docs], file_paths=[n for n, _ in docs])
    assert len(result.processed) == 5 and not result.failed
    assert rag.graph.has_node("Titan") and rag.graph.has_node("NASA")
    assert rag.graph.node_degree("Saturn") > 3
    local = rag.query("Which moon of Saturn did the Huygens probe land on?", mode="local",
                      only_need_context=True)
    assert "Titan" in [e["entity_name"] for e in local.raw_data["entities"]]
    naive = rag.query("Who walked on the Moon?", mode="naive", only_need_context=True)
    assert naive.raw_data["references"][0]["file_path"] == "apollo.md"
    mix = rag.query("What did the Hubble Space Telescope measure?", mode="mix",
                    only_need_context=True)
    assert "hubble.md" in [r["file_path"] for r in mix.raw_data["references"]]
