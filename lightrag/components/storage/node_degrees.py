"""The degree of each node of an SQL graph: the ``degree`` column of its ``nodes`` row, kept in
step with ``edges``.

A query ranks entities and relations by degree. Counted from the ``edges`` rows, a hub's degree
is a scan of its 100k index entries, and a ``local`` query asks for the degrees of a few hundred
nodes (~60 ms per query in a store of 2M relations). Here each commit adds the change in degree
of the nodes it touches and a query reads degrees by key.

The degree is a column of the node's own row, not a row of a table of its own: a new edge's two
ends are nodes the same commit merges (their rows are rewritten anyway), so a degree change
writes no page of its own. As ``node_degrees`` rows, the degree changes of 100 documents wrote
~1,000-1,300 random leaves of that table at 1M chunks (of ~13,000 pages per 100 documents,
counted from the write-ahead log; 62 at 10k).

Only the busy nodes (degree ``BUSY_DEGREE`` or more) are indexed by degree, for the busiest-first
listing of the graph explorer (300 labels, 1,000 nodes by default): an index of every node's
degree moved an entry per degree change, on random leaves of a B-tree of 500k entries at 1M
chunks. With the line at 16, the 1M scale store's index held 33,600 of its 450,745 nodes and an
insert of 100 documents rewrote ~260 of its leaves (~580 log frames, 19 at 10k); at 64 it holds
6,500, still several times what a listing asks for. A store whose index drew the line lower
(``nodes_busy``) drops it when first opened.

A store written before the column gets it when first opened (logged): copied from its
``node_degrees`` table, which is then dropped, or counted from ``edges`` for a store older still.

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
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

_BATCH = 400
#: nodes of at least this degree are in the index by degree (a partial index); a graph with fewer
#: busy nodes than a listing asks for is small enough to sort whole
BUSY_DEGREE = 64
#: the column's definition (a new store's ``nodes`` table has it before ``data``)
DEGREE_COLUMN = "degree INTEGER NOT NULL DEFAULT 0"


def count_from_edges(db: SQLDatabase, namespace: Optional[str] = None) -> None:
    """Set the degrees of ``namespace``'s nodes (of every namespace when None) from their
    ``edges`` rows: for a store written before degrees were kept, or a copy of one.

    Example:
        >>> from lightrag.components.storage.sql_db import SQLiteDatabase
        >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
        >>> graph = SQLGraphStorage(SQLiteDatabase(":memory:"))
        >>> graph.upsert_edges_batch({("Titan", "Saturn"): {}})
        >>> graph.db.execute("UPDATE nodes SET degree = 7")
        >>> count_from_edges(graph.db)
        >>> graph.node_degrees_batch(["Saturn", "Titan"])
        {'Saturn': 1, 'Titan': 1}
    """
    where, params = ("WHERE ns = ?", (namespace,)) if namespace is not None else ("", ())
    also = "AND" if where else "WHERE"
    db.execute(f"UPDATE nodes SET degree = 0 {where} {also} degree <> 0", params)
    db.execute(
        "UPDATE nodes SET degree = c.n FROM (SELECT ns, node, COUNT(*) AS n FROM "
        f"(SELECT ns, src AS node FROM edges {where} UNION ALL "
        f"SELECT ns, tgt AS node FROM edges {where}) AS ends GROUP BY ns, node) AS c "
        "WHERE nodes.ns = c.ns AND nodes.id = c.node", params + params)
    counted = int(db.query(f"SELECT COUNT(*) FROM nodes {where} {also} degree > 0", params)[0][0])
    if counted:
        log.info("counted the degrees of %d nodes from their edges", counted)


def degree_changes(edges: Mapping[Tuple[str, str], Optional[Dict[str, Any]]],
                   stored: Set[Tuple[str, str]]) -> Dict[str, int]:
    """How the degree of each node changes when ``edges`` (pending writes; None: deleted) are
    written: +1 per end of a new edge, -1 per end of a deleted one; ``stored``: those of the
    pairs that are rows before the write.

    Example:
        >>> degree_changes({("A", "B"): {}, ("A", "C"): None, ("B", "C"): {}}, {("A", "C"), ("B", "C")})
        {'A': 0, 'B': 1, 'C': -1}
    """
    changes: Dict[str, int] = {}
    for (s, t), data in edges.items():
        step = 1 if data is not None and (s, t) not in stored else (
            -1 if data is None and (s, t) in stored else 0)
        if step:
            changes[s] = changes.get(s, 0) + step
            changes[t] = changes.get(t, 0) + step
    return changes


class NodeDegrees:
    """The ``degree`` column of one graph namespace's ``nodes`` rows (written inside the graph's
    commit, after its node rows)."""

    def __init__(self, db: SQLDatabase, namespace: str) -> None:
        self.db = db
        self.namespace = namespace
        db.ensure_schema(self._create_column)

    def _create_column(self) -> None:
        db = self.db
        if "degree" not in db.columns("nodes"):
            db.execute(f"ALTER TABLE nodes ADD COLUMN {DEGREE_COLUMN}")
            if db.has_table("node_degrees"):
                self._move_rows()
        db.execute("DROP INDEX IF EXISTS node_degrees_busy")
        db.execute("DROP INDEX IF EXISTS nodes_busy")  # degree >= 16
        db.execute("CREATE INDEX IF NOT EXISTS nodes_busiest ON nodes (ns, degree) "
                   f"WHERE degree >= {BUSY_DEGREE}")
        if db.meta(self._built_key) is None:
            count_from_edges(db, self.namespace)
            db.set_meta(self._built_key, "1")

    @property
    def _built_key(self) -> str:
        return f"node_degrees:{self.namespace}"

    def _move_rows(self) -> None:
        """The degrees of a store that kept them as ``node_degrees`` rows (every namespace's)."""
        started = time.monotonic()
        self.db.execute("UPDATE nodes SET degree = d.degree FROM node_degrees AS d "
                        "WHERE d.ns = nodes.ns AND d.node = nodes.id")
        self.db.execute("DROP TABLE node_degrees")
        log.info("moved the node degrees into the nodes' rows in %.1f s (once, for a store "
                 "written before)", time.monotonic() - started)

    def of(self, nodes: Sequence[str]) -> Dict[str, int]:
        """The degree of each of ``nodes`` (0 for a node without edges or not in the graph)."""
        degrees = dict.fromkeys(nodes, 0)
        for node, degree in self.db.query_in(
                "SELECT id, degree FROM nodes WHERE ns = ? AND id IN ({in_})",
                list(degrees), (self.namespace,), chunk=_BATCH):
            degrees[node] = int(degree)
        return degrees

    def highest(self, limit: int) -> List[str]:
        """The ``limit`` nodes of highest degree (ties by name): read from the index of the busy
        nodes, or all rows sorted when fewer than ``limit`` are busy."""
        busy = [n for (n,) in self.db.read(
            f"SELECT id FROM nodes WHERE ns = ? AND degree >= {BUSY_DEGREE} "
            "ORDER BY degree DESC, id LIMIT ?", (self.namespace, limit))]
        if len(busy) >= limit:
            return busy
        return [n for (n,) in self.db.read(
            "SELECT id FROM nodes WHERE ns = ? AND degree > 0 "
            "ORDER BY degree DESC, id LIMIT ?", (self.namespace, limit))]

    def add(self, deltas: Mapping[str, int]) -> None:
        """Add each node's change in degree (inside the commit that changes the edges, after its
        node rows are written: a deleted node's change has no row to go to)."""
        self.db.executemany("UPDATE nodes SET degree = degree + ? WHERE ns = ? AND id = ?",
                            [(d, self.namespace, n) for n, d in deltas.items() if d])
