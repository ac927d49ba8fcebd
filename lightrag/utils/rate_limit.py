"""A model client's request rate: at most ``requests_per_minute`` requests begin per minute.

Providers' free and entry tiers limit requests per minute; a benchmark or an indexing run that
only bounds its concurrency sends bursts, earns 429 answers and waits out their ``Retry-After``.
:class:`RequestRateLimit` spaces the requests instead: each request (and each retry) takes the
next start time of an even schedule (one every ``60 / requests_per_minute`` s, with up to
``burst`` at once), shared by every thread and event loop using the client. It is the generic
cell rate algorithm: one number (the next free start) under a lock, no timer thread.

Set it on a model client with :meth:`~lightrag.core.model_client.ModelClient.limit_rate`; the
SDK clients (``SDKClientMixin.call``/``acall``: OpenAI, Groq and the other HTTP providers) wait
for their turn right before each attempt is sent, retries included.

Example:
    >>> limit = RequestRateLimit(requests_per_minute=120, burst=2)
    >>> [round(limit.reserve(now=10.0), 2) for _ in range(4)]  # two at once, then every 0.5 s
    [0.0, 0.0, 0.5, 1.0]
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any, Dict, Optional


class RequestRateLimit:
    """At most ``requests_per_minute`` request starts per minute, ``burst`` of them at once.

    Args:
        requests_per_minute: the provider's limit (or less, to leave room for other users of the
            same key); a positive number.
        burst: requests that may start together after a pause (1: evenly spaced).
    """

    def __init__(self, requests_per_minute: float, burst: int = 1) -> None:
        if (isinstance(requests_per_minute, bool) or not isinstance(requests_per_minute, (int, float))
                or not math.isfinite(requests_per_minute) or requests_per_minute <= 0):
            raise ValueError(f"requests_per_minute must be a positive number, got {requests_per_minute!r}")
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise ValueError(f"burst must be a whole number of at least 1, got {burst!r}")
        self.requests_per_minute = float(requests_per_minute)
        self.burst = burst
        self._lock = threading.Lock()
        self._next = 0.0  # the schedule's next start (time.monotonic seconds)

    @property
    def interval(self) -> float:
        """Seconds between two starts of the even schedule."""
        return 60.0 / self.requests_per_minute

    def reserve(self, now: Optional[float] = None) -> float:
        """Take the next start: the seconds to wait before sending (0.0: at once)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            scheduled = max(self._next, now)
            start = max(now, scheduled - (self.burst - 1) * self.interval)
            self._next = scheduled + self.interval
        return start - now

    def wait(self) -> None:
        """Block until this thread's request may start."""
        delay = self.reserve()
        if delay > 0:
            time.sleep(delay)

    async def await_turn(self) -> None:
        """Sleep (without blocking the event loop) until this request may start."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)

    def __repr__(self) -> str:
        return f"RequestRateLimit(requests_per_minute={self.requests_per_minute:g}, burst={self.burst})"

    def __getstate__(self) -> Dict[str, Any]:
        return {"requests_per_minute": self.requests_per_minute, "burst": self.burst}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["requests_per_minute"], state.get("burst", 1))  # type: ignore[misc]
