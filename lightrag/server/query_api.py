"""``POST /query``: answer a question in the request's workspace, as JSON or Server-Sent Events.

:class:`QueryRequest` is built from the fields of
:class:`~lightrag.components.graph_rag.schemas.QueryParam` (names, types, descriptions), so a new
QueryParam field is accepted by the API without an edit here. Every field is optional (unset
fields use the server's ``query_defaults``) and strict, as QueryParam is in Python: ``"top_k":
"10"`` or ``"stream": "true"`` is 422, not converted, and so is any value QueryParam refuses
(``"top_k": 0``, an unknown mode: the modes are ``schemas.QUERY_MODES``, read at request time).
Keyword lists are bounded (:data:`~lightrag.components.graph_rag.schemas.MAX_KEYWORDS` keywords)
before anything else runs.

Retrieval (graph walks, PPR, re-ranking) is CPU work: each query runs in a thread of the server's
query pool with its own event loop, so one heavy query never stalls ``/health`` or the other
requests.

Example:
    >>> QueryRequest(query="Who?", top_k=5).top_k
    5
    >>> sorted(set(QueryParam().to_dict()) - set(QueryRequest.model_fields))
    []
"""

from __future__ import annotations

import dataclasses
import json
import logging
import typing
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model, model_validator
from typing_extensions import Annotated

from lightrag.components.graph_rag.schemas import (
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_QUERY_CHARS,
    QueryParam,
)
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

QUERY_FIELDS = frozenset(f.name for f in dataclasses.fields(QueryParam))
Keyword = Annotated[str, StringConstraints(max_length=MAX_KEYWORD_CHARS)]
#: the texts that go into the answer prompt besides the query (each is tokenised, in a query
#: thread: 9 MB of ``response_type`` took 16 s, and eight such requests held every query thread)
MAX_RESPONSE_TYPE_CHARS = 1_000
MAX_USER_PROMPT_CHARS = MAX_QUERY_CHARS
MAX_HISTORY_TURNS = 1_000
MAX_HISTORY_CHARS = 200_000  #: all turns of conversation_history together (~50k tokens)
#: limits the server adds to QueryParam's own checks (bounded work per request)
SERVER_LIMITS: Dict[str, Dict[str, Any]] = {
    "top_k": {"le": 1000}, "chunk_top_k": {"le": 1000},
    "hl_keywords": {"max_length": MAX_KEYWORDS}, "ll_keywords": {"max_length": MAX_KEYWORDS},
    "response_type": {"max_length": MAX_RESPONSE_TYPE_CHARS},
    "user_prompt": {"max_length": MAX_USER_PROMPT_CHARS},
    "conversation_history": {"max_length": MAX_HISTORY_TURNS},
}


def text_limits_problem(overrides: Dict[str, Any]) -> Optional[str]:
    """What is over the server's limits among the prompt texts of a query's ``overrides``
    (``response_type``, ``user_prompt``, ``conversation_history``), or None. ``/query`` and
    the Ollama routes both check it.

    >>> text_limits_problem({"conversation_history": [{"role": "user", "content": "hi"}]}) is None
    True
    >>> text_limits_problem({"user_prompt": "x" * 20_001})
    'user_prompt has 20001 characters; at most 20000 are allowed'
    """
    for name, limit in (("response_type", MAX_RESPONSE_TYPE_CHARS),
                        ("user_prompt", MAX_USER_PROMPT_CHARS)):
        value = overrides.get(name)
        if isinstance(value, str) and len(value) > limit:
            return f"{name} has {len(value)} characters; at most {limit} are allowed"
    history = overrides.get("conversation_history") or []
    if len(history) > MAX_HISTORY_TURNS:
        return (f"conversation_history has {len(history)} turns; at most {MAX_HISTORY_TURNS} "
                "are allowed")
    size = sum(len(str(v)) for turn in history if isinstance(turn, dict) for v in turn.values())
    if size > MAX_HISTORY_CHARS:
        return (f"conversation_history holds {size} characters; at most {MAX_HISTORY_CHARS} "
                "are allowed (drop the oldest turns)")
    return None
#: types the API states differently from QueryParam's annotation
TYPE_OVERRIDES: Dict[str, Any] = {
    "mode": str,  # checked against schemas.QUERY_MODES at request time (the registry may grow)
    "hl_keywords": List[Keyword], "ll_keywords": List[Keyword],
}

router = APIRouter(tags=["query"])


