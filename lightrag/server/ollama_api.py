"""An Ollama-compatible chat API on ``lightrag serve``: the graph as the model ``lightrag:latest``.

Open WebUI, the ``ollama`` Python client and other Ollama clients pointed at the server list the
graph with ``GET /api/tags`` and ask it with ``POST /api/chat`` or ``POST /api/generate``, as a
whole answer or streamed the way Ollama streams (``application/x-ndjson``: one JSON object per
line, the last with ``"done": true``, ``done_reason`` and the timing and token-count fields).
``GET /api/version``, ``GET /api/ps`` and ``POST /api/show`` answer what clients probe first.

A prefix of the last user message picks the query mode: ``/local``, ``/global``, ``/hybrid``,
``/naive``, ``/mix``, ``/ppr`` or ``/bypass``; ``/context`` answers with the retrieved context
only (``only_need_context``); prefixes combine (``/context /local Saturn``). Without one the
server's default mode answers. The earlier messages of a chat are the query's
``conversation_history``; system messages (and ``system`` of ``/api/generate``) become the
``user_prompt`` (extra answer instructions).

Answers run as ``POST /query`` runs them: in the server's query thread pool (each query in a
worker thread with its own event loop), never on the event loop. The routes are protected by the
same API keys as the rest of the server (``X-API-Key`` or ``Authorization: Bearer``).

Example:
    >>> split_mode_prefix("/local /context  Which moon?")
    ('Which moon?', {'mode': 'local', 'only_need_context': True})
    >>> split_mode_prefix("/etc/hosts is a file")
    ('/etc/hosts is a file', {})
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from datetime import datetime, timezone
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple, Type, TypeVar, Union

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import lightrag
from lightrag.components.graph_rag import schemas
from lightrag.server.query_api import text_limits_problem
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

MODEL_NAME = "lightrag"
MODEL_TAG = "lightrag:latest"
#: the Ollama version reported by ``GET /api/version`` (clients check for a recent server)
OLLAMA_VERSION = "0.9.0"
NDJSON = "application/x-ndjson"
_PREFIX = re.compile(r"^\s*/([A-Za-z]+)(?:\s+|$)")
_END = object()
_STARTED = datetime.now(timezone.utc)
_Body = TypeVar("_Body", bound=BaseModel)


class OllamaMessage(BaseModel):
    """A chat message as Ollama sends it (``images``, ``tool_calls`` ... are accepted, unused)."""

    model_config = ConfigDict(extra="allow")
    role: str = Field(..., description="system, user, assistant or tool")
    content: str = Field("", description="The message text")


class OllamaChatRequest(BaseModel):
    """``POST /api/chat``; ``options``, ``format``, ``keep_alive``, ``tools`` are accepted, unused."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(..., description="lightrag:latest")
    messages: List[OllamaMessage] = Field(..., min_length=1)
    stream: bool = Field(True, description="Ollama streams unless told not to")


class OllamaGenerateRequest(BaseModel):
    """``POST /api/generate``; ``options``, ``context``, ``raw`` ... are accepted, unused."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(..., description="lightrag:latest")
    prompt: str = Field("", description="The question, with an optional mode prefix")
    system: Optional[str] = Field(None, description="Extra answer instructions")
    stream: bool = Field(True, description="Ollama streams unless told not to")


class OllamaShowRequest(BaseModel):
    """``POST /api/show`` (older clients send ``name`` instead of ``model``)."""

    model_config = ConfigDict(extra="allow")
    model: Optional[str] = None
    name: Optional[str] = None


def split_mode_prefix(text: str) -> Tuple[str, Dict[str, Any]]:
    """The query without its leading ``/mode`` and ``/context`` prefixes, and the QueryParam
    overrides they select. A slash word that is not a mode (``/etc``) is left in the query."""
    overrides: Dict[str, Any] = {}
    while (match := _PREFIX.match(text)) is not None:
        word = match.group(1).lower()
        if word in schemas.QUERY_MODES:
            overrides["mode"] = word
        elif word == "context":
            overrides["only_need_context"] = True
        else:
            break
        text = text[match.end():]
    return text.strip(), overrides


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _known(model: Optional[str]) -> bool:
    return (model or "").strip().lower() in (MODEL_NAME, MODEL_TAG)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _body_doc(model: Type[BaseModel]) -> Dict[str, Any]:
    """``openapi_extra`` documenting a body the route reads itself (``$defs`` inlined)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return inline(defs[ref[len("#/$defs/"):]])
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": inline(schema)}}}}


async def _parse(request: Request, model: Type[_Body]) -> Union[_Body, JSONResponse]:
    """The JSON body as ``model``, whatever its Content-Type (``curl -d`` sends a form type, and
    Ollama reads JSON anyway), or a 400 ``{"error"}`` saying what is wrong."""
    try:
        return model.model_validate(json.loads(await request.body() or b"{}"))
    except RecursionError:
        return _error(400, "invalid request: the JSON is nested too deeply")
    except (ValueError, ValidationError) as e:  # JSONDecodeError is a ValueError
        message = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}"
                            for err in e.errors()) if isinstance(e, ValidationError) else str(e)
        return _error(400, f"invalid request: {message}")


