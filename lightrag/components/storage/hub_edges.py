"""A bounded view of the edges of nodes in an SQL graph: a hub's 100k edges are never read whole.

Mixed into :class:`~lightrag.components.storage.sql_graph.SQLGraphStorage` (it uses the graph's
``db``, ``namespace``, ``_read_in``, ``_mine`` and ``node_degrees_batch``).

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
    >>> graph = SQLGraphStorage(SQLiteDatabase(":memory:"))
    >>> graph.upsert_edges_batch({("Hub", f"n{i}"): {} for i in range(5)})
    >>> edges = graph.get_nodes_edges_bounded(["Hub"], 2, prefer=["n4"])["Hub"]
    >>> len(edges), ("Hub", "n4") in edges
    (2, True)
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from lightrag.components.storage.graph_display import Pair


class HubEdgeReads:
    """``get_nodes_edges_bounded`` of an SQL graph: a node of more edges than the limit gets
    its edges to the preferred nodes (looked up by key) and then the first others in key order."""

    db: Any
    namespace: str

    def get_nodes_edges_bounded(self, node_ids: Sequence[str], limit: int, prefer: Sequence[str] = (),
                                degrees: Optional[Mapping[str, int]] = None) -> Dict[str, List[Pair]]:
        wanted = list(dict.fromkeys(node_ids))
        if self._mine():
            return super().get_nodes_edges_bounded(wanted, limit, prefer)
        if degrees is None or any(n not in degrees for n in wanted):
            degrees = self.node_degrees_batch(wanted)
        small = [n for n in wanted if degrees[n] <= limit]
        bounded = super().get_nodes_edges_bounded(small, limit, prefer) if small else {}
        others = list(dict.fromkeys(prefer))
        for hub in (n for n in wanted if degrees[n] > limit):
            edges = self._edges_to(hub, others)
            seen = set(edges)  # (a list's membership test made this quadratic: 4.4 s a hub view)
            room = limit - len(edges)
            for column, other in (("src", "tgt"), ("tgt", "src")):
                if room <= 0:
                    break
                rows = self.db.read(f"SELECT {other} FROM edges WHERE ns = ? AND {column} = ? LIMIT ?",
                                    (self.namespace, hub, room + len(edges)))
                for (o,) in rows:
                    if room > 0 and (hub, o) not in seen:
                        edges.append((hub, o))
                        seen.add((hub, o))
                        room -= 1
            bounded[hub] = edges
        return {n: bounded.get(n, []) for n in wanted}

    def _edges_to(self, node: str, others: Sequence[str]) -> List[Pair]:
        """``(node, other)`` for each of ``others`` joined to ``node``, looked up by key (committed
        rows): a hub's 100k edges are not read to find a few."""
        edges = [(node, t) for (t,) in self._read_in(
            "SELECT tgt FROM edges WHERE ns = ? AND src = ? AND tgt IN ({in_})", others, node)]
        edges += [(node, s) for (s,) in self._read_in(
            "SELECT src FROM edges WHERE ns = ? AND tgt = ? AND src IN ({in_})", others, node)]
        return list(dict.fromkeys(edges))
