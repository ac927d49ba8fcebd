"""Which B-trees the pages of an insert batch belong to: batches of 100 documents inserted into a
copy of a scale store, with every page each commit writes mapped to its table or index.

The checkpointer is switched off for the run (its ``committed`` and ``restart_due`` do nothing
and the writer's own automatic checkpoint is out of reach), so the write-ahead log keeps every
frame; each frame's page number is looked up in SQLite's ``dbstat`` map of the store taken
before the insert (pages past the old end of the file: ``(appended)``). A page a commit writes
twice counts once; one written by several commits of a batch counts once per commit, as the log
and the checkpoint pay it. The first batch is a warm-up and left out of the means.

Needs the ``dbstat`` virtual table (the standard library's SQLite has it on common builds).

Usage::

    python benchmarks/wal_pages.py /tmp/scale/n1000000 [--batches 5]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Counter, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402

from lightrag.components.storage import sql_db, wal_checkpointer  # noqa: E402

WAL_HEADER = 32
FRAME_HEADER = 24


def no_checkpoints() -> None:
    """Keep every frame in the log: no checkpoint thread, no restart, no automatic checkpoint."""
    wal_checkpointer.WalCheckpointer.committed = lambda self, rows=0: None
    wal_checkpointer.WalCheckpointer.restart_due = lambda self: False
    sql_db.WRITER_CHECKPOINT_PAGES = 10 ** 9


def page_owners(db: str) -> Tuple[Dict[int, str], int]:
    """Each page's B-tree (``dbstat``), and the file's page count."""
    conn = sqlite3.connect(db)
    try:
        owners = dict(conn.execute("SELECT pageno, name FROM dbstat"))
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return owners, pages


def frames(wal: str) -> List[Tuple[int, bool]]:
    """``(page, ends_a_commit)`` of every frame in the log, in order."""
    data = Path(wal).read_bytes()
    if len(data) < WAL_HEADER:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    found, offset = [], WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(data):
        page, size_after_commit = struct.unpack(">II", data[offset:offset + 8])
        found.append((page, size_after_commit != 0))
        offset += FRAME_HEADER + page_size
    return found


def pages_by_tree(new: List[Tuple[int, bool]], owners: Dict[int, str], old_pages: int) -> Counter[str]:
    """Distinct pages per commit, summed over the commits of ``new``, by B-tree."""
    counts: Counter[str] = collections.Counter()
    commit: set = set()
    for page, ends in new:
        commit.add(page)
        if ends:
            counts.update(owners.get(p, "(appended)" if p > old_pages else "(freed)") for p in commit)
            commit = set()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a store built by benchmarks/scale.py")
    parser.add_argument("--batches", type=int, default=5, help="batches of 100 documents (first: warm-up)")
    args = parser.parse_args()
    store = Path(args.store).resolve()
    copy = store.with_name(store.name + "-wal-pages")
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", str(store), str(copy)], check=True)
    try:
        no_checkpoints()
        db = str(copy / "lightrag.sqlite3")
        owners, old_pages = page_owners(db)
        source = scale.Corpus.of_store(str(store))
        probe = scale._WriteProbe(str(copy), args.batches * scale.INSERT_BATCH, [source])
        seen, walls, commits = 0, [], []
        totals: Counter[str] = collections.Counter()
        for number in range(args.batches):
            started = time.perf_counter()
            probe.insert_batch(number, source.n_chunks)
            walls.append(round(time.perf_counter() - started, 3))
            logged = frames(db + "-wal")
            new, seen = logged[seen:], len(logged)
            commits.append(sum(ends for _, ends in new))
            if number:
                totals.update(pages_by_tree(new, owners, old_pages))
        measured = max(1, args.batches - 1)
        print(json.dumps({"store": str(store), "pages": old_pages, "batch_s": walls,
                          "commits_per_batch": commits,
                          "pages_per_batch": round(sum(totals.values()) / measured)}))
        for tree, count in totals.most_common():
            print(f"{count / measured:9.1f}  {tree}")
    finally:
        shutil.rmtree(copy, ignore_errors=True)


if __name__ == "__main__":
    main()
