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

from lightrag.components.storage.networkx_graph import NetworkXGraphStorage, _clean
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

_EDGE_SEP = "\x1f"


def _pair(src: str, tgt: str) -> Tuple[str, str]:
    return (src, tgt) if src <= tgt else (tgt, src)


def _edge_key(src: str, tgt: str) -> str:
    return _EDGE_SEP.join(_pair(src, tgt))


class SQLGraphStorage(NetworkXGraphStorage):
    """An undirected property graph stored as rows, traversed in memory.

    Args:
        db: the database shared by the stores of one working directory.
        namespace: the graph's name (one database can hold several graphs).
    """

    _to_dict_exclude = (*NetworkXGraphStorage._to_dict_exclude, "db")

    def __init__(self, db: SQLDatabase, namespace: str = "chunk_entity_relation", workspace: str = "",
                 working_dir: str = "./lightrag_storage") -> None:
        object.__setattr__(self, "db", db)
        with db.transaction():
            db.execute("CREATE TABLE IF NOT EXISTS nodes (ns TEXT NOT NULL, id TEXT NOT NULL, "
                       "data TEXT NOT NULL, PRIMARY KEY (ns, id))")
            db.execute("CREATE TABLE IF NOT EXISTS edges (ns TEXT NOT NULL, src TEXT NOT NULL, "
                       "tgt TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (ns, src, tgt))")
            db.execute("CREATE INDEX IF NOT EXISTS edges_tgt ON edges (ns, tgt)")
        super().__init__(namespace, workspace, working_dir)
        db.register(self._nodes_log, self._reload_nodes)
        db.register(self._edges_log, self._reload_edges)

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
    def _write_nodes(self, names: Iterable[str]) -> None:
        names = list(dict.fromkeys(names))
        nodes = self._graph.nodes
        self.db.executemany(
            "INSERT INTO nodes (ns, id, data) VALUES (?, ?, ?) "
            "ON CONFLICT (ns, id) DO UPDATE SET data = excluded.data",
            ((self.namespace, n, json.dumps(dict(nodes[n]), ensure_ascii=False)) for n in names))
        self.db.log_changes(self._nodes_log, names)

    def _write_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        pairs = list(dict.fromkeys(_pair(s, t) for s, t in pairs))
        adj = self._graph.adj
        self.db.executemany(
            "INSERT INTO edges (ns, src, tgt, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (ns, src, tgt) DO UPDATE SET data = excluded.data",
            ((self.namespace, s, t, json.dumps(dict(adj[s][t]), ensure_ascii=False)) for s, t in pairs))
        self.db.log_changes(self._edges_log, (_EDGE_SEP.join(p) for p in pairs))

    def _delete_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        pairs = list(dict.fromkeys(_pair(s, t) for s, t in pairs))
        self.db.executemany("DELETE FROM edges WHERE ns = ? AND src = ? AND tgt = ?",
                            ((self.namespace, s, t) for s, t in pairs))
        self.db.log_changes(self._edges_log, (_EDGE_SEP.join(p) for p in pairs))

    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None:
        with self.db.transaction():
            super().upsert_node(node_id, data)
            self._write_nodes([node_id])

    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None:
        with self.db.transaction():
            new_ends = [n for n in (src, tgt) if n not in self._graph]
            super().upsert_edge(src, tgt, data)
            if new_ends:
                self._write_nodes(new_ends)
            self._write_edges([(src, tgt)])

    def upsert_nodes_batch(self, nodes: Dict[str, Dict[str, Any]]) -> None:
        with self.db.transaction():
            for node_id, data in nodes.items():
                NetworkXGraphStorage.upsert_node(self, node_id, data)
            self._write_nodes(nodes)

    def upsert_edges_batch(self, edges: Dict[Tuple[str, str], Dict[str, Any]]) -> None:
        with self.db.transaction():
            new_ends = {n for pair in edges for n in pair if n not in self._graph}
            for (src, tgt), data in edges.items():
                NetworkXGraphStorage.upsert_edge(self, src, tgt, _clean(data, f"edge {src!r}-{tgt!r}"))
            self._write_nodes(sorted(new_ends))
            self._write_edges(edges)

    def delete_node(self, node_id: str) -> None:
        self.remove_nodes([node_id])

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        with self.db.transaction():
            present = [n for n in dict.fromkeys(node_ids) if n in self._graph]
            if not present:
                return
            self._delete_edges([(n, o) for n in present for o in self._graph.adj[n]])
            super().remove_nodes(present)
            self.db.executemany("DELETE FROM nodes WHERE ns = ? AND id = ?",
                                ((self.namespace, n) for n in present))
            self.db.log_changes(self._nodes_log, present)

    def remove_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        with self.db.transaction():
            present = [(s, t) for s, t in pairs if self._graph.has_edge(s, t)]
            if not present:
                return
            super().remove_edges(present)
            self._delete_edges(present)

    def index_done_callback(self) -> None:
        """Nothing to do: every write is already in the database."""

    def drop(self) -> None:
        with self.db.transaction():
            self.db.log_changes(self._nodes_log, list(self._graph.nodes))
            self.db.log_changes(self._edges_log, [_edge_key(s, t) for s, t in self._graph.edges])
            self.db.execute("DELETE FROM edges WHERE ns = ?", (self.namespace,))
            self.db.execute("DELETE FROM nodes WHERE ns = ?", (self.namespace,))
            self._graph = nx.Graph()
            self.version += 1

    def node_count(self) -> int:
        return self._graph.number_of_nodes()

    def all_edge_pairs(self) -> List[Tuple[str, str]]:
        return [_pair(s, t) for s, t in self._graph.edges]
