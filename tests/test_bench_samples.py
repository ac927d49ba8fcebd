"""Several samples per item (``samples: K``): a model at temperature > 0 answers each sample
afresh (each sample cached apart), items score the mean of their samples, and each variant
reports its run-to-run SD; a re-run replays every sample from the cache. The real OpenAI SDK
talks to the fake provider on loopback."""

import itertools
import threading

import pytest
from fake_provider_server import FakeProvider

from lightrag.components.model_client import OpenAIClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter
from lightrag.optim import BenchmarkRunner
from lightrag.optim.evaluation import ItemResult
from lightrag.optim.samples import combine_samples, run_to_run_sd

DATA = [{"id": f"q{i}", "question": f"question {i}?", "answer": "yes"} for i in range(6)]


def qa_factory(url):
    class QA(Component):
        def __init__(self):
            super().__init__()
            self.generator = Generator(
                model_client=OpenAIClient(base_url=url + "/v1"),
                model_kwargs={"model": "m", "temperature": 0.8},
                template="{{instruction}} {{question}}",
                prompt_kwargs={"instruction": Parameter(data="Answer:")})

        def call(self, question):
            return self.generator(prompt_kwargs={"question": question})

    return QA


def drifting():
    """A sampling model: the plain prompt answers yes to its first 8 calls, then no (so its
    three samples score 6, 2 and 0 of 6); the careful one always yes."""
    lock, turns = threading.Lock(), itertools.count()

    def reply(prompt):
        if "CAREFUL" in prompt:
            return "yes"
        with lock:
            return "yes" if next(turns) < 8 else "no"

    return reply


def test_every_sample_is_asked_scored_and_replayed(tmp_path) -> None:
    variants = [{"name": "plain"}, {"name": "careful", "params": {"generator.instruction": "CAREFUL"}}]
    with FakeProvider(drifting()) as server:
        runner = BenchmarkRunner(qa_factory(server.url), DATA, lambda p, it: float(p == it["answer"]),
                                 variants, inputs="question", concurrency=1, samples=3,
                                 cache_path=tmp_path / "c.sqlite", n_resamples=200)
        report = runner.run()
        assert len(server.requests) == 2 * 3 * len(DATA)  # every sample asked once
        plain = report["plain"]
        assert all(len(i.sample_scores) == 3 for i in plain.items)
        assert plain.mean == pytest.approx(sum(sum(i.sample_scores) for i in plain.items) / 18)
        assert plain.mean == pytest.approx(8 / 18)
        assert plain.run_sd == pytest.approx(0.5092, abs=1e-3)  # SD of 1, 1/3, 0
        assert report["careful"].run_sd == 0 and report["careful"].mean == 1.0
        assert report.settings["samples"] == 3 and plain.model_calls == 18
        assert "Run-to-run SD (samples)" in report.to_markdown()

        before = len(server.requests)
        again = runner.run()
        assert len(server.requests) == before  # every sample replayed from the cache
        assert again["plain"].mean == plain.mean and again["plain"].run_sd == plain.run_sd


def test_samples_combine_item_by_item() -> None:
    first = [ItemResult(index=0, score=1.0, model_calls=1), ItemResult(index=1, score=0.0, error="x",
                                                                       error_kind="call")]
    second = [ItemResult(index=0, score=0.0, model_calls=1), ItemResult(index=1, score=1.0)]
    combined = combine_samples([first, second])
    assert [c.score for c in combined] == [0.5, 0.5] and combined[0].model_calls == 2
    assert combined[1].error_kind == "call"  # no reply in one sample: on_error exclude drops it
    assert run_to_run_sd([first, second], keep={0}) == pytest.approx(0.7071, abs=1e-3)
    with pytest.raises(ValueError, match="samples must be a positive whole number"):
        BenchmarkRunner(lambda: None, DATA, lambda p, i: 0.0, [{"name": "a"}], samples=0)
