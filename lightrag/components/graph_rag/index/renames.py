"""Entity renames and merges, remembered so that a rebuild from the cached extractions keeps
them.

A document delete rebuilds the entities other documents still support by merging those
documents' cached extractions again; the extractions name an entity as the text did ("Buzz
Aldrin"), not as a user renamed it ("Edwin Aldrin") or merged it into another ("Cassini" into
"Cassini Huygens"). Without the rename, the rebuilt entity found none of its records and was
left with no description, type or citation. Each rename is kept as a row of the
``entity_renames`` key-value namespace (old name -> new name, and the earlier new names of an
old name that was used again and renamed again); a rebuild reads the cached records of a chunk
under the name of the entity that cites that chunk, among those the old name became, so a later
document that names an entity by the old name again keeps it under that name, and renaming that
one too leaves the first one's records with the first one.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_kv import SQLKVStorage
    >>> renames = SQLKVStorage(SQLiteDatabase(":memory:"), namespace="entity_renames")
    >>> record_rename(renames, ["Buzz Aldrin"], "Edwin Aldrin")
    >>> record_rename(renames, ["Edwin Aldrin"], "Edwin E. Aldrin")
    >>> rename_targets(renames, ["Buzz Aldrin", "Neil Armstrong"])
    {'Buzz Aldrin': ['Edwin E. Aldrin']}
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Sequence, Set, Tuple

from lightrag.components.graph_rag.schemas import relation_key

#: renames followed from one name at most (a chain of renames of one entity)
MAX_CHAIN = 32


def record_rename(renames: Any, old_names: Iterable[str], new: str) -> None:
    """Remember that each of ``old_names`` is now called ``new`` (a name that is live again
    stops being a rename). An old name renamed before (then used again by a document) keeps
    its earlier new names after the newest."""
    olds = [old for old in dict.fromkeys(old_names) if old != new]
    moved = {}
    for old, record in zip(olds, renames.get_by_ids(olds)):
        earlier = [] if record is None else [str(record["to"]), *record.get("earlier", [])]
        earlier = [name for name in dict.fromkeys(earlier) if name != new]
        moved[old] = {"to": new, **({"earlier": earlier} if earlier else {})}
    if moved:
        renames.upsert(moved)
    renames.delete([new])


def rename_targets(renames: Any, names: Sequence[str]) -> Dict[str, List[str]]:
    """Every current name each of ``names`` that was renamed may now be, newest rename first:
    each of its renames followed through chains (one read for all the names; a further read
    per step of a chain). A cached record of the old name belongs to whichever of them cites
    the record's chunk."""
    unique = list(dict.fromkeys(names))
    found: Dict[str, List[str]] = {}
    for name, record in zip(unique, renames.get_by_ids(unique)):
        if record is None:
            continue
        targets: List[str] = []
        for first in [record["to"], *record.get("earlier", [])]:
            current = _follow(renames, name, str(first))
            if current != name and current not in targets:
                targets.append(current)
        if targets:
            found[name] = targets
    return found


def _follow(renames: Any, name: str, current: str) -> str:
    """Where the chain of renames from ``name``, whose next name is ``current``, ends."""
    seen = {name}
    for _ in range(MAX_CHAIN):
        seen.add(current)
        step = renames.get_by_id(current)
        if step is None or step.get("to") in seen:
            break
        current = str(step["to"])
    return current


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
    targets = rename_targets(renames, names)
    if not targets:
        return
    for extraction in extractions:
        chunk = extraction.chunk_id
        for entity in extraction.entities:
            entity.entity_name = next(
                (t for t in targets.get(entity.entity_name, ()) if chunk in entity_cites.get(t, ())),
                entity.entity_name)
        for relation in extraction.relations:
            pairs = ((src, tgt) for src in [relation.src_id, *targets.get(relation.src_id, ())]
                     for tgt in [relation.tgt_id, *targets.get(relation.tgt_id, ())])
            cited = next(((src, tgt) for src, tgt in pairs if src != tgt
                          and chunk in relation_cites.get(relation_key(src, tgt), ())), None)
            if cited is not None:  # (the names it has first: a relation citing it as it is)
                relation.src_id, relation.tgt_id = cited
