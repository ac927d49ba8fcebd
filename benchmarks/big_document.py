"""One very large document: time and peak memory of ``rag.insert`` as the document grows.

A synthetic text (the scale benchmark's Zipf corpus, chunk after chunk) of 5, 20 and 50 MB is
inserted as ONE document into an empty store, with instant fakes (hashed embeddings, a regex
extractor), so what is measured is the pipeline's own cost: chunking, the extraction results
it holds, the merge, the commits and the entity/relation vectors written after each part. Each
size runs in a fresh process; peak RSS is the process's ``VmHWM``; ``s_per_mb`` is the insert
time per MB of text (flat when the insert time grows linearly with the document);
``cpu_s`` the process's CPU time (user + system) of the insert, the figure to compare when other
work shares the cores.

Usage::

    python benchmarks/big_document.py --mb 5 20 50 --workdir /tmp/bigdoc
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def peak_rss_mb() -> float:
    text = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", text).group(1)) / 1024


def probe(mb: float, workdir: str) -> dict:
    import scale

    corpus = scale.Corpus(200_000)
    parts, size, c = [], 0, 0
    while size < mb * 1_000_000:
        text = corpus.chunk_text(c)
        parts.append(text)
        size += len(text) + 2
        c += 1
    document = "\n\n".join(parts)
    del parts
    rag = scale.make_rag(workdir)
    before = peak_rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    result = rag.insert(document, ids="big-doc")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if result.failed:
        raise RuntimeError(f"insert failed: {result.failed}")
    status = rag.status()
    return {"mb": mb, "chars": len(document), "insert_s": round(seconds, 1),
            "s_per_mb": round(seconds / (len(document) / 1_000_000), 2), "cpu_s": round(cpu, 1),
            "cpu_s_per_mb": round(cpu / (len(document) / 1_000_000), 2),
            "peak_rss_mb": round(peak_rss_mb()), "rss_before_mb": round(before),
            "chunks": status["chunks"], "entities": status["entities"], "relations": status["relations"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[5, 20, 50])
    parser.add_argument("--workdir", default="/tmp/lightrag-bigdoc")
    parser.add_argument("--probe", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe is not None:
        print(json.dumps(probe(args.probe, args.workdir)))
        return
    rows = []
    for mb in args.mb:
        folder = Path(args.workdir) / f"mb{mb:g}"
        shutil.rmtree(folder, ignore_errors=True)
        out = subprocess.run([sys.executable, __file__, "--probe", str(mb), "--workdir", str(folder)],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-3000:])
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    print("\n| MB | chunks | entities | relations | insert s | s per MB | CPU s per MB | peak RSS MB |\n"
          "|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['mb']:g} | {r['chunks']:,} | {r['entities']:,} | {r['relations']:,} | "
              f"{r['insert_s']} | {r['s_per_mb']} | {r['cpu_s_per_mb']} | {r['peak_rss_mb']:,} |")


if __name__ == "__main__":
    main()
