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

import logging
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import networkx as nx

from lightrag.components.storage.base import (
    BaseGraphStorage,
    KnowledgeGraph,
)
from lightrag.components.storage.graph_export import export_graph, graphml_bytes
from lightrag.components.storage.graph_properties import busy_first_bfs, clean_properties, rank_labels
from lightrag.utils.file_io import atomic_write_bytes

log = logging.getLogger(__name__)

__all__ = ["KnowledgeGraph", "NetworkXGraphStorage"]

class NetworkXGraphStorage(BaseGraphStorage):
    """The whole graph in memory (fine to millions of edges on one machine).

    Node and edge properties must be ``str``/``int``/``float``/``bool`` so they survive GraphML;
    ``upsert_*`` merge properties into existing ones. Edges are undirected:
    ``get_edge("a", "b") == get_edge("b", "a")``.

    Example:
        >>> import tempfile
        >>> g = NetworkXGraphStorage(namespace="chunk_entity_relation", working_dir=tempfile.mkdtemp())
        >>> g.upsert_edge("Cassini", "Saturn", {"keywords": "orbit", "weight": 2.0})
        >>> g.search_labels("sat"), g.get_knowledge_graph("Cassini", max_depth=1).is_truncated
        (['Saturn'], False)
    """

    _to_dict_exclude = ("_graph", "_dirty", "version")

    def __init__(self, namespace: str, workspace: str = "", working_dir: str = "./lightrag_storage") -> None:
        super().__init__(namespace, workspace, working_dir)
        self._after_from_dict()

    def _after_from_dict(self) -> None:
        """Read the file (a rebuilt store too: the graph is not in the saved dict)."""
        self._graph = nx.Graph()
        self._dirty = False
        self.version = 0
        self._load()

    def _load(self) -> None:
        """Read the GraphML file, if there is one."""
        if self.file_path.exists():
            try:
                loaded = nx.read_graphml(self.file_path)
            except Exception as e:  # networkx raises several parser errors
                raise ValueError(f"cannot read graph file {self.file_path}: {e}") from e
            self._graph = loaded if type(loaded) is nx.Graph else nx.Graph(loaded)
            log.debug("%s: loaded %d nodes, %d edges", self.file_path,
                      self._graph.number_of_nodes(), self._graph.number_of_edges())

    @property
    def file_path(self) -> Path:
        return self.storage_dir / f"graph_{self.namespace}.graphml"

    def index_done_callback(self) -> None:
        """Write the graph atomically; skipped when nothing changed since the last flush."""
        if not self._dirty and self.file_path.exists():
            return
        atomic_write_bytes(self.file_path, graphml_bytes(self._graph))
        self._dirty = False

    def drop(self) -> None:
        self._graph = nx.Graph()
        self.file_path.unlink(missing_ok=True)
        self._dirty = False

    # ------------------------------------------------------------------ reads
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

    def has_nodes_batch(self, node_ids: Sequence[str]) -> Set[str]:
        return {n for n in node_ids if n in self._graph}

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
        return [{**d, "id": n} for n, d in self._graph.nodes(data=True)]

    def get_all_edges(self) -> List[Dict[str, Any]]:
        return [{**d, "source": s, "target": t} for s, t, d in self._graph.edges(data=True)]

    def search_labels(self, query: str, limit: int = 50) -> List[str]:
        """Labels containing ``query`` (case-insensitive): exact, then prefix, then shorter first."""
        q = query.strip().lower()
        return rank_labels([n for n in self._graph.nodes if q in n.lower()], q, limit) if q else []

    def get_popular_labels(self, limit: int = 300) -> List[str]:
        """Labels by degree, highest first (ties by name)."""
        return [n for n, _ in sorted(self._graph.degree, key=lambda nd: (-nd[1], nd[0]))[:limit]]

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3,
                            max_nodes: int = 1000) -> KnowledgeGraph:
        """A subgraph for display.

        ``"*"``: the ``max_nodes`` highest-degree nodes and the edges among them. Otherwise a BFS
        from ``node_label`` up to ``max_depth`` hops (busier neighbours first), cut at
        ``max_nodes``; ``is_truncated`` says whether nodes were left out. Unknown label: empty.
        """
        if max_nodes < 1 or max_depth < 0:
            raise ValueError("max_nodes must be >= 1 and max_depth >= 0")
        if node_label == "*":
            chosen = self.get_popular_labels(max_nodes)
            truncated = self._graph.number_of_nodes() > max_nodes
        elif not self._graph.has_node(node_label):
            return KnowledgeGraph()
        else:
            chosen, truncated = self._bfs(node_label, max_depth, max_nodes)
        sub = self._graph.subgraph(chosen)
        return KnowledgeGraph(
            nodes=[{"id": n, "labels": [n], "properties": dict(sub.nodes[n])} for n in chosen],
            edges=[{"id": f"{s}-{t}", "source": s, "target": t, "properties": dict(d)}
                   for s, t, d in sub.edges(data=True)],
            is_truncated=truncated,
        )

    def _bfs(self, start: str, max_depth: int, max_nodes: int) -> Tuple[List[str], bool]:
        adj = self._graph.adj
        return busy_first_bfs(start, max_depth, max_nodes, lambda n: list(adj[n]),
                              lambda ns: {o: len(adj[o]) for o in ns})

    # ----------------------------------------------------------------- writes
    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None:
        clean = clean_properties(data, f"node {node_id!r}")
        if not isinstance(node_id, str) or not node_id:
            raise ValueError(f"node ids must be non-empty strings, got {node_id!r}")
        if self._graph.has_node(node_id):
            self._graph.nodes[node_id].update(clean)
        else:
            self._graph.add_node(node_id, **clean)
        self._dirty = True
        self.version += 1

    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None:
        clean = clean_properties(data, f"edge {src!r}-{tgt!r}")
        for end in (src, tgt):
            if not isinstance(end, str) or not end:
                raise ValueError(f"node ids must be non-empty strings, got {end!r}")
        if self._graph.has_edge(src, tgt):
            self._graph.edges[src, tgt].update(clean)
        else:
            self._graph.add_edge(src, tgt, **clean)
        self._dirty = True
        self.version += 1

    def delete_node(self, node_id: str) -> None:
        if self._graph.has_node(node_id):
            self._graph.remove_node(node_id)
            self._dirty = True
            self.version += 1

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        present = [n for n in node_ids if n in self._graph]
        self._graph.remove_nodes_from(present)
        self._dirty = self._dirty or bool(present)
        self.version += 1

    def remove_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        for src, tgt in pairs:
            if self._graph.has_edge(src, tgt):
                self._graph.remove_edge(src, tgt)
                self._dirty = True
                self.version += 1

    # ----------------------------------------------------------------- export
    def export(self, path: str, format: str = "graphml") -> List[Path]:
        """Write the graph as ``graphml``, ``json`` (``{"nodes", "edges"}``) or ``csv``
        (``<stem>_entities.csv`` and ``<stem>_relations.csv`` beside ``path``); returns the files
        (:func:`~lightrag.components.storage.graph_export.export_graph`)."""
        return export_graph(path, format, lambda: self._graph.nodes(data=True),
                            lambda: self._graph.edges(data=True))
