"""ANN (inverted-file index) vs exact search in ``MappedVectorStorage``: recall@10, latency, build
and commit cost, open + first query in a fresh process.

For each size, a store of 384-d vectors (the size of MiniLM's) is written through the public
API (``upsert`` in commits of 20,000 rows, exact search while loading), then:

* commit cost: five commits of 1,000 rows before the index exists (the baseline), then five with
  the index (each new row's list appended to the tail file);
* build: ``reindex()`` at that size (k-means on a sample, rows grouped by list, a new generation);
* latency and recall: 200 queries not in the store, top-10 through ``query``, exact (a store
  object with ``ann_min_rows=None`` on the same database: the baseline, same process) and ANN
  probing 5 % to 30 % of the lists, and the default; recall@10 = share of the exact top-10 ids
  the ANN top-10 holds;
* fresh process: a new interpreter opens the store and runs one query (ANN, then exact); the
  time of the open and of that first query, and the resident memory after each, are reported.

Vectors (see ``Vectors``): ``structured`` (default; latent factors, clusters and noise: neighbour
cosines about 0.6-0.7 like sentence embeddings of related text, continuous neighbourhoods), and
``uniform`` (normalised Gaussian noise, the worst case of any index, measured at the smaller
sizes).

Usage::

    .venv/bin/python benchmarks/ann_recall.py                         # 100k, 300k, 1M structured
    .venv/bin/python benchmarks/ann_recall.py --sizes 30000 --kinds structured uniform --out -
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightrag.components.storage import vector_ivf  # noqa: E402
from lightrag.components.storage.mapped_vector import MappedVectorStorage  # noqa: E402
from lightrag.components.storage.sql_db import SQLiteDatabase  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "benchmarks" / "vector_search.md"
SECTION = "<!-- ann_recall -->"
DIM = 384
TOP_K = 10
LOAD_BATCH = 20_000
COMMIT_ROWS = 1_000
COMMITS = 5
QUERIES = 200
PROBE_SHARES = (0.05, 0.1, 0.15, 0.2, 0.3)  # nprobe as a share of the lists
LATENT = 32
NOISE = 0.6


class Vectors:
    """Reproducible vectors of one kind, generated in slices (never the whole matrix at once).

    ``structured``: a point is a mix of a 32-d latent factor (projected to 384-d), one of
    ``n / 100`` cluster centres and isotropic noise, normalised: neighbourhoods are continuous
    (unlike well separated clusters, where any index finds the neighbours), neighbour cosines
    0.6-0.7, most pairs near 0. ``uniform``: normalised isotropic Gaussian noise, no structure.
    """

    def __init__(self, kind: str, n: int, seed: int = 0) -> None:
        self.kind, self.seed = kind, seed
        rng = np.random.default_rng(seed)
        self.factors = rng.standard_normal((LATENT, DIM), dtype=np.float32) / np.sqrt(LATENT)
        self.centres = rng.standard_normal((max(1, n // 100), DIM), dtype=np.float32) / np.sqrt(DIM)

    def slice(self, start: int, count: int, stream: int = 0) -> np.ndarray:
        rng = np.random.default_rng([self.seed, stream, start])
        noise = rng.standard_normal((count, DIM), dtype=np.float32)
        if self.kind == "uniform":
            return noise
        latent = rng.standard_normal((count, LATENT), dtype=np.float32) @ self.factors
        centres = self.centres[rng.integers(0, len(self.centres), count)]
        return latent + centres + NOISE * noise / np.sqrt(DIM)

    def queries(self, count: int) -> np.ndarray:
        return self.slice(0, count, stream=1)


def store_at(folder: Path, ann_min_rows: Any, nprobe: int = 24) -> MappedVectorStorage:
    db = SQLiteDatabase(folder / "store.sqlite3")
    return MappedVectorStorage(db, namespace="chunks", cosine_threshold=-1.0,
                               ann_min_rows=ann_min_rows, ann_nprobe=nprobe)


def upsert(store: MappedVectorStorage, vectors: np.ndarray, start: int) -> float:
    began = time.perf_counter()
    store.upsert({f"k{start + i}": {"content": ""} for i in range(len(vectors))}, vectors=vectors)
    return time.perf_counter() - began


def timed_queries(store: MappedVectorStorage, queries: np.ndarray) -> tuple:
    hits, times = [], []
    store.query(queries[0], TOP_K)  # warm-up: maps the file (and the index)
    for q in queries:
        began = time.perf_counter()
        found = store.query(q, TOP_K)
        times.append(time.perf_counter() - began)
        hits.append([h["id"] for h in found])
    return hits, 1000 * np.percentile(times, 50), 1000 * np.percentile(times, 95)


FRESH = """
import json, resource, sys, time
began = time.perf_counter()
import numpy as np
from lightrag.components.storage.mapped_vector import MappedVectorStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
imported = time.perf_counter()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
folder, ann, query = sys.argv[1], json.loads(sys.argv[2]), np.load(sys.argv[3])
store = MappedVectorStorage(SQLiteDatabase(folder + "/store.sqlite3"), namespace="chunks",
                            cosine_threshold=-1.0, ann_min_rows=ann)
