"""A hub's ``source_id`` window kept beside its node row: ``node_windows`` rows of an SQL graph.

A hub (a node cited by more than :data:`~lightrag.components.storage.node_sources.SOURCE_ID_CAP`
chunks) keeps a window of 512 chunk ids, ~12 KB, while the rest of its properties are a few
hundred bytes. In the node's row, every merge into the hub (a new description fragment or
summary, a count) rewrote the whole record: the JSON of 12 KB parsed and written again and the
row's ~4 pages (a leaf and three overflow pages), though the window itself changes only when a
new id sorts before its last. Measured at 1M chunks: 680 hub records rewritten per 100 documents,
655 of them for their description, 7.4 MB of JSON. Here the window of a hub is a row of its own,
written only when it changes; the node row holds the other properties. Reads put the window
back (one key look-up per node in a table of the hubs only), so a node reads the same either way.

A node cited by at most ``SOURCE_ID_CAP`` chunks keeps its window in its row (it changes at every
citation, with the row). Rows of a store written before this table stay as they are until a
merge writes the hub again.

The writer does not even read a hub's window to merge into it: the node's row keeps the window's
last id (``window_last``, set while the window is full), and a new citation enters the window
only when it sorts before that, so a merge reads the ~12 KB window only then (a probability of
``cap / n`` for a hub cited ``n`` times). Reading the windows of the hubs a 100-document batch
merges was most of what its node reads grew by from 10k to 1M chunks (8 -> 29 ms a batch; 406
of its 961 names are hubs at 1M). Reads outside the writer, and the writer's public reads, put
the window back as before. A store written before the column reads the window as before until
a merge writes the hub again.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
    >>> graph = SQLGraphStorage(SQLiteDatabase(":memory:"))
    >>> graph.upsert_node("Hub", {"source_id": "<SEP>".join(f"c{i:04d}" for i in range(600))})
    >>> hub = graph.get_node("Hub")
    >>> hub["source_count"], len(hub["source_id"].split("<SEP>"))
    (600, 512)
    >>> graph.db.query("SELECT COUNT(*) FROM node_windows")
    [(1,)]
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from lightrag.components.storage.node_sources import full_window_last, is_hub
from lightrag.components.storage.sql_db import SQLDatabase

#: the SQL of a ``nodes`` row's window (NULL when the row holds it), for a select on ``nodes``
WINDOW_COLUMN = ("(SELECT w.source_id FROM node_windows AS w "
                 "WHERE w.ns = nodes.ns AND w.id = nodes.id)")
#: the ``nodes`` column of a full hub window's last id (a new store's table has it before ``data``)
LAST_COLUMN = "window_last TEXT"
#: the writer's select on ``nodes``: a hub's window is read only where its row lacks its last id
WRITER_COLUMNS = f"id, data, window_last, CASE WHEN window_last IS NULL THEN {WINDOW_COLUMN} END"


class NodeWindows:
    """The ``node_windows`` rows of one graph namespace (written inside the graph's commit)."""

    def __init__(self, db: SQLDatabase, namespace: str) -> None:
        self.db = db
        self.namespace = namespace
        db.ensure_schema(self._create)

    def _create(self) -> None:
        self.db.execute("CREATE TABLE IF NOT EXISTS node_windows (ns TEXT NOT NULL, id TEXT NOT NULL, "
                        "source_id TEXT NOT NULL, PRIMARY KEY (ns, id))")
        if "window_last" not in self.db.columns("nodes"):
            self.db.execute(f"ALTER TABLE nodes ADD COLUMN {LAST_COLUMN}")

    def read(self, nodes: Sequence[str]) -> Dict[str, str]:
        """The committed window rows of ``nodes`` (those that have one)."""
        return dict(self.db.query_in("SELECT id, source_id FROM node_windows WHERE ns = ? AND id IN ({in_})",
                                     list(nodes), (self.namespace,), chunk=400))

    @staticmethod
    def joined(data: str, window: Optional[str]) -> Dict[str, Any]:
        """A node's properties from its row's JSON ``data`` and its window row (None: none)."""
        props = json.loads(data)
        if window is not None:
            props["source_id"] = window
        return props

    def load(self, nodes: Sequence[str], unread: Dict[str, str],
             *props: Mapping[str, Optional[Dict[str, Any]]]) -> None:
        """Read the windows of ``nodes`` (hubs the writer has not read the window of: taken out
        of ``unread``) into their properties in each of ``props`` that lack one (the nodes the
        writer read, its pending writes)."""
        windows = self.read(nodes)
        for node in nodes:
            unread.pop(node, None)
            for known in props:
                data = known.get(node)
                if node in windows and data is not None and "source_id" not in data:
                    data["source_id"] = windows[node]

    def write(self, nodes: Mapping[str, Optional[Dict[str, Any]]],
              stored: Mapping[str, Optional[Dict[str, Any]]], split: Set[str],
              unread: Mapping[str, str]) -> List[Tuple[str, Optional[str], Dict[str, Any]]]:
        """Write the windows of ``nodes`` (pending writes, None for a deleted node) and return
        ``(node, its window's last id or None, properties for its row)`` of those kept: a hub's
        without its window.

        ``stored`` are the committed properties the transaction read (windows put back) and
        ``split`` the nodes among them whose window was a row here: a hub's window row is
        written only when the window differs from that (or was not read), and a row no longer
        needed (a deleted node, one no longer a hub) is deleted. ``unread`` are the hubs whose
        window the transaction did not read (node -> last id): a pending hub without a
        ``source_id`` among them keeps its window row as it is."""
        put, gone, rows = [], [], []
        for node, data in nodes.items():
            if data is None:
                gone.append(node)
                continue
            window = data.get("source_id")
            if is_hub(data) and not isinstance(window, str) and node in unread:
                rows.append((node, unread[node], data))
                continue
            if is_hub(data) and isinstance(window, str):
                before = stored.get(node)
                if node not in split or before is None or before.get("source_id") != window:
                    put.append((self.namespace, node, window))
                rows.append((node, full_window_last(window),
                             {k: v for k, v in data.items() if k != "source_id"}))
                continue
            if node in split or node not in stored:
                gone.append(node)
            rows.append((node, None, data))
        self.db.executemany("INSERT INTO node_windows (ns, id, source_id) VALUES (?, ?, ?) "
                            "ON CONFLICT (ns, id) DO UPDATE SET source_id = excluded.source_id", put)
        self.db.executemany("DELETE FROM node_windows WHERE ns = ? AND id = ?",
                            [(self.namespace, n) for n in gone])
        return rows

    def drop(self) -> None:
        self.db.execute("DELETE FROM node_windows WHERE ns = ?", (self.namespace,))
