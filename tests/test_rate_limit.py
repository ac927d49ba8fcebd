"""A model client's requests per minute (``limit_rate``, the prompt benchmark's
``requests_per_minute``): requests start on an even schedule shared by every thread and event
loop, measured at the fake provider on loopback with the real OpenAI SDK."""

import asyncio
import threading
import time

import pytest
from fake_provider_server import FakeProvider

from lightrag.components.model_client import OpenAIClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.types import ModelType
from lightrag.optim import BenchmarkRunner
from lightrag.utils.rate_limit import RequestRateLimit


def starts(server_calls):
    """Gaps between the request arrival times the reply function saw."""
    times = sorted(server_calls)
    return [b - a for a, b in zip(times, times[1:])]


def timed_provider():
    arrivals, lock = [], threading.Lock()

    def reply(prompt):
        with lock:
            arrivals.append(time.monotonic())
        return "ok"

    return arrivals, reply


def request(i):
    return {"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]}


def test_the_schedule_is_even_with_a_burst() -> None:
    limit = RequestRateLimit(requests_per_minute=60, burst=3)
    assert [round(limit.reserve(now=100.0), 3) for _ in range(5)] == [0.0, 0.0, 0.0, 1.0, 2.0]
    assert limit.reserve(now=110.0) == 0.0  # a pause refills the burst
    for bad in (0, -5, float("nan"), True, "60"):
        with pytest.raises(ValueError, match="requests_per_minute must be a positive number"):
            RequestRateLimit(bad)
    with pytest.raises(ValueError, match="burst"):
        RequestRateLimit(60, burst=0)


def test_threads_share_the_clients_schedule() -> None:
    arrivals, reply = timed_provider()
    with FakeProvider(reply) as server:
        client = OpenAIClient(base_url=server.url + "/v1", api_key="sk-test")
        client.call(request(-1), ModelType.LLM)  # the SDK client made (its first use takes ~1 s)
        arrivals.clear()
        client.limit_rate(600)
        threads = [threading.Thread(target=client.call, args=(request(i), ModelType.LLM))
                   for i in range(5)]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(arrivals) == 5
    assert time.monotonic() - started >= 0.38  # 5 starts 0.1 s apart
    # (a busy machine delays a single request's arrival; the span and the median gap hold)
    assert max(arrivals) - min(arrivals) >= 0.3 and sorted(starts(arrivals))[2] >= 0.07


def test_event_loop_calls_are_spaced_without_blocking_the_loop() -> None:
    arrivals, reply = timed_provider()

    async def main(url):
        client = OpenAIClient(base_url=url + "/v1", api_key="sk-test")
        await client.acall(request(-1), ModelType.LLM)  # this loop's SDK client made
        arrivals.clear()
        client.limit_rate(1200)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick = asyncio.create_task(ticker())
        await asyncio.gather(*(client.acall(request(i), ModelType.LLM) for i in range(4)))
        tick.cancel()
        return ticks

    with FakeProvider(reply) as server:
        ticks = asyncio.run(main(server.url))
    assert len(arrivals) == 4 and max(arrivals) - min(arrivals) >= 0.1  # 0.05 s apart
    assert sorted(starts(arrivals))[1] >= 0.035
    assert ticks >= 8  # the loop kept running while requests waited their turn


def test_a_benchmark_keeps_to_requests_per_minute() -> None:
    arrivals, reply = timed_provider()
    with FakeProvider(reply) as server:
        class QA(Component):
            def __init__(self):
                super().__init__()
                self.generator = Generator(
                    model_client=OpenAIClient(base_url=server.url + "/v1", api_key="sk-test"),
                    model_kwargs={"model": "m"}, template="{{question}}")

            def call(self, question):
                return self.generator(prompt_kwargs={"question": question})

        runner = BenchmarkRunner(QA, [{"question": f"q{i}?"} for i in range(4)],
                                 lambda pred, item: 1.0, [{"name": "a"}, {"name": "b"}],
                                 inputs="question", concurrency=4, requests_per_minute=600,
                                 n_resamples=50)
        report = runner.run()
    # one schedule for both variants: 7 gaps of 0.1 s (a request's first connection may take
    # longer to arrive than the next one's, so single gaps vary; their median does not)
    assert len(arrivals) == 8 and max(arrivals) - min(arrivals) >= 0.6
    assert sorted(starts(arrivals))[3] >= 0.07
    assert report.settings["requests_per_minute"] == 600


def test_a_config_sets_a_clients_rate() -> None:
    """``requests_per_minute`` in a client's YAML config (OpenAI, Groq) survives a round trip."""
    from lightrag.utils.config import build

    client = build("component_name: OpenAIClient\ncomponent_config: {requests_per_minute: 30}\n")
    assert client.rate_limit.requests_per_minute == 30
    assert build(client.to_config()).rate_limit.requests_per_minute == 30
    assert build({"component_name": "GroqAPIClient", "component_config": {}}).rate_limit is None
    with pytest.raises(ValueError, match="requests_per_minute must be a positive number"):
        build({"component_name": "GroqAPIClient", "component_config": {"requests_per_minute": 0}})
