"""What :class:`~lightrag.components.graph_rag.index.GraphIndex` does to delete documents and
edit, merge or delete entities. Each function runs inside the index's write transaction (the
index calls them; nothing else should) and queues changed items for re-embedding.

Deletion removes what only the deleted document supported and **rebuilds** entities and
relations that other documents also support from the extraction results cached per chunk, so no
LLM call repeats and no description of the deleted text survives (a known LightRAG complaint).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.index import extraction_key
from lightrag.components.graph_rag.index_vectors import SEP, pending_key
from lightrag.components.graph_rag.merger import (
    entity_vector_id,
    relation_vector_id,
    split_field,
)
from lightrag.components.graph_rag.schemas import (
    GRAPH_FIELD_SEP,
    normalize_entity_name,
    relation_key,
)
from lightrag.core.base_data_class import DataClass

if TYPE_CHECKING:
    from lightrag.components.graph_rag.index import GraphIndex

log = logging.getLogger(__name__)


@dataclass
class DeletionResult(DataClass):
    """What deleting a document removed and rebuilt."""

    doc_id: str = field(default="", metadata={"desc": "The deleted document"})
    chunks_deleted: int = field(default=0, metadata={"desc": "Chunks removed"})
    entities_deleted: List[str] = field(default_factory=list, metadata={"desc": "Removed"})
    entities_rebuilt: List[str] = field(default_factory=list, metadata={"desc": "Rebuilt"})
    relations_deleted: List[Tuple[str, str]] = field(default_factory=list, metadata={"desc": "Removed"})
    relations_rebuilt: List[Tuple[str, str]] = field(default_factory=list, metadata={"desc": "Rebuilt"})


def _cached_extractions(index: GraphIndex, chunk_ids: Sequence[str]) -> List[Any]:
    """The cached extractions of the chunks that are still stored (by their content)."""
    from lightrag.components.graph_rag.schemas import TextChunkSchema

    found = []
    for chunk_id, chunk in zip(chunk_ids, index.text_chunks.get_by_ids(list(chunk_ids))):
        if chunk is None:
            continue
        cached = index.cached_extraction(chunk_id, TextChunkSchema.from_dict(chunk))
        if cached is not None:
            found.append(cached)
    return found


def _drop_vectors(index: GraphIndex, entities: Sequence[str] = (),
                  relations: Sequence[Tuple[str, str]] = ()) -> None:
    """Remove the vectors of removed entities and relations, their queued re-embeddings, and
    the removed entities' name vectors and synonym pairs."""
    index.entities_vdb.delete([entity_vector_id(n) for n in entities])
    index.relations_vdb.delete([relation_vector_id(s, t) for s, t in relations])
    index.pending_vectors.delete([pending_key("e", n) for n in entities]
                                 + [pending_key("r", *relation_key(s, t)) for s, t in relations])
    if entities:
        gone = set(entities)
        index.entity_names.delete(list(gone))
        index.synonyms.delete([k for k in index.synonyms.keys()
                               if gone.intersection(k.split(SEP, 1))])


def _release_extractions(index: GraphIndex, removed: Dict[str, Dict[str, Any]]) -> int:
    """Drop the cached extractions that no stored chunk uses once the ``removed`` chunks (id ->
    record) are gone; returns how many were dropped. Stores written before the users of an
    extraction were recorded are checked against the remaining chunks' texts."""
    keys: Dict[str, str] = {}
    for chunk in removed.values():
        keys.setdefault(extraction_key(index.extractor_name, chunk.get("content", "")), "")
    users = dict(zip(keys, index.extraction_chunks.get_by_ids(list(keys))))
    remaining_texts: Optional[set] = None
    drop, keep = [], {}
    for key, row in users.items():
        if row is not None:
            left = [c for c in row.get("chunks") or [] if c not in removed]
            if left:
                keep[key] = {"chunks": left}
            else:
                drop.append(key)
            continue
        if remaining_texts is None:
            remaining_texts = {extraction_key(index.extractor_name, c.get("content", ""))
                               for cid, c in index.text_chunks.items() if cid not in removed}
        if key not in remaining_texts:
            drop.append(key)
    index.extraction_chunks.replace(keep)
    index.extraction_chunks.delete(drop)
    index.extractions.delete(drop)
    return len(drop)