opened = time.perf_counter()
rss_open = rss()
hits = store.query(query, 10)
done = time.perf_counter()
print(json.dumps({"import_s": imported - began, "open_s": opened - imported, "first_query_s": done - opened,
                  "rss_open_mb": rss_open, "rss_query_mb": rss(), "hits": len(hits)}))
"""


def fresh_process(folder: Path, ann: Any, query: np.ndarray) -> Dict[str, float]:
    path = folder / "query.npy"
    np.save(path, query)
    out = subprocess.run([sys.executable, "-c", FRESH, str(folder), json.dumps(ann), str(path)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(kind: str, n: int, workdir: Path) -> Dict[str, Any]:
    """Every number of one (kind, size) row."""
    folder = Path(tempfile.mkdtemp(dir=workdir))
    data = Vectors(kind, n)
    store = store_at(folder, None)
    began = time.perf_counter()
    loaded = n - 2 * COMMITS * COMMIT_ROWS
    for start in range(0, loaded, LOAD_BATCH):
        upsert(store, data.slice(start, min(LOAD_BATCH, loaded - start)), start)
    load_s = time.perf_counter() - began
    exact_commits = [upsert(store, data.slice(row, COMMIT_ROWS), row)
                     for row in range(loaded, loaded + COMMITS * COMMIT_ROWS, COMMIT_ROWS)]
    store.ann_min_rows = 1
    began = time.perf_counter()
    store.reindex()
    build_s = time.perf_counter() - began
    base = loaded + COMMITS * COMMIT_ROWS
    ann_commits = [upsert(store, data.slice(row, COMMIT_ROWS), row)
                   for row in range(base, base + COMMITS * COMMIT_ROWS, COMMIT_ROWS)]
    queries = data.queries(QUERIES)
    exact = store_at(folder, None)
    truth, exact_p50, exact_p95 = timed_queries(exact, queries)
    top = exact._scores(exact._matrix(), exact._normalize(queries[:20]))
    cosines = np.sort(top, axis=1)[:, ::-1][:, :TOP_K]
    ann_rows = []
    lists = store._ann_meta()[1]
    for share in (*PROBE_SHARES, None):  # None: the store's default
        nprobe = max(1, math.ceil(share * lists)) if share else vector_ivf.default_nprobe(lists)
        store.ann_nprobe = nprobe if share else None
        found, p50, p95 = timed_queries(store, queries)
        recall = np.mean([len(set(a) & set(b)) / TOP_K for a, b in zip(found, truth)])
        ann_rows.append({"nprobe": nprobe, "share": share, "recall": recall, "p50_ms": p50, "p95_ms": p95,
                         "speedup_p50": exact_p50 / p50})
    fresh_ann = fresh_process(folder, 1, queries[-1])
    fresh_exact = fresh_process(folder, None, queries[-2])
    sizes = {p.suffix: p.stat().st_size for p in folder.glob("vectors-*") if p.suffix in (".f32", ".ivf")}
    store.db.close()
    exact.db.close()
    shutil.rmtree(folder)
    return {"kind": kind, "n": n, "lists": lists, "load_s": load_s, "build_s": build_s,
            "exact_commit_ms": 1000 * float(np.median(exact_commits)),
            "ann_commit_ms": 1000 * float(np.median(ann_commits)),
            "exact_p50_ms": exact_p50, "exact_p95_ms": exact_p95, "ann": ann_rows,
            "top1_cos": float(cosines[:, 0].mean()), "top10_cos": float(cosines[:, -1].mean()),
            "fresh_ann": fresh_ann, "fresh_exact": fresh_exact,
            "ivf_mb": sizes.get(".ivf", 0) / 2**20}


def table(results: Sequence[Dict[str, Any]]) -> List[str]:
    lines = ["| vectors | data | lists | nprobe | recall@10 | ANN p50 / p95 (ms) | exact p50 / p95 (ms) "
             "| exact/ANN p50 |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        for a in r["ann"]:
            nprobe = f"{a['nprobe']}" + ("" if a["share"] else " (default)")
            lines.append(f"| {r['n']:,} | {r['kind']} | {r['lists']} | {nprobe} | {a['recall']:.3f} "
                         f"| {a['p50_ms']:.2f} / {a['p95_ms']:.2f} | {r['exact_p50_ms']:.1f} / "
                         f"{r['exact_p95_ms']:.1f} | {a['speedup_p50']:.1f}x |")
    lines += ["", "| vectors | data | top-1 / top-10 cosine | build (s) | commit of 1,000 rows exact / ANN "
              "(ms) | index file (MB) | fresh: open (ms) | fresh: first query ANN / exact (ms) "
              "| fresh RSS after open / after query (MB) |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        fa, fe = r["fresh_ann"], r["fresh_exact"]
        lines.append(f"| {r['n']:,} | {r['kind']} | {r['top1_cos']:.2f} / {r['top10_cos']:.2f} "
                     f"| {r['build_s']:.1f} | {r['exact_commit_ms']:.0f} / {r['ann_commit_ms']:.0f} "
                     f"| {r['ivf_mb']:.1f} | {1000 * fa['open_s']:.0f} | {1000 * fa['first_query_s']:.0f}"
                     f" / {1000 * fe['first_query_s']:.0f} | {fa['rss_open_mb']:.0f} / "
                     f"{fa['rss_query_mb']:.0f} |")
    return lines


def write_section(path: Path, text: str) -> None:
    """Replace this benchmark's section of ``path`` (between two markers), atomically."""
    old = path.read_text() if path.exists() else ""
    head, _, rest = old.partition(SECTION)
    _, _, tail = rest.partition(SECTION)
    new = f"{head.rstrip()}\n\n{SECTION}\n{text.strip()}\n{SECTION}\n{tail.lstrip()}".lstrip()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new)
    os.replace(tmp, path)


