"""Retries of provider requests that honour the provider's ``Retry-After``.

:func:`lightrag.core.retry.with_retries` backs off exponentially (0.5 s, 1 s, 2 s...), whatever
the provider asks: a 429 with ``Retry-After: 20`` was retried three times within 4 s and failed,
each retry adding to the rate limit. :func:`with_http_retries` is the same decorator, except:

* it waits at least what ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` says;
* when the provider asks for more than ``max_retry_after`` seconds (an attribute of the retry
  policy if set, else :data:`MAX_RETRY_AFTER` = 30 s), it gives up at once and says so in the
  error, instead of retrying too early;
* a 429 whose code says the quota or the billing is exhausted (``insufficient_quota``) is not
  retried: waiting cannot fix it.

Example:
    >>> from types import SimpleNamespace as NS
    >>> error = NS(response=NS(headers={"retry-after": "2"}))
    >>> retry_after_seconds(error)
    2.0
    >>> retry_after_seconds(NS(response=NS(headers={"retry-after-ms": "250"})))
    0.25
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import logging
import math
import time
from typing import Any, Callable, Mapping, Optional, TypeVar

from lightrag.core.retry import DEFAULT_RETRY_POLICY, RetryPolicy, is_transient, notify_retry
from lightrag.utils.call_deadline import seconds_left
from lightrag.utils.http_errors import add_note
from lightrag.utils.secrets import redact_text

__all__ = ["MAX_RETRY_AFTER", "retry_after_seconds", "retry_wait", "with_http_retries"]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: the longest ``Retry-After`` (seconds) waited for by default; a longer one fails at once
MAX_RETRY_AFTER = 30.0

#: error codes of a 429 that no wait fixes
_NOT_RETRYABLE_CODES = {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}


def _headers_of(error: BaseException) -> Optional[Mapping[str, str]]:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None and hasattr(headers, "get") else None


def retry_after_seconds(error: BaseException) -> Optional[float]:
    """Seconds the provider asks to wait (``retry-after-ms``, ``Retry-After`` in seconds or as an
    HTTP date), None when it says nothing usable."""
    headers = _headers_of(error)
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except (TypeError, ValueError):
            continue
        if math.isnan(seconds):  # 'nan' is no number of seconds: not a request to wait forever
            continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
        return math.inf
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _error_code(error: BaseException) -> Optional[str]:
    code = getattr(error, "code", None)
    if isinstance(code, str):
        return code
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            for key in ("code", "type"):
                if isinstance(inner.get(key), str):
                    return inner[key]
    return None


def _policy_of(owner: Any) -> RetryPolicy:
    return getattr(owner, "retry_policy", None) or DEFAULT_RETRY_POLICY


def _remaining(owner: Any, started: float) -> Optional[float]:
    """Seconds left of the owner's ``call_timeout()`` since ``started``, or of the bounded call
    running this (a Generator's ``timeout``: 0 once its caller stopped waiting), whichever ends
    first (None: no limit)."""
    bounded = seconds_left()
    get = getattr(owner, "call_timeout", None)
    try:
        limit = get() if callable(get) else None
    except Exception:  # noqa: BLE001 - no limit known
        limit = None
    own = limit - (time.monotonic() - started) if isinstance(limit, (int, float)) and limit > 0 else None
    known = [t for t in (own, bounded) if t is not None]
    return min(known) if known else None


def retry_wait(name: str, policy: RetryPolicy, attempt: int, error: Exception,
               remaining: Optional[float] = None) -> Optional[float]:
    """Seconds to wait before retry ``attempt + 1`` after ``error`` (logged), or None to give up.

    ``remaining``: seconds left of the call's time limit; a ``Retry-After`` beyond it gives up.
    """
    if attempt >= policy.max_retries or not is_transient(error):
        return None
    if remaining is not None and remaining <= 0:
        add_note(error, "the call's time limit is spent: not retried")
        return None
    if _error_code(error) in _NOT_RETRYABLE_CODES:
        add_note(error, "the provider's quota or billing limit is reached: not retried")
        return None
    wait = policy.delay(attempt)
    asked = retry_after_seconds(error)
    if asked is not None:
        limit = getattr(policy, "max_retry_after", None)
        limit = MAX_RETRY_AFTER if limit is None else float(limit)
        if asked > limit:
            add_note(error, f"the provider asks to retry after {asked:.0f} s, more than the "
                         f"{limit:g} s lightrag waits: not retried")
            return None
        if remaining is not None and asked >= remaining:
            add_note(error, f"the provider asks to retry after {asked:.0f} s, past the call's time "
                         f"limit: not retried")
            return None
        wait = max(wait, asked)
    log.warning("%s failed (%s); retry %d in %.2fs", name, redact_text(str(error)), attempt + 1,
                wait)
    notify_retry(error, attempt + 1, wait)
    return wait


def with_http_retries(fn: F) -> F:
    """Decorate a (sync or async) method so transient errors are retried per
    ``self.retry_policy``, waiting at least the provider's ``Retry-After``."""
    if asyncio.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            policy = _policy_of(self)
            attempt, started = 0, time.monotonic()
            while True:
                try:
                    return await fn(self, *args, **kwargs)
                except Exception as e:
                    wait = retry_wait(fn.__qualname__, policy, attempt, e, _remaining(self, started))
                    if wait is None:
                        raise
                    await asyncio.sleep(wait)
                attempt += 1

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        policy = _policy_of(self)
        attempt, started = 0, time.monotonic()
        while True:
            try:
                return fn(self, *args, **kwargs)
            except Exception as e:
                wait = retry_wait(fn.__qualname__, policy, attempt, e, _remaining(self, started))
                if wait is None:
                    raise
                time.sleep(wait)
            attempt += 1

    return wrapper  # type: ignore[return-value]
