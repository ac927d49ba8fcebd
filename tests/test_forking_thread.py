"""``run_forking``: work run in a thread of its own, whose forked children (and only those)
die with the parent (Linux ``PR_SET_PDEATHSIG``)."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest

from lightrag.utils.forking_thread import run_forking

linux_fork = pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "fork"),
                                reason="PR_SET_PDEATHSIG is Linux's")


def test_result_and_exception_reach_the_caller():
    assert run_forking(lambda: "done") == "done"
    with pytest.raises(KeyError, match="missing"):
        run_forking(lambda: {}["missing"])


def _death_signal_of_a_child() -> int:
    """Fork a child that reports the signal it gets when its parent dies (0: none)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        value = ctypes.c_int(-1)
        ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)  # PR_GET_PDEATHSIG
        os.write(write, str(value.value).encode())
        os._exit(0)
    os.close(write)
    try:
        return int(os.read(read, 32).decode())
    finally:
        os.close(read)
        os.waitpid(pid, 0)


@linux_fork
def test_only_children_of_the_forking_thread_die_with_the_parent():
    import signal

    assert run_forking(_death_signal_of_a_child) == signal.SIGKILL
    assert _death_signal_of_a_child() == 0  # forked by this thread: untouched
