"""The stores of one graph-RAG working directory, opened on one database.

This module is the one list of what a store holds: :func:`open_stores` opens every store (and
creates its tables), :data:`STORE_TABLES` names the tables that hold their rows (what
:func:`~lightrag.components.graph_rag.index.copy.copy_store` copies), and the ``*_META`` lists
name the metadata each vector store keeps. :class:`GraphIndex` owns the :class:`IndexStores`
it opens; its parts (vectors, maintenance, check) receive them, never the index.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> stores = open_stores(SQLiteDatabase(":memory:"), embedder=None)
    >>> sorted(stores.kv_stores())[:3]
    ['doc_status', 'entity_renames', 'extraction_chunks']
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Dict, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.schemas import (
    EntityRecord,
    RelationRecord,
    TextChunkSchema,
    compute_mdhash_id,
)
from lightrag.components.storage.doc_items import DocItemsStorage
from lightrag.components.storage.mapped_vector import MappedVectorStorage
from lightrag.components.storage.sql_db import SQLDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage
from lightrag.components.storage.sql_kv import SQLDocStatusStorage, SQLKVStorage
from lightrag.components.storage.sql_vector import SQLVectorStorage
from lightrag.components.storage.synonym_pairs import SynonymPairs
from lightrag.utils.registry import EntityMapping

#: the separator inside the stores' composite keys (an extraction's extractor and content, a
#: queued vector's kind and names): a control character no name or text holds
SEP = "\x1f"

ENTITY_META = ["entity_name", "entity_type", "source_id", "file_path"]
RELATION_META = ["src_id", "tgt_id", "keywords", "source_id", "file_path"]
CHUNK_META = ["full_doc_id", "file_path", "chunk_order_index"]

#: the tables that hold the stores' rows, and their primary keys (the order rows are copied in)
STORE_TABLES: Dict[str, Tuple[str, ...]] = {
    "kv": ("ns", "id"),
    "doc_status": ("ns", "id"),
    "nodes": ("ns", "id"),
    "edges": ("ns", "src", "tgt"),
    "node_chunks": ("ns", "node", "chunk"),
    "node_windows": ("ns", "id"),
    "vectors": ("ns", "id"),
    "doc_items": ("ns", "doc", "item"),
    "synonym_pairs": ("ns", "a", "b"),
}


def extraction_key(extractor_name: str, content: str) -> str:
    """Cache key of a chunk's extraction: the extractor's name and the chunk's *content*, so a
    corrected text is extracted again and identical chunks share one extraction."""
    return compute_mdhash_id(f"{extractor_name}{SEP}{content}", prefix="ext-")


_ENTITY_FIELDS = frozenset(f.name for f in fields(EntityRecord))
_RELATION_FIELDS = frozenset(f.name for f in fields(RelationRecord))
_RESULT_FIELDS = frozenset(f.name for f in fields(ExtractionResult)) - {"entities", "relations"}
_ENTITY_ORDER = tuple(f.name for f in fields(EntityRecord))
_RELATION_ORDER = tuple(f.name for f in fields(RelationRecord))
_RESULT_ORDER = tuple(f.name for f in fields(ExtractionResult))


def cached_form(extraction: ExtractionResult) -> Dict[str, Any]:
    """``extraction.to_dict()``, built field by field: the generic conversion (which copies any
    value) was a tenth of an insert's time, and a cached extraction holds only strings, numbers
    and lists of them."""
    out: Dict[str, Any] = {}
    for name in _RESULT_ORDER:
        value = getattr(extraction, name)
        if name == "entities":
            value = [{k: getattr(e, k) for k in _ENTITY_ORDER} for e in value]
        elif name == "relations":
            value = [{k: getattr(r, k) for k in _RELATION_ORDER} for r in value]
        elif isinstance(value, list):
            value = list(value)
        out[name] = value
    return out


def _relabelled(cached: Dict[str, Any], chunk_id: str, file_path: str) -> ExtractionResult:
    """A cached extraction (``ExtractionResult.to_dict()``) as an object, its records re-labelled
    with this chunk's id and file. Built field by field: ``DataClass.from_dict``'s generic
    conversion took 0.5 ms per extraction, and a delete of a document naming a hub replays
    thousands."""
    relabel = {"source_id": chunk_id, "file_path": file_path}
    entities = [EntityRecord(**{**{k: v for k, v in e.items() if k in _ENTITY_FIELDS}, **relabel})
                for e in cached.get("entities") or []]
    relations = [RelationRecord(**{**{k: v for k, v in r.items() if k in _RELATION_FIELDS}, **relabel})
                 for r in cached.get("relations") or []]
    rest = {k: v for k, v in cached.items() if k in _RESULT_FIELDS}
    return ExtractionResult(**{**rest, "chunk_id": chunk_id}, entities=entities, relations=relations)


class ExtractionCache:
    """Extraction results cached by chunk content, and which chunks use each of them (so a
    delete knows when the last user of one is gone).

    Args:
        results: the store of extractions by :func:`extraction_key`.
        users: the store of ``{key: {"chunks": [chunk ids]}}``.
        extractor_name: names the extractor in the keys (a store indexed by another extractor
            never replays its extractions).
    """

    def __init__(self, results: SQLKVStorage, users: SQLKVStorage, extractor_name: str) -> None:
        self.results = results
        self.users = users
        self.extractor_name = extractor_name

    def key(self, content: str) -> str:
        return extraction_key(self.extractor_name, content)

    def get(self, chunk_id: str, chunk: TextChunkSchema) -> Optional[ExtractionResult]:
        """The cached extraction of this chunk's content, re-labelled with this chunk's id and
        file; None when there is none."""
        return self.get_many({chunk_id: chunk}).get(chunk_id)

    def get_many(self, chunks: Dict[str, TextChunkSchema]) -> Dict[str, ExtractionResult]:
        """:meth:`get` of each chunk, read together (a delete replays thousands)."""
        keys = {cid: self.key(chunk.content) for cid, chunk in chunks.items()}
        unique = list(dict.fromkeys(keys.values()))
        found = dict(zip(unique, self.results.get_by_ids(unique)))
        out = {}
        for chunk_id, chunk in chunks.items():
            cached = found.get(keys[chunk_id])
            if cached is not None:
                out[chunk_id] = _relabelled(cached, chunk_id, chunk.file_path)
        return out

    def add(self, extractions: Sequence[ExtractionResult], chunks: Dict[str, TextChunkSchema]) -> None:
        """Cache the successful ``extractions`` of ``chunks`` and record their users."""
        cached = {self.key(chunks[e.chunk_id].content): e for e in extractions
                  if e.error is None and e.chunk_id in chunks}
        if not cached:
            return
        self.results.replace({key: cached_form(e) for key, e in cached.items()})
        by_content: Dict[str, List[str]] = {}
        for cid, chunk in chunks.items():
            by_content.setdefault(chunk.content, []).append(cid)
        users = dict(zip(cached, self.users.get_by_ids(list(cached))))
        self.users.replace({
            key: {"chunks": sorted({*((users[key] or {}).get("chunks") or []),
                                    *by_content[chunks[e.chunk_id].content]})}
            for key, e in cached.items()})

    def release(self, removed: Dict[str, Dict[str, Any]], text_chunks: SQLKVStorage) -> int:
        """Drop the extractions no stored chunk uses once the ``removed`` chunks (id -> record)
        are gone; returns how many were dropped. Stores written before the users of an
        extraction were recorded are checked against the remaining chunks' texts."""
        keys = list(dict.fromkeys(self.key(c.get("content", "")) for c in removed.values()))
        users = dict(zip(keys, self.users.get_by_ids(keys)))
        unrecorded = [k for k, row in users.items() if row is None]
        # no extraction at all (an imported graph's chunks): nothing to drop, no pass over the
        # chunks (it read all 1M texts for each imported document deleted)
        absent = self.results.filter_keys(unrecorded) if unrecorded else set()
        remaining_texts: Optional[set] = None
        drop, keep = [], {}
        for key, row in users.items():
            if key in absent:
                continue
            if row is not None:
                left = [c for c in row.get("chunks") or [] if c not in removed]
                if left:
                    keep[key] = {"chunks": left}
                else:
                    drop.append(key)
                continue
            if remaining_texts is None:
                remaining_texts = {self.key(c.get("content", ""))
                                   for cid, c in text_chunks.items() if cid not in removed}
            if key not in remaining_texts:
                drop.append(key)
        self.users.replace(keep)
        self.users.delete(drop)
        self.results.delete(drop)
        return len(drop)


