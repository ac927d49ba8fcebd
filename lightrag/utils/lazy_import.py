"""Optional dependencies, imported only when used, with an error that says what to install.

Example:
    >>> from lightrag.utils.lazy_import import safe_import, OptionalPackages
    >>> openai = safe_import(*OptionalPackages.OPENAI.value)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from enum import Enum
from types import ModuleType
from typing import Any


class OptionalPackages(Enum):
    """``(import name, install hint)`` for each optional extra."""

    OPENAI = ("openai", "OpenAI support needs the `openai` extra: pip install -e '.[openai]'")
    GROQ = ("groq", "Groq support needs the `groq` extra: pip install -e '.[groq]'")
    FAISS = ("faiss", "FAISS needs the `faiss` extra: pip install -e '.[faiss]'")
    BM25S = ("bm25s", "bm25s needs the `local` extra: pip install -e '.[local]'")
    TORCH = ("torch", "Local models need the `local` extra: pip install -e '.[local]'")
    SENTENCE_TRANSFORMERS = (
        "sentence_transformers",
        "Local embeddings need the `local` extra: pip install -e '.[local]'",
    )
    LLAMA_CPP = ("llama_cpp", "The local LLM needs the `local` extra: pip install -e '.[local]'")
    SPACY = ("spacy", "spaCy extraction needs the `spacy` extra: pip install -e '.[spacy]'")
    CHROMADB = ("chromadb", "ChromaDB needs the `chroma` extra: pip install -e '.[chroma]'")
    RAY = ("ray", "Distributed ingestion needs the `ray` extra: pip install -e '.[ray]'")
    FASTAPI = ("fastapi", "The server needs the `server` extra: pip install -e '.[server]'")
    ANTHROPIC = (
        "anthropic", "Anthropic support needs the `anthropic` extra: pip install -e '.[anthropic]'"
    )
    GOOGLE_GENERATIVEAI = (
        "google.generativeai",
        "Google GenAI support needs the `google` extra: pip install -e '.[google]'",
    )
    COHERE = ("cohere", "Cohere support needs the `cohere` extra: pip install -e '.[cohere]'")
    OLLAMA = ("ollama", "Ollama support needs the `ollama` extra: pip install -e '.[ollama]'")
    TRANSFORMERS = (
        "transformers",
        "transformers models need the `transformers` extra: pip install -e '.[transformers]'",
    )
    PSYCOPG = (
        "psycopg", "PostgreSQL needs the `postgres` extra: pip install -e '.[postgres]'"
    )
    SQLALCHEMY = (
        "sqlalchemy", "SQLAlchemy needs the `postgres` extra: pip install -e '.[postgres]'"
    )
    PGVECTOR = (
        "pgvector", "pgvector needs the `postgres` extra: pip install -e '.[postgres]'"
    )

    @property
    def package_name(self) -> str:
        """The import name (0.1's attribute)."""
        return self.value[0]

    @property
    def error_message(self) -> str:
        """The install hint (0.1's attribute)."""
        return self.value[1]


def safe_import(module_name: str, install_message: str) -> ModuleType:
    """Import ``module_name`` or raise ``ImportError(install_message)``."""
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        raise ImportError(f"{install_message} (could not import {module_name!r}: {e})") from e


class LazyImport:
    """A proxy for a class in an optional module, imported on first use.

    ``LazyImport("lightrag.components.model_client.openai_client.OpenAIClient",
    OptionalPackages.OPENAI)`` behaves like the class once touched. Subclassing the proxy is an
    error: import the class from its module instead.
    """

    def __init__(
        self, import_path: str, optional_package: OptionalPackages, *args: Any, **kwargs: Any
    ) -> None:
        if args or kwargs:
            raise TypeError(
                "LazyImport takes only an import path and an OptionalPackages member; to "
                f"subclass or configure {import_path.rpartition('.')[2]}, import it from "
                f"{import_path.rpartition('.')[0]}"
            )
        self.import_path = import_path
        self.optional_package = optional_package
        self._target: Any = None

    def load(self) -> Any:
        if self._target is None:
            safe_import(*self.optional_package.value)
            module_name, _, attr = self.import_path.rpartition(".")
            self._target = getattr(importlib.import_module(module_name), attr)
        return self._target

    load_class = load

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.load(), name)

    def __mro_entries__(self, bases: tuple) -> tuple:
        raise TypeError(
            f"Cannot subclass the lazy proxy for {self.import_path}; "
            f"import it directly: from {self.import_path.rpartition('.')[0]} import "
            f"{self.import_path.rpartition('.')[2]}"
        )
