"""How :class:`~lightrag.components.graph_rag.index.GraphIndex` turns its queue of touched
entities and relations into vectors: each item's current text is read, every vector is composed
from cached unit vectors of its parts (so a sentence or a name shared by many items is embedded
once), the vectors are written, and the names of new entities are compared with all known names
for synonym pairs. The index calls these functions inside its own transactions, handing them
its :class:`~lightrag.components.graph_rag.index.stores.IndexStores`.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable, Dict, List, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag.index.stores import SEP, IndexStores
from lightrag.components.graph_rag.merger import (
    GRAPH_FIELD_SEP,
    entity_vector_id,
    first_fragment,
    legacy_relation_vector_id,
    relation_vector_id,
    split_field,
)
from lightrag.components.graph_rag.schemas import relation_key
from lightrag.components.storage.base import unit_rows

log = logging.getLogger(__name__)

ENTITY_VECTOR_CHARS = 300
RELATION_DESCRIPTION_CHARS = 300
RELATION_PART_WEIGHT = 0.5
#: chunk ids (and file paths) a vector record keeps as a sample (:func:`keep_samples`): queries
#: read the chunks of an entity or relation from the graph, so the vector's copy is for a
#: reader's information. A hub's full 512 (~20 KB) made every re-embedding rewrite five overflow
#: pages; the most recent 16 changed at every citation, so every document rewrote the record of
#: every item it cited. With a kept sample and the vector's own text (below) an item cited again
#: keeps its record, and its upsert writes nothing.
VECTOR_SOURCE_IDS = 16
RELATION_IDS_META = "relation_vector_ids"
RELATION_IDS_VERSION = "2"


def pending_key(kind: str, *parts: str) -> str:
    return SEP.join((kind, *parts))


def queue_vectors(stores: IndexStores, entities: Sequence[str] = (),
                  relations: Sequence[Tuple[str, str]] = ()) -> None:
    """Queue entities and relations for (re-)embedding (``GraphIndex.index_pending``)."""
    keys = [pending_key("e", n) for n in entities]
    keys += [pending_key("r", *relation_key(s, t)) for s, t in relations]
    stores.pending_vectors.replace({k: {} for k in dict.fromkeys(keys)})


def _first_fragment(description: Any, chars: int) -> str:
    """The first non-empty ``<SEP>`` fragment of ``description`` (:func:`first_fragment`: a
    hub's 24 fragments are not all split for it), cut at ``chars``."""
    return first_fragment(description)[:chars]


def entity_text(name: str, node: Dict[str, Any]) -> str:
    """The text an entity vector stands for (its record's ``content``): the name and the first
    fragment of the description, the parts :func:`vector_plans` composes it of."""
    return f"{name}\n{_first_fragment(node.get('description'), ENTITY_VECTOR_CHARS)}"


def relation_text(src: str, tgt: str, edge: Dict[str, Any]) -> str:
    """The text a relation vector stands for (its record's ``content``): keywords, both ends
    and the start of the description, the parts :func:`vector_plans` composes it of."""
    description = _first_fragment(edge.get("description"), RELATION_DESCRIPTION_CHARS)
    return f"{edge.get('keywords', '')}\t{src}\n{tgt}\n{description}"


def entity_record(node: Dict[str, Any]) -> Dict[str, Any]:
    """The vector record of an entity (``node`` with its ``entity_id``): the text its vector
    stands for, its name and type, and its first :data:`VECTOR_SOURCE_IDS` chunk ids and file
    paths (the graph holds them all)."""
    name = node["entity_id"]
    return {"content": entity_text(name, node), "entity_name": name,
            "entity_type": node.get("entity_type", "unknown"),
            "source_id": first_sources(node.get("source_id")),
            "file_path": first_sources(node.get("file_path"))}


def relation_record(edge: Dict[str, Any]) -> Dict[str, Any]:
    """The vector record of a relation (``edge`` with its ``src_id`` and ``tgt_id``), as
    :func:`entity_record` (the weight is the graph's: it changes at every citation)."""
    src, tgt = edge["src_id"], edge["tgt_id"]
    return {"content": relation_text(src, tgt, edge), "src_id": src, "tgt_id": tgt,
            "keywords": edge.get("keywords", ""),
            "source_id": first_sources(edge.get("source_id")),
            "file_path": first_sources(edge.get("file_path"))}


def pending_items(stores: IndexStores, keys: Sequence[str]
                  ) -> Dict[str, Tuple[str, Dict[str, Any], Dict[str, Any]]]:
    """``key -> (kind, graph record, vector record)`` for the queued items that still exist."""
    names = [k.split(SEP, 1)[1] for k in keys if k.startswith("e" + SEP)]
    pairs = [tuple(k.split(SEP)[1:3]) for k in keys if k.startswith("r" + SEP)]
    nodes = stores.graph.get_nodes_batch(names)
    edges = stores.graph.get_edges_batch(pairs)  # type: ignore[arg-type]
    items: Dict[str, Tuple[str, Dict[str, Any], Dict[str, Any]]] = {}
    for name in names:
        if name in nodes:
            node = {**nodes[name], "entity_id": name}
            items[pending_key("e", name)] = ("e", node, entity_record(node))
    for src, tgt in pairs:
        if (src, tgt) in edges:
            edge = {**edges[(src, tgt)], "src_id": src, "tgt_id": tgt}
            items[pending_key("r", src, tgt)] = ("r", edge, relation_record(edge))
    return items


def vector_plans(items: Dict[str, Tuple[str, Dict[str, Any], Any]]
                 ) -> Tuple[Dict[str, List[Tuple[str, float]]], List[str]]:
    """``key -> [(text, weight)]`` of the parts each queued item's vector is composed of, and
    the entity names the items involve (see :func:`embed_items`)."""
    plans: Dict[str, List[Tuple[str, float]]] = {}
    names: Dict[str, None] = {}
    for key, (kind, record, _) in items.items():
        if kind == "e":
            name = record["entity_id"]
            names[name] = None
            first = _first_fragment(record.get("description"), ENTITY_VECTOR_CHARS)
            plans[key] = [(t, 1.0) for t in (name, first) if t.strip()]
            continue
        src, tgt = record["src_id"], record["tgt_id"]
        names.update(dict.fromkeys((src, tgt)))
        parts = [(_first_fragment(record.get("description"), RELATION_DESCRIPTION_CHARS), 1.0),
                 (str(record.get("keywords", "")), RELATION_PART_WEIGHT),
                 (src, RELATION_PART_WEIGHT), (tgt, RELATION_PART_WEIGHT)]
        plans[key] = [(t, w) for t, w in parts if t.strip()]
    return plans, list(names)


def compose_vectors(plans: Dict[str, List[Tuple[str, float]]],
                    by_text: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Each plan's weighted sum of the unit vectors ``by_text`` of its parts, normalised."""
    vectors = {}
    for key, plan in plans.items():
        vector = sum(w * by_text[t] for t, w in plan)
        vectors[key] = vector / max(float(np.linalg.norm(vector)), 1e-12)
    return vectors


async def embed_items(stores: IndexStores, items: Dict[str, Tuple[str, Dict[str, Any], Any]],
                      embed: Callable[[Sequence[str]], Awaitable[np.ndarray]],
                      ) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """Vectors of queued items, and of the entity names not indexed yet.

    Vectors are composed from cached parts (unit vectors, summed, normalised), so each
    distinct text is embedded once however many items share it: an entity is its name plus
    the first fragment of its description (cut at :data:`ENTITY_VECTOR_CHARS`; later
    fragments add little and cost the most); a relation is the first fragment of its
    description (cut at :data:`RELATION_DESCRIPTION_CHARS`) plus :data:`RELATION_PART_WEIGHT`
    times its keywords and each endpoint's name, so an item cited again keeps its vector
    unless its first fragment, keywords or names change. A sentence is
    typically shared by an entity's first fragment and the co-occurrence relations it
    states; a name by every relation of the entity. All distinct texts go to the embedder
    in one length-sorted call. Fresh embeddings are made unit vectors, as the stored name
    vectors are: an item composes the same vector whether its parts were embedded just now or
    read back, so re-embedding an unchanged item gives its stored vector (which keeps its row
    in the vector file)."""
    plans, names = vector_plans(items)
    known = stores.entity_names.get_vectors_by_ids(names)
    wanted = list(dict.fromkeys(
        [*(t for plan in plans.values() for t, _ in plan if t not in known),
         *(n for n in names if n not in known)]))
    by_text: Dict[str, np.ndarray] = dict(known)
    if wanted:
        by_text.update(zip(wanted, unit_rows(await embed(wanted))))
    vectors = compose_vectors(plans, by_text)
    new_names = {items[k][1]["entity_id"]: by_text[items[k][1]["entity_id"]]
                 for k in items if items[k][0] == "e" and items[k][1]["entity_id"] not in known}
    return vectors, new_names


def first_sources(value: Any, keep: int = VECTOR_SOURCE_IDS) -> str:
    """The first ``keep`` entries of a ``<SEP>``-joined field (``source_id``, ``file_path``):
    the part of it a vector record keeps, the same however often the item is cited again.

    Example:
        >>> first_sources("c1<SEP>c2<SEP>c3", keep=2)
        'c1<SEP>c2'
    """
    text = str(value or "")
    parts = text.split(GRAPH_FIELD_SEP, keep)  # a hub's 512 ids are not all split
    if len(parts) <= keep:
        return text
    if "" in parts[:keep]:  # empty entries (not written by the merger): count only the others
        ids = split_field(text)
        return GRAPH_FIELD_SEP.join(ids[:keep]) if len(ids) > keep else text
    return GRAPH_FIELD_SEP.join(parts[:keep])


def keep_samples(store: Any, records: Dict[str, Dict[str, Any]], cited: Dict[str, Any]) -> None:
    """Keep a record's stored ``source_id`` (and ``file_path``) sample while the item still
    cites all of it (``cited``: the item's graph record): a sample of at most
    :data:`VECTOR_SOURCE_IDS` of the chunks (and files) that cite the item, taken when the
    record was written, not updated at each new citation (most items a document cites were
    cited before: rewriting their records was a quarter of the pages an insert wrote at 1M
    chunks). It is taken again once a sampled chunk is deleted or leaves a hub's window (the
    graph record keeps a hub's 512 smallest chunk ids, of which the sample is the first)."""
    stored = store.get_by_ids(list(records))
    for (key, record), old in zip(records.items(), stored):
        if old is None:
            continue
        for field in ("source_id", "file_path"):
            sample = split_field(old.get(field))
            current = f"{GRAPH_FIELD_SEP}{cited[key].get(field) or ''}{GRAPH_FIELD_SEP}"
            if sample and all(f"{GRAPH_FIELD_SEP}{v}{GRAPH_FIELD_SEP}" in current for v in sample):
                record[field] = old[field]


def write_vectors(stores: IndexStores, entities: Dict[str, Tuple[Dict[str, Any], np.ndarray]],
                   relations: Dict[str, Tuple[Dict[str, Any], np.ndarray]]) -> None:
    """Write entity and relation vectors with their records (:func:`entity_record`,
    :func:`relation_record`, samples kept by :func:`keep_samples`). A record and vector that
    are the ones stored are not written again (the store skips them)."""
    for store, items, vector_id, record_of in (
            (stores.entities_vdb, entities, lambda r: entity_vector_id(r["entity_id"]), entity_record),
            (stores.relations_vdb, relations, lambda r: relation_vector_id(r["src_id"], r["tgt_id"]),
             relation_record)):
        if not items:
            continue
        graph_records = {vector_id(r): r for r, _ in items.values()}
        records = {key: record_of(r) for key, r in graph_records.items()}
        keep_samples(store, records, graph_records)
        store.upsert(records, vectors=np.stack([v for _, v in items.values()]))


def upgrade_relation_ids(stores: IndexStores, where: str) -> None:
    """Move the relation vectors of a store written by an older version to their unambiguous
    ids (in the first write transaction of a process)."""
    if not relation_ids_current(stores):
        moved = rekey_relation_vectors(stores)
        log.info("%s: %d relation vectors re-keyed to unambiguous ids", where, moved)


def stored_synonym_pairs(stores: IndexStores) -> List[Tuple[str, str, float]]:
    """Every stored synonym pair whose two names are still nodes (one batched look-up: a look-up
    per name took 2.4 s of a 50k-chunk store's first ``ppr``/``mix`` query)."""
    stored = stores.synonyms.pairs()
    present = stores.graph.has_nodes_batch(list({n for a, b, _ in stored for n in (a, b)}))
    return [(a, b, score) for a, b, score in stored if a in present and b in present]


# lists of an approximate name index searched for a new name's synonyms: pairs at cosine >= 0.9
# lie in the nearest few (MiniLM names of MuSiQue-100 in 671 lists: 16 find all 592 such pairs
# of 4,000 names, as 128 do; 4 find 99.7 %)
SYNONYM_NPROBE = 16


def add_synonyms(stores: IndexStores, names: Sequence[str], vectors: np.ndarray,
                 threshold: float) -> None:
    """Index the names of new entities and record their near-duplicates (synonym pairs): each
    new name against the stored names (a top-k search of the name vectors: the cost does not
    grow with a list of every name) and against the other new names, by the similarity of the
    names alone (the descriptions of entities of one sentence are alike, their names are not)."""
    from lightrag.components.graph_rag.ppr import SYNONYM_TOP_K, synonym_pairs

    nodes = stores.graph.has_nodes_batch(list(names))
    present = [i for i, n in enumerate(names) if n in nodes]
    if not present:
        return
    new_names = [names[i] for i in present]
    new_vectors = np.asarray(vectors[present], dtype=np.float32)
    found: Dict[Tuple[str, str], float] = {}
    for name, hits in zip(new_names, stores.entity_names.query_batch(
            new_vectors, top_k=SYNONYM_TOP_K + 1, nprobe=SYNONYM_NPROBE, min_score=threshold)):
        for hit in hits:
            if hit["id"] != name and hit["score"] >= threshold:
                a, b = sorted((name, hit["id"]))
                found[(a, b)] = max(found.get((a, b), 0.0), round(float(hit["score"]), 4))
    for a, b, score in synonym_pairs(new_names, new_vectors, threshold=threshold):
        found[(a, b)] = max(found.get((a, b), 0.0), score)
    stores.entity_names.upsert({n: {"content": n} for n in new_names}, vectors=new_vectors)
    stores.synonyms.add(found)


def relation_ids_current(stores: IndexStores) -> bool:
    """Whether the store's relation vectors are keyed by :func:`relation_vector_id` (stores
    written before it used :func:`legacy_relation_vector_id`)."""
    return stores.db.meta(RELATION_IDS_META) == RELATION_IDS_VERSION


def rekey_relation_vectors(stores: IndexStores) -> int:
    """Move relation vectors from their legacy ids to :func:`relation_vector_id` (inside the
    index's write transaction; once per store). A legacy id that two relations shared held the
    vector of one of them (its metadata says which): that one moves, the other is queued for
    embedding. Returns how many vectors moved."""
    store = stores.relations_vdb
    edges = set(stores.graph.all_edge_pairs())
    legacy: Dict[str, None] = dict.fromkeys(legacy_relation_vector_id(*k) for k in edges)
    found = [r for r in store.get_by_ids(list(legacy)) if r is not None]
    vectors = store.get_vectors_by_ids([r["id"] for r in found])
    moved: Dict[str, Tuple[Dict[str, Any], np.ndarray]] = {}
    for record in found:
        owner = relation_key(str(record.get("src_id", "")), str(record.get("tgt_id", "")))
        if owner in edges and record["id"] in vectors:
            meta = {k: v for k, v in record.items() if k != "id"}
            moved[relation_vector_id(*owner)] = (meta, vectors[record["id"]])
    store.delete([r["id"] for r in found if r["id"] not in moved])
    if moved:
        store.upsert({k: m for k, (m, _) in moved.items()},
                     vectors=np.stack([v for _, v in moved.values()]))
    present = {r["id"] for r in store.get_by_ids([relation_vector_id(*k) for k in edges]) if r}
    queue_vectors(stores, relations=[k for k in edges if relation_vector_id(*k) not in present])
    stores.db.set_meta(RELATION_IDS_META, RELATION_IDS_VERSION)
    return len(moved)
