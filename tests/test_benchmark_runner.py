"""The prompt-variant benchmark runner with a scripted model: determinism, cache, statistics,
failures, variant application, outputs and the bench-prompts command."""

import argparse
import csv
import json
import re
import threading
import time

import pytest

from lightrag.cli.bench import add_bench_prompts_parser
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter
from lightrag.optim import BenchmarkRunner, Variant, build_variant, load_variants
from lightrag.optim.bench_cli import make_metric
from lightrag.optim.stats import bootstrap_ci, holm_adjust, paired_permutation_test
from lightrag.utils.registry import register

DATA = [{"id": f"q{i}", "question": f"q{i}", "answer": f"a{i}"} for i in range(10)]


class FakeModel:
    """Answers "a<i>" for question q<i> when the prompt says CAREFUL, else only for even i.
    Question q3 with FAIL in the prompt raises (a failing model call)."""

    def __init__(self, delay: float = 0.0):
        self.calls = 0
        self.delay = delay
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay)
        i = int(re.search(r"q(\d+)", prompt).group(1))
        if "FAIL" in prompt and i == 3:
            raise RuntimeError("provider timeout")
        return f"a{i}" if ("CAREFUL" in prompt or i % 2 == 0) else "no idea"


def make_factory(model):
    class QA(Component):
        def __init__(self):
            super().__init__()
            self.generator = Generator(
                model_client=ScriptedClient(response_fn=model), template="{{instruction}} {{question}}",
                prompt_kwargs={"instruction": Parameter(data="Answer:")})

        def call(self, question):
            return self.generator(prompt_kwargs={"question": question})

    return QA


def exact(pred, item):
    return float(pred == item["answer"])


VARIANTS = [
    {"name": "plain"},
    {"name": "careful", "params": {"generator.instruction": "Be CAREFUL:"}},
    {"name": "tmpl", "template": "CAREFUL {{instruction}} {{question}}", "model_kwargs": {"temperature": 0}},
]


def runner(model, tmp_path=None, variants=VARIANTS, **kw):
    return BenchmarkRunner(make_factory(model), DATA, exact, variants, inputs="question",
                           cache_path=tmp_path / "cache.sqlite" if tmp_path else None,
                           n_resamples=2000, **kw)


def test_means_paired_delta_and_exact_p_value():
    report = runner(FakeModel()).run()
    plain, careful = report["plain"], report["careful"]
    assert (plain.mean, careful.mean, report["tmpl"].mean) == (0.5, 1.0, 1.0)
    assert careful.delta == 0.5 and (careful.wins, careful.losses, careful.ties) == (5, 0, 5)
    # 5 items differ, all in the same direction: 2 of 2^5 sign patterns are as extreme
    assert careful.p_value == pytest.approx(2 / 32)
    assert careful.p_value_holm == pytest.approx(2 * 2 / 32)
    assert careful.ci_low == careful.ci_high == 1.0
    assert (plain.ci_low, plain.ci_high) == bootstrap_ci([o.score for o in plain.items], seed=0,
                                                         n_resamples=2000)
    assert plain.delta is None and plain.p_value is None
    assert report["tmpl"].model_calls == 10 and plain.tokens_per_item > 0


def test_runs_are_deterministic_whatever_the_concurrency():
    a = runner(FakeModel(delay=0.002), concurrency=4).run().to_dict()
    b = runner(FakeModel(), concurrency=1).run().to_dict()
    keep = ("name", "mean", "ci_low", "ci_high", "delta", "delta_ci_low", "delta_ci_high", "p_value")
    for va, vb in zip(a["variants"], b["variants"]):
        assert {k: va[k] for k in keep} == {k: vb[k] for k in keep}
        assert [(i["index"], i["score"], i["prediction"]) for i in va["items"]] == \
               [(i["index"], i["score"], i["prediction"]) for i in vb["items"]]


def test_rerun_from_cache_costs_no_model_calls(tmp_path):
    model = FakeModel()
    first = runner(model, tmp_path).run()
    assert model.calls == 30 and sum(v.model_calls for v in first.variants) == 30
    second_model = FakeModel()
    second = runner(second_model, tmp_path).run()  # a new runner and pipelines, same cache file
    assert second_model.calls == 0
    assert all(v.model_calls == 0 and v.cached_calls == 10 for v in second.variants)
    for v1, v2 in zip(first.variants, second.variants):
        assert (v1.mean, v1.p_value, v1.tokens_per_item) == (v2.mean, v2.p_value, v2.tokens_per_item)
        assert v1.latency_mean_s == pytest.approx(v2.latency_mean_s)  # stored latency replayed


