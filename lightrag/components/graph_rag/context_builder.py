"""``ContextBuilder``: the one place where a query's context is put under its token budget.

A query mode retrieves :class:`Candidates` (entities, relations and ranked chunks); the builder
spends the budgets on them and formats the context once. The budget comes first: the
:class:`~lightrag.components.graph_rag.query_engine.QueryEngine` measures the answer prompt
without context (template, query, history, instructions) and the model's window *before*
anything is formatted, so the context it gets is the room that is really left, and the prompt
that goes to the model fits its window without a second pass.

Budget rules (with the entity and relation budgets left unset): entity and relation lines
take at most :data:`KG_SHARE` of the chunk context (or :data:`KG_FLOOR_TOKENS`), only lines
that add to the chunks are kept (:func:`~lightrag.components.graph_rag.context.select_lines`),
and a graph mode's whole context is capped at the tokens of the chunks ``naive`` would take
for the same query. The formatted context is finally counted exactly; should it exceed the
room (the frame is estimated while spending), chunks then lines are dropped from the end.

Example:
    >>> ContextBuilder()
    ContextBuilder(kg_share=0.2, kg_floor_tokens=200)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.graph_rag.context import (
    CONTEXT_TOKEN_BUFFER,
    SearchResult,
    assign_references,
    chunk_tokens,
    fit_chunks,
    format_context,
    select_lines,
    word_trigrams,
)
from lightrag.components.graph_rag.kg_lines import entity_line, relation_line
from lightrag.components.graph_rag.schemas import QueryParam
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.tokenizer import count_tokens

CONTEXT_FRAME_TOKENS = 80  # section headers, fences and the reference list
KG_SHARE = 0.2  # share of the chunk context that entity + relation lines may take by default
KG_FLOOR_TOKENS = 200  # lines up to this many tokens are added even to a small chunk context
ENTITY_SHARE_OF_KG = 0.4
TOKEN_MARGIN = 8  # tokens a context may gain where it joins the prompt (BPE merges at the seam)


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


@dataclass
class Candidates:
    """What a mode found for one query, before the budgets (``retrieve`` of a QueryMode).

    ``entities`` and ``relations`` are the candidate lines (best first), ``chunks`` the ranked
    candidate chunks, ``reference_tokens`` the tokens of ``naive``'s chunks for this query
    (caps a graph mode's context; None: no cap). ``searched`` is False for ``bypass``.
    """

    mode: str
    found: SearchResult = field(default_factory=SearchResult)
    entities: List[Dict[str, Any]] = field(default_factory=list)
    relations: List[Dict[str, Any]] = field(default_factory=list)
    chunks: List[Dict[str, Any]] = field(default_factory=list)
    reference_tokens: Optional[int] = None
    retrieval_ms: float = 0.0
    searched: bool = True


@dataclass
class ContextBudget:
    """Tokens a context may take: ``total`` for the whole prompt (``max_total_tokens``, already
    cut to the model's window), of which ``reserved`` are used by the prompt without context."""

    total: int
    reserved: int = 0

    @property
    def room(self) -> int:
        """Tokens to spend on lines and chunks (the frame and a safety buffer set aside)."""
        return max(0, self.total - self.reserved - CONTEXT_TOKEN_BUFFER - CONTEXT_FRAME_TOKENS)

    @property
    def hard_limit(self) -> int:
        """Tokens the formatted context must not exceed."""
        return max(0, self.total - self.reserved - TOKEN_MARGIN)


class ContextBuilder(Component):
    """Spend the token budgets on a mode's candidates and format the context (see the module
    docstring).

    Args:
        kg_share: share of the chunk context entity and relation lines may take by default.
        kg_floor_tokens: lines up to this many tokens are added even to a small context.
    """

    def __init__(self, kg_share: float = KG_SHARE, kg_floor_tokens: int = KG_FLOOR_TOKENS) -> None:
        super().__init__()
        self.kg_share = kg_share
        self.kg_floor_tokens = kg_floor_tokens

    def _extra_repr(self) -> str:
        return f"kg_share={self.kg_share}, kg_floor_tokens={self.kg_floor_tokens}"

    def call(self, candidates: Candidates, param: QueryParam, budget: ContextBudget) -> RetrievedContext:
        """The context of ``candidates`` within ``budget`` and ``param``'s explicit budgets."""
        if not candidates.searched:
            return RetrievedContext(mode=candidates.mode, processing_info={"mode": candidates.mode})
        room = budget.room
        frame = fit_chunks(candidates.chunks, room, param.chunk_top_k)
        keep = min(len(frame), max(1, param.chunk_top_k // 2))  # lines never evict these
        entity_budget, relation_budget, reference = self._line_budgets(
            frame, keep, param, candidates.reference_tokens)
        in_context = set().union(*(word_trigrams(c.get("content", "")) for c in frame))
        entities, entity_lines, entity_tokens = select_lines(
            candidates.entities, entity_line, min(entity_budget, room), in_context)
        if relation_budget is None:
            relation_budget = int(self._derived(frame, keep, reference)) - entity_tokens
        relations, relation_lines, relation_tokens = select_lines(
            candidates.relations, relation_line, min(relation_budget, room - entity_tokens),
            in_context)
        kg_tokens = entity_tokens + relation_tokens
        chunks = self._fit_chunks(frame, keep, param, room, kg_tokens, reference)
        chunks, entity_lines, relation_lines, references, context = self._format(
            entity_lines, relation_lines, chunks, budget)
        info = {
            "mode": candidates.mode,
            "entities_found": len(candidates.found.entities), "entities_kept": len(entities),
            "relations_found": len(candidates.found.relations), "relations_kept": len(relations),
            "vector_chunks": len(candidates.found.vector_chunks), "chunks_kept": len(chunks),
            "context_tokens": count_tokens(context),
            "max_total_tokens": budget.total,
            "retrieval_ms": candidates.retrieval_ms,
        }
        return RetrievedContext(mode=candidates.mode, entities=entities[:len(entity_lines)],
                                relations=relations[:len(relation_lines)], chunks=chunks,
                                references=references, context=context, processing_info=info)

    # ---------------------------------------------------------------- budgets
    def _derived(self, frame: List[Dict[str, Any]], keep: int, reference: Optional[int]) -> float:
        """Tokens the lines may take by default: :attr:`kg_share` of the chunk frame (at least
        the floor), within ``naive``'s tokens when known."""
        frame_tokens = sum(chunk_tokens(c) for c in frame)
        derived = max(self.kg_share * frame_tokens, self.kg_floor_tokens)
        if reference is not None:
            derived = min(derived, reference - sum(chunk_tokens(c) for c in frame[:keep]))
        return derived

    def _line_budgets(self, frame: List[Dict[str, Any]], keep: int, param: QueryParam,
                      naive_tokens: Optional[int]) -> Tuple[int, Optional[int], Optional[int]]:
        """``(entity budget, relation budget or None: what the entities leave, reference)``;
        the reference (a graph mode's cap) applies only when both line budgets are unset."""
        reference = None
        if param.max_entity_tokens is None and param.max_relation_tokens is None and \
                naive_tokens is not None:
            # lines and chunks within naive's tokens; a context smaller than the first chunks +
            # the floor keeps those chunks and gets the floor's lines
            first = sum(chunk_tokens(c) for c in frame[:keep])
            reference = max(naive_tokens, first + self.kg_floor_tokens)
        entity_budget = (param.max_entity_tokens if param.max_entity_tokens is not None
                         else int(self._derived(frame, keep, reference) * ENTITY_SHARE_OF_KG))
        return entity_budget, param.max_relation_tokens, reference

    def _fit_chunks(self, frame: List[Dict[str, Any]], keep: int, param: QueryParam, room: int,
                    kg_tokens: int, reference: Optional[int]) -> List[Dict[str, Any]]:
        chunk_room = room - kg_tokens
        if param.max_entity_tokens is None and param.max_relation_tokens is None:
            # lines replace up to kg_share of the chunk tokens; a small chunk context keeps its
            # chunks and gets the lines (up to the floor) on top
            frame_tokens = sum(chunk_tokens(c) for c in frame)
            chunk_room = min(chunk_room, int(frame_tokens - min(kg_tokens, self.kg_share * frame_tokens)))
        if reference is not None:
            chunk_room = min(chunk_room, reference - kg_tokens)
        chunks = fit_chunks(frame, max(0, chunk_room), param.chunk_top_k)
        if len(chunks) < keep:
            chunks = fit_chunks(frame, max(0, room - kg_tokens), keep)
        return chunks

    @staticmethod
    def _format(entity_lines: List[str], relation_lines: List[str], chunks: List[Dict[str, Any]],
                budget: ContextBudget) -> Tuple[Any, ...]:
        """``(chunks, entity lines, relation lines, references, context)``: the formatted
        context, cut (chunks, then relation and entity lines, from the end) until it fits
        :attr:`ContextBudget.hard_limit`."""
        while True:
            references = assign_references(chunks)
            context = format_context(entity_lines, relation_lines, chunks, references)
            if count_tokens(context) <= budget.hard_limit or not (
                    chunks or relation_lines or entity_lines):
                return chunks, entity_lines, relation_lines, references, context
            if chunks:
                chunks = chunks[:-max(1, len(chunks) // 4)]
            elif relation_lines:
                relation_lines = relation_lines[:len(relation_lines) // 2]
            else:
                entity_lines = entity_lines[:len(entity_lines) // 2]

