"""HKU LightRAG's constructor fields, read for :class:`~lightrag.components.graph_rag.hku_compat.LightRAG`.

HKU's ``LightRAG`` is a dataclass of ~60 fields; its README's programs pass a handful of them
(``llm_model_kwargs`` to reach an Ollama host, ``addon_params`` for the language and entity
types, ``enable_llm_cache=False``, the storages by name). :func:`read_hku_options` takes them out
of the keyword arguments and says what each becomes here:

* the same effect, by another name: ``llm_model_kwargs`` (keywords of every ``llm_model_func``
  call), ``default_llm_timeout`` (each call's time limit), ``addon_params`` ``language`` /
  ``entity_types`` (the extraction prompt's), ``vector_db_storage_cls_kwargs
  ["cosine_better_than_threshold"]``, ``embedding_batch_num``, ``summary_max_tokens`` /
  ``force_llm_summary_on_merge`` / ``summary_context_size`` (the merger's, which summarizes
  with ``llm_model_func`` as HKU's does), ``summary_length_recommended`` (its prompt's);
  HKU's default storage names (``JsonKVStorage``, ``NanoVectorDBStorage``,
  ``FaissVectorDBStorage``, ``NetworkXStorage``, ``JsonDocStatusStorage``) are this package's
  store, which holds all of them in one SQLite file;
* no effect on what is stored or answered, only on speed or memory: ``max_parallel_insert``,
  ``embedding_func_max_async``, ``enable_llm_cache`` (answers are not cached here: each query
  asks the model), ``enable_llm_cache_for_entity_extract=True`` (a chunk's extraction is kept by
  its text, as HKU's cache keeps it), ``embedding_cache_config`` while disabled; logged, as is
  ``tiktoken_model_name`` (chunks are counted with ``cl100k_base``);
* refused, with the reason: a field whose effect this package does not have (another storage
  backend, ``enable_llm_cache_for_entity_extract=False``, an ``addon_params`` key other than the
  two, ``addon_params`` without an ``llm_model_func``, ``rerank_model_func``: pass a
  ``reranker`` component; ``top_k`` and the token budgets: set them on ``QueryParam``), and any
  other name (``TypeError``, as HKU's dataclass raises for an unknown field).

Example:
    >>> read = read_hku_options({"enable_llm_cache": False, "embedding_batch_num": 16}, has_llm=True)
    >>> read.graph_rag_options
    {'embedding_batch_size': 16}
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List

log = logging.getLogger(__name__)

__all__ = ["HKUOptions", "read_hku_options"]

#: HKU storage names that this package's store replaces (one SQLite file holds all of them)
HKU_DEFAULT_STORAGES = {
    "kv_storage": ("JsonKVStorage",),
    "doc_status_storage": ("JsonDocStatusStorage",),
    "graph_storage": ("NetworkXStorage",),
    "vector_storage": ("NanoVectorDBStorage", "FaissVectorDBStorage"),
}
#: HKU fields that change only speed or memory here (each logged once, then ignored)
SPEED_ONLY = {
    "max_parallel_insert": "documents are inserted in batches (GraphRAG's insert_batch_size); "
                           "model calls are bounded by llm_model_max_async",
    "embedding_func_max_async": "texts are embedded in batches of embedding_batch_num, one at a time",
    "enable_llm_cache": "answers are not cached: each query asks the model",
}
MERGER_FIELDS = ("summary_max_tokens", "force_llm_summary_on_merge", "summary_context_size")
#: HKU fields refused by name, with what to do instead
UNSUPPORTED = {
    "rerank_model_func": "pass reranker=... (a Component such as HTTPReranker or "
                         "CrossEncoderReranker)",
    "tokenizer": "chunks are counted with tiktoken's cl100k_base",
    "graph_db_lock": "one process writes the store at a time (a lock file), readers never wait",
    **{name: f"set QueryParam({name}=...) on the query" for name in (
        "top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens", "max_total_tokens")},
    **{name: "configure the 'lightrag' logger with Python's logging" for name in (
        "log_level", "log_file_path")},
}
ADDON_KEYS = ("language", "entity_types")


@dataclass
class HKUOptions:
    """What HKU's fields become: :class:`GraphRAG` options, the keywords of every model call,
    the entity extractor's and the merger's settings."""

    graph_rag_options: Dict[str, Any] = field(default_factory=dict)
    llm_kwargs: Dict[str, Any] = field(default_factory=dict)
    generator_kwargs: Dict[str, Any] = field(default_factory=dict)
    extractor_kwargs: Dict[str, Any] = field(default_factory=dict)
    merger_kwargs: Dict[str, Any] = field(default_factory=dict)
    summary_prompt_kwargs: Dict[str, Any] = field(default_factory=dict)


def read_hku_options(options: Dict[str, Any], has_llm: bool) -> HKUOptions:
    """Sort the keyword arguments of ``LightRAG(...)`` (see the module doc); the names of
    :class:`GraphRAG`'s own options pass through as they are. ``has_llm``: an
    ``llm_model_func`` was given (``addon_params`` needs it)."""
    out = HKUOptions()
    for name, value in options.items():
        if not _read_mapped(out, name, value, has_llm) and not _read_checked(name, value):
            out.graph_rag_options[name] = value
    return out


def _read_mapped(out: HKUOptions, name: str, value: Any, has_llm: bool) -> bool:
    """Put a field with the same effect here where it goes; False when ``name`` is not one."""
    if name == "llm_model_kwargs":
        out.llm_kwargs = dict(_mapping(name, value))
    elif name == "addon_params":
        out.extractor_kwargs.update(_addon_params(value, has_llm))
    elif name == "vector_db_storage_cls_kwargs":
        out.graph_rag_options.update(_vector_kwargs(value))
    elif name == "embedding_batch_num":
        out.graph_rag_options["embedding_batch_size"] = value
    elif name == "default_llm_timeout":
        out.generator_kwargs["timeout"] = value
    elif name in MERGER_FIELDS:
        out.merger_kwargs[name] = value
    elif name == "summary_length_recommended":
        out.summary_prompt_kwargs["summary_length"] = value
    else:
        return False
    return True


def _read_checked(name: str, value: Any) -> bool:
    """Accept (logged) or refuse a field without an effect here; False when ``name`` is not one
    (this package's ``vector_storage`` names are GraphRAG's own)."""
    if name in HKU_DEFAULT_STORAGES and (name != "vector_storage" or _hku_vector_name(value)):
        _check_storage(name, value)
    elif name in SPEED_ONLY:
        log.info("LightRAG(%s=%r): %s", name, value, SPEED_ONLY[name])
    elif name == "tiktoken_model_name":
        log.warning("LightRAG(tiktoken_model_name=%r): chunks are counted with tiktoken's "
                    "cl100k_base here (a few percent off %r's counts)", value, value)
    elif name in UNSUPPORTED:
        raise TypeError(f"LightRAG({name}=...) is not supported: {UNSUPPORTED[name]}")
    elif name == "enable_llm_cache_for_entity_extract":
        if not value:
            raise ValueError(
                "enable_llm_cache_for_entity_extract=False is not supported: a chunk's "
                "extraction is kept by its text and reused when the same text is inserted "
                "again; give another llm_model_name to extract anew")
    elif name == "embedding_cache_config":
        if (value or {}).get("enabled"):
            raise ValueError("embedding_cache_config with enabled=True is not supported: "
                             "queries are not answered from a cache of similar questions")
    else:
        return False
    return True


def _hku_vector_name(value: Any) -> bool:
    """An HKU vector storage class name (``NanoVectorDBStorage``, ``PGVectorStorage``, ...)."""
    return isinstance(value, str) and (value.endswith("VectorDBStorage") or value == "PGVectorStorage")


def _mapping(name: str, value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict, got {type(value).__name__}")
    return value


def _addon_params(value: Any, has_llm: bool) -> Dict[str, Any]:
    params = _mapping("addon_params", value)
    unknown = sorted(set(params) - set(ADDON_KEYS))
    if unknown:
        raise ValueError(f"addon_params {unknown} are not supported; use {list(ADDON_KEYS)}")
    if params and not has_llm:
        raise ValueError("addon_params set the LLM extraction prompt's language and entity "
                         "types: pass llm_model_func (the offline extractor takes neither)")
    types = params.get("entity_types")
    if types is not None and (isinstance(types, str) or not all(isinstance(t, str) for t in types)):
        raise TypeError("addon_params['entity_types'] must be a list of names")
    return {k: (list(v) if k == "entity_types" else v) for k, v in params.items()}


def _vector_kwargs(value: Any) -> Dict[str, Any]:
    kwargs = _mapping("vector_db_storage_cls_kwargs", value)
    unknown = sorted(set(kwargs) - {"cosine_better_than_threshold"})
    if unknown:
        raise ValueError(f"vector_db_storage_cls_kwargs {unknown} are not supported; "
                         "use cosine_better_than_threshold")
    return ({"cosine_threshold": kwargs["cosine_better_than_threshold"]}
            if "cosine_better_than_threshold" in kwargs else {})


def _check_storage(name: str, value: Any) -> None:
    accepted: List[str] = list(HKU_DEFAULT_STORAGES[name])
    if value in accepted:
        log.info("LightRAG(%s=%r): this package's store (one SQLite file in working_dir) "
                 "holds it", name, value)
        return
    hint = ("for PostgreSQL pass storage='postgres' (LIGHTRAG_PG_DSN names the database)"
            if str(value).startswith("PG") else "other backends are not available")
    raise ValueError(f"{name}={value!r} is not supported: documents, graph and vectors live in "
                     f"this package's store ({', '.join(accepted)} are accepted as it); {hint}")
