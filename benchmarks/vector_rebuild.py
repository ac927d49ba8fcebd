"""What a vector namespace's new index costs its writer, on a copy of a store built by
``benchmarks/scale.py``.

Three ways of giving a large namespace a new inverted-file index, timed on one copy of the store
(the store itself is not touched):

1. ``inline``: the retrain inside one commit (the version-2 index: the file is linked, only the
   index and its list-ordered copy are written; no ``vector_rows`` entry changes);
2. ``compaction``: the file rewritten with its live rows and every ``vector_rows`` entry
   pointed at its new row (what every retrain cost before the version-2 index);
3. ``background``: the retrain beside the writer (``vector_index_build``): the commit that starts
   it, commits of ``--batch`` new vectors while it runs (their mean and longest), and the commit
   that swaps it in (which assigns the rows appended meanwhile to the new lists).

The baseline is the compaction, measured in the same process. Usage::

    python benchmarks/vector_rebuild.py /tmp/scale2/n1000000 relationships entities
    python benchmarks/vector_rebuild.py /tmp/scale2/n100000 relationships --ways inline compaction

The copy is made in ``--scratch`` (default: the system's temporary folder; it needs the store's
size free) and synced before timing; it is removed at the end. Results: ``docs/benchmarks.md``
("Scale", seventh session).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lightrag.components.storage import vector_index_build  # noqa: E402
from lightrag.components.storage.mapped_vector import MappedVectorStorage  # noqa: E402
from lightrag.components.storage.sql_db import SQLiteDatabase  # noqa: E402

WAYS = ("inline", "compaction", "background")


def _retrain(store: MappedVectorStorage) -> None:
    """Start (or run inline, or swap in) a retrain, as a commit that finds the index outgrown."""
    with store.db.transaction():
        store._rebuild_file(compact=False, committed_rows=store._matrix().shape[0])
        store.version += 1


def _commit(store: MappedVectorStorage, rng: np.random.Generator, batch: int, tag: str) -> float:
    vectors = rng.normal(size=(batch, store._matrix().shape[1])).astype(np.float32)
    start = time.perf_counter()
    store.upsert({f"probe-{tag}-{i}": {"content": "probe"} for i in range(batch)}, vectors=vectors)
    return time.perf_counter() - start


def measure(store: MappedVectorStorage, way: str, batch: int) -> Dict[str, Any]:
    rows = int(store._matrix().shape[0])
    out: Dict[str, Any] = {"namespace": store.namespace, "way": way, "file_rows": rows}
    if way == "compaction":
        start = time.perf_counter()
        store.reindex()
        out["stall_s"] = round(time.perf_counter() - start, 3)
    elif way == "inline":
        saved = vector_index_build.BACKGROUND_BUILD_ROWS
        vector_index_build.BACKGROUND_BUILD_ROWS = 1 << 62
        try:
            start = time.perf_counter()
            _retrain(store)
            out["stall_s"] = round(time.perf_counter() - start, 3)
        finally:
            vector_index_build.BACKGROUND_BUILD_ROWS = saved
    else:
        saved = vector_index_build.BACKGROUND_BUILD_ROWS
        vector_index_build.BACKGROUND_BUILD_ROWS = 1
        rng = np.random.default_rng(0)
        try:
            start = time.perf_counter()
            _retrain(store)
            out["start_commit_s"] = round(time.perf_counter() - start, 3)
            commits: List[float] = []
            while store._build is not None and not store._build.done:
                commits.append(_commit(store, rng, batch, f"{len(commits)}"))
            out["build_s"] = round(time.perf_counter() - start, 1)
            out["commits_meanwhile"] = len(commits)
            out["commit_mean_s"] = round(float(np.mean(commits)), 4) if commits else None
            out["commit_max_s"] = round(max(commits), 3) if commits else None
            start = time.perf_counter()
            _retrain(store)
            out["swap_commit_s"] = round(time.perf_counter() - start, 3)
            out["rows_since_snapshot"] = len(commits) * batch
        finally:
            vector_index_build.BACKGROUND_BUILD_ROWS = saved
    out["index"] = store._ann_meta()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a working directory built by benchmarks/scale.py")
    parser.add_argument("namespaces", nargs="+", help="vector namespaces, e.g. relationships entities")
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    parser.add_argument("--batch", type=int, default=100, help="vectors per commit during a background build")
    parser.add_argument("--scratch", default=None, help="where the copy of the store goes")
    parser.add_argument("--json", default=None, help="write the results here too")
    args = parser.parse_args()
    if not (Path(args.store) / "lightrag.sqlite3").is_file():
        parser.error(f"{args.store} is not a store (no lightrag.sqlite3 in it)")
    scratch = Path(tempfile.mkdtemp(prefix="vector-rebuild-", dir=args.scratch))
    results = []
    try:
        copy = scratch / "store"
        shutil.copytree(args.store, copy)
        os.sync()  # time the rebuilds, not the kernel writing the copy back
        db = SQLiteDatabase(copy / "lightrag.sqlite3")
        try:
            for namespace in args.namespaces:
                store = MappedVectorStorage(db, namespace=namespace)
                for way in args.ways:
                    result = measure(store, way, args.batch)
                    print(json.dumps(result), flush=True)
                    results.append(result)
        finally:
            db.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
