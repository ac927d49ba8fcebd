"""``QueryEngine``: keywords -> one batched embedding -> a query mode -> the answer.

Token budgets left unset in the :class:`QueryParam` are derived from the answer model's
context window (:mod:`lightrag.components.graph_rag.budgets`), and the answer prompt without
context (template, query, history, instructions) is measured *before* retrieval: the
:class:`~lightrag.components.graph_rag.context_builder.ContextBuilder` gets exactly the room
left, so a prompt that would overflow the window is never built, let alone sent. An answer is
never silently empty: an empty reply comes back as ``content`` saying so, and a failed model
call as a ``content`` naming the error, with ``raw_data["error"]`` and
``processing_info["answer_failed"]`` set.

Holds the mode Components, the keyword extractor, the answer Generator, an optional
reranker, the context builder and the ``ppr``/``mix`` scorer's :class:`PprSettings`. The
conversation history goes to the answer model only (never into retrieval), and the user's extra
instructions (``user_prompt``) are added to the answer prompt.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from typing import Any, Dict, List, Optional

import numpy as np

from lightrag.components.graph_rag.budgets import answer_reserve, model_window, resolve_budgets
from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.context_builder import ContextBudget, ContextBuilder
from lightrag.components.graph_rag.extractive_answerer import ExtractiveAnswerer
from lightrag.components.graph_rag.grounding import check_answer
from lightrag.components.graph_rag.kg_lines import public_fields
from lightrag.components.graph_rag.ppr import PprSettings
from lightrag.components.graph_rag.prompts import (
    GRAPH_ANSWER_PROMPT,
    NAIVE_ANSWER_PROMPT,
    NO_CONTEXT_RESPONSE,
    fill_generator_prompt,
    render_prompt,
)
from lightrag.components.graph_rag.query_modes import (
    HL_VECTOR,
    LL_VECTOR,
    MODE_CLASSES,
    QUERY_VECTOR,
    SEED_VECTORS,
    QueryMode,
    RetrievedContext,
)
from lightrag.components.graph_rag.schemas import QUERY_MODES, QueryParam, QueryResult
from lightrag.components.graph_rag.usage import model_name
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.generator_stream import DeferredStream
from lightrag.core.tokenizer import count_tokens

log = logging.getLogger(__name__)

#: characters of a generated answer kept (a model's answer is a few thousand; an endpoint that
#: streams megabytes is cut, not passed on to every client)
MAX_ANSWER_CHARS = 200_000

_SYS_TAGS = re.compile(r"</?SYS>")


def history_to_text(history: List[Dict[str, str]]) -> str:
    return "\n".join(f"{turn.get('role', 'user')}: {turn.get('content', '')}" for turn in history)


class QueryEngine(Component):
    """Answer queries over the graph stores in any of the :data:`QUERY_MODES`.

    ``history_as_messages`` (False): send ``QueryParam.conversation_history`` to the answer
    model as earlier chat turns (HKU's ``history_messages``) instead of an "Earlier
    conversation" block of the system prompt.
    """

    def __init__(
        self,
        keyword_extractor: Component,
        answer_generator: Generator,
        reranker: Optional[Component] = None,
        ppr_settings: Optional[PprSettings] = None,
    ) -> None:
        super().__init__()
        self.keyword_extractor = keyword_extractor
        for name, cls in MODE_CLASSES.items():
            mode = cls(ppr_settings) if ppr_settings is not None and name in ("ppr", "mix") else cls()
            self.register_component(f"{name}_mode", mode)
        self.answer_generator = answer_generator
        self.reranker = reranker
        self.context_builder = ContextBuilder()
        self.history_as_messages = False

    def mode(self, name: str) -> QueryMode:
        if name not in QUERY_MODES:
            raise ValueError(f"unknown query mode {name!r}; use one of {', '.join(QUERY_MODES)}")
        return self.get_subcomponent(f"{name}_mode")  # type: ignore[return-value]

    # ------------------------------------------------------------------ prompt
    def _system_prompt(self, retrieved: RetrievedContext, param: QueryParam) -> str:
        template = NAIVE_ANSWER_PROMPT if retrieved.mode == "naive" else GRAPH_ANSWER_PROMPT
        rendered = render_prompt(
            template, context_data=retrieved.context, response_type=param.response_type,
            user_prompt=param.user_prompt,
            history_str=self._history_text(param),
        )
        return _SYS_TAGS.sub("", rendered).strip()

    def _prompt_kwargs(self, query: str, retrieved: RetrievedContext, param: QueryParam) -> Dict[str, Any]:
        if retrieved.mode == "bypass":
            history = self._history_text(param)
            system = "You are a helpful assistant."
            if param.user_prompt:
                system += f"\n{param.user_prompt}"
            if history:
                system += f"\n\nEarlier conversation:\n{history}"
            return fill_generator_prompt(self.answer_generator, system, query)
        return fill_generator_prompt(self.answer_generator, self._system_prompt(retrieved, param), query)

    def _history_text(self, param: QueryParam) -> Optional[str]:
        """The conversation as the system prompt's text; None when there is none or when it
        goes as chat turns (:meth:`_conversation`)."""
        if self.history_as_messages:
            return None
        return history_to_text(param.conversation_history) or None

    def _conversation(self, param: QueryParam) -> Optional[List[Dict[str, str]]]:
        """The conversation as the answer call's earlier chat turns, when sent that way."""
        if self.history_as_messages and param.conversation_history:
            return list(param.conversation_history)
        return None

    # ------------------------------------------------------------------- query
    async def _vectors(self, needed: tuple, query: str, keywords: Any,
                       stores: GraphStores) -> Dict[str, np.ndarray]:
        texts: Dict[str, str] = {}
        if QUERY_VECTOR in needed:
            texts[QUERY_VECTOR] = query
        if LL_VECTOR in needed and keywords is not None and keywords.low_level:
            texts[LL_VECTOR] = ", ".join(keywords.low_level)
        if HL_VECTOR in needed and keywords is not None and keywords.high_level:
            texts[HL_VECTOR] = ", ".join(keywords.high_level)
        seeds = list(keywords.low_level) if SEED_VECTORS in needed and keywords is not None else []
        if not texts and not seeds:
            return {}
        matrix = np.asarray(await stores.chunks_vdb.aembed([*texts.values(), *seeds]), dtype=np.float32)
        vectors: Dict[str, np.ndarray] = dict(zip(texts, matrix[:len(texts)]))
        if seeds:
            vectors[SEED_VECTORS] = matrix[len(texts):]
        return vectors

    def _reserved_tokens(self, query: str, param: QueryParam, extractive: bool, limit: int) -> int:
        """Tokens of the answer prompt without context (what the context must leave room
        for); ``ValueError`` when that alone exceeds ``limit`` (the query or the history)."""
        empty = RetrievedContext(mode=param.mode)
        system = count_tokens(self._system_prompt(empty, param))
        if extractive:  # no prompt is sent: the same room as a generated answer would get
            return count_tokens(query) + system
        used = count_tokens(self.answer_generator.get_prompt(**self._prompt_kwargs(query, empty, param)))
        if self.history_as_messages:
            used += count_tokens(history_to_text(param.conversation_history))
        if used > limit:
            raise ValueError(
                f"the prompt needs {used} tokens without any context, more than the "
                f"{limit} the answer model's window leaves; shorten the query, the "
                "conversation_history or user_prompt, or use a model with a larger window")
        return max(used, count_tokens(query) + system)

    async def acall(self, query: str, param: QueryParam, stores: GraphStores,
                    sync_stream: bool = False) -> QueryResult:
        """Answer ``query``; with ``param.stream`` the answer is an async iterator, or a plain
        iterator when ``sync_stream`` (for callers outside an event loop)."""
        started = time.perf_counter()
        mode = self.mode(param.mode)
        extractive = isinstance(self.answer_generator, ExtractiveAnswerer)
        window, _ = model_window(self.answer_generator)
        limit = max(1, window - answer_reserve(self.answer_generator, window))
        param = resolve_budgets(param, window, window - limit)
        keywords = await self._keywords(query, param, mode)
        vectors = await self._vectors(self._needed(mode, param, extractive), query, keywords, stores)
        if keywords is not None and not param.ll_keywords and keywords.low_level:
            param = dataclasses.replace(param, ll_keywords=list(keywords.low_level))  # the ones used
        budget = ContextBudget(total=min(param.max_total_tokens or limit, limit),
                               reserved=self._reserved_tokens(query, param, extractive, limit))
        candidates = mode.retrieve(stores, vectors, param, budget.room, self.reranker, query)
        retrieved = self.context_builder(candidates, param, budget)
        raw_data = self._raw_data(retrieved, keywords, param)
        if param.only_need_context:
            return QueryResult(content=retrieved.context, raw_data=raw_data)
        if param.mode != "bypass" and not (retrieved.entities or retrieved.relations
                                           or retrieved.chunks):
            raw_data["processing_info"]["no_context"] = True
            return QueryResult(content=NO_CONTEXT_RESPONSE, raw_data=raw_data)
        if extractive:
            return await self._quote(query, retrieved, stores, vectors, param, raw_data, started,
                                     sync_stream)
        return await self._generate(query, retrieved, param, raw_data, started, sync_stream)

    async def _keywords(self, query: str, param: QueryParam, mode: QueryMode) -> Any:
        """The query's keywords, when the mode searches with them (else None)."""
        if not {LL_VECTOR, HL_VECTOR, SEED_VECTORS} & set(mode.vectors_needed):
            return None
        return await self.keyword_extractor.acall(
            query, hl_keywords=param.hl_keywords or None, ll_keywords=param.ll_keywords or None)

    @staticmethod
    def _needed(mode: QueryMode, param: QueryParam, extractive: bool) -> tuple:
        """The vectors to embed: the mode's, and the query's where chunks are ranked by it."""
        by_query = (param.chunk_pick_method == "VECTOR" or param.chunk_merge_method == "RELEVANCE"
                    or extractive)
        if by_query and param.mode != "bypass":
            return tuple(dict.fromkeys((*mode.vectors_needed, QUERY_VECTOR)))
        return mode.vectors_needed

    @staticmethod
    def _raw_data(retrieved: RetrievedContext, keywords: Any, param: QueryParam) -> Dict[str, Any]:
        return {
            "entities": [{k: v for k, v in public_fields(e).items() if k != "score"}
                         for e in retrieved.entities],
            "relationships": [public_fields(r) for r in retrieved.relations],
            "chunks": retrieved.chunks,
            "references": retrieved.references if param.include_references else [],
            "keywords": {"high_level": list(keywords.high_level) if keywords else [],
                         "low_level": list(keywords.low_level) if keywords else []},
            "processing_info": dict(retrieved.processing_info),
        }

    async def _generate(self, query: str, retrieved: RetrievedContext, param: QueryParam,
                        raw_data: Dict[str, Any], started: float, sync_stream: bool) -> QueryResult:
        """The answer of a Generator: the prompt, a stream, or a checked reply."""
        prompt_kwargs = self._prompt_kwargs(query, retrieved, param)
        prompt = self.answer_generator.get_prompt(**prompt_kwargs)
        conversation = self._conversation(param)
        turns = {"conversation": conversation} if conversation else {}
        raw_data["processing_info"]["prompt_tokens"] = count_tokens(prompt) + (
            count_tokens(history_to_text(conversation)) if conversation else 0)
        if param.only_need_prompt:
            return QueryResult(content=prompt, raw_data=raw_data)
        if param.stream:
            # a sync caller reads the stream after the query's event loop ended: its request
            # is sent then, in the caller's thread, where Ctrl-C can stop the wait
            stream: Any = (DeferredStream(lambda: self.answer_generator.stream(prompt_kwargs, **turns))
                           if sync_stream else self.answer_generator.astream(prompt_kwargs, **turns))
            return QueryResult(response_iterator=stream, raw_data=raw_data, is_streaming=True)
        answer = await self.answer_generator.acall(prompt_kwargs, **turns)
        raw_data["processing_info"]["total_ms"] = round((time.perf_counter() - started) * 1000, 3)
        if answer.usage is not None:
            raw_data["processing_info"]["usage"] = {model_name(self.answer_generator): {
                "prompt_tokens": int(answer.usage.prompt_tokens or 0),
                "completion_tokens": int(answer.usage.completion_tokens or 0), "calls": 1}}
        if answer.error is not None:
            raw_data["error"] = answer.error
            log.warning("the answer model failed: %s", answer.error)
            # answer_failed marks a failed call (the HTTP server answers 502 on it)
            raw_data["processing_info"]["answer_failed"] = True
            return QueryResult(content=f"No answer: the answer model failed ({answer.error}).",
                               raw_data=raw_data)
        text = "" if answer.data is None else str(answer.data)
        if len(text) > MAX_ANSWER_CHARS:  # a broken or hostile endpoint, not an answer
            log.warning("the answer model returned %d characters; keeping the first %d",
                        len(text), MAX_ANSWER_CHARS)
            raw_data["processing_info"]["answer_cut_from_chars"] = len(text)
            text = text[:MAX_ANSWER_CHARS]
        if param.mode != "bypass" and text.strip():
            text = self._check(text, retrieved, param, raw_data["processing_info"])
        if not text.strip():  # a failed answer too: the CLI exits 1, the server answers 502
            raw_data["error"] = "the answer model returned an empty reply"
            raw_data["processing_info"]["answer_failed"] = True
            return QueryResult(content="No answer: the answer model returned an empty reply.",
                               raw_data=raw_data)
        return QueryResult(content=text, raw_data=raw_data)

    @staticmethod
    def _check(text: str, retrieved: RetrievedContext, param: QueryParam,
               info: Dict[str, Any]) -> str:
        """The generated answer cleaned of prompt markup, its citations validated and each
        sentence scored for support by the context (:mod:`~.grounding`)."""
        context = [str(c.get("content", "")) for c in retrieved.chunks]
        context += [str(item.get("description", "")) for item in
                    (*retrieved.entities, *retrieved.relations)]
        context += [str(e.get("entity_name", "")) for e in retrieved.entities]
        checked = check_answer(text, context, {r["reference_id"] for r in retrieved.references},
                               drop_unsupported=param.drop_unsupported)
        info.update(answer_support=checked.support, unsupported_sentences=checked.unsupported)
        if checked.invalid_citations:
            info["invalid_citations"] = checked.invalid_citations
        return checked.text

    async def _quote(self, query: str, retrieved: RetrievedContext, stores: GraphStores,
                     vectors: Dict[str, np.ndarray], param: QueryParam, raw_data: Dict[str, Any],
                     started: float, sync_stream: bool) -> QueryResult:
        """The answer of an :class:`ExtractiveAnswerer`: sentences quoted from the context."""
        if param.mode == "bypass":
            raw_data["processing_info"]["no_context"] = True
            return QueryResult(content="The extractive answerer quotes the retrieved context; "
                               "the bypass mode retrieves none. Use a generative answer model "
                               "for bypass.", raw_data=raw_data)
        if param.only_need_prompt:  # no prompt: what the answerer reads is the context
            return QueryResult(content=retrieved.context, raw_data=raw_data)
        answer = await self.answer_generator.acall(
            query, retrieved.chunks, retrieved.entities, retrieved.relations,
            embed=stores.chunks_vdb.aembed, query_vector=vectors.get(QUERY_VECTOR))
        info = raw_data["processing_info"]
        info.update(answerer="extractive", question_type=answer.question_type,
                    answer_ms=answer.milliseconds,
                    answer_sentences=[s.to_dict() for s in answer.sentences],
                    total_ms=round((time.perf_counter() - started) * 1000, 3))
        if answer.decided is not None:
            info["decided"] = answer.decided
        if not param.stream:
            return QueryResult(content=answer.text, raw_data=raw_data)
        if sync_stream:
            return QueryResult(response_iterator=iter([answer.text]), raw_data=raw_data,
                               is_streaming=True)

        async def once() -> Any:
            yield answer.text

        return QueryResult(response_iterator=once(), raw_data=raw_data, is_streaming=True)