def test_failing_item_is_reported_and_does_not_abort(tmp_path):
    variants = [{"name": "plain"}, {"name": "flaky", "params": {"generator.instruction": "FAIL CAREFUL"}}]
    report = runner(FakeModel(), variants=variants).run()
    flaky = report["flaky"]
    assert flaky.failures == 1 and flaky.n == 10
    failed = [i for i in flaky.items if i.error]
    assert [i.index for i in failed] == [3] and "provider timeout" in failed[0].error
    assert failed[0].score == 0.0 and flaky.mean == 0.9  # counted as 0
    paths = report.save(tmp_path / "out")
    rows = list(csv.DictReader(paths["items_csv"].open()))
    assert len(rows) == 20 and "provider timeout" in [r for r in rows if r["id"] == "q3"][1]["error"]
    assert json.loads(paths["json"].read_text())["variants"][1]["failures"] == 1
    assert paths["png"].stat().st_size > 1000
    assert "flaky" in report.to_markdown() and "Failures" in report.to_text()


def test_metric_error_is_a_failure_too():
    def bad_metric(pred, item):
        if item["id"] == "q0":
            raise KeyError("gold")
        return 1.0

    report = BenchmarkRunner(make_factory(FakeModel()), DATA, bad_metric, [{"name": "p"}],
                             inputs="question", n_resamples=200).run(limit=3)
    assert report["p"].failures == 1 and report["p"].items[0].error.startswith("metric failed")
    assert report["p"].n == 3


