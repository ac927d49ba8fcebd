"""Speed of the ``ppr`` query mode at scale: 100k chunks, 50k entities (synthetic).

The store is synthetic and in memory: each chunk cites ``--mentions`` entities drawn from a
Zipf-like distribution (a few hub entities cited by thousands of chunks, most by a handful),
1% of the entities get a synonym, and vectors are random unit 384-d float32 (MiniLM's size),
searched with our ``NumpyVectorStorage``-equivalent brute-force product. Measured per query:

- ``graph build``: :meth:`PassageGraph.build` (done once per store version, cached);
- the parts: seed search (4 keyword vectors against 50k entity vectors), dense search (the
  query against 100k chunk vectors), PPR power iteration and top passages;
- ``ppr mode``: the whole :meth:`PprMode.search` (dense chunk search over 100k vectors, seeds,
  PPR, cosines of the PPR candidates, chunk records).

Usage::

    .venv/bin/python benchmarks/ppr_speed.py --chunks 100000 --entities 50000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightrag.components.graph_rag.context import GraphStores  # noqa: E402
from lightrag.components.graph_rag.ppr import (  # noqa: E402
    PassageGraph,
    PprSettings,
    rank_passages,
    seed_entities,
)
from lightrag.components.graph_rag.query_modes import (  # noqa: E402
    QUERY_VECTOR,
    SEED_VECTORS,
    PprMode,
)
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, QueryParam  # noqa: E402


class Vectors:
    """Brute-force cosine search over a float32 matrix (what NumpyVectorStorage does)."""

    def __init__(self, ids: List[str], matrix: np.ndarray, key: str) -> None:
        self.ids, self.matrix, self.key = ids, matrix, key
        self.rows = {i: r for r, i in enumerate(ids)}

    def _top(self, scores: np.ndarray, k: int) -> List[Dict[str, Any]]:
        top = np.argpartition(-scores, k)[:k]
        top = top[np.argsort(-scores[top])]
        return [{"id": self.ids[r], self.key: self.ids[r], "score": float(scores[r]),
                 "content": "", "file_path": ""} for r in top.tolist()]

    def query(self, vector: np.ndarray, top_k: int) -> List[Dict[str, Any]]:
        return self._top(self.matrix @ vector, top_k)

    def query_batch(self, matrix: np.ndarray, top_k: int) -> List[List[Dict[str, Any]]]:
        return [self._top(row, top_k) for row in matrix @ self.matrix.T]

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        return {i: self.matrix[self.rows[i]] for i in ids if i in self.rows}


class Graph:
    version = 1

    def __init__(self, nodes: List[Dict[str, Any]]) -> None:
        self.nodes = nodes
        self.by_name = {n["id"]: n for n in nodes}

    def get_all_nodes(self) -> List[Dict[str, Any]]:
        return self.nodes

    def get_nodes_batch(self, names: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        return {n: self.by_name[n] for n in names if n in self.by_name}


class Chunks:
    def get_by_ids(self, ids: Sequence[str]) -> List[Dict[str, Any]]:
        return [{"content": f"text of {i}", "tokens": 120, "file_path": i} for i in ids]


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim), dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def make_store(n_chunks: int, n_entities: int, mentions: int, dim: int, seed: int) -> GraphStores:
    rng = np.random.default_rng(seed)
    names = [f"entity-{i}" for i in range(n_entities)]
    chunk_ids = [f"chunk-{j}" for j in range(n_chunks)]
    popularity = 1.0 / np.arange(1, n_entities + 1) ** 0.8
    popularity /= popularity.sum()
    cited = rng.choice(n_entities, size=(n_chunks, mentions), p=popularity)
    sources: List[List[str]] = [[] for _ in range(n_entities)]
    for j, row in enumerate(cited):
        for e in set(row.tolist()):
            sources[e].append(chunk_ids[j])
    nodes = [{"id": names[e], "source_id": GRAPH_FIELD_SEP.join(s), "entity_type": "concept",
              "description": ""} for e, s in enumerate(sources) if s]
    entity_matrix = unit_rows(rng, n_entities, dim)
    pairs = rng.choice(n_entities, size=(n_entities // 100, 2))
    synonyms = [(names[a], names[b], 0.95) for a, b in pairs.tolist() if a != b]
    return GraphStores(graph=Graph(nodes), entities_vdb=Vectors(names, entity_matrix, "entity_name"),
                       relations_vdb=None,
                       chunks_vdb=Vectors(chunk_ids, unit_rows(rng, n_chunks, dim), "chunk_id"),
                       text_chunks=Chunks(), synonym_pairs=synonyms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=50_000)
    parser.add_argument("--mentions", type=int, default=8, help="entities cited per chunk")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    started = time.perf_counter()
    stores = make_store(args.chunks, args.entities, args.mentions, args.dim, seed=0)
    print(f"synthetic store: {args.chunks:,} chunks, {args.entities:,} entities, "
          f"{len(stores.synonym_pairs):,} synonym pairs ({time.perf_counter() - started:.1f} s)")
    settings = PprSettings()
    started = time.perf_counter()
    graph = PassageGraph.build(((n["id"], n["source_id"].split(GRAPH_FIELD_SEP))
                                for n in stores.graph.get_all_nodes()), stores.synonym_pairs)
    synonym_edges = graph.synonym_steps.nnz if graph.synonym_steps is not None else 0
    edges = graph.to_passages.nnz + graph.to_entities.nnz + synonym_edges
    print(f"graph build: {time.perf_counter() - started:.2f} s, {graph.n_nodes:,} nodes, "
          f"{edges:,} directed edges")
    rng = np.random.default_rng(1)
    mode = PprMode(settings)
    param = QueryParam(mode="ppr")
    mode.search(stores, {QUERY_VECTOR: unit_rows(rng, 1, args.dim)[0],
                         SEED_VECTORS: unit_rows(rng, 4, args.dim)}, param)  # builds its cache
    seed_ms, dense_ms, ppr_ms, mode_ms = [], [], [], []
    for _ in range(args.queries):
        query, keywords = unit_rows(rng, 1, args.dim)[0], unit_rows(rng, 4, args.dim)
        t0 = time.perf_counter()
        seeds = seed_entities(stores.entities_vdb, graph, keywords, settings)
        seed_ms.append((time.perf_counter() - t0) * 1000)
        if not seeds:  # random vectors rarely pass the threshold: seed a few entities directly
            seeds = {int(i): 1.0 for i in rng.choice(graph.n_entities, 5)}
        t0 = time.perf_counter()
        dense = {h["id"]: h["score"] for h in stores.chunks_vdb.query(query, 20)}
        dense_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        rank_passages(graph, seeds, dense, settings, limit=40)
        ppr_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        mode.search(stores, {QUERY_VECTOR: query, SEED_VECTORS: keywords}, param)
        mode_ms.append((time.perf_counter() - t0) * 1000)
    for label, values in ((f"seed search (4 keywords x {args.entities:,} entities)", seed_ms),
                          (f"dense search ({args.chunks:,} chunks)", dense_ms),
                          ("PPR Gauss-Seidel sweeps + top passages", ppr_ms),
                          ("PprMode.search (all of it)", mode_ms)):
        print(f"{label}: p50 {statistics.median(values):.1f} ms, "
              f"p90 {float(np.percentile(values, 90)):.1f} ms over {len(values)} queries")


if __name__ == "__main__":
    main()