@dataclass
class IndexStores:
    """Every store of one working directory (see :func:`open_stores`)."""

    db: SQLDatabase
    full_docs: SQLKVStorage
    text_chunks: SQLKVStorage
    doc_status: SQLDocStatusStorage
    doc_graph_items: DocItemsStorage
    pending_vectors: SQLKVStorage
    synonyms: SynonymPairs
    entity_renames: SQLKVStorage
    graph: SQLGraphStorage
    chunks_vdb: Any
    entities_vdb: Any
    relations_vdb: Any
    entity_names: Any
    extractions: ExtractionCache

    def kv_stores(self) -> Dict[str, SQLKVStorage]:
        """The key-value stores by namespace."""
        stores = [self.full_docs, self.text_chunks, self.doc_status, self.pending_vectors,
                  self.entity_renames, self.extractions.results,
                  self.extractions.users]
        return {s.namespace: s for s in stores}


def open_stores(
    db: SQLDatabase,
    embedder: Any,
    working_dir: str = "",
    workspace: str = "",
    vector_storage: Optional[str] = None,
    vector_storage_kwargs: Optional[Dict[str, Any]] = None,
    cosine_threshold: float = 0.2,
    embedding_batch_size: int = 64,
    extractor_name: str = "",
) -> IndexStores:
    """Open every store of a working directory on ``db`` (creating their tables).

    Args:
        db: the database (``open_database(...)``).
        embedder: embeds the queries of the vector stores.
        working_dir / workspace: where the store lives (for messages and file-based vector stores).
        vector_storage: None keeps vectors in ``db`` (memory-mapped beside an embedded database;
            on PostgreSQL searched in the server with pgvector, else loaded into memory); a
            registered class name
            (``"ChromaVectorStorage"``) puts them there instead.
        vector_storage_kwargs: more arguments of that class.
        cosine_threshold: minimum similarity of vector hits.
        embedding_batch_size: texts per embedder call.
        extractor_name: names the extractor in extraction cache keys.

    Raises:
        ValueError: ``vector_storage`` names no registered class.
    """
    where = {"workspace": workspace, "working_dir": working_dir}
    kv = {"db": db, **where}
    vec_kwargs: Dict[str, Any] = {"embedder": embedder, "cosine_threshold": cosine_threshold,
                                  "embedding_batch_size": embedding_batch_size,
                                  **(vector_storage_kwargs or {}), **where}
    local = db.local_folder is not None
    if vector_storage is None and local or vector_storage == "MappedVectorStorage":
        make: Any = MappedVectorStorage  # searched in place, opened in constant time
        vec_kwargs["db"] = db
    elif vector_storage is None or vector_storage == "SQLVectorStorage":
        make = SQLVectorStorage  # PostgreSQL: a PgVectorStorage where the server has pgvector
        vec_kwargs["db"] = db
    else:
        make = EntityMapping.get(vector_storage)
        if make is None:
            raise ValueError(f"unknown vector storage {vector_storage!r}: register it or use a "
                             "built-in one")
    full_docs = SQLKVStorage(namespace="full_docs", **kv)  # creates the kv table first
    return IndexStores(
        db=db,
        full_docs=full_docs,
        text_chunks=SQLKVStorage(namespace="text_chunks", **kv),
        doc_status=SQLDocStatusStorage(namespace="doc_status", **kv),
        doc_graph_items=_doc_items(db, SQLKVStorage(namespace="doc_graph_items", **kv)),
        pending_vectors=SQLKVStorage(namespace="pending_vectors", **kv),
        synonyms=SynonymPairs(db),  # after the kv table: an older store's pairs move from it
        entity_renames=SQLKVStorage(namespace="entity_renames", **kv),
        graph=SQLGraphStorage(namespace="chunk_entity_relation", **kv),
        chunks_vdb=make(namespace="chunks", meta_fields=CHUNK_META, **vec_kwargs),
        entities_vdb=make(namespace="entities", meta_fields=ENTITY_META, **vec_kwargs),
        relations_vdb=make(namespace="relationships", meta_fields=RELATION_META, **vec_kwargs),
        entity_names=(MappedVectorStorage if local else SQLVectorStorage)(
            db, namespace="entity_names", embedder=embedder,
            embedding_batch_size=embedding_batch_size, **where),
        extractions=ExtractionCache(SQLKVStorage(namespace="extractions", **kv),
                                    SQLKVStorage(namespace="extraction_chunks", **kv),
                                    extractor_name),
    )


def _doc_items(db: SQLDatabase, legacy: SQLKVStorage) -> DocItemsStorage:
    """The documents' graph items as rows; an older store's JSON records (``legacy``) are moved
    into them the first time it is opened."""
    items = DocItemsStorage(db)
    if not legacy.is_empty():
        items.move_from(legacy)
    return items