def test_known_statistics():
    lo, hi = bootstrap_ci([0.0, 1.0] * 50, seed=3)
    assert 0.39 <= lo <= 0.41 and 0.59 <= hi <= 0.61  # normal approx: 0.5 +- 1.96 * 0.05
    assert bootstrap_ci([]) == (None, None)
    assert paired_permutation_test([1, 0, 1], [1, 0, 1]) == 1.0
    assert paired_permutation_test([1, 0], [0, 1]) == 1.0  # one win, one loss
    p = paired_permutation_test([1.0] * 30, [0.0] * 30, n_resamples=999, seed=1)  # Monte Carlo path
    assert p == pytest.approx(1 / 1000)
    assert holm_adjust([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]


def test_variant_errors_are_raised_before_any_model_call():
    model = FakeModel()
    bad = [{"name": "plain"}, {"name": "typo", "params": {"generator.instruktion": "x"}}]
    with pytest.raises(ValueError, match="unknown parameters"):
        runner(model, variants=bad).run()
    assert model.calls == 0
    with pytest.raises(ValueError, match="unknown keys"):
        load_variants([{"name": "x", "temperature": 1}])
    with pytest.raises(ValueError, match="duplicate"):
        load_variants([{"name": "x"}, {"name": "x"}])
    with pytest.raises(ValueError, match="baseline"):
        runner(model, baseline="nope")


def test_variant_application_and_yaml_loading():
    yaml_text = """
variants:
  - name: base
  - name: other
    model_kwargs: {max_tokens: 5}
    prompt_kwargs: {extra: 1}
    model_client: {component_name: ScriptedClient, component_config: {responses: [hi]}}
"""
    base, other = load_variants(yaml_text)
    assert isinstance(other, Variant) and other.model_kwargs == {"max_tokens": 5}
    QA = make_factory(FakeModel())
    built = build_variant(QA, other)
    assert built.generator.model_kwargs == {"max_tokens": 5}
    assert built.generator.model_client.responses == ["hi"]
    assert built.generator.prompt.prompt_kwargs == {"extra": 1}
    assert build_variant(QA, base).generator.model_kwargs == {}  # a fresh copy per variant
    with pytest.raises(ValueError, match="Parameters"):
        build_variant(QA, Variant("v", prompt_kwargs={"instruction": "x"}))


@register(name="BenchTestTwoGens")
class TwoGens(Component):
    def __init__(self, answer: str = "a0", prefix: str = ""):
        super().__init__()
        client = ScriptedClient(response_fn=lambda p: answer)
        self.first = Generator(model_client=client, template=prefix + "1 {{question}}")
        self.second = Generator(model_client=client, template="2 {{question}}")

    def call(self, question):
        self.first(prompt_kwargs={"question": question})
        return self.second(prompt_kwargs={"question": question})


def test_config_pipeline_overrides_and_generator_targeting():
    config = {"component_name": "BenchTestTwoGens", "component_config": {"answer": "a0"}}
    variants = [{"name": "v0"}, {"name": "v1", "config": {"answer": "a1"}},
                {"name": "v2", "generator": "second", "template": "X {{question}}"}]
    report = BenchmarkRunner(config, DATA, exact, variants, inputs="question", n_resamples=200).run(limit=2)
    assert [i.prediction for i in report["v1"].items] == ["a1", "a1"]
    assert report["v0"].items[0].model_calls == 2  # both generators counted
    with pytest.raises(ValueError, match="2 Generators"):
        build_variant(config, Variant("t", template="{{question}}"))
    with pytest.raises(ValueError, match="no Generator named"):
        build_variant(config, Variant("t", generator="third", template="{{question}}"))


def test_bench_prompts_command(tmp_path, capsys):
    (tmp_path / "pipe.py").write_text(
        "from lightrag.core import Component, Generator\n"
        "from lightrag.components.model_client import ScriptedClient\n"
        "from lightrag.utils.registry import register\n"
        "@register\n"
        "class BenchCliQA(Component):\n"
        "    def __init__(self, style: str = 'plain'):\n"
        "        super().__init__()\n"
        "        client = ScriptedClient(response_fn=lambda p: 'Rome' if 'x' in p else 'Paris')\n"
        "        self.generator = Generator(model_client=client, template='{{style}} {{question}}',\n"
        "                                   prompt_kwargs={'style': style})\n"
        "    def call(self, question):\n"
        "        return self.generator(prompt_kwargs={'question': question})\n")
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"id": i, "question": f"q{i}", "answer": "Paris", "aliases": ["Roma"]}) + "\n"
                for i in range(4)))
    (tmp_path / "bench.yaml").write_text(
        "imports: [pipe.py]\ndataset: {path: data.jsonl}\ninputs: question\n"
        "metric: {name: em, aliases_key: aliases}\n"
        "pipeline: {component_name: BenchCliQA}\n"
        "variants:\n  - name: plain\n  - name: xx\n    config: {style: x}\n")
    parser = argparse.ArgumentParser()
    add_bench_prompts_parser(parser.add_subparsers())
    args = parser.parse_args(["bench-prompts", str(tmp_path / "bench.yaml"), "--limit", "3",
                              "--out", str(tmp_path / "out"), "--no-plot"])
    assert args.func(args) == 0
    out, err = capsys.readouterr()
    assert "plain (baseline)" in out and "-1.000" in out and "3/3" in err
    summary = list(csv.DictReader((tmp_path / "out" / "em" / "summary.csv").open()))
    assert [r["mean"] for r in summary] == ["1.0", "0.0"]
    assert args.func(args) == 0  # the re-run is served from OUT/responses.sqlite
    saved = json.loads((tmp_path / "out" / "em" / "results.json").read_text())
    assert [v["model_calls"] for v in saved["variants"]] == [0, 0]
    bad = parser.parse_args(["bench-prompts", str(tmp_path / "missing.yaml")])
    assert bad.func(bad) == 2


def test_lightrag_bench_prompts_metric_flag_and_item_columns(tmp_path, capsys):
    from lightrag.cli import main

    (tmp_path / "pipe.py").write_text(
        "from lightrag.core import Component, Generator\n"
        "from lightrag.components.model_client import ScriptedClient\n"
        "from lightrag.utils.registry import register\n"
        "@register\n"
        "class BenchMetricQA(Component):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        client = ScriptedClient(response_fn=lambda p: 'the city of Paris')\n"
        "        self.generator = Generator(model_client=client, template='{{question}}')\n"
        "    def call(self, question):\n"
        "        return self.generator(prompt_kwargs={'question': question})\n")
    items = [{"id": f"m{i}", "question": f"Capital {i}?", "gold": "Paris"} for i in range(3)]
    (tmp_path / "data.json").write_text(json.dumps(items))
    (tmp_path / "bench.yaml").write_text(
        "imports: [pipe.py]\ndataset: {path: data.json}\ninputs: question\n"
        "metric: {name: f1, answer_key: gold}\npipeline: {component_name: BenchMetricQA}\n"
        "variants:\n  - name: plain\n")
    common = [str(tmp_path / "bench.yaml"), "--out", str(tmp_path / "out"), "--no-plot"]
    assert main(["bench-prompts", *common]) == 0
    assert "Mean f1" in capsys.readouterr().out
    rows = list(csv.DictReader((tmp_path / "out" / "f1" / "items.csv").open()))
    assert [(r["id"], r["question"], r["gold"]) for r in rows] == [
        (f"m{i}", f"Capital {i}?", "Paris") for i in range(3)]
    assert float(rows[0]["score"]) == pytest.approx(0.5)
    assert main(["bench-prompts", *common, "--metric", "contains"]) == 0  # re-scored from cache
    out = capsys.readouterr().out
    assert "Mean contains" in out and "1.000" in out
    saved = json.loads((tmp_path / "out" / "contains" / "results.json").read_text())
    assert saved["metric"] == "contains" and saved["variants"][0]["model_calls"] == 0
    # one folder per metric: the F1 results are still there, untouched by the re-scoring
    f1 = json.loads((tmp_path / "out" / "f1" / "results.json").read_text())
    assert f1["metric"] == "f1" and f1["variants"][0]["mean"] == pytest.approx(0.5)
    with pytest.raises(SystemExit):
        main(["bench-prompts", *common, "--metric", "bleu"])


