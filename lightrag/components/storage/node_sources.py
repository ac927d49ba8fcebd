"""Which chunks cite each node of an SQL graph: ``node_chunks`` rows, one per (node, chunk).

A hub entity is cited by 100k chunks. Kept as one joined ``source_id`` property, every merge
into it would read, extend and rewrite that whole value (megabytes), so inserting grows slower
as the store grows. Here the full relation is rows keyed by ``(ns, node, chunk)``: a merge looks
its new chunk ids up by key and inserts the new ones, whatever the hub's size. The node's own
``source_id`` property keeps a window of :data:`SOURCE_ID_CAP` ids (what a query considers of a
hub; :func:`window_ids`) and ``source_count`` the number of all of them.

The window of a node cited by at most :data:`SOURCE_ID_CAP` chunks is all of them, in the order
they cited it; a hub's is the :data:`SOURCE_ID_CAP` smallest ids (chunk ids are content hashes,
so a uniform sample of its chunks, the same whatever order they came in). A new citation enters
it only when its id sorts before the window's last, with probability ``cap / n`` for a hub cited
``n`` times (the most recent ids changed at every citation). A hub's window is a row of its own
beside the node's (:mod:`~lightrag.components.storage.node_windows`), written only when it
changes: a merge that changes the hub's description or count rewrites a few hundred bytes, not
the ~12 KB record.

A store written before this table gets its rows built once, from the nodes' ``source_id``
values, when it is first opened (logged); its hubs' properties are cut to their windows then.
"""

from __future__ import annotations

import heapq
import json
import logging
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set

from lightrag.components.storage.base import GRAPH_FIELD_SEP
from lightrag.components.storage.sql_db import SQLDatabase, SQLiteDatabase

log = logging.getLogger(__name__)

#: chunk ids a node's ``source_id`` property keeps (its window, :func:`window_ids`); the rest
#: are rows only
SOURCE_ID_CAP = 512
_BATCH = 400


def split_ids(value: object) -> List[str]:
    """The ids of a ``GRAPH_FIELD_SEP``-joined value, duplicates removed, order kept."""
    return list(dict.fromkeys(v for v in str(value or "").split(GRAPH_FIELD_SEP) if v))


def is_hub(data: Dict[str, Any]) -> bool:
    """Whether a node's properties are a hub's: cited by more chunks than its window holds
    (:data:`SOURCE_ID_CAP`).

    Example:
        >>> is_hub({"source_count": 600}), is_hub({"source_count": 3}), is_hub({})
        (True, False, False)
    """
    try:
        return int(data.get("source_count") or 0) > SOURCE_ID_CAP
    except (TypeError, ValueError):
        return False


def window_ids(ids: Sequence[str], cap: Optional[int] = None) -> str:
    """The joined ``source_id`` window of a node cited by ``ids`` (in citation order): all of
    them while they are at most ``cap`` (default :data:`SOURCE_ID_CAP`), else the ``cap``
    smallest, sorted.

    Example:
        >>> window_ids(["c3", "c1", "c2"], cap=3), window_ids(["c3", "c1", "c4", "c2"], cap=3)
        ('c3<SEP>c1<SEP>c2', 'c1<SEP>c2<SEP>c3')
    """
    ids = list(dict.fromkeys(c for c in ids if c))
    cap = cap or SOURCE_ID_CAP
    return GRAPH_FIELD_SEP.join(ids if len(ids) <= cap else heapq.nsmallest(cap, ids))


def add_to_window(joined: str, count: int, new: Sequence[str], cap: Optional[int] = None) -> str:
    """The window (:func:`window_ids`) of a node cited by ``count`` chunks, ``joined`` its window
    now, once ``new`` ids (none of them citing it yet) are added. A hub's window is left as it is,
    without splitting it, when no new id sorts before its last.

    Example:
        >>> add_to_window("a<SEP>b", 2, ["c"], cap=3), add_to_window("a<SEP>c<SEP>d", 9, ["b", "e"], cap=3)
        ('a<SEP>b<SEP>c', 'a<SEP>b<SEP>c')
    """
    cap = cap or SOURCE_ID_CAP
    new = [c for c in new if c]
    if not new:
        return joined
    if count + len(new) <= cap:
        return GRAPH_FIELD_SEP.join([joined, *new]) if joined else GRAPH_FIELD_SEP.join(new)
    full = joined.count(GRAPH_FIELD_SEP) + 1 >= cap if joined else False
    if count > cap and full and min(new) > joined.rsplit(GRAPH_FIELD_SEP, 1)[-1]:
        return joined  # a hub's window, its smallest ids: none of the new ones among them
    return GRAPH_FIELD_SEP.join(heapq.nsmallest(cap, dict.fromkeys([*split_ids(joined), *new])))