class _QueryBase(BaseModel):
    """Strict fields, no unknown ones; the QueryParam fields are checked by QueryParam itself."""

    model_config = ConfigDict(extra="forbid", strict=True)
    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="The question")

    @model_validator(mode="after")
    def _valid_query_param(self) -> _QueryBase:
        fields = self.model_dump(exclude_none=True, include=set(QUERY_FIELDS))
        problem = text_limits_problem(fields)
        if problem:
            raise ValueError(problem)
        try:
            QueryParam(**fields)
        except (TypeError, ValueError) as e:
            raise ValueError(str(e)) from None
        return self


def _api_field(field: dataclasses.Field, hints: Dict[str, Any]) -> Tuple[Any, Any]:
    """``(type, FieldInfo)`` of one QueryParam field in the API: optional, unset by default."""
    kind = TYPE_OVERRIDES.get(field.name, hints[field.name])
    description = (field.metadata or {}).get("desc")
    return Optional[kind], Field(None, description=description, **SERVER_LIMITS.get(field.name, {}))


def build_query_request() -> type:
    """The request model: ``query``, every QueryParam field, ``stream`` (default false) and
    ``include_raw_data``."""
    hints = typing.get_type_hints(QueryParam, include_extras=True)
    fields: Dict[str, Any] = {f.name: _api_field(f, hints) for f in dataclasses.fields(QueryParam)}
    fields["stream"] = (bool, Field(False, description="Answer with Server-Sent Events"))
    fields["include_raw_data"] = (bool, Field(False, description="Add entities, relations and chunks"))
    model = create_model("QueryRequest", __base__=_QueryBase, **fields)
    model.__doc__ = ("A question and optional QueryParam fields (unset fields use the server's "
                     "defaults); strict, as QueryParam is in Python.")
    return model


QueryRequest = build_query_request()


def _sse(data: Dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _reference_chunks(result: Any) -> List[Dict[str, Any]]:
    """The answer's chunks as ``{chunk_id, reference_id, file_path}`` (the UI opens them)."""
    return [{"chunk_id": c.get("chunk_id"), "reference_id": c.get("reference_id"),
             "file_path": c.get("file_path")} for c in result.raw_data.get("chunks", [])
            if c.get("chunk_id")]


_END = object()


async def _pieces(state: Any, iterator: Any) -> AsyncIterator[Any]:
    """The pieces of an async iterator, or of a sync one read in a worker thread (the sync
    stream of a query run off the event loop)."""
    if hasattr(iterator, "__aiter__"):
        async for piece in iterator:
            yield piece
        return
    iterator = iter(iterator)
    while (piece := await state.in_query_thread(next, iterator, _END)) is not _END:
        yield piece


async def stream_answer(state: Any, result: Any) -> AsyncIterator[str]:
    """The SSE events of an answer: references first, then the pieces, then ``done`` (or an
    ``error`` event: a stream cannot change its status code once started)."""
    yield _sse({"references": result.references, "chunks": _reference_chunks(result)})
    try:
        if result.is_streaming:
            async for piece in _pieces(state, result.response_iterator):
                yield _sse({"response": piece})
        else:
            yield _sse({"response": result.content})
    except Exception as e:
        log.exception("answer stream failed")
        state.metrics.count_error("stream_failed")
        yield _sse({"error": redact_text(f"{type(e).__name__}: {e}")})
        return
    error = getattr(result.response_iterator, "error", None) if result.is_streaming else None
    if error:  # a GeneratorStream reports a failed request as data, not by raising
        state.metrics.count_error("stream_failed")
        yield _sse({"error": redact_text(str(error))})
        return
    yield _sse({"done": True})


def _json_answer(state: Any, result: Any, include_raw_data: bool) -> Dict[str, Any]:
    info = result.raw_data.get("processing_info", {})
    if info.get("answer_failed"):
        state.metrics.count_error("llm_failed")
        raise HTTPException(502, redact_text(f"the answer model failed: {result.raw_data.get('error')}"))
    answer: Dict[str, Any] = {"response": result.content, "references": result.references,
                              "usage": info.get("usage", {})}
    if include_raw_data:
        answer["raw_data"] = result.raw_data
    return answer


@router.post("/query", summary="Answer a question (JSON, or SSE with stream: true)")
async def query(body: QueryRequest, request: Request) -> Any:  # type: ignore[valid-type]
    """Answer ``body.query`` with the given QueryParam fields over the workspace's GraphRAG."""
    state = request.state.workspace
    overrides = body.model_dump(exclude_none=True, include=set(QUERY_FIELDS))
    result = await state.in_query_thread(state.rag.query, body.query, **overrides)
    if body.stream:
        return StreamingResponse(stream_answer(state, result), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return _json_answer(state, result, body.include_raw_data)