def test_make_metric_uses_aliases():
    metric, name = make_metric({"name": "f1", "aliases_key": "aliases"})
    assert name == "f1" and metric("Roma", {"answer": "Rome", "aliases": ["Roma"]}) == 1.0
    with pytest.raises(ValueError, match="unknown metric"):
        make_metric("bleu")


def test_bench_imports_errors_are_clear(tmp_path, capsys):
    from lightrag.optim.bench_cli import runner_from_config

    (tmp_path / "data.json").write_text(json.dumps([{"question": "q", "answer": "a"}]))
    base = "dataset: {path: data.json}\npipeline: {component_name: Nope}\nvariants: [{name: v}]\n"

    def config(imports):
        path = tmp_path / "bench.yaml"
        path.write_text(f"imports: {imports}\n" + base)
        return path

    with pytest.raises(ImportError, match=r"bench.yaml: imports: .*missing.py not found"):
        runner_from_config(config("[missing.py]"))
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(ImportError, match=r"notes.txt is not a Python \(.py\) file"):
        runner_from_config(config("[notes.txt]"))
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom at import')\n")
    with pytest.raises(ImportError, match=r"running .*broken.py failed: RuntimeError: boom at import"):
        runner_from_config(config("broken.py"))  # a single string is accepted too
    with pytest.raises(ImportError, match="boom at import"):  # not silently skipped on a retry
        runner_from_config(config("[broken.py]"))
    with pytest.raises(ValueError, match="'imports' must be a list"):
        runner_from_config(config("{a: 1}"))
    parser = argparse.ArgumentParser()
    command = add_bench_prompts_parser(parser.add_subparsers())
    assert "'imports' key are executed" in command.description
    args = parser.parse_args(["bench-prompts", str(config("[missing.py]"))])
    assert args.func(args) == 2
    assert "missing.py not found" in capsys.readouterr().err


def test_report_without_matplotlib_skips_the_png(tmp_path, monkeypatch, caplog):
    import builtins

    report = runner(FakeModel(), variants=[{"name": "plain"}]).run()
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    paths = report.save(tmp_path / "out")
    assert "png" not in paths and paths["json"].is_file() and paths["summary_csv"].is_file()
    assert ".[bench]" in caplog.text


def test_attach_cache_uses_the_public_generator_api():
    from lightrag.core.cache import ResponseCache
    from lightrag.optim import attach_cache, evaluate_pipeline

    model = FakeModel()
    pipeline = make_factory(model)()
    cache = ResponseCache()
    attach_cache(pipeline, cache, scope="v")
    attach_cache(pipeline, cache, scope="v")  # attaching twice counts each call once
    first = evaluate_pipeline(pipeline, DATA[:2], exact, inputs="question")
    again = evaluate_pipeline(pipeline, DATA[:2], exact, inputs="question")
    assert model.calls == 2 and [r.model_calls for r in first] == [1, 1]
    assert [(r.model_calls, r.cached_calls) for r in again] == [(0, 1), (0, 1)]
    assert pipeline.generator.use_cache and len(cache) == 2
    pipeline.generator.set_cache(None)
    assert not pipeline.generator.use_cache
    evaluate_pipeline(pipeline, DATA[:1], exact, inputs="question")
    assert model.calls == 3


