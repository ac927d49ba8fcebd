"""Which entities and relations each document named: one row per (document, item).

A delete rebuilds what a document supported from this list. The rows are kept by document
only: the documents naming an item are those of the chunks citing it
(:mod:`lightrag.components.graph_rag.index.item_documents`). An index by item, kept per insert,
wrote a random leaf per item (a quarter of an insert's pages at 1M chunks); a store that has it
drops it when first opened. A document
is recorded with a marker row (``""``), so one whose chunks named nothing is still known to be
recorded. Recording a large document part by part adds rows (it never rewrites the ones of
the earlier parts).

Stores written before this table kept one JSON record per document in the ``kv`` table
(namespace ``doc_graph_items``); :meth:`DocItemsStorage.move_from` moves them here (once, when
the store is first opened).

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> items = DocItemsStorage(SQLiteDatabase(":memory:"))
    >>> items.add("doc-1", entities=["Saturn", "Titan"], relations=[("Saturn", "Titan")])
    >>> items.get_by_id("doc-1")
    {'entities': ['Saturn', 'Titan'], 'relations': [['Saturn', 'Titan']]}
    >>> items.keys()
    ['doc-1']
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from lightrag.components.storage.keyed_tables import create_keyed_table
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

SEP = "\x1f"
MARKER = ""  # the row saying "this document is recorded"

Items = Dict[str, List[Any]]


def entity_item(name: str) -> str:
    return f"e{SEP}{name}"


def relation_item(src: str, tgt: str) -> str:
    return f"r{SEP}{src}{SEP}{tgt}"


def _decode(rows: Iterable[str]) -> Items:
    entities, relations = [], []
    for item in rows:
        kind, _, rest = item.partition(SEP)
        if kind == "e":
            entities.append(rest)
        elif kind == "r":
            relations.append(rest.split(SEP, 1))
    return {"entities": sorted(entities), "relations": sorted(relations)}


def _rows(entities: Iterable[str], relations: Iterable[Tuple[str, str]]) -> List[str]:
    """The ``item`` values of a document's rows: the marker, then each entity and relation once."""
    return list(dict.fromkeys([MARKER, *(entity_item(n) for n in entities),
                               *(relation_item(*pair) for pair in relations)]))


def _named(items: Items) -> List[str]:
    """The ``item`` values of ``{"entities": [...], "relations": [...]}``, without the marker."""
    return _rows(items.get("entities") or [], (tuple(p) for p in items.get("relations") or []))[1:]


