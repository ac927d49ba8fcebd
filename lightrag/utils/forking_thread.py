"""Run work that forks worker processes (spaCy's ``nlp.pipe(n_process=...)``) from a plain
thread of its own, whose children die with it.

Two failures of forked workers this prevents, both seen with real processes:

* forked from a ``concurrent.futures`` pool's thread (``asyncio.to_thread``, a server's
  executor), a child exits with status 1: at exit the pool's hook joins every worker thread, the
  child's own thread included ("cannot join current thread"), and spaCy warns (W127) that its
  workers failed, after every call;
* workers that wait on a queue for work outlive a parent killed by SIGKILL, each holding a copy
  of the model. On Linux the children of the thread get ``PR_SET_PDEATHSIG`` (SIGKILL when the
  thread ends); the thread outlives its workers in a normal run (``nlp.pipe`` joins them), so
  only a dead parent triggers it.

Only children forked by these threads are touched: the fork hook returns at once in any other
child of the process.

Example:
    >>> run_forking(lambda: 6 * 7)
    42
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Callable, Set, TypeVar

from lightrag.utils.run_sync import call_in_new_thread

T = TypeVar("T")

_forking_threads: Set[int] = set()
_hook_lock = threading.Lock()
_hook_installed = False
_parent_pid = 0


def run_forking(work: Callable[[], T]) -> T:
    """``work()`` in a new plain thread (the caller waits): its result, or its exception."""
    _install_fork_hook()

    def tracked() -> T:
        ident = threading.get_ident()
        _forking_threads.add(ident)
        try:
            return work()
        finally:
            _forking_threads.discard(ident)

    return call_in_new_thread(tracked, name="forking-work", daemon=True)


def _install_fork_hook() -> None:
    global _hook_installed
    if not hasattr(os, "register_at_fork") or not os.path.exists("/proc/self"):
        return  # not Linux: the workers behave as before
    with _hook_lock:
        if not _hook_installed:
            os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
            _hook_installed = True


def _before_fork() -> None:
    global _parent_pid
    _parent_pid = os.getpid()


def _after_fork_in_child() -> None:
    """In a child forked by a :func:`run_forking` thread: die with the parent."""
    if threading.get_ident() not in _forking_threads:
        return
    _forking_threads.clear()
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except Exception:  # noqa: BLE001 - no prctl here: the workers behave as before
        return
    if os.getppid() != _parent_pid:  # the parent died before the call above
        os._exit(1)
