"""Recall@10 of the inverted-file index on real MiniLM vectors (a built MuSiQue-100 store).

``benchmarks/ann_recall.py`` measures the index on synthetic vectors at 100k-1M rows; this
script checks the same index on the vectors a real corpus gives: every entity, relation,
entity-name and chunk vector of a graph-RAG store built by ``benchmarks/graph_rag_quality.py``
(MuSiQue-100 with the packaged MiniLM: about 100k 384-d vectors together). They are written into
one :class:`MappedVectorStorage` with the index built (``ann_min_rows`` below their count), and
searched with two kinds of queries:

* the MuSiQue-100 questions, embedded by the same packaged MiniLM (what a query searches);
* 500 stored vectors held out of the store (what an insert's synonym search looks for: a name
  near the stored names).

For each query the top-10 of the index (default ``nprobe``, and the small ``nprobe`` of the
synonym search) is compared with the exact top-10 of the same store (``ann_min_rows=None``, same
database): recall@10 = share of the exact ids the index returns; for the held-out vectors also
the share of exact neighbours at cosine >= 0.9 found (the synonym search's question).

Usage::

    .venv/bin/python benchmarks/graph_rag_quality.py --store graphrag --extractors spacy \\
        --workdir /tmp/q --no-write                     # builds (and caches) the store
    .venv/bin/python benchmarks/ann_recall_real.py --store /tmp/q/spacy_minilm_<fingerprint>
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightrag.components.graph_rag.index.vectors import SYNONYM_NPROBE  # noqa: E402
from lightrag.components.storage import vector_ivf  # noqa: E402
from lightrag.components.storage.mapped_vector import MappedVectorStorage  # noqa: E402
from lightrag.components.storage.sql_db import SQLiteDatabase  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "musique-100"
NAMESPACES = ("entities", "relationships", "entity_names", "chunks")
HELD_OUT = 500


def stored_vectors(store: Path) -> np.ndarray:
    """Every live vector of the store's four vector namespaces, one matrix."""
    db = SQLiteDatabase(store / "lightrag.sqlite3")
    parts = []
    for ns in NAMESPACES:
        _, matrix = MappedVectorStorage(db, namespace=ns, ann_min_rows=None).rows()
        parts.append(np.asarray(matrix, dtype=np.float32))
    db.close()
    return np.concatenate(parts)


def question_vectors(data: Path) -> np.ndarray:
    from lightrag.components.model_client import LocalEmbedderClient

    questions = [q["question"] for q in json.loads((data / "queries.json").read_text())]
    return LocalEmbedderClient(backend="torch").encode(questions)


def recall(ann: List[List[Dict]], exact: List[List[Dict]]) -> float:
    return float(np.mean([len({h["id"] for h in a} & {h["id"] for h in e}) / max(len(e), 1)
                          for a, e in zip(ann, exact)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="a working dir built by graph_rag_quality.py")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    args = parser.parse_args()

    vectors = stored_vectors(Path(args.store))
    rng = np.random.default_rng(3)
    held = rng.choice(len(vectors), HELD_OUT, replace=False)
    kept = np.setdiff1d(np.arange(len(vectors)), held)
    questions = question_vectors(Path(args.data))
    with tempfile.TemporaryDirectory() as tmp:
        db = SQLiteDatabase(Path(tmp) / "real.sqlite3")
        index = MappedVectorStorage(db, namespace="real", cosine_threshold=-1.0,
                                    ann_min_rows=min(50_000, len(kept) // 2))
        for start in range(0, len(kept), 20_000):
            part = kept[start:start + 20_000]
            index.upsert({f"v{i}": {"content": ""} for i in part}, vectors=vectors[part])
        exact = MappedVectorStorage(db, namespace="real", cosine_threshold=-1.0, ann_min_rows=None)
        ann = index._ann_meta()
        lists = ann[1] if ann else 0
        # the default probes at least 128 lists: most of a small index's; the share it probes
        # of a large one's (15 %) says how recall holds as the store grows
        probes = {"default": None, "15 % of lists": max(1, math.ceil(vector_ivf.PROBE_SHARE * lists)),
                  "synonym search": SYNONYM_NPROBE}
        rows: Dict[str, Dict[str, float]] = {}
        for label, queries in (("questions", questions), ("held-out vectors", vectors[held])):
            truth = exact.query_batch(queries, 10)
            rows[label] = {name: recall(index.query_batch(queries, 10, nprobe=n), truth)
                           for name, n in probes.items()}
        near = [[h for h in hits if h["score"] >= 0.9] for hits in exact.query_batch(vectors[held], 10)]
        found = index.query_batch(vectors[held], 10, nprobe=SYNONYM_NPROBE)
        pairs = sum(len(n) for n in near)
        hit = sum(len({h["id"] for h in n} & {h["id"] for h in f}) for n, f in zip(near, found))
        db.close()
    print(f"{len(kept):,} real MiniLM vectors in the index ({lists} lists); recall@10 against "
          "exact, by lists probed per query:")
    print("| queries | " + " | ".join(f"{name} ({vector_ivf.default_nprobe(lists) if n is None else n})"
                                       for name, n in probes.items()) + " |")
    print("|---|" + "---|" * len(probes))
    for label, r in rows.items():
        print(f"| {label} | " + " | ".join(f"{v:.3f}" for v in r.values()) + " |")
    print(f"held-out neighbours at cosine >= 0.9 found with nprobe {SYNONYM_NPROBE}: {hit}/{pairs}")


if __name__ == "__main__":
    main()
