"""Utilities: registry, config, serialization, file I/O, logging, lazy imports, .env loading.

HKU LightRAG programs import ``EmbeddingFunc``, ``wrap_embedding_func_with_attrs`` and
``setup_logger`` from here (loaded on first use), and ``logger``: 0.1's ``lightrag.utils.logger``
module, which also logs like a logger (``logger.info(...)``).
"""

import importlib
from typing import Any

from lightrag.utils.config import build, load_config, new_component, new_components_from_config
from lightrag.utils.file_io import (
    append_to_jsonl,
    load,
    load_json,
    load_jsonl,
    load_pickle,
    save,
    save_json,
    save_jsonl,
    save_pickle,
    write_list_to_jsonl,
)
from lightrag.utils.lazy_import import LazyImport, OptionalPackages, safe_import
from lightrag.utils.logger import get_logger, printc
from lightrag.utils.registry import EntityMapping, register
from lightrag.utils.serialization import default, deserialize, serialize
from lightrag.utils.setup_env import setup_env

__all__ = [
    "EntityMapping",
    "append_to_jsonl",
    "load",
    "save",
    "write_list_to_jsonl",
    "LazyImport",
    "OptionalPackages",
    "build",
    "default",
    "deserialize",
    "get_logger",
    "load_config",
    "load_json",
    "load_jsonl",
    "load_pickle",
    "new_component",
    "new_components_from_config",
    "printc",
    "register",
    "safe_import",
    "save_json",
    "save_jsonl",
    "save_pickle",
    "serialize",
    "setup_env",
]

_HKU_NAMES = ("EmbeddingFunc", "wrap_embedding_func_with_attrs", "setup_logger")


def __getattr__(name: str) -> Any:
    if name not in _HKU_NAMES:
        raise AttributeError(f"module 'lightrag.utils' has no attribute {name!r}")
    return getattr(importlib.import_module("lightrag.components.graph_rag.hku_utils"), name)
