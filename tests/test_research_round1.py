"""A researcher's prompt benchmark end to end: the real OpenAI SDK client against the fake
provider on loopback (scripted latency, 429s with Retry-After, 500s, token usage), Ctrl-C,
errors apart from wrong answers, the exact config and verdict in the report, and answer
normalisation on Unicode and numbers."""

import argparse
import json
import threading

import pytest
from fake_provider_server import FakeProvider, Reply

from lightrag.cli import bench as bench_cmd
from lightrag.components.model_client import OpenAIClient
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter
from lightrag.core.retry import RetryPolicy
from lightrag.eval import ExactMatch, F1Score, normalize_answer
from lightrag.optim import BenchmarkRunner
from lightrag.optim.bench_cli import make_metric
from lightrag.optim.evaluation import evaluate_pipeline

DATA = [{"id": f"q{i}", "question": f"question {i}?", "answer": f"a{i}"} for i in range(8)]
VARIANTS = [{"name": "plain"}, {"name": "careful", "params": {"generator.instruction": "CAREFUL"}}]


def exact(pred, item):
    return float(pred == item["answer"])


def qa_factory(url, model_kwargs=None):
    class QA(Component):
        def __init__(self):
            super().__init__()
            client = OpenAIClient(base_url=url + "/v1")
            client.retry_policy = RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.02)
            self.generator = Generator(
                model_client=client, model_kwargs={"model": "m", **(model_kwargs or {})},
                template="{{instruction}} {{question}}",
                prompt_kwargs={"instruction": Parameter(data="Answer:")})

        def call(self, question):
            return self.generator(prompt_kwargs={"question": question})

    return QA


def scripted(seen_429):
    """careful answers right; plain only even items. q3 under careful: a 429 (Retry-After 0)
    the first time, then the answer; q5 under careful: always 500 (no reply)."""
    lock = threading.Lock()

    def reply(prompt):
        i = int(prompt.split("question ")[1].split("?")[0])
        careful = "CAREFUL" in prompt
        usage = {"prompt_tokens": 10 + i, "completion_tokens": 2}
        if careful and i == 5:
            return Reply(status=500)
        with lock:
            if careful and i == 3 and not seen_429:
                seen_429.append(i)
                return Reply(status=429, headers={"Retry-After": "0"})
        right = careful or i % 2 == 0
        return Reply(f"a{i}" if right else "no idea", delay_s=0.02, usage=usage)

    return reply


def test_ctrl_c_sends_no_request_for_the_items_not_started():
    calls = []
    gen_client = ScriptedClient(response_fn=lambda p: calls.append(p) or "a0")

    class QA(Component):
        def __init__(self):
            super().__init__()
            self.generator = Generator(model_client=gen_client, template="{{question}}")

        def call(self, question):
            return self.generator(prompt_kwargs={"question": question})

    def progress(done, total):
        if done == 2:
            raise KeyboardInterrupt

    items = [{"question": f"q{i}"} for i in range(30)]
    with pytest.raises(KeyboardInterrupt):
        evaluate_pipeline(QA(), items, exact, "question", concurrency=2, progress=progress)
    assert len(calls) <= 4  # the 2 done and at most 2 in flight; 30 before the fix


def test_errors_retries_and_429s_are_counted_apart_from_wrong_answers(tmp_path):
    seen = []
    with FakeProvider(scripted(seen)) as server:
        runner = BenchmarkRunner(qa_factory(server.url), DATA, exact, VARIANTS,
                                 inputs="question", concurrency=3, n_resamples=500,
                                 cache_path=tmp_path / "c.sqlite",
                                 prices={"prompt": 1.0, "completion": 10.0})
        report = runner.run()
        careful = report["careful"]
        q5 = careful.items[5]
        assert (q5.error_kind, careful.errors, careful.failures) == ("call", 1, 1)
        assert q5.retries == 2 and careful.retries == 3  # 2 for the 500s, 1 for the 429
        assert careful.rate_limited == 1 and careful.items[3].score == 1.0
        assert report["plain"].errors == 0 and report["plain"].failures == 0
        assert server.max_in_flight <= 3
        # tokens: what the server reported, once per answered item
        assert careful.prompt_tokens == sum(10 + i for i in range(8) if i != 5)
        assert careful.new_prompt_tokens == careful.prompt_tokens
        assert careful.cost_usd == pytest.approx((careful.prompt_tokens + 10 * 14) / 1e6)
        text = "\n".join(report.verdict())
        assert "INCOMPLETE: careful: 1 item(s) got no reply" in text
        assert report.settings["variants"][1] == VARIANTS[1]
        assert len(report.settings["dataset_sha256"]) == 64
        assert report.settings["versions"]["lightrag"]

        # a re-run pays only for the item without a reply; excluding it keeps pairs aligned
        before = len(server.requests)
        runner.on_error = "exclude"
        again = runner.run()
        assert len(server.requests) - before == 3  # q5: 1 try + 2 retries; the rest cached
        assert again["careful"].new_prompt_tokens == 0 and again["careful"].spent_usd == 0
        assert again["careful"].n == again["plain"].n == 7
        assert again["careful"].mean == 1.0 and again.settings["excluded_items"] == ["q5"]
        assert report["careful"].mean == 7 / 8  # zero: the no-reply item scored 0


