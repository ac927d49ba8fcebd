"""The invariants of a :class:`~lightrag.components.graph_rag.index.GraphIndex` store, checked
(``GraphIndex.verify``, ``lightrag check``, and the crash tests after every kill)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from lightrag.components.graph_rag.index.stores import SEP, IndexStores, extraction_key
from lightrag.components.graph_rag.index.vectors import pending_key, relation_ids_current
from lightrag.components.graph_rag.merger import (
    entity_vector_id,
    legacy_relation_vector_id,
    relation_vector_id,
    split_field,
)
from lightrag.components.graph_rag.schemas import DocStatus, relation_key
from lightrag.components.storage.base import ITER_BATCH

LEGACY_EXTRACTORS = ("EntityExtractor", "SpacyEntityExtractor")  # the names migrate.py writes


def verify_index(stores: IndexStores) -> List[str]:
    """Check the store's invariants; returns the problems found (empty: consistent).

    Every PROCESSED document has its text, chunks, chunk vectors and graph items; every chunk
    belongs to a known document and every chunk vector to a chunk; every entity and relation
    cites only stored chunks and has a vector or is queued for one, and its stored degree is its
    number of edges; every entity or relation vector belongs to a graph item; a memory-mapped
    vector file holds every row its ids point at, and its index copies them. ``lightrag check``
    runs it (through ``GraphIndex.verify``, which applies other processes' commits first).

    Records are read a batch at a time (``iter_items``, ``iter_node_sources``,
    ``iter_edge_sources``) and only ids are kept: on a 1M-chunk store the check held every
    chunk's text and every node and edge with its properties (5.8 GB).
    """
    status_ids = set(stores.doc_status.keys())
    chunks, chunk_problems = _chunk_pass(stores, status_ids)
    problems = _status_problems(stores, chunks) + chunk_problems + _chunk_vector_problems(stores, chunks)
    pending = set(stores.pending_vectors.keys())
    nodes: Dict[str, None] = {}  # in the graph's order: the degree problems listed come first
    entity_vectors = _VectorMatch(stores.entities_vdb)
    for node, source in stores.graph.iter_node_sources():
        nodes[node] = None
        entity_vectors.see(entity_vector_id(node), node)
        gone = [c for c in split_field(source) if c not in chunks]
        if gone:
            problems.append(f"entity {node}: cites deleted chunks {gone[:3]}")
    edges = _EdgePass(stores, nodes, pending)
    for src, tgt, source in stores.graph.iter_edge_sources():
        edges.add(src, tgt)
        gone = [c for c in split_field(source) if c not in chunks]
        if gone:
            problems.append(f"relation {relation_key(src, tgt)}: cites deleted chunks {gone[:3]}")
    problems += _degree_problems(stores, edges.degrees)
    problems += entity_vectors.problems("entity", lambda n: pending_key("e", n) in pending)
    if edges.legacy_keys is not None:
        problems += _legacy_relation_vector_problems(stores, edges.legacy_keys, pending)
    else:
        problems += edges.vectors.problems("relation", lambda k: pending_key("r", *k) in pending)
    problems += _leftovers(stores, chunks, nodes, edges.found_pending, pending)
    for store in (stores.chunks_vdb, stores.entities_vdb, stores.relations_vdb, stores.entity_names):
        problems += getattr(store, "verify_files", lambda: [])()  # file-backed vector stores
    return problems


class _VectorMatch:
    """A vector store's ids (when it lists them) matched against the items a pass streams by:
    what is left unmatched has no item, the items not matched have no vector."""

    def __init__(self, store: Any) -> None:
        self.unmatched = _vector_ids(store)
        self.missing: List[Tuple[str, Any]] = []

    def see(self, vector_id: str, item: Any) -> None:
        if self.unmatched is None:
            return
        if vector_id in self.unmatched:
            self.unmatched.discard(vector_id)
        else:
            self.missing.append((vector_id, item))

    def problems(self, kind: str, queued: Any) -> List[str]:
        if self.unmatched is None:
            return []
        return ([f"{kind} vector {v}: no such {kind}" for v in sorted(self.unmatched)]
                + [f"{kind} {item}: no vector and not queued" for _, item in sorted(self.missing)
                   if not queued(item)])


class _EdgePass:
    """What the edge pass keeps: each node's counted degree, the relation vectors matched, the
    queued relation vectors seen; the edge keys only for a store written before the relation
    vector ids changed (their check needs them all)."""

    def __init__(self, stores: IndexStores, nodes: Dict[str, None], pending: Set[str]) -> None:
        self.degrees: Dict[str, int] = dict.fromkeys(nodes, 0)
        legacy = _vector_ids(stores.relations_vdb) is not None and not relation_ids_current(stores)
        self.legacy_keys: Optional[Set[Tuple[str, str]]] = set() if legacy else None
        self.vectors = _VectorMatch(None if legacy else stores.relations_vdb)
        self._queued = {relation_key(*key.split(SEP)[1:3]) for key in pending
                        if key.startswith("r" + SEP) and len(key.split(SEP)) >= 3}
        self.found_pending: Set[Tuple[str, str]] = set()

    def add(self, src: str, tgt: str) -> None:
        self.degrees[src] = self.degrees.get(src, 0) + 1
        self.degrees[tgt] = self.degrees.get(tgt, 0) + 1
        key = relation_key(src, tgt)
        if self.legacy_keys is not None:
            self.legacy_keys.add(key)
        self.vectors.see(relation_vector_id(*key), key)
        if key in self._queued:
            self.found_pending.add(key)


def _degree_problems(stores: IndexStores, counted: Dict[str, int]) -> List[str]:
    """Each node's degree as the store reports it (kept as rows by the SQL graph) against its
    edges counted."""
    problems: List[str] = []
    names = list(counted)
    for start in range(0, len(names), ITER_BATCH):
        part = names[start:start + ITER_BATCH]
        stored = stores.graph.node_degrees_batch(part)
        problems += [f"entity {n}: degree {stored.get(n, 0)} stored, {counted[n]} edges"
                     for n in part if stored.get(n, 0) != counted[n]]
        if len(problems) >= 20:
            break
    return problems[:20]


def _chunk_pass(stores: IndexStores, status_ids: Set[str]) -> Tuple[Set[str], List[str]]:
    """The chunk ids, and the chunks whose document is gone."""
    chunks: Set[str] = set()
    problems: List[str] = []
    for chunk_id, chunk in stores.text_chunks.iter_items():
        chunks.add(chunk_id)
        if chunk.get("full_doc_id") not in status_ids:
            problems.append(f"chunk {chunk_id}: its document {chunk.get('full_doc_id')} is gone")
    return chunks, problems


def _status_problems(stores: IndexStores, chunks: Set[str]) -> List[str]:
    """Documents without text, chunks or graph items."""
    problems: List[str] = []
    docs_with_text = set(stores.full_docs.keys())
    items = set(stores.doc_graph_items.keys())
    for doc_id, status in stores.doc_status.iter_items():
        if doc_id not in docs_with_text:
            problems.append(f"document {doc_id}: status without text")
        if status.get("status") != DocStatus.PROCESSED.value:
            continue
        missing = [c for c in status.get("chunks_list") or [] if c not in chunks]
        if missing:
            problems.append(f"document {doc_id}: PROCESSED but chunks {missing[:3]} are missing")
        if doc_id not in items:
            problems.append(f"document {doc_id}: PROCESSED without its graph items")
    return problems


def _chunk_vector_problems(stores: IndexStores, chunks: Set[str]) -> List[str]:
    vector_ids = _vector_ids(stores.chunks_vdb)
    if vector_ids is None:
        return []
    return ([f"chunk vector {v}: no such chunk" for v in sorted(vector_ids - chunks)]
            + [f"chunk {c}: no vector" for c in sorted(chunks - vector_ids)])


def _legacy_relation_vector_problems(stores: IndexStores, edges: Set[Tuple[str, str]],
                                     pending: Set[str]) -> List[str]:
    """Relation vectors of a store written before the ids changed (re-keyed on its next
    write): a vector under the old id of a relation counts as that relation's."""
    relation_vectors = _vector_ids(stores.relations_vdb) or set()
    wanted_r = {relation_vector_id(*k): k for k in edges}
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


def _leftovers(stores: IndexStores, chunks: Set[str], nodes: Dict[str, None],
               queued_relations: Set[Tuple[str, str]], pending: Set[str]) -> List[str]:
    """What deleted documents and entities must not leave behind: cached extractions no stored
    chunk uses, name vectors and synonym pairs of vanished entities, queued vectors of vanished
    items (``queued_relations``: the queued relations the edge pass found)."""
    problems = _extraction_problems(stores, chunks)
    name_ids = _vector_ids(stores.entity_names)
    if name_ids is not None:
        problems += [f"entity name vector {n!r}: no such entity" for n in sorted(name_ids - nodes.keys())]
    for a, b, _ in stores.synonyms.pairs():
        gone = [n for n in (a, b) if n not in nodes]
        if gone:
            problems.append(f"synonym pair {[a, b]}: {gone[0]!r} is no entity")
    for key in sorted(pending):
        kind, *parts = key.split(SEP)
        if (kind == "e" and parts[0] not in nodes) or (
                kind == "r" and relation_key(*parts[:2]) not in queued_relations):
            problems.append(f"queued vector {parts}: no such {'entity' if kind == 'e' else 'relation'}")
    return problems


def _extraction_problems(stores: IndexStores, chunks: Set[str]) -> List[str]:
    """Cached extractions that no stored chunk uses (by their users row, else, for a row
    written before those, by the texts of the chunks), and users rows without an extraction."""
    results = set(stores.extractions.results.keys())
    unused: List[str] = []
    orphans: List[str] = []
    without_row = set(results)
    for key, row in stores.extractions.users.iter_items():
        if key not in results:
            orphans.append(key)
            continue
        without_row.discard(key)
        if not any(c in chunks for c in row.get("chunks") or []):
            unused.append(key)
    if without_row:
        names = {stores.extractions.extractor_name, "", *LEGACY_EXTRACTORS}
        for _, chunk in stores.text_chunks.iter_items():
            without_row -= {extraction_key(n, chunk.get("content", "")) for n in names}
            if not without_row:
                break
        unused += without_row
    return ([f"cached extraction {key}: no stored chunk has its text" for key in sorted(unused)]
            + [f"extraction users {k}: no such cached extraction" for k in sorted(orphans)])


def _vector_ids(store: Any) -> Optional[set]:
    ids = getattr(store, "_ids", None)
    return None if ids is None else set(ids)
