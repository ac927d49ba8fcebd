"""The six query modes as Components: ``naive``, ``local``, ``global``, ``hybrid``, ``mix``,
``bypass``.

Each mode only decides *what to search* (``search``); building the context under the token
budgets is shared (:meth:`QueryMode.call`). The GraphRAG system extracts keywords, embeds the
query and the keywords in one batch, calls the mode, and hands the context to the answer
Generator.

Example:
    >>> LocalMode()
    LocalMode(uses=ll_keywords)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from lightrag.components.graph_rag.context import (
    CONTEXT_TOKEN_BUFFER,
    GraphStores,
    SearchResult,
    assign_references,
    chunk_tokens,
    fit_chunks,
    format_context,
    gather_chunks,
    merge_searches,
    search_chunks,
    search_entities,
    search_relations,
    truncate_by_tokens,
)
from lightrag.components.graph_rag.kg_lines import entity_line, relation_line
from lightrag.components.graph_rag.schemas import QueryParam
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component

CONTEXT_FRAME_TOKENS = 80  # section headers, fences and the reference list

QUERY_VECTOR = "query"
LL_VECTOR = "ll_keywords"
HL_VECTOR = "hl_keywords"


@dataclass
class RetrievedContext(DataClass):
    """What a mode retrieved, after the token budgets, and the context text built from it."""

    mode: str = field(default="", metadata={"desc": "Query mode"})
    entities: List[Dict[str, Any]] = field(default_factory=list, metadata={"desc": "Entities"})
    relations: List[Dict[str, Any]] = field(default_factory=list, metadata={"desc": "Relations"})
    chunks: List[Dict[str, Any]] = field(default_factory=list, metadata={"desc": "Chunks"})
    references: List[Dict[str, str]] = field(default_factory=list, metadata={"desc": "Sources"})
    context: str = field(default="", metadata={"desc": "The context text"})
    processing_info: Dict[str, Any] = field(default_factory=dict, metadata={"desc": "Counts"})


class QueryMode(Component):
    """Base of the query modes: subclasses implement :meth:`search` and name the vectors used."""

    mode: str = ""
    vectors_needed: tuple = ()

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        raise NotImplementedError

    def call(
        self,
        stores: GraphStores,
        vectors: Dict[str, np.ndarray],
        param: QueryParam,
        reserved_tokens: int = 0,
        reranker: Optional[Component] = None,
        query: str = "",
    ) -> RetrievedContext:
        """Search, apply the token budgets, gather and fit chunks, format the context.

        Args:
            reserved_tokens: tokens already used by the prompt template and the query.
            reranker: a Component ``(query, texts) -> scores`` used when ``param.enable_rerank``.
        """
        started = time.perf_counter()
        found = self.search(stores, vectors, param)
        entities, entity_lines, entity_tokens = truncate_by_tokens(
            found.entities, entity_line, param.max_entity_tokens)
        relations, relation_lines, relation_tokens = truncate_by_tokens(
            found.relations, relation_line, param.max_relation_tokens)
        chunks = gather_chunks(stores, entities, relations, found.vector_chunks, param,
                               vectors.get(QUERY_VECTOR))
        if reranker is not None and param.enable_rerank and chunks:
            scores = reranker(query, [c["content"] for c in chunks])
            for chunk, score in zip(chunks, scores):
                chunk["rerank_score"] = float(score)
            chunks.sort(key=lambda c: -c["rerank_score"])
        kg_tokens = entity_tokens + relation_tokens
        budget = param.max_total_tokens - reserved_tokens - kg_tokens - CONTEXT_TOKEN_BUFFER
        chunks = fit_chunks(chunks, max(0, budget), param.chunk_top_k)
        references = assign_references(chunks)
        context = format_context(entity_lines, relation_lines, chunks, references)
        info = {
            "mode": self.mode,
            "entities_found": len(found.entities), "entities_kept": len(entities),
            "relations_found": len(found.relations), "relations_kept": len(relations),
            "vector_chunks": len(found.vector_chunks), "chunks_kept": len(chunks),
            "context_tokens": kg_tokens + sum(chunk_tokens(c) for c in chunks) + CONTEXT_FRAME_TOKENS,
            "retrieval_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        return RetrievedContext(mode=self.mode, entities=entities, relations=relations,
                                chunks=chunks, references=references, context=context,
                                processing_info=info)

    def _extra_repr(self) -> str:
        return f"uses={', '.join(self.vectors_needed) or 'nothing'}"


class NaiveMode(QueryMode):
    """Chunks most similar to the query; no graph."""

    mode = "naive"
    vectors_needed = (QUERY_VECTOR,)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        return SearchResult(vector_chunks=search_chunks(stores, vectors[QUERY_VECTOR], param.chunk_top_k))


class LocalMode(QueryMode):
    """Low-level keywords -> entities -> their 1-hop relations -> their chunks."""

    mode = "local"
    vectors_needed = (LL_VECTOR,)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        if LL_VECTOR not in vectors:
            return SearchResult()
        return search_entities(stores, vectors[LL_VECTOR], param.top_k)


class GlobalMode(QueryMode):
    """High-level keywords -> relations -> their endpoint entities -> their chunks."""

    mode = "global"
    vectors_needed = (HL_VECTOR,)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        if HL_VECTOR not in vectors:
            return SearchResult()
        return search_relations(stores, vectors[HL_VECTOR], param.top_k)


class HybridMode(QueryMode):
    """Local and global, interleaved."""

    mode = "hybrid"
    vectors_needed = (LL_VECTOR, HL_VECTOR)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        local = search_entities(stores, vectors[LL_VECTOR], param.top_k) if LL_VECTOR in vectors else SearchResult()
        global_ = search_relations(stores, vectors[HL_VECTOR], param.top_k) if HL_VECTOR in vectors else SearchResult()
        return merge_searches(local, global_)


class MixMode(HybridMode):
    """Hybrid plus the query's vector chunks (reranked when a reranker is configured)."""

    mode = "mix"
    vectors_needed = (QUERY_VECTOR, LL_VECTOR, HL_VECTOR)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        merged = super().search(stores, vectors, param)
        merged.vector_chunks = search_chunks(stores, vectors[QUERY_VECTOR], param.chunk_top_k)
        return merged


class BypassMode(QueryMode):
    """No retrieval: the question goes to the LLM alone."""

    mode = "bypass"
    vectors_needed = ()

    def call(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam,
             reserved_tokens: int = 0, reranker: Optional[Component] = None,
             query: str = "") -> RetrievedContext:
        return RetrievedContext(mode=self.mode, processing_info={"mode": self.mode})


MODE_CLASSES = {cls.mode: cls for cls in (NaiveMode, LocalMode, GlobalMode, HybridMode, MixMode, BypassMode)}
