"""The synonym pairs of each entity name, so that removing entities finds their pairs by key.

Synonym pairs (``entity_synonyms``: ``"a\\x1fb"`` with ``a < b`` -> score) join near-duplicate
entity names for the ``ppr`` mode. When entities go (a document delete, a merge, a rename), their
pairs go too; finding them among all pairs read every pair's key, a pass that grows with the
store (29k pairs at 1M chunks: ~25 ms of each delete that removes an entity). This index keeps,
per name, the other names it is paired with (``entity_synonyms_by_name``: name -> ``{"with":
[...]}``), written with the pairs; removing names reads their rows by key. A store written before
the index gets it built from its pairs the first time it is opened.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.graph_rag.index.stores import open_stores
    >>> stores = open_stores(SQLiteDatabase(":memory:"), embedder=None)
    >>> add_pairs(stores, {("Acme", "Acme Corp"): 0.93, ("Acme", "ACME Inc"): 0.91})
    >>> forget_names(stores, ["Acme Corp"])
    >>> [key.split(SEP) for key in stores.synonyms.keys()]
    [['ACME Inc', 'Acme']]
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Iterable, Mapping, Set, Tuple

log = logging.getLogger(__name__)

#: the separator inside the stores' composite keys (a synonym pair's two names, an extraction's
#: extractor and content): a control character no name or text holds (``stores.SEP``)
SEP = "\x1f"

#: the metadata row saying the index holds every pair
BUILT_META = "synonym_index"


def ensure_built(db: Any, synonyms: Any, by_name: Any) -> None:
    """Build the index from the stored pairs once (a store written before it)."""
    if db.meta(BUILT_META) is not None:
        return
    with db.transaction():
        if db.meta(BUILT_META) is None:
            _index_all(db, synonyms, by_name)


def rebuild(db: Any, synonyms: Any, by_name: Any) -> None:
    """Build the index again from the stored pairs (after rows were copied in from a store that
    may not have had it)."""
    with db.transaction():
        _index_all(db, synonyms, by_name)


def _index_all(db: Any, synonyms: Any, by_name: Any) -> None:
    """Index every stored pair anew (inside the caller's write transaction)."""
    pairs = [tuple(key.split(SEP, 1)) for key in synonyms.keys() if SEP in key]
    if pairs:
        log.info("indexing %d synonym pairs by name", len(pairs))
    by_name.drop()
    _link(by_name, pairs)
    db.set_meta(BUILT_META, "1")


def add_pairs(stores: Any, pairs: Mapping[Tuple[str, str], float]) -> None:
    """Store synonym pairs (``(a, b) -> score``) and index them by both names."""
    if not pairs:
        return
    ordered = {tuple(sorted(pair)): score for pair, score in pairs.items()}
    stores.synonyms.replace({SEP.join(pair): {"score": score} for pair, score in ordered.items()})
    _link(stores.synonym_names, list(ordered))


def forget_names(stores: Any, names: Iterable[str]) -> None:
    """Remove every synonym pair naming one of ``names`` (read by key, not from all pairs)."""
    gone = set(names)
    if not gone:
        return
    rows = dict(zip(gone, stores.synonym_names.get_by_ids(list(gone))))
    partners: Dict[str, Set[str]] = {}
    keys = []
    for name, row in rows.items():
        for other in (row or {}).get("with", []):
            keys.append(SEP.join(sorted((name, other))))
            if other not in gone:
                partners.setdefault(other, set()).add(name)
    if keys:
        stores.synonyms.delete(list(dict.fromkeys(keys)))
    stores.synonym_names.delete([n for n, row in rows.items() if row is not None])
    if partners:
        current = dict(zip(partners, stores.synonym_names.get_by_ids(list(partners))))
        kept = {other: [n for n in (current[other] or {}).get("with", []) if n not in dropped]
                for other, dropped in partners.items()}
        stores.synonym_names.upsert({other: {"with": left} for other, left in kept.items() if left})
        stores.synonym_names.delete([other for other, left in kept.items() if not left])


def _link(by_name: Any, pairs: Iterable[Tuple[str, ...]]) -> None:
    """Add each pair to the rows of both its names."""
    added: Dict[str, Dict[str, None]] = {}
    for a, b in pairs:
        added.setdefault(a, {})[b] = None
        added.setdefault(b, {})[a] = None
    if not added:
        return
    current = dict(zip(added, by_name.get_by_ids(list(added))))
    by_name.upsert({name: {"with": list(dict.fromkeys([*(current[name] or {}).get("with", []), *others]))}
                    for name, others in added.items()})