@pytest.mark.parametrize("module", [
    "lightrag.eval.answer_match_acc", "lightrag.eval.base", "lightrag.eval.llm_as_judge",
    "lightrag.eval.pairwise_judge", "lightrag.eval.retriever_metrics",
    "lightrag.eval.retriever_recall", "lightrag.eval.retriever_relevance",
    "lightrag.optim.benchmark", "lightrag.optim.evaluation", "lightrag.optim.few_shot",
    "lightrag.optim.few_shot_optimizer", "lightrag.optim.llm_optimizer", "lightrag.optim.optimizer",
    "lightrag.optim.report", "lightrag.optim.sampler", "lightrag.optim.stats",
    "lightrag.optim.text_grad", "lightrag.optim.trainer",
])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(module)).failed == 0


def test_musique_use_case_config_runs_offline_with_a_scripted_model(tmp_path):
    from pathlib import Path

    from lightrag.optim.bench_cli import runner_from_config

    config = Path(__file__).resolve().parents[1] / "use_cases" / "prompt_benchmark" / "variants.yaml"
    paragraphs = [{"idx": 0, "title": "France", "paragraph_text": "Paris is the capital of France."},
                  {"idx": 1, "title": "Peru", "paragraph_text": "Lima is the capital of Peru."}]
    items = [{"id": f"m{i}", "question": "What is the capital of France?", "paragraphs": paragraphs,
              "answer": "Paris", "answer_aliases": ["City of Paris"]} for i in range(2)]
    (tmp_path / "queries.json").write_text(json.dumps(items))
    scripted = {"component_name": "ScriptedClient",
                "component_config": {"responses": ["France's capital...\nAnswer: Paris"], "cycle": True}}
    runner, limit = runner_from_config(config, data=tmp_path, pipeline_overrides={"model_client": scripted})
    assert limit == 20 and [v.name for v in runner.variants] == ["plain", "cot", "answer_only"]
    cot = build_variant(runner.pipeline, runner.variants[1])
    prompt = cot.generator.get_prompt(question="Q?", passages=["p1"])
    assert "think step by step" in prompt and cot.generator.model_kwargs["max_tokens"] == 160
    report = runner.run()
    assert [(v.mean, v.failures) for v in report.variants] == [(1.0, 0), (1.0, 0), (1.0, 0)]


def test_local_models_config_builds_both_models_with_gold_context(tmp_path):
    from pathlib import Path

    from lightrag.optim.bench_cli import runner_from_config

    config = Path(__file__).resolve().parents[1] / "use_cases" / "prompt_benchmark" / "models.yaml"
    paragraphs = [{"title": "France", "paragraph_text": "Paris is the capital.", "is_supporting": True},
                  {"title": "Peru", "paragraph_text": "Lima is the capital.", "is_supporting": False}]
    (tmp_path / "queries.json").write_text(json.dumps(
        [{"id": "m0", "question": "Capital of France?", "paragraphs": paragraphs, "answer": "Paris"}]))
    runner, limit = runner_from_config(config, data=tmp_path)
    assert limit == 30 and [v.name for v in runner.variants] == ["smollm2", "gemma3", "gemma3_user"]
    smol, gemma, _ = (build_variant(runner.pipeline, v) for v in runner.variants)
    assert type(smol.generator.model_client).__name__ == "LocalLLMClient"
    assert type(gemma.generator.model_client).__name__ == "PackagedGGUFClient"
    assert gemma.generator.model_client.model == "gemma3-270m-q4_k_m"
    assert gemma.retrieve("Capital of France?", paragraphs) == ["France: Paris is the capital."]


def test_a_variant_template_using_a_variable_the_pipeline_never_passes_fails_before_any_call():
    model = FakeModel()
    typo = [{"name": "plain"}, {"name": "typo", "template": "{{instruction}} Q: {{query}}"}]
    with pytest.raises(ValueError, match=r"'typo'.*\['query'\].*does not pass"):
        runner(model, variants=typo).run()
    assert model.calls == 0
    preset = [{"name": "plain"}, {"name": "ok", "template": "{{tone}} {{question}}",
                                  "prompt_kwargs": {"tone": "CAREFUL"}}]
    assert runner(FakeModel(), variants=preset).run()["ok"].mean == 1.0


@pytest.mark.parametrize("limit", [-1, 0])
def test_a_limit_that_is_not_a_positive_count_is_refused(limit):
    with pytest.raises(ValueError, match="positive number of items"):
        runner(FakeModel()).run(limit=limit)


def test_an_empty_reply_counts_as_a_failure():
    report = runner(lambda prompt: "" if "q4" in prompt else "a0", variants=[{"name": "plain"}]).run()
    failed = [item for item in report["plain"].items if item.error]
    assert [item.index for item in failed] == [4] and "empty answer" in failed[0].error
