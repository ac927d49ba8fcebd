"""How many inverted lists the IVF index should have: recall@10 against rows scanned.

The index (``lightrag/components/storage/vector_ivf.py``) splits ``n`` rows into about
``sqrt(n)`` lists and, by default, scores ``max(128, 15 %)`` of them per query. The cost of a
search is the rows it scans (memory traffic over the mapped matrix: at 384 dimensions 15 % of
2M relation vectors is 460 MB per query), so the question is which list count reaches
recall@10 >= 0.95 scanning the fewest rows. For each list count (a multiple of ``sqrt(n)``)
and each share of lists probed this prints recall@10 against an exact search and the share of
the rows scanned:

* ``real``: every vector of a MuSiQue-100 graph-RAG store built with the packaged MiniLM
  (``benchmarks/graph_rag_quality.py``; ~78k 384-d vectors), queried with 300 held-out stored
  vectors and the 100 MuSiQue questions;
* ``synthetic``: ``benchmarks/ann_recall.py``'s structured 384-d vectors (continuous
  neighbourhoods: the hard case), ``--rows`` of them, 200 queries.

Usage::

    .venv/bin/python benchmarks/ann_lists.py real --store /tmp/q/spacy_minilm_<fingerprint>
    .venv/bin/python benchmarks/ann_lists.py synthetic --rows 300000 --multiples 1 4

Needs faiss (the ``faiss`` extra) to train the centroids, as the index does.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import List, Set

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from lightrag.components.storage.vector_ivf import IVFIndex  # noqa: E402

SHARES = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15)
TOP_K = 10


def real_vectors(store: Path, data: Path) -> tuple:
    import ann_recall_real as real

    vectors = real.stored_vectors(store)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    held = np.random.default_rng(0).choice(len(vectors), 300, replace=False)
    kept = np.ones(len(vectors), dtype=bool)
    kept[held] = False
    queries = np.concatenate([vectors[held], real.question_vectors(data)])
    return vectors[kept], queries


def synthetic_vectors(rows: int) -> tuple:
    import ann_recall

    source = ann_recall.Vectors("structured", rows)
    vectors = np.concatenate([source.slice(s, min(50_000, rows - s)) for s in range(0, rows, 50_000)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = source.queries(200)
    return vectors, queries / np.linalg.norm(queries, axis=1, keepdims=True)


def exact_top(vectors: np.ndarray, queries: np.ndarray) -> List[Set[int]]:
    return [set(np.argpartition(-(vectors @ q), TOP_K)[:TOP_K].tolist()) for q in queries]


def sweep(vectors: np.ndarray, queries: np.ndarray, multiple: float, truth: List[Set[int]]) -> List[str]:
    """Markdown rows: recall@10 and rows scanned per share of lists probed."""
    n = vectors.shape[0]
    lists = max(1, int(round(multiple * math.sqrt(n))))
    order, index = IVFIndex.build(vectors, np.arange(n), lists)
    grouped = vectors[order]
    out = []
    for share in SHARES:
        nprobe = max(1, math.ceil(share * lists))
        recalls, scanned = [], []
        for query, probed, exact in zip(queries, index.probe(queries, nprobe), truth):
            rows, scores = [], []
            for part in probed.tolist():
                start, end = int(index.offsets[part]), int(index.offsets[part + 1])
                if end > start:
                    rows.append(np.arange(start, end))
                    scores.append(grouped[start:end] @ query)
            rows_all, scores_all = np.concatenate(rows), np.concatenate(scores)
            best = rows_all[np.argpartition(-scores_all, min(TOP_K, len(scores_all) - 1))[:TOP_K]]
            recalls.append(len(set(order[best].tolist()) & exact) / TOP_K)
            scanned.append(len(rows_all) / n)
        out.append(f"| {n:,} | {lists} ({multiple:g} x sqrt) | {nprobe} ({share:.1%}) | "
                   f"{np.mean(recalls):.3f} | {np.mean(scanned):.1%} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", choices=["real", "synthetic"])
    parser.add_argument("--store", help="real: a working dir built by graph_rag_quality.py")
    parser.add_argument("--questions", default=str(ROOT.parent / "shared" / "data" / "musique-100"))
    parser.add_argument("--rows", type=int, default=300_000, help="synthetic: vectors")
    parser.add_argument("--multiples", type=float, nargs="+", default=[1, 2, 4, 8],
                        help="list counts as multiples of sqrt(rows)")
    args = parser.parse_args()
    if args.data == "real":
        if not args.store:
            parser.error("real needs --store")
        vectors, queries = real_vectors(Path(args.store), Path(args.questions))
    else:
        vectors, queries = synthetic_vectors(args.rows)
    truth = exact_top(vectors, queries)
    print("| rows | lists | lists probed | recall@10 | rows scanned |")
    print("|---:|---:|---:|---:|---:|")
    for multiple in args.multiples:
        for line in sweep(vectors, queries, multiple, truth):
            print(line, flush=True)


if __name__ == "__main__":
    main()
