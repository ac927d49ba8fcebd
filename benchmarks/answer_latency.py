"""Latency of the extractive answer step: every sentence embedded (baseline) vs the prefilter.

The answer step of an offline ``lightrag query`` is :class:`ExtractiveAnswerer` quoting the
retrieved context; its cost is the sentence vectors it computes. This script opens (or builds,
with ``lightrag index``) a store of real documents (``docs/`` by default), retrieves the context
of a few questions with the packaged config's query settings, and times the answer step on that
context at three sizes (all its chunks, half, a quarter), in one process:

- **baseline**: ``ExtractiveAnswerer(max_embedded=None, embed_chars=None)``: every sentence
  embedded whole (the method before the prefilter);
- **prefilter**: ``ExtractiveAnswerer()`` (the packaged settings), a fresh instance (cold: no
  vector cached);
- **prefilter, warm**: the same question again on that instance (its sentence vectors cached,
  as in a server answering a repeated or similar question).

Each timing is the median of ``--repeat`` runs, each on a fresh answerer (the embedding model is
loaded and warmed before any timing), as wall seconds and as CPU seconds of the process (all
threads: less sensitive to other processes sharing the cores). Ratios are against the baseline
of the same size and question, measured in the same process.

Usage::

    .venv/bin/python benchmarks/answer_latency.py --store /tmp/B_docs --docs docs
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightrag.components.graph_rag import ExtractiveAnswerer  # noqa: E402
from lightrag.components.graph_rag.sentences import split_sentences  # noqa: E402

QUESTIONS = ["How do I import a knowledge graph from CSV files?",
             "How are API keys limited to workspaces?",
             "What does lightrag check do?"]
FRACTIONS = (1.0, 0.5, 0.25)


def open_store(store: Path, docs: Path) -> Any:
    """The GraphRAG of ``store`` (the packaged config), indexed from ``docs`` when empty."""
    from lightrag.cli.common import load_rag

    if not (store / "lightrag.sqlite3").exists():
        print(f"indexing {docs} into {store} (lightrag index) ...", flush=True)
        subprocess.run([sys.executable, "-m", "lightrag.cli", "index", str(docs),
                        "--working-dir", str(store)], check=True, cwd=ROOT)
    return load_rag(argparse.Namespace(config=None, working_dir=str(store), workspace=None))


async def timed(answerer: ExtractiveAnswerer, question: str, context: Dict[str, Any],
                embed: Any, query_vector: Any) -> Tuple[float, float]:
    """Wall and CPU seconds of one answer step."""
    started, cpu = time.perf_counter(), time.process_time()
    await answerer.acall(question, context["chunks"], context["entities"], context["relations"],
                         embed=embed, query_vector=query_vector)
    return time.perf_counter() - started, time.process_time() - cpu


async def measure(rag: Any, question: str, repeat: int) -> List[Dict[str, Any]]:
    """Rows (one per context size) of median seconds for baseline, prefilter and warm."""
    full = (await rag.aquery(question, only_need_context=True)).raw_data
    embed = rag.chunks_vdb.aembed
    query_vector = (await embed([question]))[0]
    rows = []
    for fraction in FRACTIONS:
        n = max(1, round(len(full["chunks"]) * fraction))
        context = {"chunks": full["chunks"][:n], "entities": full["entities"],
                   "relations": full["relationships"]}
        sentences = sum(len(split_sentences(str(c.get("content", "")))) for c in context["chunks"])
        runs: Dict[str, List[Tuple[float, float]]] = {"baseline": [], "prefilter": [], "warm": []}
        for _ in range(repeat):
            every = ExtractiveAnswerer(max_embedded=None, embed_chars=None)
            runs["baseline"].append(await timed(every, question, context, embed, query_vector))
            fresh = ExtractiveAnswerer()
            runs["prefilter"].append(await timed(fresh, question, context, embed, query_vector))
            runs["warm"].append(await timed(fresh, question, context, embed, query_vector))
        row: Dict[str, Any] = {"question": question, "chunks": n, "sentences": sentences}
        for name, timings in runs.items():
            row[name] = statistics.median(t[0] for t in timings)
            row[f"{name}_cpu"] = statistics.median(t[1] for t in timings)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default="/tmp/lightrag-bench-docs", help="working directory")
    parser.add_argument("--docs", default=str(ROOT / "docs"), help="documents to index if empty")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--question", action="append", help="a question (repeatable)")
    args = parser.parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)
    rag = open_store(Path(args.store), Path(args.docs))
    rag.chunks_vdb.embed(["warm up the embedding model"])
    print("| question | chunks | sentences | baseline s (cpu s) | prefilter s (cpu s) | ratio "
          "| warm s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for question in args.question or QUESTIONS:
        for r in asyncio.run(measure(rag, question, args.repeat)):
            print(f"| {r['question']} | {r['chunks']} | {r['sentences']} | {r['baseline']:.3f} "
                  f"({r['baseline_cpu']:.3f}) | {r['prefilter']:.3f} ({r['prefilter_cpu']:.3f}) | "
                  f"{r['prefilter'] / r['baseline']:.3f} | {r['warm']:.4f} | "
                  f"{r['warm'] / r['baseline']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
