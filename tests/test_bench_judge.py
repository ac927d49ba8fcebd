"""An LLM judge as a prompt benchmark's metric from the config (``metric: {name: llm_judge,
model_client: ...}``): the real OpenAI SDK asks the fake provider to judge each answer; a judge
that fails counts the item as a metric failure, never as a silent 0."""

import pytest
from fake_provider_server import FakeProvider, Reply

from lightrag.core import FunComponent
from lightrag.optim import BenchmarkRunner
from lightrag.optim.bench_cli import make_metric

DATA = [{"id": f"q{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(4)]


def judging(prompt):
    """Says True when the predicted answer in the prompt is right; fails on item 3."""
    if "What is 3 + 3?" in prompt:
        return Reply(status=500)
    for i in range(4):
        if f"What is {i} + {i}?" in prompt:
            return "True" if f"Predicted answer: {2 * i}" in prompt else "False"
    return "False"


def test_an_llm_judge_scores_from_the_config(tmp_path) -> None:
    with FakeProvider(judging) as server:
        metric, name = make_metric({
            "name": "llm_judge", "model_kwargs": {"model": "judge"},
            "cache_path": str(tmp_path / "judge.sqlite"),
            "model_client": {"component_name": "OpenAIClient", "component_config": {
                "base_url": server.url + "/v1", "env_api_key_name": "NO_SUCH_KEY_VARIABLE"}}})
        # answers "2" to 1 + 1 and the first operand otherwise: right for 0 and 1, wrong for 2;
        # item 3's judge call fails
        runner = BenchmarkRunner(lambda: FunComponent(lambda q: "2" if "1 + 1" in q else q.split()[2]),
                                 DATA, metric, [{"name": "plain"}], inputs="question",
                                 metric_name=name, n_resamples=50)
        report = runner.run()
    items = report["plain"].items
    assert [i.score for i in items[:3]] == [1.0, 1.0, 0.0]
    assert items[3].error_kind == "metric" and "judge call failed" in items[3].error
    assert report["plain"].failures == 1


def test_a_judge_config_names_its_mistakes() -> None:
    with pytest.raises(ValueError, match="needs model_client"):
        make_metric({"name": "llm_judge"})
    with pytest.raises(ValueError, match="unknown keys \\['normalize'\\]"):
        make_metric({"name": "llm_judge", "normalize": "unicode",
                     "model_client": {"component_name": "ScriptedClient", "component_config": {}}})