async def remove_document_data(index: GraphIndex, doc_id: str, chunk_ids: Sequence[str]) -> DeletionResult:
    """Remove a document's chunks and the graph items only they supported; rebuild the rest."""
    doc_chunks = set(chunk_ids)
    items = index.doc_graph_items.get_by_id(doc_id) or {"entities": [], "relations": []}
    result = DeletionResult(doc_id=doc_id, chunks_deleted=len(doc_chunks))
    graph = index.graph

    rebuild_entities: List[str] = []
    for name in items["entities"]:
        node = graph.get_node(name)
        if node is None:
            continue
        if any(c not in doc_chunks for c in split_field(node.get("source_id"))):
            rebuild_entities.append(name)
        else:
            _drop_vectors(index, relations=[relation_key(s, t) for s, t in graph.get_node_edges(name) or []])
            graph.delete_node(name)
            _drop_vectors(index, entities=[name])
            result.entities_deleted.append(name)

    rebuild_relations: List[Tuple[str, str]] = []
    for pair in items["relations"]:
        src, tgt = relation_key(*pair)
        edge = graph.get_edge(src, tgt)
        if edge is None:
            continue
        if any(c not in doc_chunks for c in split_field(edge.get("source_id"))):
            rebuild_relations.append((src, tgt))
        else:
            graph.remove_edges([(src, tgt)])
            _drop_vectors(index, relations=[(src, tgt)])
            result.relations_deleted.append((src, tgt))

    chunk_sources = set()
    for name in rebuild_entities:
        chunk_sources.update(c for c in split_field(graph.get_node(name).get("source_id"))
                             if c not in doc_chunks)
        graph.upsert_node(name, {"entity_type": "", "description": "", "source_id": "", "file_path": ""})
    for src, tgt in rebuild_relations:
        chunk_sources.update(c for c in split_field(graph.get_edge(src, tgt).get("source_id"))
                             if c not in doc_chunks)
        graph.upsert_edge(src, tgt, {"weight": 0.0, "description": "", "keywords": "",
                                     "source_id": "", "file_path": ""})
    keep_entities, keep_relations = set(rebuild_entities), set(rebuild_relations)
    cached = _cached_extractions(index, sorted(chunk_sources))
    for extraction in cached:
        extraction.entities = [e for e in extraction.entities if e.entity_name in keep_entities]
        extraction.relations = [r for r in extraction.relations
                                if relation_key(r.src_id, r.tgt_id) in keep_relations]
    await index.merger.acall(cached, graph)
    index.queue_vectors(rebuild_entities, rebuild_relations)
    result.entities_rebuilt, result.relations_rebuilt = rebuild_entities, rebuild_relations

    removed = {cid: c for cid, c in zip(sorted(doc_chunks), index.text_chunks.get_by_ids(sorted(doc_chunks)))
               if c is not None}
    _release_extractions(index, removed)
    index.chunks_vdb.delete(sorted(doc_chunks))
    index.text_chunks.delete(sorted(doc_chunks))
    index.doc_graph_items.delete([doc_id])
    return result


def delete_entity(index: GraphIndex, name: str) -> None:
    """Remove an entity, its relations and their vectors."""
    if not index.graph.has_node(name):
        raise KeyError(f"no entity named {name!r}")
    _drop_vectors(index, [name], [relation_key(s, t) for s, t in index.graph.get_node_edges(name) or []])
    index.graph.delete_node(name)


def edit_entity(index: GraphIndex, name: str, updates: Dict[str, Any], rename_to: Optional[str] = None) -> Dict[str, Any]:
    """Change an entity's fields (``description``, ``entity_type``, …) and optionally rename it;
    relations follow a renamed entity and vectors are re-embedded."""
    node = index.graph.get_node(name)
    if node is None:
        raise KeyError(f"no entity named {name!r}")
    allowed = {"description", "entity_type", "file_path"}
    unknown = set(updates) - allowed
    if unknown:
        raise ValueError(f"cannot edit fields {sorted(unknown)}; editable: {sorted(allowed)}")
    bad = {k: type(v).__name__ for k, v in updates.items() if not isinstance(v, str)}
    if bad:
        raise TypeError(f"entity fields must be strings, got {bad}")
    new_name = normalize_entity_name(rename_to) if rename_to else name
    if not new_name:
        raise ValueError(f"cannot rename {name!r} to an empty name")
    if new_name != name and index.graph.has_node(new_name):
        raise ValueError(f"an entity named {new_name!r} exists already: use merge_entities")
    node = {**node, **updates, "entity_id": new_name}
    if new_name != name:
        _move_node(index, name, new_name, node)
    else:
        index.graph.upsert_node(name, node)
    index.queue_vectors([new_name])
    return index.graph.get_node(new_name)


