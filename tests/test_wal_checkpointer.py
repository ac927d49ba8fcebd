"""``WalCheckpointer``: the write-ahead log is copied into the database file by a thread of its
own, not by the writer's commits."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest

from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.wal_checkpointer import WalCheckpointer


def _writer(path):
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # the writer never checkpoints itself
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
    return conn


def _commit_rows(conn, count, checkpointer=None):
    for _ in range(count):
        conn.execute("INSERT INTO t (v) VALUES (?)", (os.urandom(8000),))
        if checkpointer is not None:
            checkpointer.committed()


def _gated(tmp_path, monkeypatch):
    """A writer's connection and a checkpointer whose thread's checkpoints wait for ``gate``;
    ``wait_runs(n)`` waits until the thread has run ``n`` passes."""
    import threading

    from lightrag.components.storage import wal_checkpointer as module

    gate = threading.Event()
    gate.set()
    real_connect = sqlite3.connect

    class GatedConnection:  # the thread's connection: its checkpoint waits for the gate
        def __init__(self, *args, **kwargs):
            self._conn = real_connect(*args, **kwargs)

        def execute(self, sql, *args):
            gate.wait(10)
            return self._conn.execute(sql, *args)

        def close(self):
            self._conn.close()

    path = str(tmp_path / "db.sqlite3")
    conn = _writer(path)
    monkeypatch.setattr(module.sqlite3, "connect", GatedConnection)  # the thread's, not the writer's
    checkpointer = WalCheckpointer(path, every=1000)

    def wait_runs(n):
        deadline = time.monotonic() + 10
        while checkpointer.runs < n and time.monotonic() < deadline:
            time.sleep(0.01)
        assert checkpointer.runs == n

    return gate, conn, checkpointer, wait_runs


def test_the_thread_copies_the_log_into_the_database_file(tmp_path):
    path = str(tmp_path / "db.sqlite3")
    conn = _writer(path)
    before = os.path.getsize(path)
    checkpointer = WalCheckpointer(path, every=8)
    _commit_rows(conn, 32, checkpointer)
    deadline = time.monotonic() + 10
    while os.path.getsize(path) < before + 100_000 and time.monotonic() < deadline:
        time.sleep(0.02)
    checkpointer.stop()
    assert checkpointer.runs >= 1
    assert os.path.getsize(path) >= before + 100_000  # pages of the 32 commits are in the file
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 32
    conn.close()


def test_without_it_the_log_stays_uncopied(tmp_path):
    """The premise of the test above: with autocheckpoint off nothing else copies the log."""
    path = str(tmp_path / "db.sqlite3")
    conn = _writer(path)
    before = os.path.getsize(path)
    _commit_rows(conn, 32)
    time.sleep(0.2)
    assert os.path.getsize(path) == before
    conn.close()


def test_stop_ends_the_thread_and_later_commits_start_none(tmp_path):
    path = str(tmp_path / "db.sqlite3")
    conn = _writer(path)
    checkpointer = WalCheckpointer(path, every=2)
    _commit_rows(conn, 4, checkpointer)
    checkpointer.stop()
    assert checkpointer._thread is not None and not checkpointer._thread.is_alive()
    _commit_rows(conn, 4, checkpointer)
    assert not checkpointer._thread.is_alive()
    conn.close()
    with pytest.raises(ValueError, match="every"):
        WalCheckpointer(path, every=0)


def test_a_store_with_many_commits_reopens_with_every_row(tmp_path):
    db = SQLiteDatabase(tmp_path / "store.sqlite3")
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    for i in range(100):
        with db.transaction():
            db.execute("INSERT INTO t (v) VALUES (?)", (f"row {i}" * 100,))
    db.close()
    again = SQLiteDatabase(tmp_path / "store.sqlite3")
    assert again.query("SELECT COUNT(*) FROM t") == [(100,)]
    assert again.query("PRAGMA integrity_check") == [("ok",)]
    again.close()


def test_the_log_starts_over_while_a_store_commits_without_pause(tmp_path):
    """A store's writer checkpoints only past a high threshold; the thread's passes must leave
    the log fully copied often enough that it restarts from its beginning, so the log file
    stays a small fraction of what was written through it."""
    db = SQLiteDatabase(tmp_path / "store.sqlite3")
    db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)")
    written = 0
    for _ in range(300):  # ~35 pages per commit, ~10,000 in all
        with db.transaction():
            db.executemany("INSERT INTO t (k, v) VALUES (?, ?)",
                           [(os.urandom(16).hex(), os.urandom(3000)) for _ in range(25)])
        written += 25
        time.sleep(0.002)  # the writer's own work between two commits
    wal_pages = os.path.getsize(str(tmp_path / "store.sqlite3") + "-wal") // 4096
    assert wal_pages < 6000, f"the log grew to {wal_pages} pages: it never started over"
    db.close()
    again = SQLiteDatabase(tmp_path / "store.sqlite3")
    assert again.query("SELECT COUNT(*) FROM t") == [(written,)]
    again.close()


def test_a_big_commit_is_copied_at_once_and_small_ones_wait_for_their_turn(tmp_path):
    from lightrag.components.storage.wal_checkpointer import BIG_COMMIT_ROWS

    path = str(tmp_path / "db.sqlite3")
    conn = _writer(path)
    checkpointer = WalCheckpointer(path, every=1000)
    _commit_rows(conn, 3)
    checkpointer.committed(rows=1)
    time.sleep(0.2)
    assert checkpointer.runs == 0  # a small commit: not yet
    checkpointer.committed(rows=BIG_COMMIT_ROWS)
    deadline = time.monotonic() + 10
    while checkpointer.runs == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    checkpointer.stop()
    assert checkpointer.runs == 1
    conn.close()


def test_the_writer_leaves_a_big_commit_to_the_thread_and_restarts_the_log_after(tmp_path, monkeypatch):
    """After a long log the writer copies the tail itself before its next transaction, so the
    log starts over; but not while the tail is a big commit the thread is copying (the writer
    would copy thousands of pages inline): then at a later transaction."""
    from lightrag.components.storage import wal_checkpointer as module

    gate, conn, checkpointer, wait_runs = _gated(tmp_path, monkeypatch)

    _commit_rows(conn, module.RESTART_PAGES // 2 + 10)  # 8,000-byte rows: two pages each
    checkpointer.committed(rows=module.BIG_COMMIT_ROWS)
    wait_runs(1)  # a long log copied by the thread
    gate.clear()
    _commit_rows(conn, 600)
    checkpointer.committed(rows=module.BIG_COMMIT_ROWS)  # the thread now copies it, held at the gate
    assert not checkpointer.restart_due()
    gate.set()
    wait_runs(2)
    assert checkpointer.restart_due()  # copied: the writer restarts the log once
    assert not checkpointer.restart_due()
    checkpointer.stop()
    conn.close()


def test_the_writer_restarts_the_log_only_when_nothing_is_left_to_copy(tmp_path, monkeypatch):
    """Copying the tail costs the writer a sync of the database file (45-75 ms at 1M chunks for
    any tail): a long log restarts at the first transaction after a pass that copied every
    commit, and the writer copies a tail itself only once the log passes FORCE_RESTART_PAGES."""
    from lightrag.components.storage import wal_checkpointer as module

    gate, conn, checkpointer, wait_runs = _gated(tmp_path, monkeypatch)

    _commit_rows(conn, module.RESTART_PAGES // 2 + 10)  # 8,000-byte rows: two pages each
    gate.clear()
    checkpointer.committed(rows=module.BIG_COMMIT_ROWS)
    assert not checkpointer.restart_due()  # the thread has not copied it yet
    gate.set()
    wait_runs(1)
    gate.clear()
    _commit_rows(conn, 1)
    checkpointer.committed(rows=1)  # a long log: the commit wakes the thread, held at the gate
    assert not checkpointer.restart_due()  # a tail the writer would have to copy and sync
    gate.set()
    wait_runs(2)
    assert checkpointer.restart_due()  # every commit copied: the restart costs nothing
    assert not checkpointer.restart_due()

    _commit_rows(conn, module.RESTART_PAGES // 2 + 10)
    checkpointer.committed(rows=module.BIG_COMMIT_ROWS)
    wait_runs(3)
    gate.clear()
    _commit_rows(conn, 1)
    checkpointer.committed(rows=1)
    monkeypatch.setattr(module, "FORCE_RESTART_PAGES", module.RESTART_PAGES)
    assert checkpointer.restart_due()  # past the force limit the writer copies the tail itself
    gate.set()
    checkpointer.stop()
    conn.close()
