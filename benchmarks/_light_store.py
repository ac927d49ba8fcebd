"""A retrieval-only store for the quality benchmark, built in minutes instead of hours.

``GraphRAG.insert`` embeds every entity (name + description) and every relation: on
MuSiQue-100's spaCy graph that is ~114k MiniLM calls, about two hours on a shared 2-core CPU.
This builds the same graph from the same extractor (``SpacyEntityExtractor.extract_many`` over
the passages, entities merged by name with their source chunks, relations by endpoint pair)
but embeds only the chunks (``title\\ntext``, as GraphRAG does) and the entity *names*, and no
relation vectors: enough for ``naive``, ``local`` and ``ppr`` (and ``mix`` without its global
half); ``global`` needs relation vectors and is not measured on it.

The result is a :class:`GraphStores` over small in-memory classes implementing the read methods
the query modes use; it is cached in ``folder`` (JSON + ``.npy``).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag import SpacyEntityExtractor
from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, relation_key
from lightrag.core.tokenizer import count_tokens_batch

MAX_DESCRIPTIONS = 4  # sentences kept per entity / relation (GraphRAG joins them the same way)


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


class Vectors:
    """Brute-force cosine search with a threshold, like ``NumpyVectorStorage``."""

    def __init__(self, ids: List[str], matrix: np.ndarray, meta: List[Dict[str, Any]],
                 embed: Any, threshold: float = 0.2) -> None:
        self.ids, self.meta, self.embed, self.threshold = ids, meta, embed, threshold
        self.matrix = _unit(matrix) if len(ids) else np.zeros((0, 384), np.float32)
        self.rows = {i: r for r, i in enumerate(ids)}

    def _top(self, scores: np.ndarray, top_k: int) -> List[Dict[str, Any]]:
        k = min(top_k, len(scores))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[scores[top] >= self.threshold]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [{"id": self.ids[r], "score": float(scores[r]), **self.meta[r]} for r in top.tolist()]

    def query(self, vector: np.ndarray, top_k: int) -> List[Dict[str, Any]]:
        v = np.asarray(vector, dtype=np.float32)
        return self._top(self.matrix @ (v / (np.linalg.norm(v) or 1.0)), top_k)

    def query_batch(self, matrix: np.ndarray, top_k: int) -> List[List[Dict[str, Any]]]:
        return [self._top(row, top_k) for row in _unit(np.atleast_2d(matrix)) @ self.matrix.T]

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        return {i: self.matrix[self.rows[i]] for i in ids if i in self.rows}

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embed, list(texts))


class Graph:
    """The read methods of a graph storage over plain dicts."""

    version = 1

    def __init__(self, nodes: Dict[str, Dict[str, Any]],
                 edges: Dict[Tuple[str, str], Dict[str, Any]]) -> None:
        self.nodes, self.edges = nodes, edges
        self.adjacent: Dict[str, List[Tuple[str, str]]] = {}
        for key in edges:
            for name in key:
                self.adjacent.setdefault(name, []).append(key)

    def get_all_nodes(self) -> List[Dict[str, Any]]:
        return [{**d, "id": n} for n, d in self.nodes.items()]

    def get_all_labels(self) -> List[str]:
        return list(self.nodes)

    def get_nodes_batch(self, names: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        return {n: self.nodes[n] for n in names if n in self.nodes}

    def node_degrees_batch(self, names: Sequence[str]) -> Dict[str, int]:
        return {n: len(self.adjacent.get(n, ())) for n in names}

    def get_nodes_edges_batch(self, names: Sequence[str]) -> Dict[str, List[Tuple[str, str]]]:
        return {n: list(self.adjacent.get(n, ())) for n in names}

    def get_edges_batch(self, pairs: Sequence[Tuple[str, str]]) -> Dict[Tuple[str, str], Dict[str, Any]]:
        return {p: self.edges[relation_key(*p)] for p in pairs if relation_key(*p) in self.edges}


class Chunks:
    def __init__(self, records: Dict[str, Dict[str, Any]]) -> None:
        self.records = records

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        return [self.records.get(i) for i in ids]


def _join(values: List[str]) -> str:
    return GRAPH_FIELD_SEP.join(dict.fromkeys(v for v in values if v))


def extract_graph(texts: List[str], ids: List[str], paths: List[str]) -> Tuple[Dict, Dict]:
    """Nodes and edges of the spaCy graph, merged by name / endpoint pair."""
    results = SpacyEntityExtractor().extract_many(list(zip(texts, ids, paths)))
    nodes: Dict[str, Dict[str, Any]] = {}
    edges: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for result in results:
        for e in result.entities:
            node = nodes.setdefault(e.entity_name, {"entity_type": e.entity_type, "descriptions": [],
                                                    "sources": []})
            node["descriptions"].append(e.description)
            node["sources"].append(result.chunk_id)
        for r in result.relations:
            key = relation_key(r.src_id, r.tgt_id)
            edge = edges.setdefault(key, {"keywords": r.keywords, "descriptions": [], "sources": [],
                                          "weight": 0.0})
            edge["descriptions"].append(r.description)
            edge["sources"].append(result.chunk_id)
            edge["weight"] += float(r.weight)
    flat_nodes = {n: {"entity_type": d["entity_type"],
                      "description": _join(d["descriptions"][:MAX_DESCRIPTIONS]),
                      "source_id": _join(d["sources"])} for n, d in nodes.items()}
    flat_edges = {k: {"keywords": d["keywords"], "weight": d["weight"],
                      "description": _join(d["descriptions"][:MAX_DESCRIPTIONS]),
                      "source_id": _join(d["sources"])} for k, d in edges.items()}
    return flat_nodes, flat_edges


def build_light_store(corpus: List[Dict[str, str]], ids: List[str], embed: Any, folder: Path,
                      threshold: float = 0.2) -> Tuple[GraphStores, Dict[str, Any]]:
    """The stores of the corpus (cached in ``folder``), and build facts."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "LIGHT_COMPLETE.json"
    texts = [f"{d['title']}\n{d['text']}" for d in corpus]
    paths = [d["title"] for d in corpus]
    if marker.exists():
        info = json.loads(marker.read_text())
        graph_data = json.loads((folder / "graph.json").read_text())
        nodes = graph_data["nodes"]
        edges = {tuple(e["key"]): e["data"] for e in graph_data["edges"]}
        chunk_matrix = np.load(folder / "chunks.npy")
        entity_matrix = np.load(folder / "entities.npy")
        info["cached"] = True
    else:
        started = time.perf_counter()
        nodes, edges = extract_graph(texts, ids, paths)
        extract_s = time.perf_counter() - started
        chunk_matrix = embed(texts)
        entity_matrix = embed(list(nodes))
        info = {"build_s": time.perf_counter() - started, "extract_s": extract_s,
                "chunks": len(texts), "entities": len(nodes), "relations": len(edges), "cached": False}
        (folder / "graph.json").write_text(json.dumps(
            {"nodes": nodes, "edges": [{"key": list(k), "data": d} for k, d in edges.items()]}))
        np.save(folder / "chunks.npy", chunk_matrix)
        np.save(folder / "entities.npy", entity_matrix)
        marker.write_text(json.dumps(info))
    tokens = count_tokens_batch(texts)
    chunk_records = {i: {"content": t, "file_path": p, "tokens": n}
                     for i, t, p, n in zip(ids, texts, paths, tokens)}
    names = list(nodes)
    stores = GraphStores(
        graph=Graph(nodes, edges),
        entities_vdb=Vectors(names, entity_matrix, [{"entity_name": n} for n in names], embed, threshold),
        relations_vdb=Vectors([], np.zeros((0, chunk_matrix.shape[1])), [], embed, threshold),
        chunks_vdb=Vectors(ids, chunk_matrix, [{"content": t, "file_path": p} for t, p in zip(texts, paths)],
                           embed, threshold),
        text_chunks=Chunks(chunk_records))
    return stores, info