def _not_found(model: Optional[str]) -> JSONResponse:
    return _error(404, f"model '{model}' not found, try '{MODEL_TAG}'")


def _details() -> Dict[str, Any]:
    return {"parent_model": "", "format": "lightrag", "family": MODEL_NAME,
            "families": [MODEL_NAME], "parameter_size": "", "quantization_level": ""}


def _model_entry() -> Dict[str, Any]:
    digest = hashlib.sha256(f"{MODEL_TAG}:{lightrag.__version__}".encode()).hexdigest()
    return {"name": MODEL_TAG, "model": MODEL_TAG,
            "modified_at": _STARTED.isoformat().replace("+00:00", "Z"), "size": 0,
            "digest": digest, "details": _details()}


def _token_counts(result: Any, query: str, answer: str) -> Tuple[int, int]:
    """Prompt and completion tokens: the answer model's usage, else a word-count estimate."""
    usage = result.raw_data.get("processing_info", {}).get("usage", {}) or {}
    prompt = sum(int(u.get("prompt_tokens") or 0) for u in usage.values() if isinstance(u, dict))
    completion = sum(int(u.get("completion_tokens") or 0) for u in usage.values()
                     if isinstance(u, dict))
    return (prompt or len(query.split()), completion or len(answer.split()))


def _failure(result: Any) -> Optional[str]:
    """Why the answer model failed, or None."""
    info = result.raw_data.get("processing_info", {})
    if info.get("answer_failed"):
        return f"the answer model failed: {result.raw_data.get('error')}"
    return None


def _final_fields(result: Any, query: str, answer: str, started: float,
                  first_piece: float) -> Dict[str, Any]:
    """Ollama's closing fields: ``done_reason``, durations (ns) and token counts."""
    end = time.perf_counter()
    prompt_tokens, completion_tokens = _token_counts(result, query, answer)
    return {"done": True, "done_reason": "stop",
            "total_duration": int((end - started) * 1e9), "load_duration": 0,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": int((first_piece - started) * 1e9),
            "eval_count": completion_tokens, "eval_duration": int((end - first_piece) * 1e9)}