class DocItemsStorage:
    """The graph items of each document as rows of the ``doc_items`` table.

    Args:
        db: the database of the working directory.
        namespace: the data set (one per workspace's graph).
    """

    def __init__(self, db: SQLDatabase, namespace: str = "doc_graph_items") -> None:
        self.db = db
        self.namespace = namespace
        db.ensure_schema(self._create_table)

    def _create_table(self) -> None:
        create_keyed_table(self.db, "doc_items", "ns TEXT NOT NULL, doc TEXT NOT NULL, "
                           "item TEXT NOT NULL, PRIMARY KEY (ns, doc, item)")
        if self.db.has_index("doc_items_by_item"):
            self.db.execute("DROP INDEX doc_items_by_item")
            log.info("dropped the doc_items index by item (once, for a store written before)")

    # ------------------------------------------------------------------ writes
    def add(self, doc_id: str, entities: Iterable[str] = (),
            relations: Iterable[Tuple[str, str]] = ()) -> None:
        """Record ``doc_id`` as naming these entities and relations (besides those it named)."""
        self._insert((self.namespace, doc_id, item) for item in _rows(entities, relations))

    def replace(self, data: Dict[str, Items]) -> None:
        """Set the items of each document as given (``{"entities": [...], "relations": [...]}``),
        in two statements whatever the number of documents."""
        with self.db.transaction():
            self.delete(list(data))
            self._insert((self.namespace, doc_id, item) for doc_id, items in data.items()
                         for item in [MARKER, *_named(items)])

    def change(self, removed: Dict[str, Items], added: Dict[str, Items]) -> None:
        """Remove some items of documents and add others, row by row: a document's other rows
        stay (a merge into a hub renames one entity in each of ~100k documents of ~30 items)."""
        with self.db.transaction():
            self.db.executemany(
                "DELETE FROM doc_items WHERE ns = ? AND doc = ? AND item = ?",
                [(self.namespace, doc_id, item) for doc_id, items in removed.items()
                 for item in _named(items)])
            self._insert((self.namespace, doc_id, item) for doc_id, items in added.items()
                         for item in _named(items))

    def _insert(self, rows: Iterable[Tuple[str, str, str]]) -> None:
        self.db.executemany("INSERT INTO doc_items (ns, doc, item) VALUES (?, ?, ?) "
                            "ON CONFLICT (ns, doc, item) DO NOTHING", rows)

    def delete(self, doc_ids: Iterable[str]) -> None:
        self.db.executemany("DELETE FROM doc_items WHERE ns = ? AND doc = ?",
                            ((self.namespace, d) for d in doc_ids))

    def drop(self) -> None:
        self.db.execute("DELETE FROM doc_items WHERE ns = ?", (self.namespace,))

    # ------------------------------------------------------------------- reads
    def get_by_id(self, doc_id: str) -> Optional[Items]:
        """The document's ``{"entities": [...], "relations": [[src, tgt], ...]}`` (sorted), or
        None when it is not recorded."""
        rows = [r[0] for r in self.db.query(
            "SELECT item FROM doc_items WHERE ns = ? AND doc = ?", (self.namespace, doc_id))]
        return _decode(rows) if rows else None

    def get_many(self, doc_ids: Sequence[str], naming: Sequence[str] = ()) -> Dict[str, Items]:
        """The items of each of ``doc_ids`` that is recorded (as :meth:`get_by_id`), read in
        slices of many documents per statement; with ``naming``, only the entities of those
        names and the relations with one of them as an end (the documents of a hub name it
        among ~30 items each: a rename reads 1 row in 30)."""
        where, params = "", []
        for name in naming:
            escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where += " OR item = ? OR item LIKE ? ESCAPE '\\' OR item LIKE ? ESCAPE '\\'"
            params += [entity_item(name), f"r{SEP}{escaped}{SEP}%", f"r{SEP}%{SEP}{escaped}"]
        sql = "SELECT doc, item FROM doc_items WHERE ns = ? AND "
        sql += f"({where[4:]}) AND " if where else ""
        by_doc: Dict[str, List[str]] = {}
        for doc, item in self.db.query_in(sql + "doc IN ({in_})", list(dict.fromkeys(doc_ids)),
                                          (self.namespace, *params)):
            by_doc.setdefault(doc, []).append(item)
        return {doc: _decode(rows) for doc, rows in by_doc.items()}

    def keys(self) -> List[str]:
        """Every recorded document."""
        return sorted(r[0] for r in self.db.query(
            "SELECT doc FROM doc_items WHERE ns = ? AND item = ?", (self.namespace, MARKER)))

    def items(self) -> List[Tuple[str, Items]]:
        """Every document with its items (for copies and checks; a scan of the table)."""
        by_doc: Dict[str, List[str]] = {}
        for doc, item in self.db.query("SELECT doc, item FROM doc_items WHERE ns = ?",
                                       (self.namespace,)):
            by_doc.setdefault(doc, []).append(item)
        return [(doc, _decode(rows)) for doc, rows in sorted(by_doc.items())]

    def __len__(self) -> int:
        return int(self.db.query("SELECT COUNT(*) FROM doc_items WHERE ns = ? AND item = ?",
                                 (self.namespace, MARKER))[0][0])

    # --------------------------------------------------------------- migration
    def move_from(self, legacy: Any) -> int:
        """Move the JSON records of an older store (a key-value store of ``{doc_id: {"entities",
        "relations"}}``) into rows and empty it, in one transaction; returns how many moved."""
        with self.db.transaction():
            records = legacy.items()
            for doc_id, record in records:
                self.add(doc_id, record.get("entities") or [],
                         [tuple(p) for p in record.get("relations") or []])
            legacy.drop()
        if records:
            log.info("%s: the graph items of %d documents moved to rows (once)",
                     self.db.describe(), len(records))
        return len(records)
