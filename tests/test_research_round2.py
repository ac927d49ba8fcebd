"""A researcher's optimisation run: instruction search (LLMOptimizer) under the Trainer with the
real OpenAI SDK client against the fake provider on loopback; the report must say how much the
test score moved with a paired interval and p-value, name items shared between the sets, and
count validation items the model never answered instead of hiding them in the score."""

import itertools
import re

from fake_provider_server import FakeProvider, Reply

from lightrag.components.model_client import OpenAIClient
from lightrag.core import Component, Generator, Parameter, ParameterType
from lightrag.core.retry import RetryPolicy
from lightrag.optim import Trainer
from lightrag.optim.llm_optimizer import LLMOptimizer
from lightrag.optim.stats import bootstrap_ci, paired_permutation_test

ITEMS = [{"id": f"q{i}", "question": f"What is {i} plus {i}?", "answer": str(2 * i)}
         for i in range(30)]


def client(url):
    c = OpenAIClient(base_url=url + "/v1")
    c.retry_policy = RetryPolicy(max_retries=1, initial_delay=0.01, max_delay=0.01)
    return c


class Task(Component):
    def __init__(self, url):
        super().__init__()
        self.instruction = Parameter(data="Answer the question.", param_type=ParameterType.PROMPT,
                                     name="instruction", requires_opt=True)
        self.gen = Generator(model_client=client(url), model_kwargs={"model": "m"},
                             template="<SYS>{{instruction}}</SYS>Question: {{question}}",
                             prompt_kwargs={"instruction": self.instruction})

    def call(self, question):
        return self.gen(prompt_kwargs={"question": question})


def scripted(fail_under=None):
    """Right when the instruction says ONLY (else only for multiples of 3); instruction
    proposals cycle; ``fail_under``: that instruction gets a 500 for item 13."""
    proposals = itertools.cycle(["Answer briefly.", "Reply with ONLY the answer."])

    def reply(prompt):
        if "New instruction:" in prompt:
            return next(proposals)
        i = int(re.findall(r"What is (\d+) plus", prompt)[-1])
        if fail_under and fail_under in prompt and i == 13:
            return Reply(status=500)
        good = "ONLY the answer" in prompt or i % 3 == 0
        return str(2 * i) if good else f"The sum is {2 * i}"

    return reply


def exact(pred, item):
    return float(str(pred).strip() == item["answer"])


def test_test_set_gets_a_paired_interval_and_p_value(tmp_path):
    train, val, test = ITEMS[:12], ITEMS[12:20], ITEMS[20:]
    with FakeProvider(scripted()) as server:
        task = Task(server.url)
        optimizer = LLMOptimizer(task.instruction, client(server.url), {"model": "m"})
        result = Trainer(task, optimizer, exact, train, val, test_set=test, inputs="question",
                         max_steps=2, ckpt_dir=tmp_path).fit()
    assert (result.initial_val_score, result.best_val_score) == (0.375, 1.0)
    before, after = result.test_scores_before, result.test_scores_after
    assert (sum(before), sum(after)) == (3.0, 10.0)
    diffs = [a - b for a, b in zip(after, before)]
    assert result.test_delta_ci == list(bootstrap_ci(diffs))
    assert result.test_p_value == paired_permutation_test(after, before) == 2 / 2 ** 7
    assert result.overlap == {"train_val": 0, "train_test": 0, "val_test": 0}
    log = (tmp_path / "train_log.md").read_text()
    assert "Paired difference on the test set: 95% CI [+" in log and "WARNING" not in log


def test_shared_items_and_unanswered_validation_items_are_reported(tmp_path, caplog):
    train, val = ITEMS[:12], ITEMS[10:20]  # q10, q11 in both
    with FakeProvider(scripted(fail_under="Answer briefly.")) as server:
        task = Task(server.url)
        optimizer = LLMOptimizer(task.instruction, client(server.url), {"model": "m"})
        result = Trainer(task, optimizer, exact, train, val, test_set=train[:2],
                         inputs="question", max_steps=1, ckpt_dir=tmp_path).fit()
    assert result.overlap == {"train_val": 2, "train_test": 2, "val_test": 0}
    assert "their scores are optimistic" in caplog.text
    step = result.steps[0]
    assert (step.decision, step.val_failures, step.val_errors) == ("reverted", 1, 1)
    log = (tmp_path / "train_log.md").read_text()
    assert "WARNING: items shared between sets: train_val 2, train_test 2" in log
    assert "1 of them without a reply from the model" in log
