"""Data models of graph RAG: chunks, entities, relations, document status, query parameters and
results. Every model is a :class:`DataClass`, so it serialises to JSON/YAML and back.

Field names follow the LightRAG data model (``TextChunkSchema``, ``DocProcessingStatus``,
``QueryParam``, ``QueryResult``), so data written by one reads naturally in the other.

Example:
    >>> param = QueryParam(mode="local", top_k=10)
    >>> QueryParam.from_dict(param.to_dict()) == param
    True
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncIterator,
    Dict,
    Iterator,
    List,
    Literal,
    Optional,
    Set,
    Tuple,
    Union,
    get_args,
)

from lightrag.components.storage.base import GRAPH_FIELD_SEP  # noqa: F401 (re-exported)
from lightrag.components.storage.doc_status import (  # noqa: F401 (re-exported)
    DocProcessingStatus,
    DocStatus,
    now_iso,
)
from lightrag.core.base_data_class import DataClass

#: the name of a query mode (the Component of each is in ``query_modes.MODE_CLASSES``)
QueryModeName = Literal["naive", "local", "global", "hybrid", "mix", "ppr", "bypass"]
#: every query mode, in the order they are documented: the one list the CLI, the server and
#: the query engine use
QUERY_MODES: Tuple[str, ...] = get_args(QueryModeName)


def _d(text: str) -> Dict[str, str]:
    return {"desc": text}


def compute_mdhash_id(content: str, prefix: str = "") -> str:
    """``prefix`` + the MD5 hex digest of ``content`` (stable ids for docs, entities, relations)."""
    return prefix + hashlib.md5(content.encode("utf-8")).hexdigest()


def normalize_entity_name(name: str) -> str:
    """The key under which entities merge: whitespace collapsed, outer quotes stripped, and case
    folded to title case when the name is all lower case, or all upper case and longer than an
    acronym (``"ELECTRONS"`` and ``"electrons"`` both become ``"Electrons"``; ``"NASA"`` and
    ``"iPhone"`` stay as they are)."""
    cleaned = " ".join(str(name).split()).strip().strip("\"'“”‘’《》").strip()
    if cleaned.islower() or (cleaned.isupper() and len(cleaned.replace(" ", "")) > 5):
        cleaned = cleaned.title()
    return cleaned


def relation_key(src: str, tgt: str) -> tuple[str, str]:
    """Relations are undirected: the key is the sorted pair of entity names."""
    return (src, tgt) if src <= tgt else (tgt, src)


@dataclass
class TextChunkSchema(DataClass):
    """One chunk of a document, as stored in the ``text_chunks`` KV store."""

    tokens: int = field(default=0, metadata=_d("Number of tokens in the chunk"))
    content: str = field(default="", metadata=_d("The chunk text"))
    full_doc_id: str = field(default="", metadata=_d("Id of the document it comes from"))
    chunk_order_index: int = field(default=0, metadata=_d("Position of the chunk in its document"))
    file_path: str = field(default="unknown_source", metadata=_d("Source file of the document"))
    llm_cache_list: List[str] = field(
        default_factory=list, metadata=_d("Cache keys of the LLM calls made for this chunk")
    )


@dataclass
class EntityRecord(DataClass):
    """An entity extracted from one chunk, or merged in the graph."""

    entity_name: str = field(default="", metadata=_d("Normalised name, the node id"))
    entity_type: str = field(default="unknown", metadata=_d("Entity type, lower case"))
    description: str = field(default="", metadata=_d("What the text says about the entity"))
    source_id: str = field(default="", metadata=_d("Chunk ids joined with <SEP>"))
    file_path: str = field(default="unknown_source", metadata=_d("Files joined with <SEP>"))
    created_at: str = field(default="", metadata=_d("ISO time of creation"))


@dataclass
class RelationRecord(DataClass):
    """An undirected relation between two entities."""

    src_id: str = field(default="", metadata=_d("One entity name"))
    tgt_id: str = field(default="", metadata=_d("The other entity name"))
    description: str = field(default="", metadata=_d("What the text says about the relation"))
    keywords: str = field(default="", metadata=_d("Comma-separated high-level keywords"))
    weight: float = field(default=1.0, metadata=_d("Strength: number of supporting records"))
    source_id: str = field(default="", metadata=_d("Chunk ids joined with <SEP>"))
    file_path: str = field(default="unknown_source", metadata=_d("Files joined with <SEP>"))
    created_at: str = field(default="", metadata=_d("ISO time of creation"))


_INT_RANGES = {  # field -> smallest allowed value (None values mean "derive a default")
    "top_k": 1, "chunk_top_k": 1, "related_chunk_number": 1,
    "max_entity_tokens": 0, "max_relation_tokens": 0, "max_total_tokens": 1,
}
_OPTIONAL_INTS = ("max_entity_tokens", "max_relation_tokens", "max_total_tokens")
_BOOLS = ("only_need_context", "only_need_prompt", "stream", "enable_rerank", "include_references",
          "drop_unsupported")
_CHOICES = {"chunk_pick_method": ("VECTOR", "WEIGHT"),
            "chunk_merge_method": ("RELEVANCE", "ROUND_ROBIN")}
MAX_KEYWORDS = 64  # per list (hl_keywords, ll_keywords): each keyword is a graph/vector look-up
#: characters of a question the server takes (a question, not a document: a 990k-character one
#: took 89 s of CPU and 2.7 GB in keyword extraction before it was answered "no context")
MAX_QUERY_CHARS = 20_000
MAX_KEYWORD_CHARS = 200


@dataclass
class QueryParam(DataClass):
    """How to answer a query: the mode, the retrieval sizes and the token budgets.

    Every field is checked when the object is made (also from a dict or YAML): a wrong type
    raises ``TypeError`` and a value out of range ``ValueError``, both naming the field. Token
    budgets left ``None`` are derived from the answer model's context window at query time
    (see :func:`lightrag.components.graph_rag.budgets.resolve_budgets`).

    Example:
        >>> QueryParam(mode="ppr", top_k=5).chunk_top_k
        20
        >>> QueryParam(top_k=0)
        Traceback (most recent call last):
        ...
        ValueError: QueryParam.top_k must be at least 1, got 0
    """

    mode: QueryModeName = field(default="mix", metadata=_d("naive|local|global|hybrid|mix|ppr|bypass"))
    only_need_context: bool = field(default=False, metadata=_d("Return the context, no answer"))
    only_need_prompt: bool = field(default=False, metadata=_d("Return the prompt, no answer"))
    response_type: str = field(default="Multiple Paragraphs", metadata=_d("Answer format"))
    stream: bool = field(default=False, metadata=_d("Stream the answer"))
    top_k: int = field(default=40, metadata=_d("Entities (local) / relations (global) to fetch"))
    chunk_top_k: int = field(default=20, metadata=_d("Chunks to fetch and keep"))
    max_entity_tokens: Optional[int] = field(
        default=None, metadata=_d("Token budget for entity lines (None: a share of the total)"))
    max_relation_tokens: Optional[int] = field(
        default=None, metadata=_d("Token budget for relation lines (None: a share of the total)"))
    max_total_tokens: Optional[int] = field(
        default=None,
        metadata=_d("Token budget for the whole prompt (None: from the answer model's context "
                    "window); always cut to fit that window"))
    hl_keywords: List[str] = field(default_factory=list, metadata=_d("High-level keywords"))
    ll_keywords: List[str] = field(default_factory=list, metadata=_d("Low-level keywords"))
    conversation_history: List[Dict[str, str]] = field(
        default_factory=list, metadata=_d("Earlier turns as {role, content}; answer LLM only")
    )
    user_prompt: Optional[str] = field(default=None, metadata=_d("Extra answer instructions"))
    enable_rerank: bool = field(default=True, metadata=_d("Rerank chunks when a reranker exists"))
    chunk_pick_method: Literal["VECTOR", "WEIGHT"] = field(
        default="VECTOR", metadata=_d("How graph chunks are picked")
    )
    related_chunk_number: int = field(default=5, metadata=_d("Chunks per entity or relation"))
    chunk_merge_method: Literal["RELEVANCE", "ROUND_ROBIN"] = field(
        default="RELEVANCE",
        metadata=_d("Vector and graph chunks ranked together by query similarity plus graph "
                    "support, or interleaved as in HKU LightRAG"),
    )
    include_references: bool = field(default=True, metadata=_d("Return the reference list"))
    drop_unsupported: bool = field(
        default=False,
        metadata=_d("Drop generated answer sentences the context does not support (they are "
                    "listed in processing_info['unsupported_sentences'] either way)"))

    def __setattr__(self, name: str, value: Any) -> None:
        explicit = self.__dict__.get("_explicit")
        if explicit is not None and name in _FIELD_NAMES and name not in explicit:
            # a new set, not the shared one: a copy (copy.copy shares __dict__'s values) keeps
            # its own record
            object.__setattr__(self, "_explicit", explicit | {name})
        object.__setattr__(self, name, value)

    def with_changes(self, **changes: Any) -> QueryParam:
        """A copy with ``changes`` applied, the fields its caller set still marked as set (and
        the changed ones added). ``dataclasses.replace`` passes every field to the constructor,
        so its result counts every field as set."""
        import copy

        changed = copy.copy(self)
        for name, value in changes.items():
            if name not in _FIELD_NAMES:
                raise TypeError(f"QueryParam has no field {name!r}")
            setattr(changed, name, value)
        changed.__post_init__()
        return changed

    def explicit_fields(self) -> Optional[Set[str]]:
        """The fields the caller set (passed to the constructor, or assigned after): those win
        over a system's ``query_defaults`` even when equal to the class default, so
        ``QueryParam(mode="mix")`` asks for mix where the config's default mode is ppr. A copy
        keeps its own record; :meth:`with_changes` adds the changed fields, while
        ``dataclasses.replace`` and ``from_dict`` (which pass every field) set them all. None for
        an object made without the constructor (then the fields that differ from the defaults
        count)."""
        explicit = self.__dict__.get("_explicit")
        return None if explicit is None else set(explicit)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.mode, str) or self.mode not in QUERY_MODES:
            raise ValueError(f"QueryParam.mode: unknown query mode {self.mode!r}; use one of "
                             f"{', '.join(QUERY_MODES)}")
        self._check_flags_and_numbers()
        self._check_texts()

    def _check_flags_and_numbers(self) -> None:
        for name in _BOOLS:
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"QueryParam.{name} must be true or false, got {getattr(self, name)!r}")
        for name, lowest in _INT_RANGES.items():
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_INTS:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"QueryParam.{name} must be an integer, got {value!r} "
                                f"({type(value).__name__})")
            if value < lowest:
                raise ValueError(f"QueryParam.{name} must be at least {lowest}, got {value}")
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"QueryParam.{name} is {getattr(self, name)!r}; "
                                 f"use one of {', '.join(allowed)}")

    def _check_texts(self) -> None:
        if not isinstance(self.response_type, str):
            raise TypeError(f"QueryParam.response_type must be a string, got {self.response_type!r}")
        if self.user_prompt is not None and not isinstance(self.user_prompt, str):
            raise TypeError(f"QueryParam.user_prompt must be a string or None, got {self.user_prompt!r}")
        for name in ("hl_keywords", "ll_keywords"):
            value = getattr(self, name)
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                shown = f"{len(value)} items" if isinstance(value, (list, tuple)) else repr(value)[:100]
                raise TypeError(f"QueryParam.{name} must be a list of strings, got {shown}")
            if len(value) > MAX_KEYWORDS:
                raise ValueError(f"QueryParam.{name} has {len(value)} keywords; at most "
                                 f"{MAX_KEYWORDS} are allowed")
            longest = max(map(len, value), default=0)
            if longest > MAX_KEYWORD_CHARS:
                raise ValueError(f"QueryParam.{name} has a keyword of {longest} characters; at most "
                                 f"{MAX_KEYWORD_CHARS} are allowed")
        history = self.conversation_history
        if not isinstance(history, (list, tuple)) or not all(
                isinstance(t, dict) and isinstance(t.get("content", ""), str) for t in history):
            raise TypeError("QueryParam.conversation_history must be a list of "
                            f"{{'role': ..., 'content': str}} objects, got {history!r}")


_FIELD_NAMES = {f.name for f in dataclasses.fields(QueryParam)}
_generated_init = QueryParam.__init__


@functools.wraps(_generated_init)
def _init_recording_explicit(self: QueryParam, *args: Any, **kwargs: Any) -> None:
    object.__setattr__(self, "_explicit", None)
    _generated_init(self, *args, **kwargs)
    names = [f.name for f in dataclasses.fields(QueryParam) if f.init]
    object.__setattr__(self, "_explicit", set(names[:len(args)]) | (set(kwargs) & _FIELD_NAMES))


QueryParam.__init__ = _init_recording_explicit  # type: ignore[method-assign]


@dataclass
class QueryResult(DataClass):
    """The answer (text or a stream) and the structured data it was built from."""

    content: Optional[str] = field(default=None, metadata=_d("The answer, context or prompt"))
    response_iterator: Optional[Union[Iterator[str], AsyncIterator[str]]] = field(
        default=None, metadata=_d("The streamed answer")
    )
    raw_data: Dict[str, Any] = field(
        default_factory=dict,
        metadata=_d("entities, relationships, chunks, references, keywords, processing_info"),
    )
    is_streaming: bool = field(default=False, metadata=_d("True when response_iterator is set"))

    @property
    def references(self) -> List[Dict[str, Any]]:
        return list(self.raw_data.get("references", []))
