"""The `lightrag` graph commands on a scripted config, and the packaged default config with its
real offline models (spaCy extraction, MiniLM embeddings)."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lightrag.cli import main
from lightrag.cli.common import packaged_config
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


def make_corpus(folder):
    """A folder with a PDF, a DOCX, an HTML page, Markdown and text, plus files to skip."""
    from test_loaders import make_docx, make_pdf, para

    folder.mkdir()
    (folder / "voyager.md").write_text("# Voyager\n\nNASA launched Voyager 1 in 1977. "
                                       "Voyager 1 flew past [Saturn](https://x).")
    (folder / "cassini.txt").write_text("Cassini reached Saturn in 2004. Huygens landed on Titan.")
    (folder / "hubble.pdf").write_bytes(make_pdf(["Hubble measured the expansion of the Universe."]))
    (folder / "apollo.docx").write_bytes(make_docx(para("Armstrong walked on the Moon in 1969.")))
    (folder / "juno.html").write_text("<html><body><nav>Home Menu</nav><main><p>Juno orbits "
                                      "Jupiter since 2016.</p></main></body></html>")
    (folder / "empty.txt").write_text("")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "broken.pdf").write_text("not a pdf")
    return folder


def test_index_formats_query_docs_delete(tmp_path, scripted_config, capsys):
    docs = make_corpus(tmp_path / "docs")
    store = str(tmp_path / "store")
    common = ["--config", str(scripted_config), "--working-dir", store]

    code, out, _ = run(capsys, "index", str(docs), *common)
    assert code == 0 and "documents: 5 processed" in out and "entities" in out
    assert f"skipped {docs / 'empty.txt'}: empty" in out
    assert f"skipped {docs / 'logo.png'}: binary" in out
    assert f"skipped {docs / 'broken.pdf'}: unsupported (unreadable PDF" in out
    code, out, _ = run(capsys, "index", str(docs), *common)
    assert "5 already indexed" in out

    code, out, _ = run(capsys, "docs", "--json", *common)
    rows = json.loads(out)
    assert sorted(Path(r["file_path"]).name for r in rows) == [
        "apollo.docx", "cassini.txt", "hubble.pdf", "juno.html", "voyager.md"]
    assert all(r["status"] == "processed" and r["chunks"] >= 1 and not r["error"] for r in rows)
    code, out, _ = run(capsys, "docs", *common)
    assert out.splitlines()[0].split() == ["id", "status", "chunks", "chars", "file_path", "error"]
    assert str(docs / "hubble.pdf") in out
    newest = sorted(rows, key=lambda r: (r["updated_at"], r["id"]), reverse=True)
    pages = [json.loads(run(capsys, "docs", "--json", "--limit", "2", "--page", str(p), *common)[1])
             for p in (1, 2, 3)]
    assert [r["id"] for page in pages for r in page] == [r["id"] for r in newest]
    assert [len(page) for page in pages] == [2, 2, 1]
    code, _, err = run(capsys, "docs", "--page", "2", *common)
    assert code == 2 and "--page needs --limit" in err

    code, out, _ = run(capsys, "query", "Which spacecraft flew past Saturn?", "--mode", "local", *common)
    assert code == 0 and "The answer." in out and "Sources:" in out
    code, out, _ = run(capsys, "query", "Which spacecraft flew past Saturn?", "--mode", "ppr",
                       "--json", *common)
    assert code == 0 and json.loads(out)["mode"] == "ppr"
    code, out, _ = run(capsys, "query", "Saturn", "--top-k", "3", "--json", *common)
    answer = json.loads(out)
    assert answer["answer"] == "The answer." and answer["mode"] == "mix"
    assert {"reference_id", "file_path"} <= set(answer["references"][0])
    code, out, _ = run(capsys, "query", "Saturn", "--context-only", *common)
    assert "Document Chunks" in out
    code, out, _ = run(capsys, "query", "Saturn", "--stream", *common)
    assert "The answer." in out

    code, out, _ = run(capsys, "status", *common)
    assert yaml.safe_load(out)["documents"]["processed"] == 5
    code, out, _ = run(capsys, "check", *common)
    assert code == 0 and out.strip().endswith("consistent")

    pdf_path = str(docs / "hubble.pdf")
    code, out, _ = run(capsys, "delete", pdf_path, *common)
    pdf_id = next(r["id"] for r in rows if r["file_path"] == pdf_path)
    assert code == 0 and out.startswith(f"deleted {pdf_id}")
    first = next(r["id"] for r in rows if r["file_path"] != pdf_path)
    code, out, _ = run(capsys, "delete", first, *common)
    assert code == 0 and out.startswith(f"deleted {first}")
    code, out, _ = run(capsys, "docs", "--json", *common)
    assert len(json.loads(out)) == 3
    code, out, err = run(capsys, "delete", "doc-nope", *common)
    assert code == 0 and "not found doc-nope: no document with this id or file path" in out


def test_export_format_from_extension_and_normal_permissions(tmp_path, scripted_config, capsys):
    docs = make_corpus(tmp_path / "docs")
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "store")]
    assert run(capsys, "index", str(docs), *common)[0] == 0
    old_umask = os.umask(0o022)
    try:
        code, out, _ = run(capsys, "export", str(tmp_path / "kg.json"), *common)
        assert code == 0 and json.loads((tmp_path / "kg.json").read_text())["nodes"]
        code, out, _ = run(capsys, "export", str(tmp_path / "kg.graphml"), *common)
        assert (tmp_path / "kg.graphml").read_text().lstrip().startswith("<?xml")
        code, out, _ = run(capsys, "export", str(tmp_path / "kg.csv"), *common)
        written = [tmp_path / "kg_entities.csv", tmp_path / "kg_relations.csv"]
        assert out.strip() == f"exported the graph (csv) to {written[0]}, {written[1]}"
        for path in [tmp_path / "kg.json", tmp_path / "kg.graphml", *written]:
            assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    finally:
        os.umask(old_umask)
    code, _, err = run(capsys, "export", str(tmp_path / "kg.json"), "--format", "graphml", *common)
    assert code == 2 and "does not match the file name" in err
    code, _, err = run(capsys, "export", str(tmp_path / "kg.dat"), *common)
    assert code == 2 and "cannot tell the export format" in err


def test_query_without_a_store_says_to_index(tmp_path, scripted_config, capsys):
    missing = tmp_path / "nothing-here"
    for command in (["query", "What?"], ["docs"], ["delete", "doc-1"], ["status"]):
        code, out, err = run(capsys, *command, "--config", str(scripted_config),
                             "--working-dir", str(missing))
        assert code == 2 and "run `lightrag index PATH...` first" in err and not out
    assert not missing.exists()  # asking does not create a store
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(capsys, "query", "What?", "--config", str(scripted_config),
                       "--working-dir", str(empty))
    assert code == 2 and "no documents indexed" in err


def test_cli_input_errors(tmp_path, scripted_config, capsys):
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "s")]
    code, _, err = run(capsys, "index", str(tmp_path / "missing"), *common)
    assert code == 2 and "no such file" in err
    bad = tmp_path / "a.pdf"
    bad.write_text("x")
    code, out, err = run(capsys, "index", str(bad), *common)
    assert code == 2 and "nothing to index" in err and "skipped" in out and "unreadable PDF" in out


def test_the_cli_offers_every_query_mode():
    from lightrag import cli
    from lightrag.components.graph_rag.schemas import QUERY_MODES

    assert tuple(cli.QUERY_MODES) == QUERY_MODES


def test_version_and_print_config_yaml(scripted_config, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.strip() == "lightrag 0.2.0"
    code, out, _ = run(capsys, "print-config", str(scripted_config), "--yaml")
    assert code == 0 and yaml.safe_load(out)["component_name"] == "GraphRAG"
    code, plain, _ = run(capsys, "print-config", str(scripted_config))
    assert plain == out
    code, tree, _ = run(capsys, "print-config", str(scripted_config), "--tree")
    assert tree.startswith("GraphRAG(")


def test_closed_pipe_gives_no_traceback():
    config = packaged_config("numpy_rag.yaml")
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from lightrag.cli import main; "
                             "sys.exit(main(sys.argv[1:]))", "print-config", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head` that already exited
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_default_config_builds_and_round_trips(tmp_path):
    config = yaml.safe_load(packaged_config("graph_rag_default.yaml").read_text())
    config["component_config"]["working_dir"] = str(tmp_path)
    rag = build(config)
    assert type(rag.extractor).__name__ == "SpacyEntityExtractor"
    assert repr(build(rag.to_config())) == repr(rag)


@pytest.mark.slow
def test_default_offline_pipeline_builds_a_real_graph(tmp_path):
    config = yaml.safe_load(packaged_config("graph_rag_default.yaml").read_text())
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


def test_index_progress_bar_only_on_a_terminal(tmp_path, scripted_config, capsys, monkeypatch):
    import lightrag.cli.index as cli_index

    docs = make_corpus(tmp_path / "docs")
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "store")]
    code, out, err = run(capsys, "index", str(docs), *common)  # captured stdout: not a terminal
    assert code == 0 and "indexing" not in err and "ETA" not in err
    monkeypatch.setattr(cli_index, "stdout_is_terminal", lambda: True)
    (docs / "more.txt").write_text("Galileo observed the moons of Jupiter in 1610.")
    code, out, err = run(capsys, "index", str(docs), *common)
    assert code == 0 and "documents: 1 processed, 5 already indexed" in out
    final = err.strip().splitlines()[-1]
    assert "indexing" in final and "100%" in final and "1/1 files" in final  # the new one
    assert "chunks" in final and "entities" in final and "ETA" in final


def test_reindexing_an_edited_file_replaces_its_text(tmp_path, scripted_config, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    acme, px1 = docs / "acme.md", docs / "px1.txt"
    acme.write_text("# Acme\n\nAda Lovelace founded Acme Robotics in Lyon in 2019.")
    px1.write_text("Acme Robotics sells the PX-1 robot arm.")
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "store")]
    assert run(capsys, "index", str(docs), *common)[0] == 0
    before = {r["file_path"]: r["id"] for r in json.loads(run(capsys, "docs", "--json", *common)[1])}

    acme.write_text("# Acme\n\nGrace Hopper founded Acme Robotics in Nantes in 2021.")
    code, out, _ = run(capsys, "index", str(docs), *common)
    assert code == 0 and "1 processed, 1 already indexed" in out
    rows = json.loads(run(capsys, "docs", "--json", *common)[1])
    assert {r["file_path"]: r["id"] for r in rows} == before  # one document per file, same ids
    context = run(capsys, "query", "Who founded Acme Robotics?", "--context-only", *common)[1]
    assert "Grace Hopper" in context and "Ada Lovelace" not in context
    assert run(capsys, "check", *common)[1].strip().endswith("consistent")


def test_a_file_stored_twice_is_named_when_indexed(tmp_path, scripted_config, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "acme.md").write_text("Grace Hopper founded Acme Robotics in Nantes in 2021.")
    store = tmp_path / "store"
    rag = build({**SCRIPTED, "component_config": {**SCRIPTED["component_config"],
                                                  "working_dir": str(store)}})
    path = str(docs / "acme.md")
    rag.insert(["Ada Lovelace founded Acme Robotics.", "Acme Robotics was founded in Lyon."],
               ids=["old-1", "old-2"], file_paths=[path, path])
    rag.index.close()
    code, out, _ = run(capsys, "index", str(docs), "--config", str(scripted_config),
                       "--working-dir", str(store))
    assert code == 0 and f"{path} is stored as 2 documents: old-1 is replaced" in out


def test_sources_after_an_answer_are_the_ones_it_cites():
    from types import SimpleNamespace

    from lightrag.cli.common import cited_references

    refs = [{"reference_id": str(i), "file_path": f"f{i}.md"} for i in range(1, 8)]
    result = SimpleNamespace(references=refs)
    assert [r["file_path"] for r in cited_references(result, "A. [1] B. [3, 1]")] == ["f1.md", "f3.md"]
    assert cited_references(result, "An answer without citations.") == refs


def test_escape_sequences_in_documents_and_file_names_are_shown_not_sent(tmp_path, scripted_config, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "evil\x1b]0;pwned\x07\nfake-row.txt").write_text(
        "Saturn has rings.\x1b[2J\x1b]52;c;ZXZpbA==\x07 Cassini reached Saturn in 2004.\u202e")
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "store")]
    assert run(capsys, "index", str(docs), *common)[0] == 0
    for argv in (["docs"], ["query", "Saturn", "--mode", "naive"], ["query", "Saturn", "--context-only"]):
        code, out, _ = run(capsys, *argv, *common)
        assert code == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    table = run(capsys, "docs", *common)[1].splitlines()
    assert len(table) == 2 and "\\x1b]0;pwned\\x07\\nfake-row.txt" in table[1]


def test_links_in_a_folder_to_files_outside_it_are_not_indexed(tmp_path, scripted_config, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("The vault code is 4242.")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("Cassini reached Saturn in 2004.")
    (docs / "inside.txt").symlink_to(docs / "notes.txt")
    (docs / "link.txt").symlink_to(secret)
    common = ["--config", str(scripted_config), "--working-dir", str(tmp_path / "store")]
    code, out, _ = run(capsys, "index", str(docs), *common)
    assert code == 0 and f"skipped {docs / 'link.txt'}: outside" in out
    rows = json.loads(run(capsys, "docs", "--json", *common)[1])
    assert rows and "link.txt" not in {Path(r["file_path"]).name for r in rows}  # a link inside is read
    assert "4242" not in run(capsys, "query", "vault code", "--context-only", *common)[1]


@pytest.mark.parametrize("workspace", ["../x", ".."])
def test_a_workspace_outside_the_working_dir_is_refused_before_anything_is_created(tmp_path, capsys,
                                                                                     workspace):
    store = tmp_path / "a" / "store"
    store.mkdir(parents=True)
    code, _, err = run(capsys, "status", "--working-dir", str(store), "--workspace", workspace)
    assert code == 2 and "plain file-name part" in err
    assert not list(tmp_path.rglob("*.sqlite3"))


@pytest.mark.subprocess
def test_log_lines_of_the_cli_escape_control_characters_of_file_names(tmp_path):
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.txt").write_text("Cassini reached Saturn in 2004.")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (docs / "x\x1b]0;PWNED\x07.txt").symlink_to(outside)
    done = subprocess.run([sys.executable, "-m", "lightrag.cli", "index", str(docs), "--working-dir",
                           str(tmp_path / "store"), "--config", "numpy_rag.yaml"],
                          capture_output=True, text=True, timeout=300)
    assert "outside" in done.stderr + done.stdout, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "\\x1b]0;PWNED\\x07" in done.stderr + done.stdout


@pytest.mark.parametrize("workspace", [".hidden", "w" * 300])
def test_hidden_and_over_long_workspaces_are_refused_with_a_message(tmp_path, capsys, workspace):
    store = tmp_path / "store"
    store.mkdir()
    code, _, err = run(capsys, "status", "--working-dir", str(store), "--workspace", workspace)
    assert code == 2 and "plain file-name part" in err


def test_a_streamed_answer_lists_the_sources_it_cites(tmp_path, capsys):
    import graph_fakes  # noqa: F401  (registers the fake model functions)

    config = json.loads(json.dumps(SCRIPTED))
    config["component_config"]["answer_generator"]["component_config"]["model_client"][
        "component_config"]["response_fn"]["class"] = "the_cited_answer"
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(config))
    common = ["--config", str(path), "--working-dir", str(tmp_path / "store")]
    run(capsys, "index", str(make_corpus(tmp_path / "docs")), *common)
    for extra in ([], ["--stream"]):
        code, out, _ = run(capsys, "query", "Which spacecraft flew past Saturn?", *extra, *common)
        sources = out.split("Sources:", 1)[1]
        assert code == 0 and "[1]" in sources and "[2]" not in sources, extra
