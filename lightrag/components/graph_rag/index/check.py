"""The invariants of a :class:`~lightrag.components.graph_rag.index.GraphIndex` store, checked
(``GraphIndex.verify``, ``lightrag check``, and the crash tests after every kill)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.graph_rag.index.stores import SEP, IndexStores, extraction_key
from lightrag.components.graph_rag.index.vectors import pending_key, relation_ids_current
from lightrag.components.graph_rag.merger import (
    entity_vector_id,
    legacy_relation_vector_id,
    relation_vector_id,
    split_field,
)
from lightrag.components.graph_rag.schemas import DocStatus, relation_key

LEGACY_EXTRACTORS = ("EntityExtractor", "SpacyEntityExtractor")  # the names migrate.py writes


def verify_index(stores: IndexStores) -> List[str]:
    """Check the store's invariants; returns the problems found (empty: consistent).

    Every PROCESSED document has its text, chunks, chunk vectors and graph items; every chunk
    belongs to a known document and every chunk vector to a chunk; every entity and relation
    cites only stored chunks and has a vector or is queued for one, and its stored degree is its
    number of edges; every entity or relation vector belongs to a graph item. ``lightrag check``
    runs it (through ``GraphIndex.verify``, which applies other processes' commits first).
    """
    statuses = dict(stores.doc_status.items())
    chunks = dict(stores.text_chunks.items())
    problems = _document_problems(stores, statuses, chunks)
    pending = set(stores.pending_vectors.keys())
    nodes = {n["id"]: n for n in stores.graph.get_all_nodes()}
    edges = {relation_key(e["source"], e["target"]): e for e in stores.graph.get_all_edges()}
    for kind, found in (("entity", nodes), ("relation", edges)):
        for key, data in found.items():
            gone = [c for c in split_field(data.get("source_id")) if c not in chunks]
            if gone:
                problems.append(f"{kind} {key}: cites deleted chunks {gone[:3]}")
    problems += _degree_problems(stores, nodes, edges)
    problems += _entity_vector_problems(stores, nodes, pending)
    problems += _relation_vector_problems(stores, edges, pending)
    return problems + _leftovers(stores, chunks, nodes, edges, pending)


def _degree_problems(stores: IndexStores, nodes: Dict[str, Any],
                     edges: Dict[Tuple[str, str], Any]) -> List[str]:
    """Each node's degree as the store reports it (kept as rows by the SQL graph) against its
    edges counted."""
    counted: Dict[str, int] = dict.fromkeys(nodes, 0)
    for src, tgt in edges:
        counted[src] = counted.get(src, 0) + 1
        counted[tgt] = counted.get(tgt, 0) + 1
    stored = stores.graph.node_degrees_batch(list(counted))
    return [f"entity {n}: degree {stored.get(n, 0)} stored, {d} edges"
            for n, d in counted.items() if stored.get(n, 0) != d][:20]


def _document_problems(stores: IndexStores, statuses: Dict[str, Any],
                       chunks: Dict[str, Any]) -> List[str]:
    """Documents without text, chunks or graph items; chunks without document or vector."""
    problems: List[str] = []
    docs_with_text = set(stores.full_docs.keys())
    items = set(stores.doc_graph_items.keys())
    for doc_id, status in statuses.items():
        if doc_id not in docs_with_text:
            problems.append(f"document {doc_id}: status without text")
        if status.get("status") != DocStatus.PROCESSED.value:
            continue
        missing = [c for c in status.get("chunks_list") or [] if c not in chunks]
        if missing:
            problems.append(f"document {doc_id}: PROCESSED but chunks {missing[:3]} are missing")
        if doc_id not in items:
            problems.append(f"document {doc_id}: PROCESSED without its graph items")
    for chunk_id, chunk in chunks.items():
        if chunk.get("full_doc_id") not in statuses:
            problems.append(f"chunk {chunk_id}: its document {chunk.get('full_doc_id')} is gone")
    vector_ids = _vector_ids(stores.chunks_vdb)
    if vector_ids is not None:
        problems += [f"chunk vector {v}: no such chunk" for v in sorted(vector_ids - set(chunks))]
        problems += [f"chunk {c}: no vector" for c in sorted(set(chunks) - vector_ids)]
    return problems


def _entity_vector_problems(stores: IndexStores, nodes: Dict[str, Any], pending: set) -> List[str]:
    entity_vectors = _vector_ids(stores.entities_vdb)
    if entity_vectors is None:
        return []
    wanted = {entity_vector_id(n): n for n in nodes}
    problems = [f"entity vector {v}: no such entity" for v in sorted(entity_vectors - set(wanted))]
    problems += [f"entity {n}: no vector and not queued" for v, n in sorted(wanted.items())
                 if v not in entity_vectors and pending_key("e", n) not in pending]
    return problems


def _relation_vector_problems(stores: IndexStores, edges: Dict[Tuple[str, str], Any],
                              pending: set) -> List[str]:
    relation_vectors = _vector_ids(stores.relations_vdb)
    if relation_vectors is None:
        return []
    wanted_r = {relation_vector_id(*k): k for k in edges}
    if not relation_ids_current(stores):  # written before the ids changed: re-keyed on next write
        legacy: dict = {}
        for k in edges:
            legacy.setdefault(legacy_relation_vector_id(*k), []).append(k)
        relation_vectors |= {relation_vector_id(*k) for v in relation_vectors & set(legacy)
                             for k in legacy[v]}
        relation_vectors -= set(legacy) - set(wanted_r)
    problems = [f"relation vector {v}: no such relation"
                for v in sorted(relation_vectors - set(wanted_r))]
    problems += [f"relation {k}: no vector and not queued" for v, k in sorted(wanted_r.items())
                 if v not in relation_vectors and pending_key("r", *k) not in pending]
    return problems


def _leftovers(stores: IndexStores, chunks: Dict[str, Any], nodes: Dict[str, Any],
               edges: Dict[Tuple[str, str], Any], pending: set) -> List[str]:
    """What deleted documents and entities must not leave behind: cached extractions no stored
    chunk uses, name vectors and synonym pairs of vanished entities, queued vectors of vanished
    items."""
    problems: List[str] = []
    users = dict(stores.extractions.users.items())
    names = {stores.extractions.extractor_name, "", *LEGACY_EXTRACTORS}
    texts = {extraction_key(n, c.get("content", "")) for c in chunks.values() for n in names}
    for key in stores.extractions.results.keys():
        row = users.get(key)
        used = (any(c in chunks for c in row.get("chunks") or []) if row is not None
                else key in texts)
        if not used:
            problems.append(f"cached extraction {key}: no stored chunk has its text")
    problems += [f"extraction users {k}: no such cached extraction"
                 for k in sorted(set(users) - set(stores.extractions.results.keys()))]
    name_ids = _vector_ids(stores.entity_names)
    if name_ids is not None:
        problems += [f"entity name vector {n!r}: no such entity" for n in sorted(name_ids - set(nodes))]
    for pair in stores.synonyms.keys():
        gone = [n for n in pair.split(SEP, 1) if n not in nodes]
        if gone:
            problems.append(f"synonym pair {pair.split(SEP, 1)}: {gone[0]!r} is no entity")
    for key in sorted(pending):
        kind, *parts = key.split(SEP)
        if (kind == "e" and parts[0] not in nodes) or (
                kind == "r" and relation_key(*parts[:2]) not in edges):
            problems.append(f"queued vector {parts}: no such {'entity' if kind == 'e' else 'relation'}")
    return problems


def _vector_ids(store: Any) -> Optional[set]:
    ids = getattr(store, "_ids", None)
    return None if ids is None else set(ids)
