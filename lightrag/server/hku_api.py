"""HKU LightRAG's REST routes (``lightrag-server`` of ``lightrag-hku``) over this server's own.

A script or client written against HKU's server keeps working: each route below takes HKU's
request and answers HKU's shape, doing its work through the routes of :mod:`.documents`,
:mod:`.query_api` and the graph routes (same key check, workspace, intake queue, limits and
metrics; mount :data:`router` with the app's key and workspace dependencies, before the other
routers so ``/documents/pipeline_status`` and ``/documents/delete_document`` are not read as
document ids).

==================================  ==============================================================
``POST /documents/text``            ``{"text", "file_source"?}`` -> ``{"status", "message",
                                    "track_id"}`` (queued, as ``POST /documents``)
``POST /documents/texts``           ``{"texts", "file_sources"?}`` -> the same
``POST /query``                     also takes HKU's request fields (``include_references``,
                                    ``include_chunk_content``, ...); answers ``response`` and
                                    ``references`` as ours does (``usage`` too)
``POST /query/stream``              NDJSON lines: ``{"references"}`` first, then
                                    ``{"response": piece}`` ... (or ``{"error"}``)
``POST /query/data``                ``{"status", "message", "data": {entities, relationships,
                                    chunks, references}, "metadata"}``
``GET /documents/pipeline_status``  ``{"busy", "job_name", "docs", "latest_message", ...}``
``DELETE /documents/delete_document`` ``{"doc_ids": [...]}`` -> ``{"status":
                                    "deletion_started", "message", "doc_id"}`` (done when it
                                    answers)
``GET /graph/label/list``           every entity name, sorted
``GET /graphs``                     ``{"nodes", "edges", "is_truncated"}`` around ``label``
``GET /graph/entity/exists``        ``{"exists": bool}`` for ``name``
==================================  ==============================================================
"""

from __future__ import annotations

import json
import logging
from typing import Any, AsyncIterator, Dict, List, Optional

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lightrag.components.graph_rag.hku_compat import LightRAG
from lightrag.components.graph_rag.hku_results import HKUKnowledgeGraph
from lightrag.server import documents, query_api
from lightrag.server.explore import public_properties

log = logging.getLogger(__name__)

__all__ = ["router", "HKU_ONLY_QUERY_FIELDS"]

router = APIRouter(tags=["HKU LightRAG compatibility"])

#: HKU's query request fields that are not QueryParam's: read by these routes, never passed on
HKU_ONLY_QUERY_FIELDS = ("include_chunk_content", "include_progress", "disable_user_prompt_prefix")


# ------------------------------------------------------------------------------ documents
class InsertTextRequest(BaseModel):
    """HKU's ``POST /documents/text`` body."""

    model_config = ConfigDict(extra="ignore")
    text: str = Field(..., min_length=1, description="The text to insert")
    file_source: Optional[str] = Field(None, description="The source name (file path)")


class InsertTextsRequest(BaseModel):
    """HKU's ``POST /documents/texts`` body."""

    model_config = ConfigDict(extra="ignore")
    texts: List[str] = Field(..., min_length=1, description="The texts to insert")
    file_sources: Optional[List[str]] = Field(None, description="Their source names")


class DeleteDocRequest(BaseModel):
    """HKU's ``DELETE /documents/delete_document`` body."""

    model_config = ConfigDict(extra="ignore")
    doc_ids: List[str] = Field(..., min_length=1, description="The ids of the documents to delete")
    delete_file: bool = Field(False, description="Accepted; this server keeps no uploaded files")
    delete_llm_cache: bool = Field(False, description="Accepted; cached extractions are kept")


async def _insert_hku(request: Request, texts: List[str], sources: Optional[List[str]]) -> Dict[str, Any]:
    """Queue ``texts`` through :func:`.documents.insert` and answer HKU's ``InsertResponse``
    (plus this server's ``doc_ids`` and ``skipped``)."""
    stripped = [text.strip() for text in texts]
    if not all(stripped):
        raise HTTPException(400, "texts cannot be empty or whitespace-only")
    if sources is not None and len(sources) != len(texts):
        raise HTTPException(400, f"file_sources has {len(sources)} entries for {len(texts)} texts")
    answer = await documents.insert(request.state.workspace, stripped, None, sources, False)
    body = json.loads(answer.body)
    queued = len(body["doc_ids"]) - len(body.get("skipped") or [])
    message = (f"{queued} document(s) queued for processing"
               + (f"; {len(body['skipped'])} already stored (skipped)" if body.get("skipped") else ""))
    return {"status": "success", "message": message, "track_id": body["track_id"],
            "doc_ids": body["doc_ids"], "skipped": body.get("skipped") or []}


@router.post("/documents/text", summary="Insert one text (HKU LightRAG's route)")
async def insert_text(body: InsertTextRequest, request: Request) -> Dict[str, Any]:
    """HKU's ``{"text", "file_source"}``; queued as ``POST /documents`` queues it."""
    sources = None if body.file_source is None else [body.file_source]
    return await _insert_hku(request, [body.text], sources)


