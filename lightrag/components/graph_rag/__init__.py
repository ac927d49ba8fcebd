"""Graph-based RAG (the LightRAG algorithm) as Components.

``GraphRAG`` runs the pipeline: ``Chunker`` -> ``EntityExtractor`` (LLM) or
``SpacyEntityExtractor`` (offline) -> ``GraphIndex.record`` (which merges with the ``GraphMerger``)
on insert; ``KeywordExtractor`` -> one of the query modes (``QUERY_MODES``) -> the answer on query:
quoted from the context by the ``ExtractiveAnswerer`` (the offline default) or written by an
answer Generator and checked against the context. The ``GraphIndex`` owns every store and is
their only writer; everything else reads them through read-only views.
"""

from lightrag.components.graph_rag.chunking import Chunker
from lightrag.components.graph_rag.entity_extractor import EntityExtractor, ExtractionResult
from lightrag.components.graph_rag.extractive_answerer import (
    AnswerSentence,
    ExtractiveAnswer,
    ExtractiveAnswerer,
)
from lightrag.components.graph_rag.index import DeletionResult, GraphIndex, RecordResult
from lightrag.components.graph_rag.insert_pipeline import DocumentPreparer, InsertPipeline
from lightrag.components.graph_rag.keyword_extractor import (
    HeuristicKeywordExtractor,
    KeywordExtractor,
    Keywords,
)
from lightrag.components.graph_rag.merger import GraphMerger, MergeStats
from lightrag.components.graph_rag.query_engine import QueryEngine
from lightrag.components.graph_rag.query_modes import (
    BypassMode,
    GlobalMode,
    HybridMode,
    LocalMode,
    MixMode,
    NaiveMode,
    PprMode,
    QueryMode,
    RetrievedContext,
)
from lightrag.components.graph_rag.schemas import (
    QUERY_MODES,
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
    "DocumentPreparer",
    "DocStatus",
    "EntityExtractor",
    "EntityRecord",
    "ExtractionResult",
    "GlobalMode",
    "GraphIndex",
    "GraphMerger",
    "GraphRAG",
    "HeuristicKeywordExtractor",
    "HybridMode",
    "InsertPipeline",
    "InsertResult",
    "KeywordExtractor",
    "Keywords",
    "LocalMode",
    "MergeStats",
    "MixMode",
    "NaiveMode",
    "PprMode",
    "QUERY_MODES",
    "QueryEngine",
    "QueryMode",
    "QueryParam",
    "QueryResult",
    "RecordResult",
    "RelationRecord",
    "RetrievedContext",
    "SpacyEntityExtractor",
    "TextChunkSchema",
]
