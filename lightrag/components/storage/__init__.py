"""Storages of graph RAG: key-value, vector, graph and document status, behind one interface.

The stores a :class:`~lightrag.components.graph_rag.index.GraphIndex` uses live in one database
(:func:`open_database`): embedded SQLite by default, PostgreSQL for several processes or
machines: :class:`SQLKVStorage`, :class:`SQLDocStatusStorage`, :class:`SQLGraphStorage`,
:class:`SQLVectorStorage` (or :class:`ChromaVectorStorage` for the vectors).

The file stores (:class:`JsonKVStorage`, :class:`JsonDocStatusStorage`,
:class:`NetworkXGraphStorage`, :class:`NumpyVectorStorage`) are what lightrag 0.2 wrote; they
stay as standalone components (and as the in-memory bases of the SQL stores) and are read by
``lightrag migrate``.

Example:
    >>> import tempfile
    >>> from lightrag.components.storage import SQLKVStorage, open_database
    >>> kv = SQLKVStorage(open_database("sqlite", tempfile.mkdtemp()), namespace="full_docs")
    >>> kv.upsert({"doc-1": {"content": "Saturn has rings."}})
    >>> kv.get_by_id("doc-1")["content"]
    'Saturn has rings.'
"""

from typing import Any

from lightrag.components.storage.base import (
    GRAPH_FIELD_SEP,
    BaseGraphStorage,
    BaseKVStorage,
    BaseVectorStorage,
    KnowledgeGraph,
    StorageNameSpace,
)
from lightrag.components.storage.chroma_vector import ChromaVectorStorage
from lightrag.components.storage.databases import open_database
from lightrag.components.storage.doc_status import DocProcessingStatus, DocStatus
from lightrag.components.storage.doc_status_storage import DocStatusStorage
from lightrag.components.storage.json_doc_status import JsonDocStatusStorage
from lightrag.components.storage.json_kv import JsonKVStorage
from lightrag.components.storage.numpy_vector import NumpyVectorStorage
from lightrag.components.storage.pg_vector import PgVectorStorage
from lightrag.components.storage.sql_db import (
    SQLDatabase,
    SQLiteDatabase,
    StoreFullError,
    StoreLockedError,
)
from lightrag.components.storage.sql_graph import SQLGraphStorage
from lightrag.components.storage.sql_kv import SQLDocStatusStorage, SQLKVStorage
from lightrag.components.storage.sql_vector import SQLVectorStorage

__all__ = [
    "GRAPH_FIELD_SEP",
    "BaseGraphStorage",
    "BaseKVStorage",
    "BaseVectorStorage",
    "ChromaVectorStorage",
    "DocProcessingStatus",
    "DocStatus",
    "DocStatusStorage",
    "JsonDocStatusStorage",
    "JsonKVStorage",
    "KnowledgeGraph",
    "NetworkXGraphStorage",
    "NumpyVectorStorage",
    "PgVectorStorage",
    "SQLDatabase",
    "SQLDocStatusStorage",
    "SQLGraphStorage",
    "SQLKVStorage",
    "SQLVectorStorage",
    "SQLiteDatabase",
    "StorageNameSpace",
    "StoreFullError",
    "StoreLockedError",
    "open_database",
]


def __getattr__(name: str) -> Any:
    """``NetworkXGraphStorage`` is imported when first asked for: importing NetworkX takes
    ~0.2 s, which a process that opens a SQL store (every ``lightrag query``) does not need."""
    if name == "NetworkXGraphStorage":
        from lightrag.components.storage.networkx_graph import NetworkXGraphStorage

        return NetworkXGraphStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
