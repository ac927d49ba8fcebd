"""Storages of graph RAG: key-value, vector, graph and document status, with embedded defaults
(JSON files, a NumPy matrix, a NetworkX graph) that write atomically."""

from lightrag.components.storage.base import (
    BaseGraphStorage,
    BaseKVStorage,
    BaseVectorStorage,
    DocStatusStorage,
    StorageNameSpace,
)
from lightrag.components.storage.json_doc_status import JsonDocStatusStorage
from lightrag.components.storage.json_kv import JsonKVStorage
from lightrag.components.storage.networkx_graph import KnowledgeGraph, NetworkXGraphStorage
from lightrag.components.storage.numpy_vector import NumpyVectorStorage

__all__ = [
    "BaseGraphStorage",
    "BaseKVStorage",
    "BaseVectorStorage",
    "DocStatusStorage",
    "JsonDocStatusStorage",
    "JsonKVStorage",
    "KnowledgeGraph",
    "NetworkXGraphStorage",
    "NumpyVectorStorage",
    "StorageNameSpace",
]
