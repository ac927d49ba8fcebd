"""Graph-based RAG (the LightRAG algorithm) as Components.

``GraphRAG`` owns the storages and the pipeline: ``Chunker`` -> ``EntityExtractor`` (LLM) or
``SpacyEntityExtractor`` (offline) -> ``GraphMerger`` on insert; ``KeywordExtractor`` -> one of the
seven query modes -> the answer on query: quoted from the context by the ``ExtractiveAnswerer``
(the offline default) or written by an answer Generator and checked against the context.
"""

from lightrag.components.graph_rag.chunking import Chunker
from lightrag.components.graph_rag.entity_extractor import EntityExtractor, ExtractionResult
from lightrag.components.graph_rag.extractive_answerer import (
    AnswerSentence,
    ExtractiveAnswer,
    ExtractiveAnswerer,
)
from lightrag.components.graph_rag.keyword_extractor import (
    HeuristicKeywordExtractor,
    KeywordExtractor,
    Keywords,
)
from lightrag.components.graph_rag.maintenance import DeletionResult
from lightrag.components.graph_rag.merger import GraphMerger, MergeStats
from lightrag.components.graph_rag.query_engine import QueryEngine
from lightrag.components.graph_rag.query_modes import (
    BypassMode,
    GlobalMode,
    HybridMode,
    LocalMode,
    MixMode,
    NaiveMode,
    QueryMode,
    RetrievedContext,
)
from lightrag.components.graph_rag.schemas import (
    DocProcessingStatus,
    DocStatus,
    EntityRecord,
    QueryParam,
    QueryResult,
    RelationRecord,
    TextChunkSchema,
)
from lightrag.components.graph_rag.spacy_extractor import SpacyEntityExtractor
from lightrag.components.graph_rag.system import GraphRAG, InsertResult

__all__ = [
    "AnswerSentence",
    "ExtractiveAnswer",
    "ExtractiveAnswerer",
    "BypassMode",
    "Chunker",
    "DeletionResult",
    "DocProcessingStatus",
    "DocStatus",
    "EntityExtractor",
    "EntityRecord",
    "ExtractionResult",
    "GlobalMode",
    "GraphMerger",
    "GraphRAG",
    "HeuristicKeywordExtractor",
    "HybridMode",
    "InsertResult",
    "KeywordExtractor",
    "Keywords",
    "LocalMode",
    "MergeStats",
    "MixMode",
    "NaiveMode",
    "QueryEngine",
    "QueryMode",
    "QueryParam",
    "QueryResult",
    "RelationRecord",
    "RetrievedContext",
    "SpacyEntityExtractor",
    "TextChunkSchema",
]
