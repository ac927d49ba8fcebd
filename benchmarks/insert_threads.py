"""Where an insert's time goes, thread by thread: batches of 100 documents inserted into a copy of
a scale store, with each thread's CPU, the process's read/write system calls and the SQL
statements' time per batch.

The SQL timings of a batch miss what runs beside the writer: at 1M chunks an OpenBLAS helper
thread spun between the writer's small matrix products and took 0.34 s of CPU per batch from a
2-core machine, which no statement showed (``docs/benchmarks.md``, twenty-ninth session). Here a
monitor thread reads ``/proc/self/task/*/stat`` every 20 ms and sums each thread's CPU by name
(a native thread that Python did not start shows as its id); ``/proc/self/io`` gives the read
and write calls (the writer's B-tree pages it did not have cached, the log frames, the
checkpoints). Linux only.

The store (one built by ``benchmarks/scale.py``) is copied next to itself and the copy deleted
at the end. ``--source`` takes the documents from another store's corpus (the same documents
into two sizes: ``--source /tmp/scale/n10000`` for both).

Usage::

    python benchmarks/insert_threads.py /tmp/scale/n1000000 [--batches 6] [--source STORE]
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402

from lightrag.components.storage import sql_db  # noqa: E402


class ThreadCpu:
    """Each thread's CPU seconds since :meth:`start`, summed by thread name (pool threads
    ``asyncio_0``, ``asyncio_1`` ... as ``asyncio``), read from ``/proc`` every 20 ms."""

    def __init__(self) -> None:
        self.seen: Dict[int, Tuple[int, int]] = {}
        self.names: Dict[int, str] = {}
        self.base: Dict[int, Tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="cpu-monitor", daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            for t in threading.enumerate():
                self.names[t.native_id or 0] = t.name
            for path in glob.glob("/proc/self/task/*/stat"):
                try:
                    fields = Path(path).read_text().rsplit(")", 1)[1].split()
                    self.seen[int(path.split("/")[4])] = (int(fields[11]), int(fields[12]))
                except (OSError, IndexError, ValueError):
                    continue  # a thread that ended meanwhile
            time.sleep(0.02)

    def start(self) -> None:
        self._thread.start()
        time.sleep(0.1)
        self.base = dict(self.seen)

    def stop(self) -> Dict[str, float]:
        self._stop.set()
        self._thread.join()
        totals: Dict[str, float] = collections.Counter()
        for tid, (user, system) in self.seen.items():
            user0, system0 = self.base.get(tid, (0, 0))
            name = re.sub(r"_\d+$", "", self.names.get(tid, f"native {tid}"))
            totals[name] += (user - user0 + system - system0) / 100  # clock ticks
        return dict(totals)


def io_calls() -> Tuple[int, int]:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["syscr"]), int(fields["syscw"])


def time_statements() -> Dict[str, List[float]]:
    """Time every statement of :class:`~lightrag.components.storage.sql_db.SQLDatabase` (and
    SQLite's commits) from now on: ``{statement's first words: [seconds, calls]}``."""
    spent: Dict[str, List[float]] = collections.defaultdict(lambda: [0.0, 0])

    def timed(method: str) -> None:
        original = getattr(sql_db.SQLDatabase, method)

        def run(self, sql, *args, **kwargs):
            started = time.perf_counter()
            try:
                return original(self, sql, *args, **kwargs)
            finally:
                key = re.sub(r"\(\?(, ?\?)*\)", "(..)", " ".join(str(sql).split()))[:80]
                spent[key][0] += time.perf_counter() - started
                spent[key][1] += 1
        setattr(sql_db.SQLDatabase, method, run)

    for method in ("query", "executemany", "execute"):
        timed(method)
    end = sql_db.SQLiteDatabase._end

    def commit(self, commit):
        started = time.perf_counter()
        try:
            return end(self, commit)
        finally:
            spent["COMMIT"][0] += time.perf_counter() - started
            spent["COMMIT"][1] += 1
    sql_db.SQLiteDatabase._end = commit
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a store built by benchmarks/scale.py")
    parser.add_argument("--batches", type=int, default=6, help="batches of 100 documents (first: warm-up)")
    parser.add_argument("--source", help="the store whose corpus gives the documents (default: its own)")
    args = parser.parse_args()
    store = Path(args.store).resolve()
    copy = store.with_name(store.name + "-threads")
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", str(store), str(copy)], check=True)
    os.sync()  # the copy's gigabytes written back first: a checkpoint's sync would wait for them
    try:
        scale.read_files(str(copy))
        source = scale.Corpus.of_store(args.source or str(store))
        probe = scale._WriteProbe(str(copy), args.batches * scale.INSERT_BATCH, [source])
        spent = time_statements()
        cpu = ThreadCpu()
        cpu.start()
        walls, reads, writes = [], [], []
        for number in range(args.batches):
            if number == 1:
                spent.clear()  # the first batch reads the B-trees the process has not touched yet
            calls = io_calls()
            started = time.perf_counter()
            probe.insert_batch(number, source.n_chunks)
            walls.append(round(time.perf_counter() - started, 3))
            after = io_calls()
            reads.append(after[0] - calls[0])
            writes.append(after[1] - calls[1])
        per_thread = cpu.stop()
        n = args.batches
        print(json.dumps({"store": str(store), "documents_from": str(args.source or store),
                          "batch_s": walls, "mean_s_after_first": round(sum(walls[1:]) / max(1, n - 1), 3),
                          "read_calls_per_batch": round(sum(reads[1:]) / max(1, n - 1)),
                          "write_calls_per_batch": round(sum(writes[1:]) / max(1, n - 1)),
                          "cpu_s_per_batch_by_thread": {k: round(v / n, 3) for k, v in
                                                        sorted(per_thread.items(), key=lambda kv: -kv[1])}}))
        for key, (seconds, count) in sorted(spent.items(), key=lambda kv: -kv[1][0])[:20]:
            print(f"{1000 * seconds / max(1, n - 1):8.1f} ms {count / max(1, n - 1):7.1f}x  {key}")
    finally:
        shutil.rmtree(copy, ignore_errors=True)


if __name__ == "__main__":
    main()
