"""lightrag: a PyTorch-style library to build and optimize LLM applications.

Import what you need from the subpackages, as in lightrag 0.1::

    from lightrag.core import Component, Generator, DataClass
    from lightrag.components.model_client import OpenAIClient, GroqAPIClient

A program written for HKU LightRAG imports its entry point from the top, as there::

    from lightrag import LightRAG, QueryParam, EmbeddingFunc

(loaded on first use: ``import lightrag`` stays light).
"""

import importlib
import logging
from typing import Any

__version__ = "0.2.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

#: HKU LightRAG's top-level names and where they live here
_HKU_NAMES = {
    "LightRAG": "lightrag.components.graph_rag.hku_compat",
    "EmbeddingFunc": "lightrag.components.graph_rag.hku_utils",
    "QueryParam": "lightrag.components.graph_rag.schemas",
}


def __getattr__(name: str) -> Any:
    module = _HKU_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'lightrag' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