def full_window_last(window: str) -> Optional[str]:
    """The last id of a hub's window holding ``SOURCE_ID_CAP`` ids (its largest: a hub's window
    is its smallest ids, sorted); None for a window not full.

    Example:
        >>> full_window_last("c1<SEP>c2"), full_window_last("<SEP>".join(f"c{i:03d}" for i in range(512)))
        (None, 'c511')
    """
    if window.count(GRAPH_FIELD_SEP) + 1 != SOURCE_ID_CAP:
        return None
    return window.rsplit(GRAPH_FIELD_SEP, 1)[-1]


def enters_window(last: str, count: int, new: Sequence[str]) -> bool:
    """Whether citing chunks ``new`` (none citing it yet) change the full window whose last id is
    ``last`` of a hub cited by ``count`` chunks (:func:`full_window_last`).

    Example:
        >>> enters_window("c5", 600, ["c7", "c9"]), enters_window("c5", 600, ["c7", "c2"])
        (False, True)
    """
    return count <= SOURCE_ID_CAP or any(c and c < last for c in new)


class NodeChunks:
    """The ``node_chunks`` rows of one graph namespace, made by :class:`SQLGraphStorage` after
    its ``nodes`` table (written inside the graph's transaction).

    Example:
        >>> from lightrag.components.storage.sql_db import SQLiteDatabase
        >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
        >>> graph = SQLGraphStorage(SQLiteDatabase(":memory:"))
        >>> graph.upsert_node("Saturn", {"source_id": "c1<SEP>c2"})
        >>> graph.add_node_sources("Saturn", ["c2", "c3"])
        ['c3']
        >>> graph.get_node("Saturn")["source_count"], sorted(graph.node_cites("Saturn", ["c1", "c9"]))
        (3, ['c1'])
    """

    def __init__(self, db: SQLDatabase, namespace: str) -> None:
        self.db = db
        self.namespace = namespace
        # node -> chunk -> cited, as the writer knows it in its open transaction (looked up or
        # added by it): a merge's check and its insert then read each pair once. Keyed by node
        # first, so forgetting a node's pairs (remove_nodes) touches that node's only (a flat
        # map rebuilt per removed node made a big document's delete quadratic: 251 s at 1M)
        self._known: Dict[str, Dict[str, bool]] = {}
        # chunks whose every citing node is in _known (read by learn_chunks): a pair of one of
        # them not in _known is not cited, with no look-up
        self._whole: Set[str] = set()
        # rows added in the open transaction, written in one statement before the next
        # statement on the table that could see them, or the commit (a merge adds a node's new
        # citations one node at a time: ~1,900 statements per 100 documents, one per node and
        # document; a look-up of other chunks leaves them buffered), and their chunks
        self._rows: List[tuple] = []
        self._row_chunks: Set[str] = set()
        db.on_commit(self._commit_rows, self._forget)
        db.ensure_schema(self._create_table)

    def _create_table(self) -> None:
        db = self.db
        db.execute("CREATE TABLE IF NOT EXISTS node_chunks (ns TEXT NOT NULL, node TEXT NOT NULL, "
                   "chunk TEXT NOT NULL, PRIMARY KEY (ns, node, chunk))")
        # covering, so the planner prefers it to the primary key for "the nodes of chunks"
        db.execute("CREATE INDEX IF NOT EXISTS node_chunks_by_chunk ON node_chunks (ns, chunk, node)")
        db.execute("DROP INDEX IF EXISTS node_chunks_chunk")  # a development version's, not covering
        if db.meta(self._built_key) is None:
            self._build_from_nodes()

    @property
    def _built_key(self) -> str:
        return f"node_chunks:{self.namespace}"

    def _build_from_nodes(self) -> None:
        """Rows for a store written before this table (inside the opening transaction)."""
        field = self.db.json_text("data", "source_id")
        rows = self.db.query(f"SELECT id, {field} FROM nodes WHERE ns = ?", (self.namespace,))
        if rows:
            log.info("building the node-chunk rows of %d nodes (once, for a store written "
                     "before them)", len(rows))
        long_lists = []
        for node, joined in rows:
            ids = split_ids(joined)
            self.add(node, ids)
            if len(ids) > SOURCE_ID_CAP:
                long_lists.append((node, ids))
        for node, ids in long_lists:  # a hub's property becomes what a merge would leave
            ((data,),) = self.db.query("SELECT data FROM nodes WHERE ns = ? AND id = ?",
                                       (self.namespace, node))
            data = {**json.loads(data), "source_id": window_ids(ids), "source_count": len(ids)}
            self.db.execute("UPDATE nodes SET data = ? WHERE ns = ? AND id = ?",
                            (json.dumps(data, ensure_ascii=False), self.namespace, node))
        self.db.set_meta(self._built_key, "1")

    def _in(self, sql: str, values: Sequence[str], *leading: object, chunks: bool = False) -> List[tuple]:
        """Rows of ``sql`` for ``values`` (chunk ids when ``chunks``: the buffered rows are written
        first only when one of them is among those chunks)."""
        if not values:
            return []
        if not chunks or not self._row_chunks.isdisjoint(values):
            self._write_rows()
        return self.db.query_in(sql, values, (self.namespace, *leading), chunk=_BATCH)

    def _write_rows(self) -> None:
        """Write the rows :meth:`add` buffered (before a statement of the writer on the table
        reads or deletes rows, and at the commit; another thread's reads see committed rows)."""
        if self._rows and self.db.in_transaction:
            rows, self._rows, self._row_chunks = sorted(dict.fromkeys(self._rows)), [], set()
            self.db.executemany("INSERT INTO node_chunks (ns, node, chunk) VALUES (?, ?, ?) "
                                "ON CONFLICT (ns, node, chunk) DO NOTHING", rows)

    def _commit_rows(self) -> None:
        self._write_rows()
        self._forget()

    def _forget(self) -> None:
        self._known = {}
        self._whole = set()
        self._rows, self._row_chunks = [], set()

    def learn_chunks(self, chunk_ids: Sequence[str]) -> None:
        """Read which nodes cite each of ``chunk_ids`` (one statement per 400 chunks, by the
        ``(ns, chunk, node)`` index) so that :meth:`cited` answers for every pair of them
        without a look-up each (a merge asks about ~19 pairs per document, one statement each
        before). Inside the writer's transaction only (outside it nothing is remembered)."""
        if not self.db.in_transaction:
            return
        wanted = [c for c in dict.fromkeys(chunk_ids) if c and c not in self._whole]
        for chunk, nodes in self.nodes_of(wanted).items():
            for node in nodes:
                self._known.setdefault(node, {})[chunk] = True
        self._whole.update(wanted)

    def cited(self, node: str, chunk_ids: Sequence[str]) -> Set[str]:
        """Which of ``chunk_ids`` already cite ``node`` (looked up by key)."""
        wanted = list(dict.fromkeys(c for c in chunk_ids if c))
        writing = self.db.in_transaction
        known = self._known.setdefault(node, {}) if writing else {}
        if writing:
            known.update({c: False for c in wanted if c in self._whole and c not in known})
        found = {c for (c,) in self._in(
            "SELECT chunk FROM node_chunks WHERE ns = ? AND node = ? AND chunk IN ({in_})",
            [c for c in wanted if c not in known], node, chunks=True)}
        if writing:
            known.update({c: c in found for c in wanted if c not in known})
            return {c for c in wanted if known[c]}
        return found

    def add(self, node: str, chunk_ids: Iterable[str]) -> None:
        """Add ``(node, chunk)`` rows: inside the writer's transaction they are buffered and
        written in one statement with the others (:meth:`_write_rows`)."""
        rows = [(self.namespace, node, c) for c in dict.fromkeys(chunk_ids) if c]
        if self.db.in_transaction:
            self._rows.extend(rows)
            self._row_chunks.update(c for _, _, c in rows)
            self._known.setdefault(node, {}).update({c: True for _, _, c in rows})
            return
        self.db.executemany("INSERT INTO node_chunks (ns, node, chunk) VALUES (?, ?, ?) "
                            "ON CONFLICT (ns, node, chunk) DO NOTHING", rows)

    def remove(self, node: str, chunk_ids: Sequence[str]) -> None:
        """Delete the ``(node, chunk)`` rows of ``chunk_ids``."""
        wanted = list(dict.fromkeys(c for c in chunk_ids if c))
        self._write_rows()
        self.db.executemany("DELETE FROM node_chunks WHERE ns = ? AND node = ? AND chunk = ?",
                            [(self.namespace, node, c) for c in wanted])
        if self.db.in_transaction:
            self._known.setdefault(node, {}).update({c: False for c in wanted})

    def first(self, node: str, limit: int) -> List[str]:
        """The first ``limit`` chunk ids citing ``node`` in id order (a bounded read of a hub)."""
        self._write_rows()
        return [c for (c,) in self.db.query(
            "SELECT chunk FROM node_chunks WHERE ns = ? AND node = ? ORDER BY chunk LIMIT ?",
            (self.namespace, node, limit))]

    def window_after_removal(self, node: str, kept: List[str], count: int) -> str:
        """The window of ``node``, now cited by ``count`` chunks, of which ``kept`` are what its
        window kept of a removal: read again from the rows (their first ``SOURCE_ID_CAP`` in id
        order, a hub's window) when shorter than the citations allow."""
        if len(kept) < min(count, SOURCE_ID_CAP):
            kept = self.first(node, SOURCE_ID_CAP)
        return window_ids(kept)

    def replace(self, node: str, chunk_ids: Sequence[str]) -> None:
        self.remove_nodes([node])
        self.add(node, chunk_ids)

    def remove_nodes(self, nodes: Sequence[str]) -> None:
        self._write_rows()
        self.db.executemany("DELETE FROM node_chunks WHERE ns = ? AND node = ?",
                            [(self.namespace, n) for n in nodes])
        for node in nodes:
            self._known.pop(node, None)

    def of(self, nodes: Sequence[str]) -> Dict[str, List[str]]:
        """Every chunk id citing each of ``nodes`` (sorted)."""
        found: Dict[str, List[str]] = {n: [] for n in dict.fromkeys(nodes)}
        for node, chunk in self._in("SELECT node, chunk FROM node_chunks WHERE ns = ? AND node IN ({in_}) "
                                    "ORDER BY node, chunk", list(found)):
            found[node].append(chunk)
        return found

    def nodes_of(self, chunks: Sequence[str]) -> Dict[str, List[str]]:
        """The nodes each of ``chunks`` cites (by key, through the ``(ns, chunk, node)`` index)."""
        found: Dict[str, List[str]] = {c: [] for c in dict.fromkeys(chunks)}
        for chunk, node in self._in("SELECT chunk, node FROM node_chunks WHERE ns = ? AND chunk IN ({in_})",
                                    list(found), chunks=True):
            found[chunk].append(node)
        return found

    def count(self, at_most: int) -> int:
        """The number of rows, up to ``at_most``: counted (a bounded scan), or, on SQLite when
        this namespace holds every row, bounded from above by the span of their rowids.

        The span is two reads of the table's rowid B-tree (microseconds), where the count scans
        up to ``at_most`` index rows: 0.4 s of the first query of a 1M-chunk store, which asks
        whether it holds more than 1M citations. Deleted rows leave gaps, so after heavy deletes
        the bound can exceed the count until ``VACUUM`` renumbers the rows.
        """
        self._write_rows()
        bound = self._rowid_span()
        if bound is not None:
            return min(bound, at_most)
        return int(self.db.read("SELECT COUNT(*) FROM (SELECT 1 FROM node_chunks WHERE ns = ? LIMIT ?) AS t",
                                (self.namespace, at_most))[0][0])

    def _rowid_span(self) -> Optional[int]:
        """``MAX(rowid) - MIN(rowid) + 1`` of the table when it is SQLite's and holds only this
        namespace's rows (0 when empty), else None."""
        if not isinstance(self.db, SQLiteDatabase):
            return None
        first = self.db.read("SELECT ns FROM node_chunks ORDER BY ns LIMIT 1")
        if not first:
            return 0
        last = self.db.read("SELECT ns FROM node_chunks ORDER BY ns DESC LIMIT 1")
        if first[0][0] != self.namespace or last[0][0] != self.namespace:
            return None
        # two statements: SQLite reads a lone MIN or MAX from the B-tree's edge, both at once by a scan
        low = self.db.read("SELECT MIN(rowid) FROM node_chunks")[0][0]
        high = self.db.read("SELECT MAX(rowid) FROM node_chunks")[0][0]
        return int(high) - int(low) + 1

    def drop(self) -> None:
        self._rows, self._row_chunks = [], set()
        self.db.execute("DELETE FROM node_chunks WHERE ns = ?", (self.namespace,))
        self._forget()
