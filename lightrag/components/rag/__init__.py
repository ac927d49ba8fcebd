"""Retrieval-augmented generation pipelines (the classic one; graph RAG lives in graph_rag)."""

from lightrag.components.rag.simple_rag import DEFAULT_RAG_TEMPLATE, RAGOutput, SimpleRAG

__all__ = ["DEFAULT_RAG_TEMPLATE", "RAGOutput", "SimpleRAG"]
