"""The degree of each node of an SQL graph: ``node_degrees`` rows kept in step with ``edges``.

A query ranks entities and relations by degree. Counted from the ``edges`` rows, a hub's degree
is a scan of its 100k index entries, and a ``local`` query asks for the degrees of a few hundred
nodes (~60 ms per query in a store of 2M relations). Here each commit adds the change in degree
of the nodes it touches (one upsert per touched node) and a query reads degrees by key.

Only the busy nodes (degree ``BUSY_DEGREE`` or more) are indexed by degree, for the busiest-first
listing of the graph explorer: the index of every node's degree had one entry moved per degree
change, on random leaves of a B-tree of 500k entries at 1M chunks (~1,200 pages written per 100
documents, 5 % of an insert's pages); the busy nodes are a small share of them.

A store written before this table gets its rows counted once from ``edges`` when first opened
(logged).

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
    >>> graph = SQLGraphStorage(SQLiteDatabase(":memory:"))
    >>> graph.upsert_edges_batch({("Titan", "Saturn"): {}, ("Rhea", "Saturn"): {}})
    >>> graph.node_degrees_batch(["Saturn", "Titan", "Pluto"])
    {'Saturn': 2, 'Titan': 1, 'Pluto': 0}
"""

from __future__ import annotations

import logging
from typing import Dict, List, Mapping, Sequence

from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

_BATCH = 400
#: nodes of at least this degree are in the index by degree (a partial index); a graph with fewer
#: busy nodes than a listing asks for is small enough to sort whole
BUSY_DEGREE = 16


class NodeDegrees:
    """The ``node_degrees`` rows of one graph namespace (written inside the graph's commit)."""

    def __init__(self, db: SQLDatabase, namespace: str) -> None:
        self.db = db
        self.namespace = namespace
        with db.transaction():
            db.create_keyed_table("node_degrees", "ns TEXT NOT NULL, node TEXT NOT NULL, "
                                  "degree INTEGER NOT NULL, PRIMARY KEY (ns, node)")
            db.execute("DROP INDEX IF EXISTS node_degrees_by_degree")  # every node's (older stores)
            db.execute("CREATE INDEX IF NOT EXISTS node_degrees_busy ON node_degrees (ns, degree) "
                       f"WHERE degree >= {BUSY_DEGREE}")
            if db.meta(self._built_key) is None:
                self._count_from_edges()

    @property
    def _built_key(self) -> str:
        return f"node_degrees:{self.namespace}"

    def _count_from_edges(self) -> None:
        """Rows for a store written before this table (inside the opening transaction)."""
        ns = self.namespace
        self.db.execute("DELETE FROM node_degrees WHERE ns = ?", (ns,))
        self.db.execute(
            "INSERT INTO node_degrees (ns, node, degree) SELECT ?, node, COUNT(*) FROM "
            "(SELECT src AS node FROM edges WHERE ns = ? UNION ALL "
            "SELECT tgt AS node FROM edges WHERE ns = ?) AS ends GROUP BY node", (ns, ns, ns))
        counted = int(self.db.query("SELECT COUNT(*) FROM node_degrees WHERE ns = ?", (ns,))[0][0])
        if counted:
            log.info("counted the degrees of %d nodes (once, for a store written before them)", counted)
        self.db.set_meta(self._built_key, "1")

    def of(self, nodes: Sequence[str]) -> Dict[str, int]:
        """The degree of each of ``nodes`` (0 for a node without edges or not in the graph)."""
        degrees = dict.fromkeys(nodes, 0)
        for node, degree in self.db.query_in(
                "SELECT node, degree FROM node_degrees WHERE ns = ? AND node IN ({in_})",
                list(degrees), (self.namespace,), chunk=_BATCH):
            degrees[node] = int(degree)
        return degrees

    def highest(self, limit: int) -> List[str]:
        """The ``limit`` nodes of highest degree (ties by name): read from the index of the busy
        nodes, or all rows sorted when fewer than ``limit`` are busy."""
        busy = [n for (n,) in self.db.read(
            f"SELECT node FROM node_degrees WHERE ns = ? AND degree >= {BUSY_DEGREE} "
            "ORDER BY degree DESC, node LIMIT ?", (self.namespace, limit))]
        if len(busy) >= limit:
            return busy
        return [n for (n,) in self.db.read(
            "SELECT node FROM node_degrees WHERE ns = ? AND degree > 0 "
            "ORDER BY degree DESC, node LIMIT ?", (self.namespace, limit))]

    def add(self, deltas: Mapping[str, int]) -> None:
        """Add each node's change in degree (inside the commit that changes the edges)."""
        changed = [(self.namespace, n, d) for n, d in deltas.items() if d]
        if not changed:
            return
        self.db.executemany(
            "INSERT INTO node_degrees (ns, node, degree) VALUES (?, ?, ?) ON CONFLICT (ns, node) "
            "DO UPDATE SET degree = node_degrees.degree + excluded.degree", changed)
        self.db.executemany("DELETE FROM node_degrees WHERE ns = ? AND node = ? AND degree <= 0",
                            [(ns, n) for ns, n, d in changed if d < 0])

    def drop(self) -> None:
        self.db.execute("DELETE FROM node_degrees WHERE ns = ?", (self.namespace,))
