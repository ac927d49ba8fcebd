"""Bounding a model call in time: the request runs in a daemon thread the caller waits for.

A call that takes longer than its limit raises :class:`ModelCallTimeout` in the caller; the
request itself cannot be killed and finishes in the background, its result dropped (a retry
loop inside it gives up: :mod:`lightrag.utils.call_deadline`). Context
variables (tracing, benchmark tallies) are carried into the worker thread.

Example:
    >>> import time
    >>> call_with_timeout(lambda: "done", 1.0)
    'done'
    >>> call_with_timeout(lambda: time.sleep(1), 0.05)
    Traceback (most recent call last):
    ...
    lightrag.core.timeouts.ModelCallTimeout: model call timed out after 0.05 s
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Optional

from lightrag.utils.call_deadline import running_until

__all__ = ["ModelCallTimeout", "acall_with_timeout", "call_with_timeout"]


class ModelCallTimeout(TimeoutError):
    """A model call took longer than its limit."""

    def __init__(self, limit: float) -> None:
        super().__init__(f"model call timed out after {limit:g} s")
        self.limit = limit


def call_with_timeout(fn: Callable[..., Any], limit: Optional[float], *args: Any,
                      **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or :class:`ModelCallTimeout` after ``limit`` seconds.

    ``None`` or a limit <= 0 calls ``fn`` directly, with no thread.
    """
    if not limit or limit <= 0:
        return fn(*args, **kwargs)
    box: Dict[str, Any] = {}
    context = contextvars.copy_context()
    abandoned = threading.Event()
    deadline = time.monotonic() + limit

    def bounded() -> Any:
        with running_until(deadline, abandoned):  # retries inside give up once abandoned
            return fn(*args, **kwargs)

    def run() -> None:
        try:
            box["value"] = context.run(bounded)
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e

    worker = threading.Thread(target=run, name="lightrag-model-call", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        abandoned.set()
        raise ModelCallTimeout(limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


async def acall_with_timeout(request: Awaitable[Any], limit: Optional[float]) -> Any:
    """Await ``request``, or raise :class:`ModelCallTimeout` after ``limit`` seconds."""
    if not limit or limit <= 0:
        return await request
    try:
        return await asyncio.wait_for(request, timeout=limit)
    except asyncio.TimeoutError:
        raise ModelCallTimeout(limit) from None
