"""Red team 4: a ``Retry-After: nan`` is no wait at all, not an infinite one (it made lightrag
give up at once, saying the provider asks to retry after 'inf s'); other values keep their
meaning."""

from types import SimpleNamespace as NS

from lightrag.utils.http_retry import retry_after_seconds


def _error(**headers):
    return NS(response=NS(headers=headers))


def test_nan_is_ignored():
    assert retry_after_seconds(_error(**{"retry-after": "nan"})) is None
    assert retry_after_seconds(_error(**{"retry-after-ms": "NaN", "retry-after": "3"})) == 3.0


def test_other_values_keep_their_meaning():
    assert retry_after_seconds(_error(**{"retry-after": "-5"})) == 0.0
    assert retry_after_seconds(_error(**{"retry-after": "1e400"})) == float("inf")
    assert retry_after_seconds(_error(**{"retry-after": "abc"})) is None
    assert retry_after_seconds(_error(**{"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
