"""The time limit of the model call a thread is running, for the code deep inside it.

:func:`~lightrag.core.timeouts.call_with_timeout` runs a request in a worker thread and stops
waiting for it at its limit; the worker cannot be killed. A retry loop inside that worker (a
rate-limited provider's ``Retry-After``) reads :func:`seconds_left` and gives up once the
caller has stopped waiting, instead of sending more requests nobody will read.

Example:
    >>> seconds_left() is None
    True
    >>> with running_until(time.monotonic() + 5) as abandoned:
    ...     0 < seconds_left() <= 5
    True
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from typing import Iterator, Optional, Tuple

__all__ = ["running_until", "seconds_left"]

_DEADLINE: contextvars.ContextVar[Optional[Tuple[float, threading.Event]]] = contextvars.ContextVar(
    "lightrag_call_deadline", default=None)


@contextlib.contextmanager
def running_until(deadline: float, abandoned: Optional[threading.Event] = None
                  ) -> Iterator[threading.Event]:
    """Run the block as a call that must end by ``deadline`` (``time.monotonic()``); set the
    yielded event when the caller stops waiting."""
    event = abandoned or threading.Event()
    token = _DEADLINE.set((deadline, event))
    try:
        yield event
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> Optional[float]:
    """Seconds left to the running call's limit (0 once its caller has stopped waiting), or
    None outside a bounded call."""
    found = _DEADLINE.get()
    if found is None:
        return None
    deadline, abandoned = found
    return 0.0 if abandoned.is_set() else max(0.0, deadline - time.monotonic())
