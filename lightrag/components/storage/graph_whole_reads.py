"""The whole-graph reads of an SQL graph: the NetworkX snapshot, every node's or edge's sources
(``ppr``'s entity-passage graph, ``lightrag check``), labels, counts and the streamed
:meth:`~WholeGraphReads.export`. Each reads every row of its table, a batch at a time where it
streams; the writer's pending changes are merged in when the writer asks.

:class:`WholeGraphReads` is a mixin of
:class:`~lightrag.components.storage.sql_graph.SQLGraphStorage` (its ``db``, ``namespace``,
``_mine()`` and pending rows).

Example:
    >>> import tempfile, os
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
    >>> g = SQLGraphStorage(SQLiteDatabase(os.path.join(tempfile.mkdtemp(), "s.sqlite3")))
    >>> g.upsert_edges_batch({("Titan", "Saturn"): {"source_id": "c1"}})
    >>> g.node_count(), g.edge_count(), sorted(g.snapshot().nodes)
    (2, 1, ['Saturn', 'Titan'])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

from lightrag.components.storage.base import ITER_BATCH
from lightrag.components.storage.graph_export import export_graph
from lightrag.components.storage.node_windows import WINDOW_COLUMN, NodeWindows

if TYPE_CHECKING:
    import networkx as nx

Pair = Tuple[str, str]


class WholeGraphReads:
    """Reads of every node or edge row (mixed into ``SQLGraphStorage``)."""

    db: Any
    namespace: str
    _pending_nodes: Dict[str, Optional[Dict[str, Any]]]
    _pending_edges: Dict[Pair, Optional[Dict[str, Any]]]
    _mine: Any  # () -> bool: whether this thread is the writer (its pending rows count)

    def _scan_nodes(self) -> Dict[str, Dict[str, Any]]:
        nodes = {n: NodeWindows.joined(d, w) for n, d, w in self.db.read(
            f"SELECT id, data, {WINDOW_COLUMN} FROM nodes WHERE ns = ?", (self.namespace,))}
        if self._mine():
            for n, d in self._pending_nodes.items():
                if d is None:
                    nodes.pop(n, None)
                else:
                    nodes[n] = dict(d)
        return nodes

    def _scan_edges(self) -> Dict[Pair, Dict[str, Any]]:
        edges = {(s, t): json.loads(d) for s, t, d in self.db.read(
            "SELECT src, tgt, data FROM edges WHERE ns = ?", (self.namespace,))}
        if self._mine():
            for k, d in self._pending_edges.items():
                if d is None:
                    edges.pop(k, None)
                else:
                    edges[k] = dict(d)
        return edges

    def snapshot(self) -> nx.Graph:
        """The whole graph as a NetworkX graph (reads every row: exports and analyses)."""
        import networkx as nx  # (imported when used: ~0.2 s)

        graph = nx.Graph()
        graph.add_nodes_from(self._scan_nodes().items())
        graph.add_edges_from((s, t, d) for (s, t), d in self._scan_edges().items())
        return graph

    def node_sources(self) -> List[Tuple[str, str]]:
        """``(node, source_id)`` of every node, read in the database without parsing the other
        properties (the entity-passage graph of the ``ppr`` mode needs only these)."""
        if self._mine():
            return [(n, str(d.get("source_id") or "")) for n, d in self._scan_nodes().items()]
        return [(n, s or "") for n, s in self.db.read(
            f"SELECT id, {self._node_source_field} FROM nodes WHERE ns = ?", (self.namespace,))]

    def iter_node_sources(self, batch: int = ITER_BATCH) -> Iterator[Tuple[str, str]]:
        if self._mine():
            yield from self.node_sources()
            return
        for node, source in self.db.pages("nodes", ("id",), (self._node_source_field,),
                                          self.namespace, batch):
            yield node, source or ""

    def iter_edge_sources(self, batch: int = ITER_BATCH) -> Iterator[Tuple[str, str, str]]:
        if self._mine():
            for (src, tgt), data in self._scan_edges().items():
                yield src, tgt, str(data.get("source_id") or "")
            return
        for src, tgt, source in self.db.pages("edges", ("src", "tgt"), (self._source_field,),
                                              self.namespace, batch):
            yield src, tgt, source or ""

    @property
    def _source_field(self) -> str:
        return self.db.json_text("data", "source_id")

    @property
    def _node_source_field(self) -> str:
        """A node's ``source_id``: its window row's (a hub's) or its own property's."""
        return f"COALESCE({WINDOW_COLUMN}, {self._source_field})"

    def get_all_labels(self) -> List[str]:
        if self._mine():
            return sorted(self._scan_nodes())
        return sorted(r[0] for r in self.db.read("SELECT id FROM nodes WHERE ns = ?", (self.namespace,)))

    def get_all_nodes(self) -> List[Dict[str, Any]]:
        return [{**d, "id": n} for n, d in self._scan_nodes().items()]

    def get_all_edges(self) -> List[Dict[str, Any]]:
        return [{**d, "source": s, "target": t} for (s, t), d in self._scan_edges().items()]

    def node_count(self) -> int:
        if self._mine():
            return len(self._scan_nodes())
        return int(self.db.read("SELECT COUNT(*) FROM nodes WHERE ns = ?", (self.namespace,))[0][0])

    def edge_count(self) -> int:
        """The number of edges (a count: :meth:`all_edge_pairs` reads every pair)."""
        if self._mine():
            return len(self._scan_edges())
        return int(self.db.read("SELECT COUNT(*) FROM edges WHERE ns = ?", (self.namespace,))[0][0])

    def all_edge_pairs(self) -> List[Pair]:
        if self._mine():
            return list(self._scan_edges())
        return [(s, t) for s, t in self.db.read("SELECT src, tgt FROM edges WHERE ns = ?",
                                                (self.namespace,))]

    def export(self, path: str, format: str = "graphml") -> List[Path]:
        """Write the graph as ``graphml``, ``json`` or ``csv`` (see
        :func:`~lightrag.components.storage.graph_export.export_graph`); returns the files
        written. The rows stream a batch at a time, in one committed state (bounded memory on
        a store of millions of relations)."""
        if self._mine():  # the writer's pending changes are not in the rows
            snapshot = self.snapshot()
            return export_graph(path, format, lambda: snapshot.nodes(data=True),
                                lambda: snapshot.edges(data=True))

        def nodes() -> Iterator[Tuple[str, Dict[str, Any]]]:
            for node, data in self.db.pages("nodes", ("id",), ("data",), self.namespace, ITER_BATCH):
                yield node, json.loads(data)

        def edges() -> Iterator[Tuple[str, str, Dict[str, Any]]]:
            for src, tgt, data in self.db.pages("edges", ("src", "tgt"), ("data",), self.namespace,
                                                ITER_BATCH):
                yield src, tgt, json.loads(data)

        with self.db.snapshot():  # nodes and edges of one committed state
            return export_graph(path, format, nodes, edges)