class _Answerer:
    """One chat or generate request: runs the query and shapes the answer for Ollama."""

    def __init__(self, request: Request, model: str, kind: str) -> None:
        self.state = request.state.workspace  # the workspace this request selected
        self.model = model
        self.kind = kind  # "chat" or "generate"
        self.started = time.perf_counter()

    def _piece(self, text: str) -> Dict[str, Any]:
        body: Dict[str, Any] = {"model": self.model, "created_at": _now()}
        if self.kind == "chat":
            body["message"] = {"role": "assistant", "content": text}
        else:
            body["response"] = text
        return body

    async def _pieces(self, result: Any) -> AsyncIterator[str]:
        """The answer's text pieces; a sync stream is read in the query pool, off the loop."""
        if not result.is_streaming:
            yield result.content or ""
            return
        iterator = result.response_iterator
        if hasattr(iterator, "__aiter__"):
            async for piece in iterator:
                yield piece
            return
        iterator = iter(iterator)
        while (piece := await self.state.in_query_thread(next, iterator, _END)) is not _END:
            yield piece

    async def answer(self, query: str, overrides: Dict[str, Any], stream: bool) -> Any:
        """The JSON answer, or the NDJSON stream; a request the query refuses is a 400
        ``{"error"}`` in Ollama's shape."""
        if not query:
            return _error(400, "the message is empty (after its mode prefix)")
        if len(query) > schemas.MAX_QUERY_CHARS:
            return _error(400, f"the question has {len(query)} characters; at most "
                               f"{schemas.MAX_QUERY_CHARS} are allowed")
        problem = text_limits_problem(overrides)
        if problem:  # the system messages and earlier turns of a chat, bounded as /query bounds them
            return _error(400, problem)
        if stream and not overrides.get("only_need_context"):
            overrides["stream"] = True
        log.info("ollama %s: mode=%s context_only=%s stream=%s", self.kind,
                 overrides.get("mode", "default"), bool(overrides.get("only_need_context")), stream)
        try:
            result = await self.state.in_query_thread(self.state.rag.query, query, **overrides)
        except (TypeError, ValueError) as e:
            return _error(400, str(e))
        failure = _failure(result)
        if failure:
            self.state.metrics.count_error("llm_failed")
            return _error(502, failure)
        if stream:
            return StreamingResponse(self._stream(result, query), media_type=NDJSON,
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        text = "".join([piece async for piece in self._pieces(result)])
        body = self._piece(text)
        body.update(_final_fields(result, query, text, self.started, time.perf_counter()))
        return JSONResponse(body)

    async def _stream(self, result: Any, query: str) -> AsyncIterator[str]:
        parts: List[str] = []
        first: Optional[float] = None
        try:
            async for piece in self._pieces(result):
                if not piece:
                    continue
                first = first or time.perf_counter()
                parts.append(piece)
                yield json.dumps({**self._piece(piece), "done": False}, ensure_ascii=False) + "\n"
        except Exception as e:
            log.exception("ollama answer stream failed")
            self.state.metrics.count_error("stream_failed")
            yield json.dumps({"error": redact_text(f"{type(e).__name__}: {e}")}) + "\n"
            return
        error = getattr(result.response_iterator, "error", None) if result.is_streaming else None
        if error:  # a GeneratorStream reports a failed request as data, not by raising
            self.state.metrics.count_error("stream_failed")
            yield json.dumps({"error": redact_text(str(error))}) + "\n"
            return
        final = self._piece("")
        final.update(_final_fields(result, query, "".join(parts), self.started,
                                   first or time.perf_counter()))
        yield json.dumps(final, ensure_ascii=False) + "\n"


def _chat_query(messages: List[OllamaMessage]) -> Tuple[str, Dict[str, Any]]:
    """The last user message (prefix applied) and the overrides: mode, history, user_prompt."""
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        raise ValueError("the chat has no user message")
    query, overrides = split_mode_prefix(messages[last].content)
    history = [{"role": m.role, "content": m.content} for i, m in enumerate(messages)
               if i != last and m.role in ("user", "assistant") and m.content]
    system = "\n".join(m.content for m in messages if m.role == "system" and m.content)
    if history:
        overrides["conversation_history"] = history
    if system:
        overrides["user_prompt"] = system
    return query, overrides


router = APIRouter(prefix="/api", tags=["ollama"])


@router.get("/version", summary="Ollama: the server version")
async def version() -> Dict[str, str]:
    """The Ollama version clients check for."""
    return {"version": OLLAMA_VERSION}


@router.get("/tags", summary="Ollama: the models (the graph as lightrag:latest)")
async def tags() -> Dict[str, Any]:
    """The one model: the graph of the request's workspace as ``lightrag:latest``."""
    return {"models": [_model_entry()]}


@router.get("/ps", summary="Ollama: the loaded models")
async def ps() -> Dict[str, Any]:
    """The loaded models (always ``lightrag:latest``)."""
    entry = {**_model_entry(), "expires_at": "2100-01-01T00:00:00Z", "size_vram": 0}
    return {"models": [entry]}


@router.post("/show", summary="Ollama: details of lightrag:latest",
             openapi_extra=_body_doc(OllamaShowRequest))
async def show(request: Request) -> Any:
    """Details of ``lightrag:latest`` (404 for another model name)."""
    body = await _parse(request, OllamaShowRequest)
    if isinstance(body, JSONResponse):
        return body
    name = body.model or body.name
    if not _known(name):
        return _not_found(name)
    return {"modelfile": f"# LightRAG {lightrag.__version__}: graph RAG over the server's "
                         f"documents\nFROM {MODEL_TAG}\n",
            "parameters": "", "template": "{{ .Prompt }}", "details": _details(),
            "model_info": {"general.architecture": MODEL_NAME,
                           "general.basename": MODEL_NAME,
                           "lightrag.query_modes": list(schemas.QUERY_MODES)},
            "capabilities": ["completion"],
            "modified_at": _STARTED.isoformat().replace("+00:00", "Z")}


@router.post("/chat", summary="Ollama: answer the last user message from the graph",
             openapi_extra=_body_doc(OllamaChatRequest))
async def chat(request: Request) -> Any:
    """Answer the last user message; earlier messages are the conversation history."""
    body = await _parse(request, OllamaChatRequest)
    if isinstance(body, JSONResponse):
        return body
    if not _known(body.model):
        return _not_found(body.model)
    try:
        query, overrides = _chat_query(body.messages)
    except ValueError as e:
        return _error(400, str(e))
    return await _Answerer(request, body.model, "chat").answer(query, overrides, body.stream)


@router.post("/generate", summary="Ollama: answer a prompt from the graph",
             openapi_extra=_body_doc(OllamaGenerateRequest))
async def generate(request: Request) -> Any:
    """Answer a prompt (an empty prompt "loads the model": done at once)."""
    body = await _parse(request, OllamaGenerateRequest)
    if isinstance(body, JSONResponse):
        return body
    if not _known(body.model):
        return _not_found(body.model)
    query, overrides = split_mode_prefix(body.prompt)
    if not query and not body.prompt.strip():
        # Ollama loads the model on an empty prompt and answers done at once
        return JSONResponse({"model": body.model, "created_at": _now(), "response": "",
                             "done": True, "done_reason": "load"})
    if body.system:
        overrides["user_prompt"] = body.system
    return await _Answerer(request, body.model, "generate").answer(query, overrides,
                                                                   body.stream)


def ollama_router() -> APIRouter:
    """The ``/api/*`` routes of the Ollama API (include it with the server's key dependency)."""
    return router