def test_an_unparsable_reply_is_the_model_s_failure_not_an_error():
    def reply(prompt):
        return Reply("")  # the model answered nothing

    with FakeProvider(reply) as server:
        report = BenchmarkRunner(qa_factory(server.url), DATA[:2], exact, VARIANTS[:1],
                                 inputs="question", n_resamples=100,
                                 on_error="exclude").run()
    plain = report["plain"]
    assert plain.failures == 2 and plain.errors == 0 and plain.n == 2
    assert {i.error_kind for i in plain.items} == {"output"}


def test_report_files_carry_the_config_and_the_verdict(tmp_path):
    with FakeProvider(scripted([0])) as server:
        report = BenchmarkRunner(qa_factory(server.url), DATA, exact, VARIANTS,
                                 inputs="question", n_resamples=500).run()
    paths = report.save(tmp_path / "out", plot=False)
    saved = json.loads(paths["json"].read_text())
    assert saved["verdict"] == report.verdict()
    assert saved["settings"]["pipeline"].startswith("test_research_round1.")
    assert "careful" in saved["verdict"][0] and "Holm p" in saved["verdict"][0]
    table = paths["markdown"].read_text()
    assert "Retries (429)" in table and "INCOMPLETE" in table
    header = paths["items_csv"].read_text().splitlines()[0].split(",")
    assert {"error_kind", "retries", "rate_limited"} <= set(header)


def test_bench_command_ctrl_c_exits_130_and_says_how_to_resume(tmp_path, capsys, monkeypatch):
    config = tmp_path / "b.yaml"
    data = tmp_path / "d.json"
    data.write_text(json.dumps(DATA))
    config.write_text(
        "dataset: {path: d.json}\ninputs: question\nmetric: {name: em, normalize: unicode}\n"
        "pipeline:\n  component_name: Generator\n  component_config:\n"
        "    model_client: {component_name: ScriptedClient, component_config: {}}\n"
        "    template: '{{question}}'\n"
        "variants: [{name: plain}]\non_error: exclude\n")

    class Stop:
        def __init__(self, *a, **k):
            pass

        def __call__(self, variant, done, total):
            if done:
                raise KeyboardInterrupt

    monkeypatch.setattr(bench_cmd, "ProgressBar", Stop)
    sub = argparse.ArgumentParser().add_subparsers()
    parser = bench_cmd.add_bench_prompts_parser(sub)
    args = parser.parse_args([str(config), "--out", str(tmp_path / "out"), "--no-plot"])
    assert args.func(args) == 130
    assert "run the same command again to resume" in capsys.readouterr().err


def test_unicode_normalisation_scores_tricky_strings():
    em, emu = ExactMatch(), ExactMatch(normalize="unicode")
    right = [("“Paris”", "Paris"), ("Paris。", "Paris"), ("H₂O", "H2O"), ("Straße", "strasse"),
             ("Sao Paulo", "São Paulo"), ("１９６９", "1969"), ("rock ’n’ roll", "rock 'n' roll"),
             ("1,000", "1000"), ("−5", "-5")]
    wrong = [("314", "3.14"), ("5", "-5"), ("23", "2-3"), ("911", "9/11")]
    assert [emu.compute_single_item(p, g) for p, g in right] == [1.0] * len(right)
    assert [emu.compute_single_item(p, g) for p, g in wrong] == [0.0] * len(wrong)
    assert [em.compute_single_item(p, g) for p, g in wrong] == [1.0] * len(wrong)  # SQuAD's way
    # the same text in decomposed form is the same answer, whatever the normalisation
    assert em.compute_single_item("Sa\u0303o Paulo", "S\u00e3o Paulo") == 1.0
    assert normalize_answer("The 3.14 “pies”", "unicode") == "3.14 pies"
    assert F1Score(normalize="unicode").compute_single_item("« Zürich »", "Zurich") == 1.0
    metric, name = make_metric({"name": "f1", "normalize": "unicode"})
    assert name == "f1_unicode" and metric("“Paris”", {"answer": "Paris"}) == 1.0
    with pytest.raises(ValueError, match="normalize"):
        make_metric({"name": "f1", "normalize": "ascii"})
