"""Entity renames and merges, remembered so that a rebuild from the cached extractions keeps
them.

A document delete rebuilds the entities other documents still support by merging those
documents' cached extractions again; the extractions name an entity as the text did ("Buzz
Aldrin"), not as a user renamed it ("Edwin Aldrin") or merged it into another ("Cassini" into
"Cassini Huygens"). Without the rename, the rebuilt entity found none of its records and was
left with no description, type or citation. Each rename is kept as a row of the
``entity_renames`` key-value namespace (old name -> new name); a rebuild reads the cached
records of a chunk under the new name when the renamed entity cites that chunk, so a later
document that names an entity by the old name again keeps it under that name.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_kv import SQLKVStorage
    >>> renames = SQLKVStorage(SQLiteDatabase(":memory:"), namespace="entity_renames")
    >>> record_rename(renames, ["Buzz Aldrin"], "Edwin Aldrin")
    >>> record_rename(renames, ["Edwin Aldrin"], "Edwin E. Aldrin")
    >>> renamed_to(renames, ["Buzz Aldrin", "Neil Armstrong"])
    {'Buzz Aldrin': 'Edwin E. Aldrin'}
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Sequence, Set, Tuple

from lightrag.components.graph_rag.schemas import relation_key

#: renames followed from one name at most (a chain of renames of one entity)
MAX_CHAIN = 32


def record_rename(renames: Any, old_names: Iterable[str], new: str) -> None:
    """Remember that each of ``old_names`` is now called ``new`` (a name that is live again
    stops being a rename)."""
    moved = {old: {"to": new} for old in old_names if old != new}
    if moved:
        renames.upsert(moved)
    renames.delete([new])


def renamed_to(renames: Any, names: Sequence[str]) -> Dict[str, str]:
    """The current name of each of ``names`` that was renamed, following chains of renames
    (one read for all the names; a further read per step of a chain)."""
    unique = list(dict.fromkeys(names))
    found: Dict[str, str] = {}
    for name, record in zip(unique, renames.get_by_ids(unique)):
        if record is None:
            continue
        current, seen = str(record["to"]), {name}
        for _ in range(MAX_CHAIN):
            seen.add(current)
            step = renames.get_by_id(current)
            if step is None or step.get("to") in seen:
                break
            current = str(step["to"])
        if current != name:
            found[name] = current
    return found


def read_through_renames(renames: Any, extractions: Sequence[Any],
                         entity_cites: Mapping[str, Set[str]],
                         relation_cites: Mapping[Tuple[str, str], Set[str]]) -> None:
    """Rename, in place, the records of cached ``extractions`` whose entity was renamed into
    one being rebuilt (``entity_cites``: entity -> the chunks it is rebuilt from;
    ``relation_cites`` likewise for relations), when that entity or relation cites the record's
    chunk."""
    names = [e.entity_name for x in extractions for e in x.entities if e.entity_name not in entity_cites]
    names += [n for x in extractions for r in x.relations for n in (r.src_id, r.tgt_id)
              if n not in entity_cites]
    mapping = renamed_to(renames, names)
    if not mapping:
        return
    for extraction in extractions:
        for entity in extraction.entities:
            target = mapping.get(entity.entity_name)
            if target is not None and extraction.chunk_id in entity_cites.get(target, ()):
                entity.entity_name = target
        for relation in extraction.relations:
            src, tgt = (mapping.get(relation.src_id, relation.src_id),
                        mapping.get(relation.tgt_id, relation.tgt_id))
            if src != tgt and extraction.chunk_id in relation_cites.get(relation_key(src, tgt), ()):
                relation.src_id, relation.tgt_id = src, tgt
