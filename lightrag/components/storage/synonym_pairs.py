"""Synonym pairs: near-duplicate entity names as rows ``(a, b, score)`` with ``a < b``.

The ``ppr`` mode links entities whose *names* embed alike (``"Acme"`` / ``"Acme Corp"``); an
insert finds the pairs of each new name and writes them here, and removing an entity removes
its pairs, found by either name (the primary key reads pairs by ``a``, the index
``synonym_pairs_by_b`` by ``b``). A pair costs one row and its index entry, whatever the number
of pairs a name has.

Stores written before this table kept each pair as a JSON record of the ``kv`` table
(``entity_synonyms``: ``"a\\x1fb"`` -> ``{"score": s}``) and, per name, a JSON list of its
partners (``entity_synonyms_by_name``) that every new pair read and rewrote: ~3x the statements
and a list that grew with a name's pairs. They are moved into rows when the store is first
opened (once, in the opening's write transaction).

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> pairs = SynonymPairs(SQLiteDatabase(":memory:"))
    >>> pairs.add({("Acme Corp", "Acme"): 0.93, ("Acme", "ACME Inc"): 0.91})
    >>> pairs.forget(["Acme Corp"])
    1
    >>> pairs.pairs()
    [('ACME Inc', 'Acme', 0.91)]
"""

from __future__ import annotations

import json
import logging
from typing import Iterable, List, Mapping, Tuple

from lightrag.components.storage.keyed_tables import create_keyed_table
from lightrag.components.storage.sql_db import SQLDatabase

log = logging.getLogger(__name__)

SEP = "\x1f"  # the separator of a legacy pair key (``a\x1fb``)
#: the ``kv`` namespaces of stores written before this table (pairs, and each name's partners)
LEGACY_NAMESPACES = ("entity_synonyms", "entity_synonyms_by_name")
LEGACY_META = "synonym_index"  # the legacy store's "the by-name index is built" mark

Pair = Tuple[str, str, float]


class SynonymPairs:
    """The synonym pairs of one working directory, as rows of the ``synonym_pairs`` table.

    Args:
        db: the database of the working directory.
        namespace: the data set (the graph's pairs).
    """

    def __init__(self, db: SQLDatabase, namespace: str = "entity_synonyms") -> None:
        self.db = db
        self.namespace = namespace
        db.ensure_schema(self._create_table)

    def _create_table(self) -> None:
        create_keyed_table(self.db, "synonym_pairs", "ns TEXT NOT NULL, a TEXT NOT NULL, "
                           "b TEXT NOT NULL, score REAL NOT NULL, PRIMARY KEY (ns, a, b)")
        if not self.db.has_index("synonym_pairs_by_b"):
            self.db.execute("CREATE INDEX synonym_pairs_by_b ON synonym_pairs (ns, b, a)")
        self.move_legacy()

    # ------------------------------------------------------------------ writes
    def add(self, pairs: Mapping[Tuple[str, str], float]) -> None:
        """Store pairs (``(name, name) -> score``, either order); a stored pair takes the new
        score."""
        rows = {tuple(sorted(pair)): float(score) for pair, score in pairs.items()
                if pair[0] != pair[1]}
        self.db.executemany(
            "INSERT INTO synonym_pairs (ns, a, b, score) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (ns, a, b) DO UPDATE SET score = excluded.score",
            [(self.namespace, a, b, score) for (a, b), score in rows.items()])

    def forget(self, names: Iterable[str]) -> int:
        """Remove every pair naming one of ``names`` (read by key, on either side); returns how
        many pairs went."""
        names = list(dict.fromkeys(names))
        if not names:
            return 0
        found = {(a, b) for side in ("a", "b") for a, b in self.db.query_in(
            f"SELECT a, b FROM synonym_pairs WHERE ns = ? AND {side} IN ({{in_}})", names,
            (self.namespace,))}
        self.db.executemany("DELETE FROM synonym_pairs WHERE ns = ? AND a = ? AND b = ?",
                            [(self.namespace, a, b) for a, b in sorted(found)])
        return len(found)

    def drop(self) -> None:
        """Remove every pair."""
        self.db.execute("DELETE FROM synonym_pairs WHERE ns = ?", (self.namespace,))

    # ------------------------------------------------------------------- reads
    def pairs(self) -> List[Pair]:
        """Every pair ``(a, b, score)``, ``a < b``, in key order."""
        return [(a, b, float(s)) for a, b, s in self.db.query(
            "SELECT a, b, score FROM synonym_pairs WHERE ns = ? ORDER BY a, b", (self.namespace,))]

    def __len__(self) -> int:
        return int(self.db.query("SELECT COUNT(*) FROM synonym_pairs WHERE ns = ?",
                                 (self.namespace,))[0][0])

    # --------------------------------------------------------------- migration
    def move_legacy(self) -> None:
        """Move an older store's JSON pairs into rows and drop them with their by-name lists."""
        if not self.db.has_table("kv") or not self.db.query(
                "SELECT 1 FROM kv WHERE ns IN (?, ?) LIMIT 1", LEGACY_NAMESPACES):
            return
        moved = {}
        for key, value in self.db.query("SELECT id, value FROM kv WHERE ns = ?",
                                        (LEGACY_NAMESPACES[0],)):
            a, sep, b = key.partition(SEP)
            if sep and a and b:
                moved[(a, b)] = float((json.loads(value) or {}).get("score", 0.0))
        self.add(moved)
        self.db.execute("DELETE FROM kv WHERE ns IN (?, ?)", LEGACY_NAMESPACES)
        if self.db.meta(LEGACY_META) is not None:
            self.db.delete_meta(LEGACY_META)
        log.info("%s: %d synonym pairs moved to rows (once)", self.db.describe(), len(moved))
