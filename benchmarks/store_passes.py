"""Whole-store passes on a store built by ``benchmarks/scale.py``: ``lightrag check`` and the
graph exports, each in a fresh process, with its wall time and peak RSS.

A pass over a 1M-chunk store reads every row; what it keeps in memory is what this measures
(``GraphIndex.verify`` and ``export`` stream the rows a batch at a time). Usage::

    python benchmarks/store_passes.py /tmp/scale2/n1000000                  # check, csv, graphml, json
    python benchmarks/store_passes.py /tmp/scale2/n1000000 --passes check csv

The exported files are written to a temporary folder and removed. Results: ``docs/benchmarks.md``
("Scale", sixth session).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PASSES = ("check", "csv", "graphml", "json")


def run_pass(workdir: str, name: str, out_dir: str) -> Dict[str, Any]:
    """One pass in this process (a fresh one: see :func:`measure`)."""
    import scale

    corpus = scale.Corpus.of_store(workdir)
    rag = scale.make_rag(workdir, corpus.dim)
    del corpus
    started = time.perf_counter()
    if name == "check":
        problems = len(rag.index.verify())
        detail: Dict[str, Any] = {"problems": problems}
    else:
        files = rag.export(os.path.join(out_dir, f"graph.{name}"))
        detail = {"bytes": sum(Path(f).stat().st_size for f in files)}
    seconds = time.perf_counter() - started
    return {"pass": name, "seconds": round(seconds, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), **detail}


def measure(workdir: str, name: str) -> Dict[str, Any]:
    out_dir = tempfile.mkdtemp(prefix="lightrag-passes-")
    try:
        out = subprocess.run([sys.executable, __file__, workdir, "--one", name, "--out", out_dir],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"{name} failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def table(rows: List[Dict[str, Any]]) -> str:
    lines = ["| pass | seconds | peak RSS MB | result |", "|---|---|---|---|"]
    for r in rows:
        result = (f"{r['problems']:,} problems" if "problems" in r else f"{r['bytes'] / 1e6:,.0f} MB written")
        lines.append(f"| {r['pass']} | {r['seconds']} | {r['peak_rss_mb']:,} | {result} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", help="a store built by benchmarks/scale.py (e.g. /tmp/scale2/n1000000)")
    parser.add_argument("--passes", nargs="+", choices=PASSES, default=list(PASSES))
    parser.add_argument("--one", choices=PASSES, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not Path(args.workdir, "n_chunks").exists():
        parser.error(f"{args.workdir} is not a store built by benchmarks/scale.py (no n_chunks file)")
    if args.one:
        sys.stdout.write(json.dumps(run_pass(args.workdir, args.one, args.out)) + "\n")
        return
    rows = [measure(args.workdir, name) for name in args.passes]
    sys.stdout.write(f"{args.workdir}\n\n{table(rows)}\n")


if __name__ == "__main__":
    main()
