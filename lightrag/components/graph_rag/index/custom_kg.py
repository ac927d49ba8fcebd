"""Import a knowledge graph built elsewhere (HKU LightRAG's ``insert_custom_kg`` format) into a
:class:`~lightrag.components.graph_rag.index.GraphIndex`.

:func:`~.custom_kg_format.load_custom_kg` reads and validates the graph (a dict, JSON text or
file, or CSV files) into a :class:`CustomKG` of typed records; every problem is reported with the
record that has it (``relationships[3]: unknown endpoint 'Acme'``). :func:`ainsert_custom_kg`
writes it as **one document** in one transaction of the index, exactly as an extracted document is written:

* each chunk becomes a stored chunk (``<doc_id>-chunk-NNN``) with its vector;
* the entities and relations become one :class:`ExtractionResult` per chunk, merged into the
  graph by the index's :class:`GraphMerger` (an entity already in the graph merges as an
  extracted one does: descriptions joined, chunk ids joined) and cached like extractions, so
  deleting this document, or another one sharing its entities, rebuilds shared entities;
* the document (its text is the canonical JSON of the graph) is PROCESSED and lists its graph
  items, so ``delete_by_doc_id(doc_id)`` removes exactly what the import added;
* entity and relation vectors are queued, then embedded once each (``index_pending``).

Entities and relations given no ``source_id`` are attached to **synthetic chunks** of the
import: their text is one line per item (``Name (type): description``), so they are cited,
found by the chunk search of ``naive`` and ``mix``, and deleted with the document. A
``source_id`` that names no given chunk is an error (a typo would otherwise detach the item).

Example:
    >>> kg = load_custom_kg({"entities": [{"entity_name": "Acme", "description": "A company."}]})
    >>> [e.entity_name for e in kg.entities], kg.document_id()[:3]
    (['Acme'], 'kg-')
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.index.custom_kg_format import (  # noqa: F401 (re-exported)
    DEFAULT_FILE_PATH,
    MAX_NAME_CHARS,
    CustomChunk,
    CustomEntity,
    CustomKG,
    CustomKGError,
    CustomRelation,
    KGSource,
    _d,
    load_custom_kg,
)
from lightrag.components.graph_rag.index.vectors import queue_vectors
from lightrag.components.graph_rag.schemas import (
    DocProcessingStatus,
    DocStatus,
    EntityRecord,
    RelationRecord,
    TextChunkSchema,
    compute_mdhash_id,
    relation_key,
)
from lightrag.core.base_data_class import DataClass
from lightrag.core.tokenizer import count_tokens

log = logging.getLogger(__name__)

SYNTHETIC_CHUNK_CHARS = 2_000  #: lines of source-less items per synthetic chunk


@dataclass
class CustomKGResult(DataClass):
    """What :func:`ainsert_custom_kg` wrote."""

    doc_id: str = field(default="", metadata=_d("The document the import is stored as"))
    status: str = field(default="", metadata=_d("processed, or skipped (imported before)"))
    replaced: bool = field(default=False, metadata=_d("An earlier version of doc_id was replaced"))
    chunks: int = field(default=0, metadata=_d("Chunks written, synthetic ones included"))
    synthetic_chunks: int = field(default=0, metadata=_d("Chunks made for source-less items"))
    entities: List[str] = field(default_factory=list, metadata=_d("Entities touched"))
    relations: List[Tuple[str, str]] = field(default_factory=list, metadata=_d("Relations touched"))
    vectors_embedded: int = field(
        default=0, metadata=_d("Entity/relation vectors embedded afterwards (all queued ones)"))


# ------------------------------------------------------------------------------ import
@dataclass
class _Plan:
    """The chunks and per-chunk extractions an import writes."""

    chunks: Dict[str, TextChunkSchema]
    extractions: List[ExtractionResult]
    synthetic: int


def _plan(kg: CustomKG, doc_id: str) -> _Plan:
    """Chunk ids and one ExtractionResult per chunk (chunks of equal text collapse into one)."""
    chunks: Dict[str, TextChunkSchema] = {}
    by_content: Dict[str, str] = {}

    def add_chunk(content: str, file_path: str, order: int) -> str:
        if content not in by_content:
            chunk_id = f"{doc_id}-chunk-{len(chunks):03d}"
            by_content[content] = chunk_id
            chunks[chunk_id] = TextChunkSchema(tokens=count_tokens(content), content=content,
                                               full_doc_id=doc_id, chunk_order_index=order,
                                               file_path=file_path)
        return by_content[content]

    by_label = {c.source_id: add_chunk(c.content, c.file_path, c.chunk_order_index)
                for c in kg.chunks}
    before = len(chunks)
    synthetic_of: Dict[int, str] = {}
    for file_path, content, items in _synthetic_chunks(kg):
        chunk_id = add_chunk(content, file_path, len(chunks))
        synthetic_of.update({id(item): chunk_id for item in items})
    results = {cid: ExtractionResult(chunk_id=cid) for cid in chunks}
    for entity in kg.entities:
        for cid in [by_label[s] for s in entity.source_ids] or [synthetic_of[id(entity)]]:
            results[cid].entities.append(EntityRecord(
                entity_name=entity.entity_name, entity_type=entity.entity_type,
                description=entity.description, source_id=cid, file_path=chunks[cid].file_path))
    for rel in kg.relationships:
        for cid in [by_label[s] for s in rel.source_ids] or [synthetic_of[id(rel)]]:
            results[cid].relations.append(RelationRecord(
                src_id=rel.src_id, tgt_id=rel.tgt_id, description=rel.description,
                keywords=rel.keywords, weight=rel.weight, source_id=cid,
                file_path=chunks[cid].file_path))
    return _Plan(chunks, list(results.values()), len(chunks) - before)


def _synthetic_chunks(kg: CustomKG) -> List[Tuple[str, str, List[Any]]]:
    """``(file_path, text, items)`` of the synthetic chunks: the source-less items of one
    file path, one line each, about :data:`SYNTHETIC_CHUNK_CHARS` per chunk."""
    by_file: Dict[str, List[Any]] = {}
    for item in [*kg.entities, *kg.relationships]:
        if not item.source_ids:
            by_file.setdefault(item.file_path or DEFAULT_FILE_PATH, []).append(item)
    found = []
    for file_path, items in by_file.items():
        lines: List[str] = []
        group: List[Any] = []
        size = 0
        for item in items:
            lines.append(_line(item))
            group.append(item)
            size += len(lines[-1]) + 1
            if size >= SYNTHETIC_CHUNK_CHARS or item is items[-1]:
                found.append((file_path, "\n".join(lines), group))
                lines, group, size = [], [], 0
    return found


def _line(item: Any) -> str:
    """The text of a source-less item in its synthetic chunk."""
    if isinstance(item, CustomEntity):
        return f"{item.entity_name} ({item.entity_type}): {item.description}".rstrip(": ")
    keywords = f" [{item.keywords}]" if item.keywords else ""
    return f"{item.src_id} -- {item.tgt_id}{keywords}: {item.description}".rstrip(": ")


def _records_signature(result: ExtractionResult) -> Tuple[Any, Any]:
    return (sorted((e.entity_name, e.entity_type, e.description) for e in result.entities),
            sorted((*relation_key(r.src_id, r.tgt_id), r.description, r.keywords, float(r.weight))
                   for r in result.relations))


def _check_shared_texts(stores: Any, plan: _Plan, kg: CustomKG) -> None:
    """Extractions are cached by chunk text: a chunk whose text another document already
    stores with *other* entities and relations would change how that document's entities are
    rebuilt, so it is refused."""
    results = _with_records(plan)
    keys = [stores.extractions.key(plan.chunks[e.chunk_id].content) for e in results]
    for result, key, cached in zip(results, keys, stores.extractions.results.get_by_ids(keys)):
        if cached is None:
            continue
        if _records_signature(ExtractionResult.from_dict(cached)) != _records_signature(result):
            content = plan.chunks[result.chunk_id].content
            record = next((f"chunks[{i}]" for i, c in enumerate(kg.chunks) if c.content == content),
                          f"synthetic chunk {result.chunk_id}")
            users = (stores.extractions.users.get_by_id(key) or {}).get("chunks") or ["?"]
            raise CustomKGError(record, f"its text is already stored (chunk {users[0]!r}) with "
                                "other entities and relations; change the text or delete that "
                                "document first")


async def ainsert_custom_kg(index: Any, kg: KGSource, doc_id: Optional[str] = None) -> CustomKGResult:
    """Import a custom knowledge graph into ``index`` as one document (see the module doc).

    Args:
        index: the :class:`~lightrag.components.graph_rag.index.GraphIndex`.
        kg: a :class:`CustomKG` or anything :func:`load_custom_kg` reads.
        doc_id: the document's id (default :meth:`CustomKG.document_id`). An id imported
            before with the same graph is skipped; with another graph it is replaced in the same
            transaction. An id of a document that is no import is refused.

    Raises:
        CustomKGError: an invalid graph, a refused document id or chunk text; nothing is
            written (the import is one transaction).
    """
    kg = load_custom_kg(kg)
    text = kg.canonical_json()
    doc_id = doc_id if doc_id is not None else kg.document_id(text)
    if not isinstance(doc_id, str) or not doc_id.strip() or len(doc_id) > MAX_NAME_CHARS:
        raise CustomKGError("", f"doc_id must be a non-empty string of at most {MAX_NAME_CHARS} "
                            f"characters, got {doc_id!r}")
    content_hash = compute_mdhash_id(text)
    stores = index.stores
    result = CustomKGResult(doc_id=doc_id)
    old = stores.doc_status.get_by_id(doc_id)
    if _same_import(old, content_hash):
        result.status = "skipped"
        return result
    plan = _plan(kg, doc_id)
    vectors = await index.embed_texts([c.content for c in plan.chunks.values()])
    async with index.writing():
        old = stores.doc_status.get_by_id(doc_id)
        if _same_import(old, content_hash):
            result.status = "skipped"
            return result
        if old is not None or stores.full_docs.get_by_id(doc_id) is not None:
            if ((old or {}).get("metadata") or {}).get("source") != "custom_kg":
                raise CustomKGError("", f"document {doc_id!r} exists and is not a custom "
                                    "knowledge graph import: delete it first or choose another doc_id")
            from lightrag.components.graph_rag.index.maintenance import remove_document_data

            await remove_document_data(stores, index.merger, doc_id, old.get("chunks_list") or [])
            result.replaced = True
        _check_shared_texts(stores, plan, kg)
        _write(stores, plan, vectors, doc_id)
        stats = await index.merger.acall(plan.extractions, stores.graph)
        queue_vectors(stores, stats.changed_entities, stats.changed_relations)
        items = {"entities": sorted({x.entity_name for e in plan.extractions for x in e.entities}),
                 "relations": sorted({relation_key(r.src_id, r.tgt_id)
                                      for e in plan.extractions for r in e.relations})}
        stores.doc_graph_items.replace({doc_id: items})
        stores.full_docs.replace({doc_id: {"content": text, "file_path": DEFAULT_FILE_PATH}})
        status = DocProcessingStatus(
            content_summary=text[:100], content_length=len(text), file_path=DEFAULT_FILE_PATH,
            status=DocStatus.PROCESSED, track_id=f"custom-kg-{content_hash[:12]}",
            content_hash=content_hash, chunks_count=len(plan.chunks),
            chunks_list=list(plan.chunks),
            metadata={"source": "custom_kg", "entities": len(items["entities"]),
                      "relations": len(items["relations"])}).to_dict()
        if old:
            status["created_at"] = old.get("created_at", status["created_at"])
        stores.doc_status.replace({doc_id: status})
        result.entities, result.relations = stats.entities, stats.relations
    result.status = DocStatus.PROCESSED.value
    result.chunks, result.synthetic_chunks = len(plan.chunks), plan.synthetic
    result.vectors_embedded = await index.index_pending()
    log.info("imported %s: %d chunks (%d synthetic), %d entities, %d relations", doc_id,
             result.chunks, result.synthetic_chunks, len(result.entities), len(result.relations))
    return result


def _same_import(status: Optional[Dict[str, Any]], content_hash: str) -> bool:
    return bool(status) and status.get("status") == DocStatus.PROCESSED.value \
        and status.get("content_hash") == content_hash \
        and (status.get("metadata") or {}).get("source") == "custom_kg"


def _write(stores: Any, plan: _Plan, vectors: Any, doc_id: str) -> None:
    stores.text_chunks.replace({cid: c.to_dict() for cid, c in plan.chunks.items()})
    stores.chunks_vdb.upsert({
        cid: {"content": c.content, "full_doc_id": doc_id, "file_path": c.file_path,
              "chunk_order_index": c.chunk_order_index} for cid, c in plan.chunks.items()},
        vectors=vectors)
    stores.extractions.add(_with_records(plan), plan.chunks)


def _with_records(plan: _Plan) -> List[ExtractionResult]:
    """The extractions worth caching: a chunk no item cites caches nothing (a document with
    the same text is then extracted as usual)."""
    return [e for e in plan.extractions if e.entities or e.relations]
