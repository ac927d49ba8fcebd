"""``SQLGraphStorage``: the knowledge graph as ``nodes`` and ``edges`` rows of an
:class:`SQLDatabase`, with a NetworkX copy in memory for traversal and graph algorithms.

Every write goes to both, inside the caller's transaction; the memory copy follows rollbacks and
other processes' commits key by key through the database's change log. GraphML, JSON and CSV are
export formats (:meth:`export`), never the store.

Example:
    >>> import tempfile, os
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> db = SQLiteDatabase(os.path.join(tempfile.mkdtemp(), "s.sqlite3"))
    >>> g = SQLGraphStorage(db)
    >>> g.upsert_edge("Titan", "Saturn", {"weight": 1.0})
    >>> SQLGraphStorage(db).get_node_edges("Saturn")
    [('Saturn', 'Titan')]
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

import networkx as nx

from lightrag.components.storage.networkx_graph import NetworkXGraphStorage
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

_EDGE_SEP = "\x1f"


def _pair(src: str, tgt: str) -> Tuple[str, str]:
    return (src, tgt) if src <= tgt else (tgt, src)


class SQLGraphStorage(NetworkXGraphStorage):
    """An undirected property graph stored as rows, traversed in memory.

    Args:
        db: the database shared by the stores of one working directory.
        namespace: the graph's name (one database can hold several graphs).
    """

    _to_dict_exclude = (*NetworkXGraphStorage._to_dict_exclude, "db", "_pending_nodes",
                        "_pending_edges")

    def __init__(self, db: SQLDatabase, namespace: str = "chunk_entity_relation", workspace: str = "",
                 working_dir: str = "./lightrag_storage") -> None:
        object.__setattr__(self, "db", db)
        with db.transaction():
            db.execute("CREATE TABLE IF NOT EXISTS nodes (ns TEXT NOT NULL, id TEXT NOT NULL, "
                       "data TEXT NOT NULL, PRIMARY KEY (ns, id))")
            db.execute("CREATE TABLE IF NOT EXISTS edges (ns TEXT NOT NULL, src TEXT NOT NULL, "
                       "tgt TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (ns, src, tgt))")
            db.execute("CREATE INDEX IF NOT EXISTS edges_tgt ON edges (ns, tgt)")
        self._pending_nodes: Dict[str, None] = {}
        self._pending_edges: Dict[Tuple[str, str], None] = {}
        super().__init__(namespace, workspace, working_dir)
        db.register(self._nodes_log, self._reload_nodes)
        db.register(self._edges_log, self._reload_edges)
        db.on_commit(self._flush, self._forget)

    @property
    def _nodes_log(self) -> str:
        return f"nodes:{self.namespace}"

    @property
    def _edges_log(self) -> str:
        return f"edges:{self.namespace}"

    # ---------------------------------------------------------------- loading
    def _load(self) -> None:
        graph = nx.Graph()
        graph.add_nodes_from((n, json.loads(d)) for n, d in self.db.query(
            "SELECT id, data FROM nodes WHERE ns = ?", (self.namespace,)))
        graph.add_edges_from((s, t, json.loads(d)) for s, t, d in self.db.query(
            "SELECT src, tgt, data FROM edges WHERE ns = ?", (self.namespace,)))
        self._graph = graph
        self.version += 1
        log.debug("graph %s: loaded %d nodes, %d edges", self.namespace,
                  graph.number_of_nodes(), graph.number_of_edges())

    def _reload_nodes(self, keys: Optional[Set[str]]) -> None:
        if keys is None:
            self._load()
            return
        rows = dict(self.db.query_in("SELECT id, data FROM nodes WHERE ns = ? AND id IN ({in_})",
                                     sorted(keys), (self.namespace,)))
        for node in keys:
            if node in rows:
                if node in self._graph:
                    self._graph.nodes[node].clear()
                self._graph.add_node(node, **json.loads(rows[node]))
            elif node in self._graph:
                self._graph.remove_node(node)
        self.version += 1

    def _reload_edges(self, keys: Optional[Set[str]]) -> None:
        if keys is None:
            self._load()
            return
        for key in keys:
            src, tgt = key.split(_EDGE_SEP, 1)
            rows = self.db.query("SELECT data FROM edges WHERE ns = ? AND src = ? AND tgt = ?",
                                 (self.namespace, src, tgt))
            if rows:
                if self._graph.has_edge(src, tgt):
                    self._graph.edges[src, tgt].clear()
                self._graph.add_edge(src, tgt, **json.loads(rows[0][0]))
            elif self._graph.has_edge(src, tgt):
                self._graph.remove_edge(src, tgt)
        self.version += 1

    # ----------------------------------------------------------------- writes
    # Writes change the NetworkX copy at once and remember the touched keys; the rows are written
    # in one batch just before the transaction commits (a merge touches the same hub node many
    # times), and a rollback re-reads the touched keys.
    def _flush(self) -> None:
        nodes, edges = self._pending_nodes, self._pending_edges
        if not nodes and not edges:
            return
        self._pending_nodes, self._pending_edges = {}, {}
        graph = self._graph
        self.db.executemany(
            "INSERT INTO nodes (ns, id, data) VALUES (?, ?, ?) "
            "ON CONFLICT (ns, id) DO UPDATE SET data = excluded.data",
            ((self.namespace, n, json.dumps(dict(graph.nodes[n]), ensure_ascii=False))
             for n in nodes if n in graph))
        self.db.executemany("DELETE FROM nodes WHERE ns = ? AND id = ?",
                            ((self.namespace, n) for n in nodes if n not in graph))
        adj = graph.adj
        live = [p for p in edges if p[0] in adj and p[1] in adj[p[0]]]
        self.db.executemany(
            "INSERT INTO edges (ns, src, tgt, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (ns, src, tgt) DO UPDATE SET data = excluded.data",
            ((self.namespace, s, t, json.dumps(dict(adj[s][t]), ensure_ascii=False)) for s, t in live))
        gone = set(edges) - set(live)
        self.db.executemany("DELETE FROM edges WHERE ns = ? AND src = ? AND tgt = ?",
                            ((self.namespace, s, t) for s, t in gone))
        self.db.log_changes(self._nodes_log, nodes)
        self.db.log_changes(self._edges_log, (_EDGE_SEP.join(p) for p in edges))

    def _forget(self) -> None:
        nodes, edges = self._pending_nodes, self._pending_edges
        self._pending_nodes, self._pending_edges = {}, {}
        if nodes:
            self._reload_nodes(set(nodes))
        if edges:
            self._reload_edges({_EDGE_SEP.join(p) for p in edges})

    def _touch(self, nodes: Iterable[str] = (), edges: Iterable[Tuple[str, str]] = ()) -> None:
        self._pending_nodes.update(dict.fromkeys(nodes))
        self._pending_edges.update(dict.fromkeys(_pair(s, t) for s, t in edges))

    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None:
        with self.db.transaction():
            super().upsert_node(node_id, data)
            self._touch([node_id])

    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None:
        with self.db.transaction():
            super().upsert_edge(src, tgt, data)
            self._touch((src, tgt), [(src, tgt)])

    def upsert_nodes_batch(self, nodes: Dict[str, Dict[str, Any]]) -> None:
        with self.db.transaction():
            for node_id, data in nodes.items():
                NetworkXGraphStorage.upsert_node(self, node_id, data)
            self._touch(nodes)

    def upsert_edges_batch(self, edges: Dict[Tuple[str, str], Dict[str, Any]]) -> None:
        with self.db.transaction():
            for (src, tgt), data in edges.items():
                NetworkXGraphStorage.upsert_edge(self, src, tgt, data)
            self._touch({n for pair in edges for n in pair}, edges)

    def delete_node(self, node_id: str) -> None:
        self.remove_nodes([node_id])

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        with self.db.transaction():
            present = [n for n in dict.fromkeys(node_ids) if n in self._graph]
            if not present:
                return
            self._touch(present, [(n, o) for n in present for o in self._graph.adj[n]])
            super().remove_nodes(present)

    def remove_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        with self.db.transaction():
            present = [(s, t) for s, t in pairs if self._graph.has_edge(s, t)]
            if not present:
                return
            super().remove_edges(present)
            self._touch(edges=present)

    def index_done_callback(self) -> None:
        """Nothing to do: every write is already in the database."""

    def drop(self) -> None:
        with self.db.transaction():
            self._touch(list(self._graph.nodes), list(self._graph.edges))
            self._graph = nx.Graph()
            self.version += 1

    def node_count(self) -> int:
        return self._graph.number_of_nodes()

    def all_edge_pairs(self) -> List[Tuple[str, str]]:
        return [_pair(s, t) for s, t in self._graph.edges]