NOTES = """\
How to read it. *recall@10*: share of the exact top-10 ids that the ANN top-10 holds (200
queries not in the store). *p50 / p95*: one `query(vector, 10)` at a time through the public
API (hit ids and metadata read from SQLite included); *exact/ANN p50*: the exact store object's
p50 over the ANN one's, both in the same process on the same files. *build*: `reindex()`, the
k-means, the rows rewritten grouped by list and `vector_rows` renumbered (what the commit that
crosses `ann_min_rows`, or doubles the indexed rows, pays). *commit of 1,000 rows*: median of
five `upsert` commits before the index exists and five after (each new row's list appended).
*fresh*: a new interpreter; *open* is the constructor (the import of `lightrag`, about 1.1-1.5 s
here, is not in it), *first query* maps the file (and reads the index); RSS counts the pages
of the mapped file that the query touched (shared page cache, warm: the store was just
written). *uniform*: normalised Gaussian noise, the worst case of any index."""


def render(results: Sequence[Dict[str, Any]], command: str, load: float) -> str:
    """The markdown section of ``results``."""
    return "\n".join([
        "## Approximate search above a size (`MappedVectorStorage`, inverted-file index)", "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores shared with other "
        f"work (load average {load:.1f} at start), Python {platform.python_version()}, NumPy "
        f"{np.__version__}. Timings vary from run to run on this shared machine.", "",
        "```", command.rstrip(), "```", "", *table(results), "", NOTES])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--kinds", nargs="+", default=["structured"], choices=["structured", "uniform"])
    parser.add_argument("--uniform-up-to", type=int, default=100_000,
                        help="also measure uniform vectors at sizes up to this (0: never)")
    parser.add_argument("--workdir", default=None, help="where the temporary stores are written")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="markdown file ('-': print only)")
    parser.add_argument("--render", default=None, metavar="LOG",
                        help="only write the section from the JSON lines a run printed to LOG")
    args = parser.parse_args()
    command = "$ .venv/bin/python benchmarks/ann_recall.py " + " ".join(sys.argv[1:])
    load = os.getloadavg()[0]
    if args.render:
        lines = [json.loads(line) for line in Path(args.render).read_text().splitlines()
                 if line.startswith("{")]
        results = [r for r in lines if "kind" in r]
        command = next((r["command"] for r in lines if "command" in r), command)
        load = next((r["load"] for r in lines if "load" in r), load)
    else:
        print(json.dumps({"command": command, "load": load}), flush=True)
        results = []
        workdir = Path(args.workdir or tempfile.gettempdir())
        for n in args.sizes:
            extra = ["uniform"] if n <= args.uniform_up_to and "uniform" not in args.kinds else []
            for kind in [*args.kinds, *extra]:
                result = measure(kind, n, workdir)
                print(json.dumps(result), flush=True)
                results.append(result)
    text = render(results, command, load)
    print(text)
    if args.out != "-":
        write_section(Path(args.out), text)


if __name__ == "__main__":
    main()