def _move_node(index: GraphIndex, old: str, new: str, node: Dict[str, Any]) -> None:
    graph = index.graph
    edges = [(relation_key(s, t), graph.get_edge(s, t)) for s, t in graph.get_node_edges(old) or []]
    graph.upsert_node(new, node)
    for (src, tgt), edge in edges:
        other = tgt if src == old else src
        _drop_vectors(index, relations=[(src, tgt)])
        if other != new:
            existing = graph.get_edge(new, other)
            graph.upsert_edge(new, other, _combine_edges(existing, edge) if existing else edge)
    graph.delete_node(old)
    _drop_vectors(index, entities=[old])
    index.queue_vectors(relations=[relation_key(s, t) for s, t in graph.get_node_edges(new) or []])


def _join(*values: Any) -> str:
    return GRAPH_FIELD_SEP.join(dict.fromkeys(v for value in values for v in split_field(value)))


def _combine_edges(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    keywords = sorted({k.strip() for e in (a, b) for k in str(e.get("keywords", "")).split(",") if k.strip()})
    return {**a, "weight": float(a.get("weight", 0)) + float(b.get("weight", 0)),
            "description": _join(a.get("description"), b.get("description")),
            "keywords": ",".join(keywords), "source_id": _join(a.get("source_id"), b.get("source_id")),
            "file_path": _join(a.get("file_path"), b.get("file_path"))}


def merge_entities(index: GraphIndex, sources: Sequence[str], target: str) -> Dict[str, Any]:
    """Merge ``sources`` into ``target`` (created if missing): descriptions, chunk ids and files are
    joined, relations are redirected (duplicates combined, self-loops dropped)."""
    graph = index.graph
    missing = [s for s in sources if not graph.has_node(s)]
    if missing:
        raise KeyError(f"no entities named {missing}")
    target = normalize_entity_name(target)
    if not target:
        raise ValueError("the target entity name is empty")
    base = graph.get_node(target) or {"entity_id": target, "entity_type": "unknown",
                                      "description": "", "source_id": "", "file_path": ""}
    for name in sources:
        if name == target:
            continue
        node = graph.get_node(name)
        base = {**base, "description": _join(base.get("description"), node.get("description")),
                "source_id": _join(base.get("source_id"), node.get("source_id")),
                "file_path": _join(base.get("file_path"), node.get("file_path")),
                "entity_type": base.get("entity_type") if base.get("entity_type") not in ("", "unknown")
                else node.get("entity_type", "unknown")}
        if graph.has_node(target):
            graph.upsert_node(target, base)
            _redirect_edges(index, name, target)
        else:
            _move_node(index, name, target, base)
    graph.upsert_node(target, base)
    _retarget_documents(index, sources, target)
    index.queue_vectors([target])
    return graph.get_node(target)


def _redirect_edges(index: GraphIndex, old: str, new: str) -> None:
    graph = index.graph
    for src, tgt in list(graph.get_node_edges(old) or []):
        edge = graph.get_edge(src, tgt)
        other = tgt if src == old else src
        _drop_vectors(index, relations=[relation_key(src, tgt)])
        if other == new:
            continue
        existing = graph.get_edge(new, other)
        graph.upsert_edge(new, other, _combine_edges(existing, edge) if existing else edge)
        index.queue_vectors(relations=[relation_key(new, other)])
    graph.delete_node(old)
    _drop_vectors(index, entities=[old])


def _retarget_documents(index: GraphIndex, sources: Sequence[str], target: str) -> None:
    """Documents that supported a merged entity now support the target (so deleting them later
    still finds it)."""
    renamed = set(sources)
    updates = {}
    for doc_id, items in index.doc_graph_items.items():
        if not renamed.intersection(items.get("entities", [])):
            continue
        entities = sorted({target if e in renamed else e for e in items["entities"]})
        relations = sorted({relation_key(*(target if x in renamed else x for x in pair))
                            for pair in items.get("relations", [])
                            if len({target if x in renamed else x for x in pair}) == 2})
        updates[doc_id] = {"entities": entities, "relations": relations}
    index.doc_graph_items.replace(updates)
