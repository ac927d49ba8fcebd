"""Run a coroutine from synchronous code: the bridge of every sync method over an async one
(``GraphRAG.insert`` over ``ainsert``, ``query`` over ``aquery``...)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Coroutine, Dict, Optional, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when an event loop is already running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    return call_in_new_thread(lambda: asyncio.run(coro))


def call_in_new_thread(work: Callable[[], T], name: Optional[str] = None, daemon: bool = False) -> T:
    """``work()`` in a new thread while this one waits: its result, or its exception raised
    here."""
    result: Dict[str, Any] = {}

    def runner() -> None:
        try:
            result["value"] = work()
        except BaseException as e:  # re-raised in the caller's thread
            result["error"] = e

    thread = threading.Thread(target=runner, name=name, daemon=daemon)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]
