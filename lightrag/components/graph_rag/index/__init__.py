"""The index: every store of one working directory, and the only code that writes them.

* :mod:`.stores` opens the stores on one database and is the one list of them and their tables;
* :mod:`.graph_index` is :class:`GraphIndex`, the owner: transactions, the writer lock, intake,
  recording a document, embedding queued vectors, deletes and edits;
* :mod:`.vectors`, :mod:`.statuses`, :mod:`.maintenance` and :mod:`.check` are its parts:
  they receive the stores (never the index) and run inside the index's transactions;
* :mod:`.view` gives everyone else read-only views (:class:`ReadOnly`, typed by Protocols);
* :mod:`.copy` copies a store between databases (SQLite to PostgreSQL and back).

Example:
    >>> index = GraphIndex(embedder, working_dir="./rag")  # doctest: +SKIP
    >>> index.enqueue(["Alice founded Acme."], ["doc-1"], ["a.txt"], "track-1")  # doctest: +SKIP
"""

from lightrag.components.graph_rag.index.graph_index import SUPERSEDED, GraphIndex, RecordResult
from lightrag.components.graph_rag.index.maintenance import DeletionResult
from lightrag.components.graph_rag.index.stores import (
    CHUNK_META,
    ENTITY_META,
    RELATION_META,
    STORE_TABLES,
    ExtractionCache,
    IndexStores,
    extraction_key,
    open_stores,
)
from lightrag.components.graph_rag.index.view import GraphReader, KVReader, ReadOnly, VectorReader

__all__ = [
    "CHUNK_META",
    "DeletionResult",
    "ENTITY_META",
    "ExtractionCache",
    "GraphIndex",
    "GraphReader",
    "IndexStores",
    "KVReader",
    "RELATION_META",
    "ReadOnly",
    "RecordResult",
    "STORE_TABLES",
    "SUPERSEDED",
    "VectorReader",
    "extraction_key",
    "open_stores",
]
