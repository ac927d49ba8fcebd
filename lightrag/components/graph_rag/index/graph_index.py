"""``GraphIndex``: the one owner, and the only writer, of a graph-RAG working directory's stores.

It holds the documents, chunks, document status, extraction cache, graph, the three vector
stores and the pending-vector queue, all in one database (embedded SQLite by default), and
changes them only through a small API:

* :meth:`enqueue` stores documents as PENDING (durable when it returns);
* :meth:`record` writes one document's chunks, chunk vectors, extractions, merged graph items and
  its final status in **one transaction**: after a crash the document is either fully there or
  not at all (and still PENDING, so the next insert redoes it);
* :meth:`index_pending` embeds the entities and relations touched since the last call, once
  each however many documents touched them (the queue of what to embed is itself a store, so a
  crash loses none of it);
* :meth:`delete_document`, :meth:`edit_entity`, :meth:`merge_entities`, :meth:`delete_entity`
  are transactions too.

Writes are serialised by one writer lock: in-process (every coroutine and thread of this
process) and across processes (the database's writer lock, waited for up to ``lock_timeout``).
:meth:`record`, :meth:`record_many` and :meth:`index_pending`'s writes run in a worker thread
holding the lock and the whole transaction (one thread's), off the caller's event loop; a
cancelled caller waits for that transaction to end.
Readers never wait: :attr:`view` is the typed read view the query modes use, and
:meth:`refresh` applies what other processes committed since the last look.

Example:
    >>> index = GraphIndex(embedder, GraphMerger(), working_dir="./rag")  # doctest: +SKIP
    >>> index.enqueue(["Alice founded Acme."], ["doc-1"], ["a.txt"], "track-1")  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

import lightrag.components.graph_rag.index.bulk as bulk
import lightrag.components.graph_rag.index.custom_kg as custom_kg
import lightrag.components.graph_rag.index.intake as intake
import lightrag.components.graph_rag.index.maintenance as maintenance
import lightrag.components.graph_rag.index.recording as recording
import lightrag.components.graph_rag.index.relation_edits as relation_edits
import lightrag.components.graph_rag.index.statuses as statuses
from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.embedding import embed_texts
from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.index.check import verify_index
from lightrag.components.graph_rag.index.recording import RecordResult
from lightrag.components.graph_rag.index.stores import open_stores
from lightrag.components.graph_rag.index.vectors import (
    queue_vectors,
    stored_synonym_pairs,
    upgrade_relation_ids,
)
from lightrag.components.graph_rag.index.view import ReadOnly
from lightrag.components.graph_rag.insert_result import SUPERSEDED
from lightrag.components.graph_rag.merger import GraphMerger
from lightrag.components.graph_rag.schemas import DocStatus, TextChunkSchema
from lightrag.components.storage.databases import open_database
from lightrag.components.storage.sql_db import SQLDatabase
from lightrag.core.component import Component
from lightrag.utils.lazy_list import LazyList
from lightrag.utils.secrets import check_not_redacted, redact_text
from lightrag.utils.writer_lock import WriterLock

log = logging.getLogger(__name__)


class GraphIndex(Component):
    """Every store of one working directory, and the rules for changing them.

    Args:
        embedder: embeds chunks, entities, relations (and queries, through ``chunks_vdb``).
        merger: merges extractions into the graph.
        working_dir / workspace: where the database lives (``working_dir/workspace/lightrag.sqlite3``).
        storage: ``"sqlite"`` (embedded, the default) or ``"postgres"`` (a shared PostgreSQL
            server; see :func:`~lightrag.components.storage.open_database`).
        storage_kwargs: arguments of that database (e.g. ``{"dsn_env": "LIGHTRAG_PG_DSN"}``).
        database: an open :class:`SQLDatabase` to use instead.
        vector_storage: ``None`` keeps vectors in the database (searched in memory); a registered
            class name (``"ChromaVectorStorage"``) puts them there instead.
        vector_storage_kwargs: more arguments of that class.
        cosine_threshold: minimum similarity of vector hits.
        embedding_batch_size: texts per embedder call (sorted by length first).
        lock_timeout: seconds to wait for another process's writer lock.
        extractor_name: names the extractor in extraction cache keys (its class name), so a
            store indexed by another extractor never replays its extractions.
        synonym_threshold: cosine of two entity *names* above which they are synonyms (edges of
            the ``ppr`` mode: "U.S." and "United States").
    """

    _to_dict_exclude = ("db", "stores", "readers", "_writer", "_synonym_cache", "_ids_current")

    def __init__(
        self,
        embedder: Any,
        merger: Optional[GraphMerger] = None,
        working_dir: str = "./lightrag_storage",
        workspace: str = "",
        storage: str = "sqlite",
        storage_kwargs: Optional[Dict[str, Any]] = None,
        database: Optional[SQLDatabase] = None,
        vector_storage: Optional[str] = None,
        vector_storage_kwargs: Optional[Dict[str, Any]] = None,
        cosine_threshold: float = 0.2,
        embedding_batch_size: int = 64,
        lock_timeout: float = 120.0,
        extractor_name: str = "",
        synonym_threshold: float = 0.9,
    ) -> None:
        super().__init__()
        self.extractor_name = extractor_name
        self.working_dir = str(working_dir)
        self.workspace = workspace
        self.merger = merger or GraphMerger()
        self.synonym_threshold = synonym_threshold
        self.embedding_batch_size = embedding_batch_size
        # how to open the store again when rebuilt from to_dict (storage None: a database given)
        self.storage = None if database is not None else storage
        self.storage_kwargs = dict(storage_kwargs or {})
        self.vector_storage, self.vector_storage_kwargs = vector_storage, dict(vector_storage_kwargs or {})
        self.cosine_threshold, self.lock_timeout = cosine_threshold, lock_timeout
        self._open(embedder, database)

    def _open(self, embedder: Any, database: Optional[SQLDatabase] = None) -> None:
        if database is None:
            database = open_database(self.storage, self.working_dir, self.workspace,
                                     self.lock_timeout, **self.storage_kwargs)
        stores = open_stores(database, embedder, working_dir=self.working_dir,
                             workspace=self.workspace, vector_storage=self.vector_storage,
                             vector_storage_kwargs=self.vector_storage_kwargs,
                             cosine_threshold=self.cosine_threshold,
                             embedding_batch_size=self.embedding_batch_size,
                             extractor_name=self.extractor_name)
        for name, value in (("db", database), ("stores", stores), ("_embedder", embedder),
                            ("_writer", WriterLock()), ("_synonym_cache", None),
                            ("_ids_current", False)):
            object.__setattr__(self, name, value)
        for name in ("full_docs", "text_chunks", "doc_status", "graph", "chunks_vdb", "entities_vdb",
                     "relations_vdb", "entity_names"):
            setattr(self, name, getattr(stores, name))  # registered children: the printed tree
        object.__setattr__(self, "readers", {
            name: ReadOnly(getattr(stores, name))
            for name in ("full_docs", "text_chunks", "doc_status", "graph", "chunks_vdb",
                         "entities_vdb", "relations_vdb", "doc_graph_items", "pending_vectors")})

    def _after_from_dict(self) -> None:
        """Open the store the saved index was on again (its embedder is saved with it); the
        secrets of ``storage_kwargs`` are not saved: give them through the environment."""
        if self.__dict__.get("storage") is None:
            raise ValueError("this GraphIndex was built on a database passed as `database`, "
                             "which is not saved: build it again with GraphIndex(...)")
        check_not_redacted(self.storage_kwargs, "storage_kwargs", owner="index")
        check_not_redacted(self.vector_storage_kwargs, "vector_storage_kwargs", owner="index")
        self._open(self._embedder)

    def _extra_repr(self) -> str:
        where = f"{self.working_dir}/{self.workspace}" if self.workspace else self.working_dir
        return f"working_dir={where!r}"

    # ------------------------------------------------------------------ reads
    @property
    def view(self) -> GraphStores:
        """The read view of the query modes (refreshed with other processes' commits first)."""
        self.refresh()
        r = self.readers
        return GraphStores(graph=r["graph"], entities_vdb=r["entities_vdb"],
                           relations_vdb=r["relations_vdb"], chunks_vdb=r["chunks_vdb"],
                           text_chunks=r["text_chunks"], synonym_pairs=self.synonym_pairs())

    def refresh(self) -> bool:
        """Apply the commits of other processes to the in-memory graph and vectors."""
        return self.db.refresh()

    def status(self) -> Dict[str, Any]:
        """Counts of documents by status, chunks, entities, relations and pending vectors."""
        self.refresh()
        return {
            "documents": self.doc_status.get_status_counts(),
            "chunks": len(self.text_chunks),
            "entities": self.graph.node_count(),
            "relations": self.graph.edge_count(),
            "pending_vectors": len(self.stores.pending_vectors),
            "working_dir": self.working_dir,
            "workspace": self.workspace,
        }

    def verify(self) -> List[str]:
        """Check the store's invariants; returns the problems found (empty: consistent).

        Every PROCESSED document has its text, chunks, chunk vectors and graph items; every chunk
        belongs to a known document and every chunk vector to a chunk; every entity and relation
        cites only stored chunks and has a vector or is queued for one; every entity or relation
        vector belongs to a graph item (:func:`~lightrag.components.graph_rag.index.check.
        verify_index`). ``lightrag check`` runs it.
        """
        self.refresh()
        with self.db.snapshot():  # one committed state, while a writer commits beside the check
            return verify_index(self.stores)

    def cached_extraction(self, chunk_id: str, chunk: TextChunkSchema) -> Optional[ExtractionResult]:
        """The cached extraction of this chunk's content (re-labelled with this chunk's id and
        file), or None."""
        return self.stores.extractions.get(chunk_id, chunk)

    # ----------------------------------------------------------------- locking
    @asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Hold the writer lock and one transaction (commit on success, roll back on error)."""
        await self._writer.acquire()
        try:
            with self._transaction():
                yield
        finally:
            self._writer.release()

    @contextmanager
    def writing_sync(self) -> Iterator[None]:
        """:meth:`writing` for synchronous callers."""
        self._writer.acquire_sync()
        try:
            with self._transaction():
                yield
        finally:
            self._writer.release()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self.db.transaction():
            self._upgrade_store()
            yield

    def _upgrade_store(self) -> None:
        """Bring a store written by an older version up to date, in the first write transaction
        of this process (opening stays read-only)."""
        if not self._ids_current:
            upgrade_relation_ids(self.stores, self.working_dir)
            self._ids_current = True

    # ------------------------------------------------------------------ intake
    def enqueue(self, texts: Sequence[str], doc_ids: Sequence[str], paths: Sequence[str],
                track_id: str) -> Tuple[List[str], List[str]]:
        """Store documents as PENDING in one transaction; returns ``(queued, skipped)``.

        A PROCESSED document with the same id and the same text is skipped; one with another text
        is replaced (its old data is deleted by the next insert before the new text is indexed).
        """
        with self.writing_sync():
            return intake.enqueue(self.stores, texts, doc_ids, paths, track_id)

    async def aenqueue(self, texts: Sequence[str], doc_ids: Sequence[str], paths: Sequence[str],
                       track_id: str) -> Tuple[List[str], List[str]]:
        """:meth:`enqueue` for coroutines: waits for the writer lock without blocking the loop."""
        async with self.writing():
            return intake.enqueue(self.stores, texts, doc_ids, paths, track_id)

    def read_documents(self, doc_ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        """The stored ``{"content", "file_path"}`` of each document (None where missing)."""
        return self.full_docs.get_by_ids(list(doc_ids))

    def pending_vector_count(self) -> int:
        """Entities and relations queued for (re-)embedding."""
        return len(self.stores.pending_vectors)

    async def fail_document(self, doc_id: str, message: str,
                            content_hash: Optional[str] = None) -> RecordResult:
        """Mark a document FAILED with ``message`` (secrets redacted), unless it was deleted or
        (given ``content_hash``) re-sent with another text meanwhile: then nothing is written and
        the result is ``superseded`` (the newer request owns the document)."""
        message = redact_text(message)
        updated = await self.aset_statuses(
            {doc_id: {"status": DocStatus.FAILED, "error_msg": message}},
            None if content_hash is None else {doc_id: content_hash})
        if not updated:
            log.info("%s was deleted or re-sent while it was processed: left to the newer "
                     "request", doc_id)
            return RecordResult(doc_id=doc_id, status=SUPERSEDED)
        return RecordResult(doc_id=doc_id, status=DocStatus.FAILED.value, error=message)

    def unfinished_document_ids(self) -> List[str]:
        """PENDING, PROCESSING and FAILED documents, oldest first: what the next insert does."""
        self.refresh()
        found = self.doc_status.get_by_statuses(
            [DocStatus.PENDING, DocStatus.PROCESSING, DocStatus.FAILED])
        return sorted(found, key=lambda d: (found[d].created_at or "", d))

    def set_status(self, doc_id: str, **changes: Any) -> None:
        """Update fields of a document's status record (its own small transaction)."""
        with self.writing_sync():
            statuses.set_status(self.stores, doc_id, **changes)

    async def aset_status(self, doc_id: str, **changes: Any) -> None:
        """Async :meth:`set_status` (waits for the writer lock without blocking the loop)."""
        await self.aset_statuses({doc_id: changes})

    async def aset_statuses(self, changes: Dict[str, Dict[str, Any]],
                            content_hashes: Optional[Dict[str, str]] = None) -> List[str]:
        """Update several documents' status records in one transaction; returns the ids updated.

        A document deleted meanwhile is left alone (a status is never re-created without its
        text), and so is one whose text no longer hashes to ``content_hashes[doc_id]`` (it was
        re-sent with another text: its status belongs to the newer version).
        """
        async with self.writing():
            return [doc_id for doc_id, fields in changes.items()
                    if statuses.still_current(self.stores, doc_id, (content_hashes or {}).get(doc_id))
                    and statuses.set_status(self.stores, doc_id, **fields)]

    # ----------------------------------------------------------------- record
    async def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (:func:`~lightrag.components.graph_rag.embedding.
        embed_texts`: each distinct text once, in batches of similar length)."""
        return await embed_texts(self._embedder, texts, self.embedding_batch_size)

    async def record(self, doc_id: str, chunks: Dict[str, TextChunkSchema],
                     chunk_vectors: Optional[np.ndarray], extractions: Sequence[Any],
                     content_hash: Optional[str] = None, *, part: int = 0, final: bool = True,
                     all_chunks: Optional[Sequence[str]] = None) -> RecordResult:
        """Write one document and its final status in one transaction.

        A large document is written in parts (``part`` 0, 1, ...), one transaction each:
        ``final=False`` writes a part and leaves the document PROCESSING (remembering its
        failed chunks for the next part); the last part
        (``final=True``, ``all_chunks``: every part's chunk ids) sets the status. A crash
        between parts leaves a store that opens, with the document PROCESSING: inserting it
        again finishes it (merging is idempotent per chunk).

        Nothing is written, and the result's status is ``superseded``, when the document was
        deleted while it was being processed, or (given ``content_hash``) re-sent with another
        text: that text is indexed by the insert that sent it (last write wins), never mixed
        with this one's chunks.

        Args:
            doc_id: the document (enqueued before).
            chunks: its chunks by id; ``chunk_vectors`` their vectors, in the same order.
            extractions: one :class:`ExtractionResult` per chunk (failed ones carry ``error``).
            content_hash: ``compute_mdhash_id`` of the text these chunks were cut from.
        """
        return await recording.record_document(self, doc_id, chunks, chunk_vectors, extractions,
                                               content_hash, part, final, all_chunks)

    async def record_many(self, documents: Sequence[recording.WholeDocument],
                          max_seconds: float = float("inf")) -> List[RecordResult]:
        """Write whole documents in order, each as :meth:`record` does, in one transaction (a
        node cited by several is written once, and so are the pages they share), taking
        documents until ``max_seconds`` have passed; returns the results of those written (at
        least one). An error rolls back all of them (the insert pipeline then records them one
        by one).

        Args:
            documents: objects with ``doc_id``, ``content_hash``, ``chunks``, ``vectors`` and
                ``extractions`` (:class:`~lightrag.components.graph_rag.index.recording.
                WholeDocument`, e.g. the insert pipeline's prepared documents).
            max_seconds: how long to keep adding documents to the transaction.
        """
        return await recording.record_documents(self, documents, max_seconds)

    async def index_pending(self, limit: int = 50_000) -> int:
        """Embed the queued entities and relations (current text, once each); returns how many.

        Texts are read and embedded outside the writer lock; a vector is written only if its
        item's text is still the embedded one (else the item stays queued for the next call).
        """
        return await recording.embed_pending(self, limit)

    def bulk_load(self, chunks: Dict[str, Dict[str, Any]], entities: Dict[str, Dict[str, Any]],
                  relations: Dict[Tuple[str, str], Dict[str, Any]],
                  chunk_vectors: Optional[np.ndarray] = None,
                  entity_vectors: Optional[np.ndarray] = None,
                  relation_vectors: Optional[np.ndarray] = None,
                  name_vectors: Optional[np.ndarray] = None) -> None:
        """Write pre-built chunks, entities and relations (and their vectors) in one
        transaction, without extraction: for benchmarks that build a store of a given shape.
        Vectors are rows aligned with the dicts' order; an entity or relation given no vectors
        is queued for :meth:`index_pending`. The chunks' documents are not registered (no text,
        status or extraction cache: :meth:`verify` lists the chunks as orphans and a delete
        cannot rebuild what they support); a graph that must stay maintainable is imported with
        :meth:`insert_custom_kg` instead.

        Args:
            chunks: ``chunk_id -> TextChunkSchema fields`` (``content``, ``full_doc_id``, ...).
            entities: ``name -> node fields`` (``entity_type``, ``description``,
                ``source_id``, ``file_path``); the ``source_id`` chunk ids are added to those
                already citing the entity (so batch after batch extends a hub).
            relations: ``(src, tgt) -> edge fields`` (``weight``, ``description``,
                ``keywords``, ``source_id``, ``file_path``); both ends must be in the graph
                or in ``entities``.
            name_vectors: rows aligned with ``entities``: the vectors of the names alone (what
                an insert indexes for each new entity: its synonym search and the name parts
                of relation vectors read them); names already indexed are kept. Without them
                the names are not indexed (an insert then embeds them again).

        Raises:
            ValueError: vectors not matching the items, or a relation with an unknown end.
        """
        bulk.check_shapes(chunks, entities, relations, chunk_vectors, entity_vectors,
                          relation_vectors, name_vectors)
        with self.writing_sync():
            bulk.bulk_load(self.stores, chunks, entities, relations, chunk_vectors,
                           entity_vectors, relation_vectors, name_vectors)

    def synonym_pairs(self) -> Sequence[Tuple[str, str, float]]:
        """Near-duplicate entity names ``(a, b, similarity)`` found at index time (both still in
        the graph), for the ``ppr`` mode's synonym edges; the same list object until the graph
        or the names change (queries cache structures built from it)."""
        key = (self.entity_names.version, self.graph.version)
        if self._synonym_cache is None or self._synonym_cache[0] != key:
            self._synonym_cache = (key, LazyList(lambda: stored_synonym_pairs(self.stores)))
        return self._synonym_cache[1]

    # ------------------------------------------------------------ maintenance
    async def delete_document(self, doc_id: str) -> maintenance.DeletionResult:
        """Remove a document, its chunks and what only it supported; rebuild shared entities and
        relations from the cached extractions of their other chunks (one transaction)."""
        self.refresh()
        status = self.doc_status.get_by_id(doc_id)
        if status is None and self.full_docs.get_by_id(doc_id) is None:
            raise KeyError(f"no document with id {doc_id!r}")
        async with self.writing():
            status = self.doc_status.get_by_id(doc_id) or {}
            chunk_ids = list(status.get("chunks_list") or [])
            chunk_ids += (status.get("metadata") or {}).get("replaces_chunks") or []
            result = await self._delete_document_data(doc_id, chunk_ids)
            self.full_docs.delete([doc_id])
            self.doc_status.delete([doc_id])
        log.info("deleted %s: %d entities removed, %d rebuilt", doc_id,
                 len(result.entities_deleted), len(result.entities_rebuilt))
        return result

    async def _delete_document_data(self, doc_id: str,
                                    chunk_ids: Sequence[str]) -> maintenance.DeletionResult:
        return await maintenance.remove_document_data(self.stores, self.merger, doc_id, chunk_ids)

    def delete_entity(self, name: str) -> None:
        """Remove an entity, its relations and their vectors."""
        with self.writing_sync():
            maintenance.delete_entity(self.stores, name)

    def edit_entity(self, name: str, updates: Dict[str, Any],
                    rename_to: Optional[str] = None) -> Dict[str, Any]:
        """Change an entity's fields and optionally rename it (relations follow)."""
        with self.writing_sync():
            return maintenance.edit_entity(self.stores, name, updates, rename_to)

    def merge_entities(self, sources: Sequence[str], target: str) -> Dict[str, Any]:
        """Merge ``sources`` into ``target``: descriptions, chunks and relations joined."""
        with self.writing_sync():
            return maintenance.merge_entities(self.stores, sources, target)

    async def insert_custom_kg(self, kg: Any, doc_id: Optional[str] = None) -> custom_kg.CustomKGResult:
        """Import a knowledge graph built elsewhere as one document, in one transaction, and
        embed its vectors (:func:`~.custom_kg.ainsert_custom_kg`; ``kg``: a dict, JSON text or
        file, or CSV files)."""
        return await custom_kg.ainsert_custom_kg(self, kg, doc_id)

    def create_relation(self, src: str, tgt: str,
                        fields: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Add a relation between two existing entities (it belongs to no document)."""
        with self.writing_sync():
            return relation_edits.create_relation(self.stores, src, tgt, fields)

    def edit_relation(self, src: str, tgt: str, updates: Dict[str, Any]) -> Dict[str, Any]:
        """Change a relation's description, keywords, weight or file_path (re-embedded)."""
        with self.writing_sync():
            return relation_edits.edit_relation(self.stores, src, tgt, updates)

    def delete_relation(self, src: str, tgt: str) -> None:
        """Remove a relation and its vector; its entities stay."""
        with self.writing_sync():
            relation_edits.delete_relation(self.stores, src, tgt)

    def queue_vectors(self, entities: Sequence[str] = (), relations: Sequence[Tuple[str, str]] = ()) -> None:
        """Queue entities and relations for (re-)embedding by :meth:`index_pending`."""
        queue_vectors(self.stores, entities, relations)

    def export(self, path: str, format: Optional[str] = None) -> List[Path]:
        """Write the graph as ``graphml``, ``json`` or ``csv`` (default: from the file
        extension; a path without one gets GraphML, another extension is an error rather than
        GraphML in a ``.md`` file); returns the files written."""
        self.refresh()
        if format is None:
            suffix = Path(path).suffix.lower().lstrip(".")
            if suffix and suffix not in ("graphml", "json", "csv"):
                raise ValueError(f"cannot export to {path!r}: the extension .{suffix} is not a "
                                 "format; use .graphml, .json or .csv, or pass format=")
            format = suffix or "graphml"
        return self.graph.export(path, format=format)

    def close(self) -> None:
        """Close the store; an index build running beside this writer is waited for and
        committed first (see ``MappedVectorStorage.finish_index_build``)."""
        for store in (self.chunks_vdb, self.entities_vdb, self.relations_vdb,
                      self.stores.entity_names):
            finish = getattr(store, "finish_index_build", None)
            if finish is not None:
                finish()
        self.db.close()
