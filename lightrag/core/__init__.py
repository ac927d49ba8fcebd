"""The lightrag framework: components, data classes, prompts, generators, embedders, retrievers.

Everything here is importable as ``from lightrag.core import X`` (the lightrag 0.1 paths) and is
registered so configs can name it.
"""

from typing import Any

import lightrag.core.types as _types
from lightrag.core.base_data_class import (
    DataClass,
    DataClassFormatType,
    DynamicDataClassFactory,
    required_field,
)
from lightrag.core.component import Component, FunComponent, fun_to_component
from lightrag.core.container import Sequential
from lightrag.core.db import LocalDB
from lightrag.core.default_prompt_template import DEFAULT_LIGHTRAG_SYSTEM_PROMPT
from lightrag.core.embedder import BatchEmbedder, Embedder
from lightrag.core.func_tool import FunctionTool
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.parameter import Parameter, ParameterType
from lightrag.core.prompt_builder import Prompt
from lightrag.core.retriever import Retriever
from lightrag.core.string_parser import (
    BooleanParser,
    FloatParser,
    IntParser,
    JsonParser,
    ListParser,
    YamlParser,
)
from lightrag.core.tokenizer import Tokenizer
from lightrag.core.tool_manager import ToolManager
from lightrag.core.types import (
    AssistantResponse,
    BatchEmbedderInputType,
    BatchEmbedderOutputType,
    CompletionUsage,
    Conversation,
    DialogTurn,
    Document,
    EmbedderInputType,
    EmbedderOutput,
    EmbedderOutputType,
    Embedding,
    Function,
    FunctionDefinition,
    FunctionExpression,
    FunctionOutput,
    GeneratorOutput,
    GeneratorOutputType,
    ModelType,
    RetrieverDocumentsType,
    RetrieverDocumentType,
    RetrieverOutput,
    RetrieverOutputType,
    RetrieverQueriesType,
    RetrieverQueryType,
    RetrieverStrDocumentType,
    RetrieverStrQueriesType,
    RetrieverStrQueryType,
    StepOutput,
    TokenLogProb,
    Usage,
    UserQuery,
    get_model_args,
)
from lightrag.utils.registry import register_all

__all__ = [
    "AssistantResponse",
    "BatchEmbedderInputType",
    "BatchEmbedderOutputType",
    "EmbedderInputType",
    "EmbedderOutputType",
    "ModelClientType",
    "RetrieverDocumentType",
    "RetrieverDocumentsType",
    "RetrieverOutputType",
    "RetrieverQueriesType",
    "RetrieverQueryType",
    "RetrieverStrDocumentType",
    "RetrieverStrQueriesType",
    "RetrieverStrQueryType",
    "get_model_args",
    "BatchEmbedder",
    "BooleanParser",
    "Component",
    "CompletionUsage",
    "Conversation",
    "DEFAULT_LIGHTRAG_SYSTEM_PROMPT",
    "DataClass",
    "DataClassFormatType",
    "DialogTurn",
    "Document",
    "DynamicDataClassFactory",
    "Embedder",
    "EmbedderOutput",
    "Embedding",
    "FloatParser",
    "FunComponent",
    "Function",
    "FunctionDefinition",
    "FunctionExpression",
    "FunctionOutput",
    "FunctionTool",
    "Generator",
    "GeneratorOutput",
    "GeneratorOutputType",
    "IntParser",
    "JsonParser",
    "ListParser",
    "LocalDB",
    "ModelClient",
    "ModelType",
    "Parameter",
    "ParameterType",
    "Prompt",
    "Retriever",
    "RetrieverOutput",
    "Sequential",
    "StepOutput",
    "TokenLogProb",
    "Tokenizer",
    "ToolManager",
    "Usage",
    "UserQuery",
    "YamlParser",
    "fun_to_component",
    "required_field",
]

register_all(globals(), [n for n in __all__ if n != "ModelClientType"])


def __getattr__(name: str) -> Any:
    # ModelClientType lists the provider clients: lightrag.core.types resolves it on first use.
    if name == "ModelClientType":
        return _types.ModelClientType
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
