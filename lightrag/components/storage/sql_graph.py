"""``SQLGraphStorage``: the knowledge graph as ``nodes`` and ``edges`` rows of an
:class:`SQLDatabase`, read by key: nothing is loaded when it opens.

Reads go to the database (a node, an edge, a node's edges, degrees: indexed look-ups, batched);
queries read committed rows only (on SQLite, through a read connection that never waits for the
writer). Writes are buffered for the write transaction that makes them (the writer reads its
own pending changes) and written as rows just before it commits; a rollback forgets them.
Other processes' commits need no reload: the next read sees them, and ``version`` (which the
query caches key on) moves with every commit, ours or theirs. Whole-graph views (the explorer's
most connected nodes, exports) scan the rows. GraphML, JSON and CSV are export formats
(:meth:`export`), never the store.

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
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from lightrag.components.storage.base import BaseGraphStorage
from lightrag.components.storage.graph_display import GraphDisplayReads, Pair, _pair
from lightrag.components.storage.graph_properties import clean_properties
from lightrag.components.storage.graph_whole_reads import WholeGraphReads
from lightrag.components.storage.hub_edges import HubEdgeReads
from lightrag.components.storage.node_degrees import DEGREE_COLUMN, NodeDegrees, degree_changes
from lightrag.components.storage.node_sources import (
    NodeChunks,
    add_to_window,
    enters_window,
    split_ids,
    window_ids,
)
from lightrag.components.storage.node_windows import (
    LAST_COLUMN,
    WINDOW_COLUMN,
    WRITER_COLUMNS,
    NodeWindows,
)
from lightrag.components.storage.pending_edges import PendingEdges
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

_BATCH = 400  # ids per IN (...) list
_BY_IDS = "ns = ? AND id IN ({in_})"


def _check_id(node_id: Any) -> None:
    if not isinstance(node_id, str) or not node_id:
        raise ValueError(f"node ids must be non-empty strings, got {node_id!r}")


def _create_tables(db: SQLDatabase) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS nodes (ns TEXT NOT NULL, id TEXT NOT NULL, "
               f"{DEGREE_COLUMN}, {LAST_COLUMN}, data TEXT NOT NULL, PRIMARY KEY (ns, id))")
    db.execute("CREATE TABLE IF NOT EXISTS edges (ns TEXT NOT NULL, src TEXT NOT NULL, "
               "tgt TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (ns, src, tgt))")
    # covering: a node's edges where it is the target are read from the index alone
    # (the (ns, tgt) one sent every row to the table: ~0.4 s per query at 2M edges)
    db.execute("CREATE INDEX IF NOT EXISTS edges_by_tgt ON edges (ns, tgt, src)")
    db.execute("DROP INDEX IF EXISTS edges_tgt")
    # covering too: with (ns, LOWER(id)) alone SQLite's planner scanned the primary key
    # instead (every node per case-variant look-up: 0.25 s at 450k nodes)
    db.execute("CREATE INDEX IF NOT EXISTS nodes_by_folded_id ON nodes (ns, LOWER(id), id)")
    db.execute("DROP INDEX IF EXISTS nodes_folded")


class SQLGraphStorage(HubEdgeReads, WholeGraphReads, GraphDisplayReads, BaseGraphStorage):
    """An undirected property graph stored as rows and read by key.

    Args:
        db: the database shared by the stores of one working directory.
        namespace: the graph's name (one database can hold several graphs).

    Node and edge properties must be ``str``/``int``/``float``/``bool``; ``upsert_*`` merge
    them into existing ones; ``upsert_edge`` creates missing endpoints (without properties).
    """

    _to_dict_exclude = ("db", "version", "_pending_nodes", "_pending_edges", "_sources", "_degrees",
                        "_windows", "_read_nodes", "_read_edges", "_split", "_unread")

    def __init__(self, db: SQLDatabase, namespace: str = "chunk_entity_relation", workspace: str = "",
                 working_dir: str = "./lightrag_storage") -> None:
        super().__init__(namespace, workspace, working_dir)
        object.__setattr__(self, "db", db)
        db.ensure_schema(lambda: _create_tables(db))
        object.__setattr__(self, "_sources", NodeChunks(db, namespace))
        object.__setattr__(self, "_degrees", NodeDegrees(db, namespace))
        object.__setattr__(self, "_windows", NodeWindows(db, namespace))
        self._pending_nodes: Dict[str, Optional[Dict[str, Any]]] = {}
        self._pending_edges: PendingEdges = PendingEdges()
        # committed node rows the writer read in its open transaction (None: no such row); no
        # one else can change them before it commits, so a merge reads each node once
        self._read_nodes: Dict[str, Optional[Dict[str, Any]]] = {}
        # those of them whose window is a row of their own (a hub's: NodeWindows), and those
        # hubs whose window it has not read (node -> the window's last id)
        self._split: Set[str] = set()
        self._unread: Dict[str, str] = {}
        # the same for edge rows (a merge reads an edge, then its upsert reads it again)
        self._read_edges: Dict[Pair, Optional[Dict[str, Any]]] = {}
        self.version = 0
        db.register(self._log_name, self._changed_elsewhere)
        db.on_commit(self._flush, self._forget)

    @property
    def _log_name(self) -> str:
        return f"graph:{self.namespace}"

    def _changed_elsewhere(self, keys: Optional[Set[str]]) -> None:
        self.version += 1

    # ---------------------------------------------------------------- reading
    def _mine(self) -> bool:
        """Whether this caller is the writer of the open transaction (sees its pending writes)."""
        return self.db.in_transaction and bool(self._pending_nodes or self._pending_edges)

    def _read_in(self, sql: str, values: Sequence[Any], *leading: Any) -> List[Tuple[Any, ...]]:
        """Rows of ``sql`` whose ``{in_}`` list takes ``values`` in batches; the parameters
        before it are the namespace and ``leading``."""
        return self.db.query_in(sql, values, (self.namespace, *leading), chunk=_BATCH)

    def _stored_nodes(self, ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        wanted = list(dict.fromkeys(ids))
        if not self.db.in_transaction:
            rows = self._read_in(f"SELECT id, data, {WINDOW_COLUMN} FROM nodes WHERE {_BY_IDS}", wanted)
            return {n: NodeWindows.joined(d, w) for n, d, w in rows}
        cached = self._read_nodes
        found = {}
        for n, d, last, w in self._read_in(f"SELECT {WRITER_COLUMNS} FROM nodes WHERE {_BY_IDS}",
                                           [n for n in wanted if n not in cached]):
            found[n] = props = NodeWindows.joined(d, w)
            if last is not None and "source_id" not in props:
                self._unread[n] = last  # its window row is not read
            if w is not None or n in self._unread:
                self._split.add(n)
        cached.update({n: found.get(n) for n in wanted if n not in cached})
        return {n: dict(cached[n]) for n in wanted if cached[n] is not None}  # type: ignore[arg-type]

    def _stored_edges_of(self, ids: Sequence[str]) -> List[Pair]:
        ids = list(dict.fromkeys(ids))
        pairs = self._read_in("SELECT src, tgt FROM edges WHERE ns = ? AND src IN ({in_})", ids)
        pairs += self._read_in("SELECT src, tgt FROM edges WHERE ns = ? AND tgt IN ({in_})", ids)
        return [(s, t) for s, t in pairs]

    def get_nodes_batch(self, node_ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        return self._nodes(node_ids, windows=True)

    def get_nodes_for_merge(self, node_ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        """The nodes' properties as a merge reads them: in the writer's transaction a hub's
        ``source_id`` window may be left out (``source_count`` says how many chunks cite it, and
        :meth:`add_node_sources` reads the window only when a new citation enters it)."""
        return self._nodes(node_ids, windows=False)

    def _nodes(self, node_ids: Sequence[str], windows: bool) -> Dict[str, Dict[str, Any]]:
        wanted = list(dict.fromkeys(node_ids))
        pending = self._pending_nodes if self._mine() else {}
        stored = [n for n in wanted if n not in pending]
        found = self._stored_nodes(stored)
        lazy = [n for n in wanted if n in self._unread] if windows and self.db.in_transaction else []
        if lazy:
            self._windows.load(lazy, self._unread, self._read_nodes, self._pending_nodes)
            found = self._stored_nodes(stored)
        for n in wanted:
            if n in pending and pending[n] is not None:
                found[n] = dict(pending[n])  # type: ignore[arg-type]
        return {n: found[n] for n in wanted if n in found}

    def get_node(self, node_id: str) -> Optional[Dict[str, Any]]:
        return self.get_nodes_batch([node_id]).get(node_id)

    def find_case_variants(self, names: Sequence[str]) -> Dict[str, str]:
        """``name -> stored node`` for names that are not nodes but differ from one only in
        letter case ("Acmecorp" for "AcmeCorp"; ASCII case, as the database folds it)."""
        wanted = list(dict.fromkeys(names))
        # In the writer's transaction the rows are read whole and kept: the merge that follows
        # reads these same names and finds them in the transaction's read cache (one look-up
        # per name instead of two; the ids-only pass was ~20 ms of a 100-document insert into
        # a warm 1M-chunk store).
        writing = self.db.in_transaction
        present = set(self._nodes(wanted, windows=False)) if writing else self.has_nodes_batch(wanted)
        missing = [n for n in wanted if n not in present]
        folded: Dict[str, List[str]] = {}
        for name in missing:
            folded.setdefault(name.lower(), []).append(name)
        found: Dict[str, str] = {}
        for node, key in self._read_in(
                "SELECT id, LOWER(id) FROM nodes WHERE ns = ? AND LOWER(id) IN ({in_})", list(folded)):
            for name in folded.get(key, []):
                found.setdefault(name, node)
        if self._mine():
            for node, data in self._pending_nodes.items():
                for name in folded.get(node.lower(), []) if data is not None else []:
                    found.setdefault(name, node)
        return {n: v for n, v in found.items() if v != n}

    def has_node(self, node_id: str) -> bool:
        return bool(self.has_nodes_batch([node_id]))

    def has_nodes_batch(self, node_ids: Sequence[str]) -> Set[str]:
        wanted = list(dict.fromkeys(node_ids))
        pending = self._pending_nodes if self._mine() else {}
        read = self._read_nodes if self.db.in_transaction else {}
        known = {n: pending[n] if n in pending else read[n] for n in wanted if n in pending or n in read}
        found = {r[0] for r in self._read_in("SELECT id FROM nodes WHERE ns = ? AND id IN ({in_})",
                                             [n for n in wanted if n not in known])}
        return found | {n for n, data in known.items() if data is not None}

    def get_edges_batch(self, pairs: Sequence[Pair]) -> Dict[Pair, Dict[str, Any]]:
        keys = {(s, t): _pair(s, t) for s, t in pairs}
        pending = self._pending_edges if self._mine() else {}
        writing = self.db.in_transaction
        read = self._read_edges if writing else {}
        stored: Dict[Pair, Optional[Dict[str, Any]]] = {k: read[k] for k in keys.values() if k in read}
        todo = list(dict.fromkeys(k for k in keys.values() if k not in pending and k not in read))
        found = {(s, t): json.loads(d) for s, t, d in self._pair_rows("src, tgt, data", todo)}
        stored.update(found)
        if writing:
            read.update({k: found.get(k) for k in todo})
        out = {}
        for asked, key in keys.items():
            data = pending[key] if key in pending else stored.get(key)
            if data is not None:
                out[asked] = dict(data)
        return out

    def get_edge(self, src: str, tgt: str) -> Optional[Dict[str, Any]]:
        return self.get_edges_batch([(src, tgt)]).get((src, tgt))

    def has_edge(self, src: str, tgt: str) -> bool:
        return self.get_edge(src, tgt) is not None

    def get_nodes_edges_batch(self, node_ids: Sequence[str]) -> Dict[str, List[Pair]]:
        wanted = list(dict.fromkeys(node_ids))
        present = self.has_nodes_batch(wanted)
        neighbours: Dict[str, Dict[str, None]] = {n: {} for n in wanted}
        pending = self._pending_edges if self._mine() else PendingEdges()
        for s, t in self._stored_edges_of(wanted):
            if pending.get((s, t), True) is None:
                continue  # deleted in this transaction
            for a, b in ((s, t), (t, s)):
                if a in neighbours:
                    neighbours[a][b] = None
        for (s, t), data in pending.of(wanted):
            for a, b in ((s, t), (t, s)):
                if a in neighbours:
                    if data is None:
                        neighbours[a].pop(b, None)
                    else:
                        neighbours[a][b] = None
        return {n: [(n, o) for o in neighbours[n]] if n in present else [] for n in wanted}

    def get_node_edges(self, node_id: str) -> Optional[List[Pair]]:
        if not self.has_node(node_id):
            return None
        return self.get_nodes_edges_batch([node_id])[node_id]

    def node_degrees_batch(self, node_ids: Sequence[str]) -> Dict[str, int]:
        wanted = list(dict.fromkeys(node_ids))
        if self._mine() and self._pending_edges:
            return {n: len(e) for n, e in self.get_nodes_edges_batch(wanted).items()}
        return self._degrees.of(wanted)

    def node_degree(self, node_id: str) -> int:
        return self.node_degrees_batch([node_id])[node_id]

    # ----------------------------------------------------------------- writes
    def upsert_nodes_batch(self, nodes: Dict[str, Dict[str, Any]]) -> None:
        """Merge properties into the nodes; a ``source_id`` given replaces the node's sources
        (the rows), of which the property keeps a window
        (:func:`~lightrag.components.storage.node_sources.window_ids`)."""
        cleaned = {}
        for node_id, data in nodes.items():
            _check_id(node_id)
            cleaned[node_id] = clean_properties(data, f"node {node_id!r}")
        with self.db.transaction():
            for node_id, data in cleaned.items():
                if "source_id" in data:
                    ids = split_ids(data["source_id"])
                    self._sources.replace(node_id, ids)
                    data.update(source_id=window_ids(ids), source_count=len(ids))
            current = self._nodes([n for n in cleaned if n not in self._pending_nodes
                                   or self._pending_nodes[n] is not None], windows=False)
            for node_id, data in cleaned.items():
                if "source_id" in data:
                    self._unread.pop(node_id, None)
                self._pending_nodes[node_id] = {**current.get(node_id, {}), **data}

    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None:
        self.upsert_nodes_batch({node_id: data})

    def node_cites(self, node_id: str, chunk_ids: Sequence[str]) -> Set[str]:
        return self._sources.cited(node_id, chunk_ids)

    def prefetch_node_sources(self, chunk_ids: Sequence[str]) -> None:
        """Read the citations of ``chunk_ids`` at once for the writer's :meth:`node_cites` and
        :meth:`add_node_sources` in its open transaction (:meth:`NodeChunks.learn_chunks`)."""
        self._sources.learn_chunks(chunk_ids)

    def add_node_sources(self, node_id: str, chunk_ids: Sequence[str]) -> List[str]:
        """Insert the new (node, chunk) rows and add them to the node's ``source_id`` window:
        work independent of how many chunks already cite the node."""
        with self.db.transaction():
            known = self._sources.cited(node_id, chunk_ids)
            new = [c for c in dict.fromkeys(chunk_ids) if c and c not in known]
            if not new:
                return []
            self._sources.add(node_id, new)
            current = self._nodes([node_id], windows=False).get(node_id) or {}
            last = self._unread.get(node_id)
            if last is not None:
                count = int(current.get("source_count") or 0)
                if not enters_window(last, count, new):  # the window stays: not read
                    self._pending_nodes[node_id] = {**current, "source_count": count + len(new)}
                    return new
                current = self.get_node(node_id) or {}
            joined = str(current.get("source_id") or "")
            count = int(current.get("source_count") or len(split_ids(joined)))
            self._pending_nodes[node_id] = {**current, "source_id": add_to_window(joined, count, new),
                                            "source_count": count + len(new)}
            return new

    def remove_node_sources(self, node_id: str, chunk_ids: Sequence[str]) -> List[str]:
        """Delete the (node, chunk) rows of those of ``chunk_ids`` citing the node, and take them
        out of its ``source_id`` window and its ``source_count``; returns the ids removed. A
        window left shorter than the citations allow is read again from the rows (its first
        ``SOURCE_ID_CAP`` in id order: what a hub's window is)."""
        with self.db.transaction():
            cited = self._sources.cited(node_id, chunk_ids)
            gone = [c for c in dict.fromkeys(chunk_ids) if c in cited]
            if not gone:
                return []
            self._sources.remove(node_id, gone)
            current = self.get_node(node_id) or {}
            window = split_ids(current.get("source_id"))
            count = max(0, int(current.get("source_count") or len(window)) - len(gone))
            dropped = set(gone)
            kept = self._sources.window_after_removal(node_id, [c for c in window if c not in dropped], count)
            self._pending_nodes[node_id] = {**current, "source_id": kept, "source_count": count}
            return gone

    def first_node_sources(self, node_id: str, limit: int) -> List[str]:
        """The first ``limit`` chunk ids citing the node, in id order (bounded, for a hub)."""
        return self._sources.first(node_id, limit)

    def node_source_ids(self, node_ids: Sequence[str]) -> Dict[str, List[str]]:
        return self._sources.of(node_ids)

    def chunk_entities(self, chunk_ids: Sequence[str]) -> Dict[str, List[str]]:
        """The entities each chunk is cited by (committed rows; by key)."""
        return self._sources.nodes_of(chunk_ids)

    def count_citations(self, at_most: int) -> int:
        """(entity, chunk) citations in the graph, counted up to ``at_most``."""
        return self._sources.count(at_most)

    def upsert_edges_batch(self, edges: Dict[Pair, Dict[str, Any]]) -> None:
        cleaned: Dict[Pair, Dict[str, Any]] = {}
        for (src, tgt), data in edges.items():
            _check_id(src)
            _check_id(tgt)
            key = _pair(src, tgt)
            cleaned[key] = {**cleaned.get(key, {}), **clean_properties(data, f"edge {src!r}-{tgt!r}")}
        with self.db.transaction():
            ends = list(dict.fromkeys(n for pair in cleaned for n in pair))
            present = self.has_nodes_batch(ends)
            for node in ends:
                if node not in present:
                    self._pending_nodes[node] = {}
            current = self.get_edges_batch(list(cleaned))
            for key, data in cleaned.items():
                self._pending_edges[key] = {**current.get(key, {}), **data}

    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None:
        self.upsert_edges_batch({(src, tgt): data})

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        with self.db.transaction():
            present = sorted(self.has_nodes_batch(list(node_ids)))
            if not present:
                return
            for edges in self.get_nodes_edges_batch(present).values():
                for s, t in edges:
                    self._pending_edges[_pair(s, t)] = None
            for node in present:
                self._pending_nodes[node] = None
            self._sources.remove_nodes(present)

    def delete_node(self, node_id: str) -> None:
        self.remove_nodes([node_id])

    def remove_edges(self, pairs: Iterable[Pair]) -> None:
        with self.db.transaction():
            for key in self.get_edges_batch(list(pairs)):
                self._pending_edges[_pair(*key)] = None

    def _flush(self) -> None:
        """Write this transaction's changes as rows (just before it commits)."""
        nodes, edges, read_edges = self._pending_nodes, self._pending_edges, self._read_edges
        read_nodes, split, unread = self._read_nodes, self._split, self._unread
        self._read_nodes, self._read_edges, self._split, self._unread = {}, {}, set(), {}
        if not nodes and not edges:
            return
        self._pending_nodes, self._pending_edges = {}, PendingEdges()
        ns = self.namespace
        self.db.executemany(
            "INSERT INTO nodes (ns, id, window_last, data) VALUES (?, ?, ?, ?) ON CONFLICT (ns, id) "
            "DO UPDATE SET window_last = excluded.window_last, data = excluded.data",
            ((ns, n, last, json.dumps(d, ensure_ascii=False))
             for n, last, d in self._windows.write(nodes, read_nodes, split, unread)))
        self.db.executemany("DELETE FROM nodes WHERE ns = ? AND id = ?",
                            ((ns, n) for n, d in nodes.items() if d is None))
        stored = {k for k in edges if read_edges.get(k) is not None}
        stored |= self._stored_pairs([k for k in edges if k not in read_edges])
        self._degrees.add(degree_changes(edges, stored))
        self.db.executemany(
            "INSERT INTO edges (ns, src, tgt, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (ns, src, tgt) DO UPDATE SET data = excluded.data",
            ((ns, s, t, json.dumps(d, ensure_ascii=False)) for (s, t), d in edges.items()
             if d is not None))
        self.db.executemany("DELETE FROM edges WHERE ns = ? AND src = ? AND tgt = ?",
                            ((ns, s, t) for (s, t), d in edges.items() if d is None))
        self.db.log_changes(self._log_name, ["*"])
        self.version += 1

    def _stored_pairs(self, pairs: Sequence[Pair]) -> Set[Pair]:
        """Which of ``pairs`` (ordered as stored) are rows (by the primary key, no data read)."""
        return {(s, t) for s, t in self._pair_rows("src, tgt", pairs)}

    def _pair_rows(self, columns: str, pairs: Sequence[Pair]) -> List[Tuple[Any, ...]]:
        """``columns`` of the edge rows of ``pairs`` (ordered as stored): one primary-key look-up
        per pair, ``_BATCH // 2`` of them joined by ``UNION ALL`` in one statement. (The
        ``src IN (..) AND tgt IN (..)`` superset probed every src x tgt combination: 10-25x
        slower with hubs among the ends; row values ``(src, tgt) IN (VALUES ..)`` scanned.)"""
        rows: List[Tuple[Any, ...]] = []
        pairs = list(pairs)
        one = f"SELECT {columns} FROM edges WHERE ns = ? AND src = ? AND tgt = ?"
        for start in range(0, len(pairs), _BATCH // 2):
            part = pairs[start:start + _BATCH // 2]
            rows += self.db.read(" UNION ALL ".join([one] * len(part)),
                                 [v for s, t in part for v in (self.namespace, s, t)])
        return rows

    def _forget(self) -> None:
        self._pending_nodes, self._pending_edges, self._read_nodes, self._read_edges = (
            {}, PendingEdges(), {}, {})
        self._split, self._unread = set(), {}

    def index_done_callback(self) -> None:
        """Nothing to do: every write is in the database at commit."""

    def drop(self) -> None:
        with self.db.transaction():
            self._forget()
            self.db.execute("DELETE FROM nodes WHERE ns = ?", (self.namespace,))
            self.db.execute("DELETE FROM edges WHERE ns = ?", (self.namespace,))
            self._sources.drop()
            self._windows.drop()
            self.db.log_changes(self._log_name, ["*"])
            self.version += 1
