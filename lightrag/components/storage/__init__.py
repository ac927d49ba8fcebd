"""Storages of graph RAG: key-value, vector, graph and document status, with embedded defaults
(JSON files, a NumPy matrix, a NetworkX graph) that write atomically.

Example:
    >>> import tempfile
    >>> from lightrag.components.storage import JsonKVStorage
    >>> kv = JsonKVStorage(namespace="full_docs", working_dir=tempfile.mkdtemp())
    >>> kv.upsert({"doc-1": {"content": "Saturn has rings."}})
    >>> kv.index_done_callback()  # writes kv_store_full_docs.json atomically
"""

from lightrag.components.storage.base import (
    BaseGraphStorage,
    BaseKVStorage,
    BaseVectorStorage,
    DocStatusStorage,
    KnowledgeGraph,
    StorageNameSpace,
)
from lightrag.components.storage.chroma_vector import ChromaVectorStorage
from lightrag.components.storage.json_doc_status import JsonDocStatusStorage
from lightrag.components.storage.json_kv import JsonKVStorage
from lightrag.components.storage.networkx_graph import NetworkXGraphStorage
from lightrag.components.storage.numpy_vector import NumpyVectorStorage

__all__ = [
    "BaseGraphStorage",
    "BaseKVStorage",
    "BaseVectorStorage",
    "ChromaVectorStorage",
    "DocStatusStorage",
    "JsonDocStatusStorage",
    "JsonKVStorage",
    "KnowledgeGraph",
    "NetworkXGraphStorage",
    "NumpyVectorStorage",
    "StorageNameSpace",
]
