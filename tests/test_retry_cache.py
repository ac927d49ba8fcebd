import asyncio

import pytest

from lightrag.core.cache import ResponseCache
from lightrag.core.retry import RetryPolicy, is_transient, with_retries


class HTTPError(Exception):
    def __init__(self, status_code):
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


class APITimeoutError(Exception):
    pass


@pytest.mark.parametrize(
    "error,expected",
    [
        (HTTPError(429), True),
        (HTTPError(500), True),
        (HTTPError(503), True),
        (HTTPError(400), False),
        (HTTPError(401), False),
        (HTTPError(404), False),
        (TimeoutError(), True),
        (ConnectionError(), True),
        (APITimeoutError(), True),
        (ValueError("bad"), False),
    ],
)
def test_classification(error, expected):
    assert is_transient(error) is expected


class Flaky:
    def __init__(self, errors):
        self.errors = list(errors)
        self.calls = 0
        self.retry_policy = RetryPolicy(max_retries=3, initial_delay=0.0)

    @with_retries
    def call(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"

    @with_retries
    async def acall(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_retries_transient_then_succeeds():
    flaky = Flaky([HTTPError(429), HTTPError(502)])
    assert flaky.call() == "ok"
    assert flaky.calls == 3


def test_never_retries_client_errors():
    flaky = Flaky([HTTPError(400)])
    with pytest.raises(HTTPError):
        flaky.call()
    assert flaky.calls == 1


def test_gives_up_after_max_retries():
    flaky = Flaky([HTTPError(500)] * 10)
    with pytest.raises(HTTPError):
        flaky.call()
    assert flaky.calls == 4


def test_async_retries():
    flaky = Flaky([TimeoutError()])
    assert asyncio.run(flaky.acall()) == "ok"
    assert flaky.calls == 2


def test_backoff_grows_and_caps():
    policy = RetryPolicy(initial_delay=1, max_delay=4, multiplier=2, jitter=0)
    assert [policy.delay(i) for i in range(4)] == [1, 2, 4, 4]


def test_cache_keys_depend_on_the_whole_request(tmp_path):
    a = ResponseCache.key("C", {"model": "m", "prompt": "p", "temperature": 0})
    b = ResponseCache.key("C", {"temperature": 0, "prompt": "p", "model": "m"})
    c = ResponseCache.key("C", {"model": "m", "prompt": "p", "temperature": 1})
    assert a == b != c
    assert ResponseCache.key("D", {"model": "m", "prompt": "p", "temperature": 0}) != a


def test_disk_cache_persists(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.set("k", {"text": "hello"})
    cache.close()
    reopened = ResponseCache(path)
    assert reopened.get("k") == {"text": "hello"}
    assert reopened.get("missing") is None
    assert (reopened.hits, reopened.misses) == (1, 1)
    assert len(reopened) == 1
