"""Retries with exponential backoff for transient model-provider errors.

Retried: rate limits (HTTP 429), timeouts, dropped connections and server errors (HTTP 5xx).
Never retried: other client errors (HTTP 4xx such as a bad request or a wrong key), because
sending the same request again cannot succeed. Providers' SDK exceptions are classified by their
``status_code`` attribute, or by name for those without one (``APITimeoutError``,
``APIConnectionError``).

Example:
    >>> class Flaky:
    ...     def __init__(self):
    ...         self.calls = 0
    ...     @with_retries
    ...     def call(self):
    ...         self.calls += 1
    ...         if self.calls < 2:
    ...             raise TimeoutError("slow")
    ...         return "ok"
    >>> Flaky().call()
    'ok'
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, TypeVar

from lightrag.utils.call_deadline import seconds_left
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: ``hook(error, attempt, wait_seconds)``: called before each retry (see :func:`register_retry_hook`)
RetryHook = Callable[[BaseException, int, float], None]
_RETRY_HOOKS: List[RetryHook] = []


def register_retry_hook(hook: RetryHook) -> Callable[[], None]:
    """Call ``hook(error, attempt, wait_seconds)`` before every retry of a model call in this
    process (both :func:`with_retries` and the HTTP clients' ``with_http_retries``), whatever
    the log level; returns a function that removes it. A hook runs in the thread and context
    of the retrying call (a :mod:`contextvars` variable tells whose call it is), must be quick,
    and its exceptions are logged and ignored.

    Example:
        >>> seen = []
        >>> remove = register_retry_hook(lambda error, attempt, wait: seen.append(attempt))
        >>> class Flaky:
        ...     calls = 0
        ...     retry_policy = RetryPolicy(initial_delay=0.0, jitter=0.0)
        ...     @with_retries
        ...     def call(self):
        ...         self.calls += 1
        ...         if self.calls < 3:
        ...             raise TimeoutError("slow")
        ...         return "ok"
        >>> Flaky().call(), seen
        ('ok', [1, 2])
        >>> remove()
    """
    _RETRY_HOOKS.append(hook)

    def remove() -> None:
        if hook in _RETRY_HOOKS:
            _RETRY_HOOKS.remove(hook)

    return remove


def notify_retry(error: BaseException, attempt: int, wait: float) -> None:
    """Tell the registered hooks that retry ``attempt`` follows ``error`` after ``wait`` s."""
    for hook in list(_RETRY_HOOKS):
        try:
            hook(error, attempt, wait)
        except Exception:  # a hook must never break the call it watches
            log.exception("retry hook %r failed", hook)

_TRANSIENT_NAMES = {
    "APITimeoutError",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "Timeout",
    "ReadTimeout",
    "ConnectTimeout",
    "ConnectError",
}


@dataclass
class RetryPolicy:
    """How many times to retry and how long to wait (doubling, with jitter, capped)."""

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 8.0
    multiplier: float = 2.0
    jitter: float = 0.1

    def delay(self, attempt: int) -> float:
        base = min(self.max_delay, self.initial_delay * (self.multiplier**attempt))
        return base * (1 + random.uniform(-self.jitter, self.jitter))


DEFAULT_RETRY_POLICY = RetryPolicy()


def status_code_of(error: BaseException) -> Optional[int]:
    for holder in (error, getattr(error, "response", None)):
        code = getattr(holder, "status_code", None) if holder is not None else None
        if isinstance(code, int):
            return code
    return None


def is_transient(error: BaseException) -> bool:
    """True for errors worth retrying: 429, 5xx, timeouts and connection failures."""
    code = status_code_of(error)
    if code is not None:
        return code == 429 or code == 408 or 500 <= code < 600
    if isinstance(error, (TimeoutError, ConnectionError, asyncio.TimeoutError)):
        return True
    return type(error).__name__ in _TRANSIENT_NAMES


def _policy_of(owner: Any) -> RetryPolicy:
    return getattr(owner, "retry_policy", None) or DEFAULT_RETRY_POLICY


def _retry_wait(fn: Callable[..., Any], policy: RetryPolicy, attempt: int,
                error: Exception) -> Optional[float]:
    """Seconds to wait before retrying ``fn`` after ``error`` (logged), or None to give up:
    the error is not transient, the retries are spent, or the bounded call running this has
    run out of time (its caller stopped waiting: :mod:`lightrag.utils.call_deadline`)."""
    if attempt >= policy.max_retries or not is_transient(error):
        return None
    left = seconds_left()
    if left is not None and left <= 0:
        return None
    wait = policy.delay(attempt)
    log.warning("%s failed (%s); retry %d in %.2fs", fn.__qualname__, redact_text(str(error)),
                attempt + 1, wait)
    notify_retry(error, attempt + 1, wait)
    return wait


def with_retries(fn: F) -> F:
    """Decorate a (sync or async) method so transient errors are retried per ``self.retry_policy``."""
    if asyncio.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            policy = _policy_of(self)
            for attempt in range(policy.max_retries + 1):
                try:
                    return await fn(self, *args, **kwargs)
                except Exception as e:
                    wait = _retry_wait(fn, policy, attempt, e)
                    if wait is None:
                        raise
                    await asyncio.sleep(wait)

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        policy = _policy_of(self)
        for attempt in range(policy.max_retries + 1):
            try:
                return fn(self, *args, **kwargs)
            except Exception as e:
                wait = _retry_wait(fn, policy, attempt, e)
                if wait is None:
                    raise
                time.sleep(wait)

    return wrapper  # type: ignore[return-value]
