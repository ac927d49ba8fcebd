"""Deleting documents, editing and merging entities, exporting the graph.

Deletion removes what only the deleted document supported and **rebuilds** entities and
relations that other documents also support from the extraction results cached per chunk, so no
LLM call repeats and no description of the deleted text survives (a known LightRAG complaint).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.merger import (
    GraphMerger,
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
    from lightrag.components.graph_rag.system import GraphRAG

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


def _cached_extractions(rag: GraphRAG, chunk_ids: Sequence[str]) -> List[Any]:
    from lightrag.components.graph_rag.entity_extractor import ExtractionResult

    return [ExtractionResult.from_dict(r) for r in rag.chunk_extractions.get_by_ids(list(chunk_ids)) if r]


async def adelete_by_doc_id(rag: GraphRAG, doc_id: str) -> DeletionResult:
    """Remove a document, its chunks, and the graph items only it supported; rebuild the rest."""
    status = rag.doc_status.get_by_id(doc_id)
    if status is None and rag.full_docs.get_by_id(doc_id) is None:
        raise KeyError(f"no document with id {doc_id!r}")
    doc_chunks = set((status or {}).get("chunks_list") or [])
    items = rag.doc_graph_items.get_by_id(doc_id) or {"entities": [], "relations": []}
    result = DeletionResult(doc_id=doc_id, chunks_deleted=len(doc_chunks))

    rebuild_entities: List[str] = []
    for name in items["entities"]:
        node = rag.graph.get_node(name)
        if node is None:
            continue
        remaining = [c for c in split_field(node.get("source_id")) if c not in doc_chunks]
        if remaining:
            rebuild_entities.append(name)
        else:
            for src, tgt in rag.graph.get_node_edges(name) or []:
                rag.relations_vdb.delete([relation_vector_id(src, tgt)])
            rag.graph.delete_node(name)
            rag.entities_vdb.delete([entity_vector_id(name)])
            result.entities_deleted.append(name)

    rebuild_relations: List[Tuple[str, str]] = []
    for pair in items["relations"]:
        src, tgt = relation_key(*pair)
        edge = rag.graph.get_edge(src, tgt)
        if edge is None:
            continue
        remaining = [c for c in split_field(edge.get("source_id")) if c not in doc_chunks]
        if remaining:
            rebuild_relations.append((src, tgt))
        else:
            rag.graph.remove_edges([(src, tgt)])
            rag.relations_vdb.delete([relation_vector_id(src, tgt)])
            result.relations_deleted.append((src, tgt))

    chunk_sources = set()
    for name in rebuild_entities:
        chunk_sources.update(c for c in split_field(rag.graph.get_node(name).get("source_id"))
                             if c not in doc_chunks)
        rag.graph.upsert_node(name, {"entity_type": "", "description": "", "source_id": "",
                                     "file_path": ""})
    for src, tgt in rebuild_relations:
        chunk_sources.update(c for c in split_field(rag.graph.get_edge(src, tgt).get("source_id"))
                             if c not in doc_chunks)
        rag.graph.upsert_edge(src, tgt, {"weight": 0.0, "description": "", "keywords": "",
                                         "source_id": "", "file_path": ""})
    keep_entities, keep_relations = set(rebuild_entities), set(rebuild_relations)
    cached = _cached_extractions(rag, sorted(chunk_sources))
    for extraction in cached:
        extraction.entities = [e for e in extraction.entities if e.entity_name in keep_entities]
        extraction.relations = [r for r in extraction.relations
                                if relation_key(r.src_id, r.tgt_id) in keep_relations]
    await rag.merger.acall(cached, rag.graph, rag.entities_vdb, rag.relations_vdb)
    result.entities_rebuilt, result.relations_rebuilt = rebuild_entities, rebuild_relations

    rag.chunks_vdb.delete(sorted(doc_chunks))
    rag.text_chunks.delete(sorted(doc_chunks))
    rag.chunk_extractions.delete(sorted(doc_chunks))
    rag.doc_graph_items.delete([doc_id])
    rag.full_docs.delete([doc_id])
    rag.doc_status.delete([doc_id])
    rag.flush()
    log.info("deleted %s: %d entities removed, %d rebuilt", doc_id,
             len(result.entities_deleted), len(result.entities_rebuilt))
    return result


def delete_entity(rag: GraphRAG, name: str) -> None:
    """Remove an entity, its relations and their vectors."""
    if not rag.graph.has_node(name):
        raise KeyError(f"no entity named {name!r}")
    for src, tgt in rag.graph.get_node_edges(name) or []:
        rag.relations_vdb.delete([relation_vector_id(src, tgt)])
    rag.graph.delete_node(name)
    rag.entities_vdb.delete([entity_vector_id(name)])
    rag.flush()


def edit_entity(rag: GraphRAG, name: str, updates: Dict[str, Any], rename_to: Optional[str] = None) -> Dict[str, Any]:
    """Change an entity's fields (``description``, ``entity_type``, …) and optionally rename it;
    relations follow a renamed entity and vectors are re-embedded."""
    node = rag.graph.get_node(name)
    if node is None:
        raise KeyError(f"no entity named {name!r}")
    allowed = {"description", "entity_type", "file_path"}
    unknown = set(updates) - allowed
    if unknown:
        raise ValueError(f"cannot edit fields {sorted(unknown)}; editable: {sorted(allowed)}")
    new_name = normalize_entity_name(rename_to) if rename_to else name
    if new_name != name and rag.graph.has_node(new_name):
        raise ValueError(f"an entity named {new_name!r} exists already: use merge_entities")
    node = {**node, **updates, "entity_id": new_name}
    if new_name != name:
        _move_node(rag, name, new_name, node)
    else:
        rag.graph.upsert_node(name, node)
    GraphMerger.index_entities([rag.graph.get_node(new_name)], rag.entities_vdb)
    rag.flush()
    return rag.graph.get_node(new_name)


def _move_node(rag: GraphRAG, old: str, new: str, node: Dict[str, Any]) -> None:
    edges = [(relation_key(s, t), rag.graph.get_edge(s, t)) for s, t in rag.graph.get_node_edges(old) or []]
    rag.graph.upsert_node(new, node)
    for (src, tgt), edge in edges:
        other = tgt if src == old else src
        rag.relations_vdb.delete([relation_vector_id(src, tgt)])
        if other != new:
            existing = rag.graph.get_edge(new, other)
            rag.graph.upsert_edge(new, other, _combine_edges(existing, edge) if existing else edge)
    rag.graph.delete_node(old)
    rag.entities_vdb.delete([entity_vector_id(old)])
    GraphMerger.index_relations(
        [(relation_key(s, t), rag.graph.get_edge(s, t)) for s, t in rag.graph.get_node_edges(new) or []],
        rag.relations_vdb)


def _join(*values: Any) -> str:
    return GRAPH_FIELD_SEP.join(dict.fromkeys(v for value in values for v in split_field(value)))


def _combine_edges(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    keywords = sorted({k.strip() for e in (a, b) for k in str(e.get("keywords", "")).split(",") if k.strip()})
    return {**a, "weight": float(a.get("weight", 0)) + float(b.get("weight", 0)),
            "description": _join(a.get("description"), b.get("description")),
            "keywords": ",".join(keywords), "source_id": _join(a.get("source_id"), b.get("source_id")),
            "file_path": _join(a.get("file_path"), b.get("file_path"))}


def merge_entities(rag: GraphRAG, sources: Sequence[str], target: str) -> Dict[str, Any]:
    """Merge ``sources`` into ``target`` (created if missing): descriptions, chunk ids and files are
    joined, relations are redirected (duplicates combined, self-loops dropped)."""
    missing = [s for s in sources if not rag.graph.has_node(s)]
    if missing:
        raise KeyError(f"no entities named {missing}")
    target = normalize_entity_name(target)
    base = rag.graph.get_node(target) or {"entity_id": target, "entity_type": "unknown",
                                          "description": "", "source_id": "", "file_path": ""}
    for name in sources:
        if name == target:
            continue
        node = rag.graph.get_node(name)
        base = {**base, "description": _join(base.get("description"), node.get("description")),
                "source_id": _join(base.get("source_id"), node.get("source_id")),
                "file_path": _join(base.get("file_path"), node.get("file_path")),
                "entity_type": base.get("entity_type") if base.get("entity_type") not in ("", "unknown")
                else node.get("entity_type", "unknown")}
        if rag.graph.has_node(target):
            rag.graph.upsert_node(target, base)
            _redirect_edges(rag, name, target)
        else:
            _move_node(rag, name, target, base)
    rag.graph.upsert_node(target, base)
    GraphMerger.index_entities([rag.graph.get_node(target)], rag.entities_vdb)
    rag.flush()
    return rag.graph.get_node(target)


def _redirect_edges(rag: GraphRAG, old: str, new: str) -> None:
    for src, tgt in list(rag.graph.get_node_edges(old) or []):
        edge = rag.graph.get_edge(src, tgt)
        other = tgt if src == old else src
        rag.relations_vdb.delete([relation_vector_id(src, tgt)])
        if other == new:
            continue
        existing = rag.graph.get_edge(new, other)
        rag.graph.upsert_edge(new, other, _combine_edges(existing, edge) if existing else edge)
        GraphMerger.index_relations([(relation_key(new, other), rag.graph.get_edge(new, other))],
                                    rag.relations_vdb)
    rag.graph.delete_node(old)
    rag.entities_vdb.delete([entity_vector_id(old)])
