"""The prompt benchmark use case runs from the repository alone: its shipped QA set, the
per-metric result folders, re-scoring from the cache, and the plot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lightrag.optim.bench_cli import load_dataset, runner_from_config

HERE = Path(__file__).resolve().parent.parent / "use_cases" / "prompt_benchmark"
CONFIG = HERE / "variants.yaml"
SCRIPTED = {"model_client": {"component_name": "ScriptedClient",
                             "component_config": {"responses": ["Answer: Salzburg"],
                                                  "cycle": True}}}


def test_shipped_set_has_the_documented_format():
    items = load_dataset(HERE / "data", "queries.json")
    assert 20 <= len(items) <= 40
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        assert set(item) == {"id", "question", "paragraphs", "answer", "answer_aliases"}
        assert item["question"].endswith("?") and item["answer"]
        assert isinstance(item["answer_aliases"], list)
        supporting = [p for p in item["paragraphs"] if p["is_supporting"]]
        assert supporting and len(item["paragraphs"]) == 5
        assert [p["idx"] for p in item["paragraphs"]] == list(range(5))
        for paragraph in item["paragraphs"]:
            assert set(paragraph) == {"idx", "title", "paragraph_text", "is_supporting"}


def test_answers_are_in_their_supporting_passages_and_bm25_finds_them():
    sys.path.insert(0, str(HERE))
    from qa_pipeline import MusiqueQA  # noqa: E402 - registered by the use case

    from lightrag.components.model_client import ScriptedClient

    qa = MusiqueQA(model_client=ScriptedClient())
    found = 0
    for item in load_dataset(HERE / "data", "queries.json"):
        support = " ".join(p["paragraph_text"] for p in item["paragraphs"] if p["is_supporting"])
        refs = [item["answer"], *item["answer_aliases"]]
        assert any(ref.lower().removeprefix("the ") in support.lower() for ref in refs), item["id"]
        top = qa.retrieve(item["question"], item["paragraphs"])
        gold = [p["paragraph_text"] for p in item["paragraphs"] if p["is_supporting"]]
        found += all(any(g in t for t in top) for g in gold)
    assert found >= 0.8 * len(load_dataset(HERE / "data", "queries.json"))


def test_runs_from_the_repo_alone_and_rescoring_keeps_each_metric(tmp_path):
    runner, limit = runner_from_config(CONFIG, pipeline_overrides=SCRIPTED,
                                       cache_path=tmp_path / "responses.sqlite")
    assert limit == 20 and runner.dataset[0]["id"] == "qa01"
    f1 = runner.run(limit=4)
    paths = f1.save(tmp_path / runner.metric_name)
    assert paths["png"].stat().st_size > 0 and (tmp_path / "f1" / "results.json").exists()
    assert f1["plain"].mean == pytest.approx(0.25)  # the scripted answer fits the first question

    again, _ = runner_from_config(CONFIG, pipeline_overrides=SCRIPTED,
                                  cache_path=tmp_path / "responses.sqlite")
    from lightrag.optim.bench_cli import make_metric

    again.metric, again.metric_name = make_metric(
        {"name": "contains", "answer_key": "answer", "aliases_key": "answer_aliases"})
    contains = again.run(limit=4)
    contains.save(tmp_path / again.metric_name)
    assert all(v.model_calls == 0 for v in contains.variants)  # served from the cache
    saved = json.loads((tmp_path / "f1" / "results.json").read_text())
    assert saved["metric"] == "f1" and (tmp_path / "contains" / "scores.png").exists()


def test_run_py_without_musique_uses_the_shipped_set_and_reports_a_missing_folder(tmp_path):
    missing = subprocess.run(
        [sys.executable, str(HERE / "run.py"), "--data", str(tmp_path / "nowhere"),
         "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "dataset not found" in missing.stderr
    assert "Traceback" not in missing.stderr
