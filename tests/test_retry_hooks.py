"""Retries are told to registered hooks whatever the log level: a prompt benchmark counts an
item's retries and 429s through them (it read the retry warnings, and a user who set the
"lightrag" logger to ERROR got zero retries counted)."""

import logging

import pytest
from fake_provider_server import FakeProvider, Reply

from lightrag.components.model_client import OpenAIClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.retry import RetryPolicy, register_retry_hook, with_retries
from lightrag.optim.evaluation import evaluate_pipeline


@pytest.fixture
def quiet_lightrag_logger():
    logger = logging.getLogger("lightrag")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def flaky(failures: int):
    """A model-call stand-in that times out ``failures`` times, then answers "ok"."""

    class Flaky:
        calls = 0
        retry_policy = RetryPolicy(initial_delay=0.0, jitter=0.0)

        @with_retries
        def call(self):
            self.calls += 1
            if self.calls <= failures:
                raise TimeoutError("slow")
            return "ok"

    return Flaky()


def test_a_hook_sees_each_retry_and_can_be_removed(quiet_lightrag_logger) -> None:
    seen = []
    remove = register_retry_hook(lambda error, attempt, wait: seen.append((type(error).__name__, attempt)))
    try:
        assert flaky(2).call() == "ok"
    finally:
        remove()
    assert seen == [("TimeoutError", 1), ("TimeoutError", 2)]
    assert flaky(2).call() == "ok" and len(seen) == 2  # removed: not told any more


def test_a_broken_hook_does_not_break_the_call(quiet_lightrag_logger) -> None:
    def broken(error, attempt, wait):
        raise RuntimeError("hook bug")

    remove = register_retry_hook(broken)
    try:
        assert flaky(1).call() == "ok"
    finally:
        remove()


def test_benchmark_items_count_429s_with_the_logger_at_error(quiet_lightrag_logger) -> None:
    """The real OpenAI SDK against the fake provider: a 429 then the answer."""
    answered = set()

    def reply(prompt):
        if prompt not in answered:
            answered.add(prompt)
            return Reply(status=429, headers={"Retry-After": "0"})
        return "yes"

    with FakeProvider(reply) as server:
        class QA(Component):
            def __init__(self):
                super().__init__()
                client = OpenAIClient(base_url=server.url + "/v1")
                client.retry_policy = RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.02)
                self.generator = Generator(model_client=client, model_kwargs={"model": "m"},
                                           template="{{question}}")

            def call(self, question):
                return self.generator(prompt_kwargs={"question": question})

        results = evaluate_pipeline(QA(), [{"question": "q1?", "answer": "yes"}],
                                    lambda pred, item: float(pred == item["answer"]), inputs="question")
    item = results[0] if isinstance(results, list) else results.items[0]
    assert item.score == 1.0 and item.retries == 1 and item.rate_limited == 1