@router.post("/documents/texts", summary="Insert texts (HKU LightRAG's route)")
async def insert_texts(body: InsertTextsRequest, request: Request) -> Dict[str, Any]:
    """HKU's ``{"texts", "file_sources"}``; queued as ``POST /documents`` queues them."""
    return await _insert_hku(request, body.texts, body.file_sources)


@router.get("/documents/pipeline_status", summary="Processing state (HKU LightRAG's route)")
async def pipeline_status(request: Request) -> Dict[str, Any]:
    """HKU's ``PipelineStatusResponse`` from the workspace's intake queue and status counts."""
    state = request.state.workspace
    unfinished = state.intake.unfinished()
    busy = bool(state.inserting)
    counts = state.rag.doc_status.get_status_counts()
    message = (f"processing {unfinished} document(s)" if busy
               else "idle" if not unfinished else f"{unfinished} document(s) waiting")
    return {"busy": busy, "job_name": "indexing texts" if busy else "Default Job", "job_start": None,
            "docs": unfinished, "batchs": 1 if busy else 0, "cur_batch": 1 if busy else 0,
            "request_pending": bool(unfinished) and not busy, "latest_message": message,
            "history_messages": [], "update_status": {}, "recovery_required": False,
            "recovery_kind": None, "recovery_message": None,
            "counts": counts, "progress": state.intake.progress()}


@router.delete("/documents/delete_document", summary="Delete documents (HKU LightRAG's route)")
async def delete_documents(body: DeleteDocRequest, request: Request) -> Dict[str, Any]:
    """Delete each id through this server's delete (``DELETE /documents/{id}``); HKU's
    ``{"status", "message", "doc_id"}``. HKU deletes in the background; here the deletes are
    done when it answers. ``status`` is ``"busy"`` while a long insert holds the store."""
    state = request.state.workspace
    ids = list(dict.fromkeys(doc_id.strip() for doc_id in body.doc_ids if doc_id.strip()))
    if not ids:
        raise HTTPException(400, "doc_ids cannot be empty")
    deleted: List[str] = []
    not_found: List[str] = []
    for doc_id in ids:
        try:
            await documents._delete_one(state, doc_id)
        except HTTPException as e:
            if e.status_code == 404:
                not_found.append(doc_id)
                continue
            if e.status_code == 503:
                return {"status": "busy", "message": str(e.detail), "doc_id": ", ".join(ids),
                        "deleted": deleted, "not_found": not_found}
            raise
        deleted.append(doc_id)
    log.info("delete_document: deleted %s, not found %s", deleted, not_found)
    message = f"deleted {len(deleted)} document(s)" + (f"; not found: {', '.join(not_found)}"
                                                       if not_found else "")
    return {"status": "deletion_started", "message": message, "doc_id": ", ".join(ids),
            "deleted": deleted, "not_found": not_found}


# ------------------------------------------------------------------------------ query
async def _hku_query_body(request: Request, stream: Optional[bool] = None) -> tuple:
    """HKU's query request read as this server's :data:`~.query_api.QueryRequest` (strict, the
    same checks as ``POST /query``; ``stream`` given: set to it), HKU's own options
    ``{include_references, include_chunk_content}`` and the ``stream`` field as sent: null
    fields are unset and HKU-only fields are taken out."""
    try:
        raw = await request.json()
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        raise RequestValidationError([{"type": "json_invalid", "loc": ("body",),
                                       "msg": "JSON decode error", "input": None}]) from None
    if not isinstance(raw, dict):
        raise RequestValidationError([{"type": "model_attributes_type", "loc": ("body",),
                                       "msg": "the body must be a JSON object", "input": raw}])
    fields = {k: v for k, v in raw.items() if v is not None and k not in HKU_ONLY_QUERY_FIELDS}
    options = {"include_references": fields.get("include_references", True) is not False,
               "include_chunk_content": raw.get("include_chunk_content") is True}
    if stream is not None:
        fields["stream"] = stream
    try:
        return query_api.QueryRequest.model_validate(fields), options, raw.get("stream")
    except ValidationError as e:
        raise RequestValidationError([{**error, "loc": ("body", *error["loc"])} for error in
                                      e.errors(include_url=False, include_context=False)]) from None


def _hku_references(references: Any, raw_data: Dict[str, Any], options: Dict[str, bool]) -> Any:
    """HKU's ``references``: None when not wanted; with ``include_chunk_content``, each with
    ``content``, the texts of its chunks."""
    if not options["include_references"]:
        return None
    if not options["include_chunk_content"]:
        return references
    texts: Dict[str, List[str]] = {}
    for chunk in raw_data.get("chunks", []):
        if chunk.get("reference_id") and chunk.get("content"):
            texts.setdefault(str(chunk["reference_id"]), []).append(chunk["content"])
    return [{**ref, "content": texts.get(str(ref.get("reference_id")), [])} for ref in references or []]


