"""``NetworkXGraphStorage``: the knowledge graph as an undirected ``networkx.Graph``, saved as
GraphML (``graph_<namespace>.graphml``, written atomically).

Example:
    >>> import tempfile
    >>> g = NetworkXGraphStorage(namespace="kg", working_dir=tempfile.mkdtemp())
    >>> g.upsert_node("Saturn", {"entity_type": "location"})
    >>> g.upsert_node("Titan", {"entity_type": "location"})
    >>> g.upsert_edge("Titan", "Saturn", {"weight": 1.0})
    >>> g.get_node_edges("Saturn"), g.edge_degree("Saturn", "Titan")
    ([('Saturn', 'Titan')], 2)
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import networkx as nx

from lightrag.components.storage.base import BaseGraphStorage
from lightrag.core.base_data_class import DataClass
from lightrag.utils.file_io import atomic_write_bytes, atomic_write_text

log = logging.getLogger(__name__)

_GRAPHML_TYPES = (str, int, float, bool)


@dataclass
class KnowledgeGraph(DataClass):
    """A subgraph for display: nodes and edges with their properties."""

    nodes: List[Dict[str, Any]] = field(default_factory=list, metadata={"desc": "id, labels, properties"})
    edges: List[Dict[str, Any]] = field(default_factory=list, metadata={"desc": "id, source, target, properties"})
    is_truncated: bool = field(default=False, metadata={"desc": "True when max_nodes cut it"})


def _clean(data: Dict[str, Any], what: str) -> Dict[str, Any]:
    clean = {}
    for key, value in data.items():
        if value is None:
            continue
        if not isinstance(value, _GRAPHML_TYPES):
            raise TypeError(f"{what} property {key!r} is a {type(value).__name__}; GraphML holds "
                            "only str, int, float and bool")
        clean[key] = value
    return clean


class NetworkXGraphStorage(BaseGraphStorage):
    """The whole graph in memory (fine to millions of edges on one machine)."""

    def __init__(self, namespace: str, workspace: str = "", working_dir: str = "./lightrag_storage") -> None:
        super().__init__(namespace, workspace, working_dir)
        self._graph = nx.Graph()
        self._dirty = False
        if self.file_path.exists():
            try:
                self._graph = nx.read_graphml(self.file_path)
            except Exception as e:  # networkx raises several parser errors
                raise ValueError(f"cannot read graph file {self.file_path}: {e}") from e

    _to_dict_exclude = ("_graph",)

    @property
    def file_path(self) -> Path:
        return self.storage_dir / f"graph_{self.namespace}.graphml"

    def index_done_callback(self) -> None:
        if not self._dirty and self.file_path.exists():
            return
        buffer = io.BytesIO()
        nx.write_graphml(self._graph, buffer)
        atomic_write_bytes(self.file_path, buffer.getvalue())
        self._dirty = False

    def drop(self) -> None:
        self._graph = nx.Graph()
        self.file_path.unlink(missing_ok=True)
        self._dirty = False

    # ------------------------------------------------------------------- reads
    def has_node(self, node_id: str) -> bool:
        return self._graph.has_node(node_id)

    def has_edge(self, src: str, tgt: str) -> bool:
        return self._graph.has_edge(src, tgt)

    def node_degree(self, node_id: str) -> int:
        return self._graph.degree(node_id) if self._graph.has_node(node_id) else 0

    def get_node(self, node_id: str) -> Optional[Dict[str, Any]]:
        data = self._graph.nodes.get(node_id)
        return dict(data) if data is not None else None

    def get_edge(self, src: str, tgt: str) -> Optional[Dict[str, Any]]:
        data = self._graph.get_edge_data(src, tgt)
        return dict(data) if data is not None else None

    def get_node_edges(self, node_id: str) -> Optional[List[Tuple[str, str]]]:
        if not self._graph.has_node(node_id):
            return None
        return [(node_id, other) for other in self._graph.adj[node_id]]

    def get_nodes_batch(self, node_ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        nodes = self._graph.nodes
        return {n: dict(nodes[n]) for n in node_ids if n in nodes}

    def node_degrees_batch(self, node_ids: Sequence[str]) -> Dict[str, int]:
        adj = self._graph.adj
        return {n: len(adj[n]) if n in adj else 0 for n in node_ids}

    def get_edges_batch(self, pairs: Sequence[Tuple[str, str]]) -> Dict[Tuple[str, str], Dict[str, Any]]:
        adj = self._graph.adj
        return {(s, t): dict(adj[s][t]) for s, t in pairs if s in adj and t in adj[s]}

    def get_nodes_edges_batch(self, node_ids: Sequence[str]) -> Dict[str, List[Tuple[str, str]]]:
        adj = self._graph.adj
        return {n: [(n, o) for o in adj[n]] if n in adj else [] for n in node_ids}

    def get_all_labels(self) -> List[str]:
        return sorted(self._graph.nodes)

    def get_all_nodes(self) -> List[Dict[str, Any]]:
        return [{"id": n, **d} for n, d in self._graph.nodes(data=True)]

    def get_all_edges(self) -> List[Dict[str, Any]]:
        return [{"source": s, "target": t, **d} for s, t, d in self._graph.edges(data=True)]

    def search_labels(self, query: str, limit: int = 50) -> List[str]:
        """Labels containing ``query`` (case-insensitive): exact, then prefix, then substring."""
        q = query.lower()
        found = [n for n in self._graph.nodes if q in n.lower()]
        found.sort(key=lambda n: (n.lower() != q, not n.lower().startswith(q), len(n), n))
        return found[:limit]

    def get_popular_labels(self, limit: int = 300) -> List[str]:
        return [n for n, _ in sorted(self._graph.degree, key=lambda nd: (-nd[1], nd[0]))[:limit]]

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3, max_nodes: int = 1000) -> KnowledgeGraph:
        """``"*"``: the ``max_nodes`` highest-degree nodes; else a BFS from ``node_label``."""
        if node_label == "*":
            chosen = self.get_popular_labels(max_nodes)
            truncated = self._graph.number_of_nodes() > max_nodes
        else:
            if not self._graph.has_node(node_label):
                return KnowledgeGraph()
            chosen, seen, queue, truncated = [], {node_label}, deque([(node_label, 0)]), False
            while queue:
                node, depth = queue.popleft()
                if len(chosen) >= max_nodes:
                    truncated = True
                    break
                chosen.append(node)
                if depth < max_depth:
                    for other in self._graph.adj[node]:
                        if other not in seen:
                            seen.add(other)
                            queue.append((other, depth + 1))
        sub = self._graph.subgraph(chosen)
        return KnowledgeGraph(
            nodes=[{"id": n, "labels": [n], "properties": dict(d)} for n, d in sub.nodes(data=True)],
            edges=[{"id": f"{s}-{t}", "source": s, "target": t, "properties": dict(d)}
                   for s, t, d in sub.edges(data=True)],
            is_truncated=truncated,
        )

    # ------------------------------------------------------------------ writes
    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None:
        clean = _clean(data, f"node {node_id!r}")
        if self._graph.has_node(node_id):
            self._graph.nodes[node_id].update(clean)
        else:
            self._graph.add_node(node_id, **clean)
        self._dirty = True

    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None:
        clean = _clean(data, f"edge {src!r}-{tgt!r}")
        if self._graph.has_edge(src, tgt):
            self._graph.edges[src, tgt].update(clean)
        else:
            self._graph.add_edge(src, tgt, **clean)
        self._dirty = True

    def delete_node(self, node_id: str) -> None:
        if self._graph.has_node(node_id):
            self._graph.remove_node(node_id)
            self._dirty = True

    def remove_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        for src, tgt in pairs:
            if self._graph.has_edge(src, tgt):
                self._graph.remove_edge(src, tgt)
                self._dirty = True

    # ------------------------------------------------------------------ export
    def export(self, path: str, format: str = "graphml") -> None:
        """Write the graph as ``graphml``, ``json`` (node-link) or ``csv`` (two files)."""
        target = Path(path)
        if format == "graphml":
            buffer = io.BytesIO()
            nx.write_graphml(self._graph, buffer)
            atomic_write_bytes(target, buffer.getvalue())
        elif format == "json":
            atomic_write_text(target, json.dumps({"nodes": self.get_all_nodes(),
                                                  "edges": self.get_all_edges()}, ensure_ascii=False, indent=1))
        elif format == "csv":
            for suffix, rows in (("entities", self.get_all_nodes()), ("relations", self.get_all_edges())):
                out = io.StringIO()
                columns = sorted({k for r in rows for k in r}, key=lambda c: (c not in ("id", "source", "target"), c))
                writer = csv.DictWriter(out, fieldnames=columns)
                writer.writeheader()
                writer.writerows(rows)
                atomic_write_text(target.with_name(f"{target.stem}_{suffix}.csv"), out.getvalue())
        else:
            raise ValueError(f"unknown export format {format!r}; use graphml, json or csv")