@router.post("/query", include_in_schema=False)
async def query(request: Request) -> Any:
    """``POST /query`` taking HKU's request too: HKU's fields are read here and the rest goes to
    :func:`.query_api.query` (JSON or SSE, as before). With ``include_references: false`` the
    answer's ``references`` is null; ``include_chunk_content`` adds each reference's chunk
    texts (``content``)."""
    body, options, _ = await _hku_query_body(request)
    if body.stream or (options["include_references"] and not options["include_chunk_content"]):
        return await query_api.query(body, request)
    wanted = body.model_copy(update={"include_raw_data": True})
    answer = await query_api.query(wanted, request)
    raw_data = answer.get("raw_data", {})
    answer["references"] = _hku_references(answer.get("references"), raw_data, options)
    if not body.include_raw_data:
        answer.pop("raw_data", None)
    return answer


async def _ndjson(state: Any, result: Any, options: Dict[str, bool]) -> AsyncIterator[str]:
    """HKU's NDJSON stream from :func:`.query_api.stream_answer`'s events: ``{"references"}``
    (unless not wanted), ``{"response": piece}`` lines, an ``{"error"}`` line on failure."""
    async for event in query_api.stream_answer(state, result):
        data = json.loads(event[len("data: "):])
        if "references" in data:
            references = _hku_references(data["references"], result.raw_data, options)
            line: Optional[Dict[str, Any]] = None if references is None else {"references": references}
        elif "done" in data:
            line = None
        else:
            line = data
        if line is not None:
            yield json.dumps(line, ensure_ascii=False) + "\n"


@router.post("/query/stream", summary="Answer a question as NDJSON (HKU LightRAG's route)")
async def query_stream(request: Request) -> StreamingResponse:
    """HKU's streaming query: the request of ``POST /query``; lines of ``application/x-ndjson``
    (``stream: false`` sends the whole answer as one ``response`` line)."""
    body, options, stream = await _hku_query_body(request, stream=False)
    state = request.state.workspace
    overrides = body.model_dump(exclude_none=True, include=set(query_api.QUERY_FIELDS))
    overrides["stream"] = stream is not False  # HKU's default here: streamed
    result = await state.in_query_thread(state.rag.query, body.query, **overrides)
    return StreamingResponse(_ndjson(state, result, options), media_type="application/x-ndjson",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/query/data", summary="Retrieval results without an answer (HKU LightRAG's route)")
async def query_data(request: Request) -> Dict[str, Any]:
    """HKU's ``QueryDataResponse`` (what :meth:`LightRAG.aquery_data` returns): the entities,
    relationships, chunks and references retrieval found; no answer model runs."""
    body, _, _ = await _hku_query_body(request, stream=False)
    state = request.state.workspace
    overrides = body.model_dump(exclude_none=True, include=set(query_api.QUERY_FIELDS))
    overrides.update(only_need_context=True, stream=False)
    result = await state.in_query_thread(state.rag.query, body.query, **overrides)
    return LightRAG._data_dict(result.raw_data, overrides.get("mode", "mix"))


# ------------------------------------------------------------------------------ graph
@router.get("/graph/label/list", summary="All entity names (HKU LightRAG's route)")
async def label_list(request: Request) -> List[str]:
    """Every entity name of the workspace, sorted (as ``GET /graph/labels``)."""
    return sorted(request.state.workspace.rag.graph.get_all_labels())


@router.get("/graphs", summary="The subgraph around an entity (HKU LightRAG's route)")
async def graphs(request: Request, label: str = Query(..., min_length=1),
                 max_depth: int = Query(3, ge=0, le=10),
                 max_nodes: int = Query(1000, ge=1, le=100_000)) -> Dict[str, Any]:
    """HKU's ``KnowledgeGraph``: ``nodes`` (``id``, ``labels``, ``properties``), ``edges``
    (``id``, ``type``, ``source``, ``target``, ``properties``), ``is_truncated``; ``label``
    ``*`` is the whole graph (up to ``max_nodes``)."""
    state = request.state.workspace
    kg = await state.in_query_thread(state.rag.get_knowledge_graph, label, max_depth=max_depth,
                                     max_nodes=max_nodes)
    data = HKUKnowledgeGraph(kg).model_dump()
    for item in (*data["nodes"], *data["edges"]):
        item["properties"] = public_properties(item.get("properties") or {})
    return data


@router.get("/graph/entity/exists", summary="Whether an entity exists (HKU LightRAG's route)")
async def entity_exists(request: Request, name: str = Query(..., min_length=1)) -> Dict[str, bool]:
    """``{"exists": bool}`` for the entity ``name``."""
    return {"exists": request.state.workspace.rag.graph.get_node(name) is not None}
