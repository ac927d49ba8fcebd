"""The document routes of the HTTP server (all in the request's workspace).

===========================  =====================================================================
``POST /documents``          insert text(s) ``{"texts", "ids"?, "file_paths"?, "wait"?}``
``POST /documents/upload``   insert uploaded files (multipart ``files``): PDF, DOCX, HTML,
                             Markdown or text (415 names the file and why it cannot be read)
``GET /documents``           status counts and one page of documents (``page``, ``page_size``,
                             ``status``)
``GET /documents/{doc_id}``  one document's status (also ``GET /documents?doc_id=...``)
``POST /documents/retry``    process the FAILED documents again (in the background)
``POST /documents/custom_kg`` import a knowledge graph ``{"custom_kg": {chunks, entities,
                             relationships}, "doc_id"?}`` as one document (400 names a bad record)
``DELETE /documents/{id}``   delete a document (its exclusive entities go, shared ones rebuilt);
                             also ``DELETE /documents?doc_id=...``
===========================  =====================================================================

A document id can hold any character, but a URL path cannot carry every id: clients remove the
path segments ``.`` and ``..`` before they send a URL (browsers, ``curl`` and ``httpx`` do;
browsers also ``%2E``), so ``/documents/..`` never reaches this router. The query form
(``?doc_id=..``, percent-encoded) carries every id; the web UI uses it.

Every route reads ``request.state.workspace`` (an :class:`~lightrag.server.app.AppState`), which
the app's workspace dependency sets. Mount :data:`router` with that dependency.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Union

from fastapi import APIRouter, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from lightrag.components.graph_rag.index.recording import finish_in_thread
from lightrag.components.graph_rag.schemas import DocStatus
from lightrag.components.loaders import DocumentLoadError
from lightrag.server.errors import is_provider_error
from lightrag.server.intake import QueueFull, RunningTooLong
from lightrag.utils.secrets import redact_text

MAX_PAGE = 1_000_000_000  # page * page_size must fit the database's 64-bit OFFSET
DELETE_LOCK_WAIT = 2.0  # seconds a delete waits for a running insert before 503
DOC_ID_QUERY = ("A document id; in the query string every id can be sent, '.' and '..' too, "
                "which clients remove from a URL path")

router = APIRouter(tags=["documents"])


class InsertRequest(BaseModel):
    """Documents to insert."""

    model_config = ConfigDict(extra="forbid")
    texts: Union[str, List[str]] = Field(..., description="A text or a list of texts")
    ids: Optional[Union[str, List[str]]] = Field(None, description="Document ids")
    file_paths: Optional[Union[str, List[str]]] = Field(None, description="Source names")
    wait: bool = Field(False, description="Answer after processing (200) instead of at once (202)")


def _state(request: Request) -> Any:
    return request.state.workspace


def _shutting_down() -> HTTPException:
    return HTTPException(503, "the server is shutting down; retry later", headers={"Retry-After": "5"})


def _validated(state: Any, texts: Any, ids: Any, paths: Any) -> tuple:
    if not state.accepting:
        raise _shutting_down()
    try:
        texts, ids, paths = state.rag.validate_documents(texts, ids, paths)
    except (TypeError, ValueError) as e:
        raise HTTPException(400, str(e)) from None
    if not texts:
        raise HTTPException(400, "no documents given: texts is empty")
    return texts, ids, paths


async def _insert_now(state: Any, texts: List[str], ids: List[str], paths: List[str]) -> Any:
    result = await state.intake.insert_now(texts, ids, paths)
    if result.failed:
        state.metrics.count_error("insert_failed")
    return result.to_dict()


async def insert(state: Any, texts: Any, ids: Any, paths: Any, wait: bool) -> Any:
    """Validate, then store the documents PENDING and answer 202 (or process them first: 200).

    Raises:
        HTTPException: 400 bad documents, 429 queue full, 503 shutting down or store locked.
    """
    texts, ids, paths = _validated(state, texts, ids, paths)
    try:
        if wait:
            return await _insert_now(state, texts, ids, paths)
        result = await state.intake.enqueue(texts, ids, paths)
    except asyncio.CancelledError:
        if not wait:
            raise
        # a shutdown stopped the processing (uvicorn cancels what outlives --graceful-timeout):
        # the documents are stored and resume at the next start; the client gets the JSON 503
        # of a shutdown, not a plain-text 500
        raise HTTPException(503, "the server is shutting down; the documents are stored and will be "
                                 "processed when it starts again", headers={"Retry-After": "5"}) from None
    except QueueFull as e:
        raise HTTPException(429, str(e), headers={"Retry-After": str(e.retry_after)}) from None
    except RuntimeError as e:  # shutting down, or the store locked by another writer
        raise HTTPException(503, str(e), headers={"Retry-After": "5"}) from None
    return JSONResponse({"status": "accepted", "doc_ids": ids, "track_id": result.track_id,
                         "skipped": result.skipped}, status_code=202)


@router.post("/documents", summary="Insert text documents")
async def insert_documents(body: InsertRequest, request: Request) -> Any:
    """Insert text documents (202 at once, or 200 after processing with ``wait: true``)."""
    return await insert(_state(request), body.texts, body.ids, body.file_paths, body.wait)


async def _read_upload(upload: UploadFile, reader: Any) -> tuple[str, str]:
    """The text and name of an uploaded file, read by the server's
    :class:`~lightrag.server.uploads.UploadReader` (in a child process: reading a file can cost
    far more than its size)."""
    name = upload.filename or "upload"
    raw = await upload.read()
    try:
        text = await reader.read(name, raw)
    except DocumentLoadError as e:
        raise HTTPException(400 if e.reason == "empty" else 415, str(e)) from None
    return text, name


@router.post("/documents/upload", summary="Insert uploaded files (PDF, DOCX, HTML, Markdown, text)")
async def upload_documents(request: Request, files: List[UploadFile] = File([]),
                           file: List[UploadFile] = File([]), wait: bool = Form(False)) -> Any:
    """Insert uploaded files (multipart field ``files``, or ``file`` as HKU LightRAG's server and
    ``curl -F file=@x.md`` name it), read by :func:`~lightrag.components.loaders.load_document`."""
    uploads = [*files, *file]
    if not uploads:
        raise HTTPException(422, "no file uploaded: send multipart field 'files' (or 'file')")
    reader = request.app.state.lightrag.uploads
    loaded = [await _read_upload(upload, reader) for upload in uploads]
    return await insert(_state(request), [t for t, _ in loaded], None, [n for _, n in loaded], wait)


@router.post("/documents/retry", summary="Process the FAILED documents again", status_code=202)
async def retry_documents(request: Request) -> Dict[str, Any]:
    """Start a background run over the FAILED documents (if any)."""
    state = _state(request)
    if not state.accepting:
        raise _shutting_down()
    failed = state.rag.doc_status.get_status_counts().get(DocStatus.FAILED.value, 0)
    if failed:
        state.intake.kick()
    return {"status": "accepted" if failed else "nothing to retry", "failed": failed}


class CustomKGRequest(BaseModel):
    """A knowledge graph to import (HKU LightRAG's ``custom_kg`` format)."""

    model_config = ConfigDict(extra="forbid")
    custom_kg: Dict[str, Any] = Field(..., description="{chunks, entities, relationships}")
    doc_id: Optional[str] = Field(None, description="The document id (default: kg- + hash)")


@router.post("/documents/custom_kg", summary="Import a knowledge graph as one document")
async def import_custom_kg(body: CustomKGRequest, request: Request) -> Dict[str, Any]:
    """Import entities, relations and their source chunks built elsewhere: validated (400 names
    the bad record, nothing written), merged with the graph in one transaction, embedded;
    ``DELETE /documents/{doc_id}`` removes it."""
    state = _state(request)
    if not state.accepting:
        raise _shutting_down()
    try:
        return (await _off_the_loop(state, state.rag.insert_custom_kg, body.custom_kg, body.doc_id)).to_dict()
    except asyncio.CancelledError:
        # a shutdown cut the request (uvicorn cancels what outlives --graceful-timeout): the
        # import, one transaction, still ends before the store closes; the client gets the JSON
        # 503 of a shutdown, not a plain-text 500
        raise HTTPException(503, "the server is shutting down; the import commits whole before the "
                                 "store closes, or not at all: check GET /documents?doc_id=... after "
                                 "it starts again", headers={"Retry-After": "5"}) from None
    except (TypeError, ValueError) as e:
        if is_provider_error(e):  # the embedding model's reply could not be read
            raise HTTPException(502, redact_text(f"a model provider failed: {e}")) from None
        raise HTTPException(400, redact_text(str(e))) from None


async def _off_the_loop(state: Any, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a worker thread (a sync method with its own event loop): validating,
    merging and embedding a 10 MB graph is minutes of CPU, which on the event loop stalled every
    request of every workspace, ``/health`` included. A cancelled request answers at once; the
    work (one transaction, under the store's writer lock) still finishes, and the workspace's
    drain waits for it before the store closes (:meth:`IntakeQueue.finish
    <lightrag.server.intake.IntakeQueue.finish>`)."""
    return await state.intake.finish(finish_in_thread(fn, *args))


@router.get("/documents", summary="Status counts and a page of documents (or one: doc_id)")
async def list_documents(request: Request, page: int = Query(1, ge=1, le=MAX_PAGE),
                         page_size: int = Query(50, ge=1, le=1000),
                         status: Optional[DocStatus] = None,
                         doc_id: Optional[str] = Query(None, description=DOC_ID_QUERY)) -> Dict[str, Any]:
    """Counts by status (plus ``queued``) and one page of documents with their progress; given
    ``doc_id``, that one document's status as ``GET /documents/{doc_id}`` answers it."""
    state = _state(request)
    if doc_id is not None:
        return _one_document(state, doc_id)
    counts = state.rag.doc_status.get_status_counts()
    rows = state.rag.doc_status.get_docs_paginated(page, page_size, status)
    progress = state.intake.progress()
    return {"counts": {**counts, "queued": state.intake.unfinished()},
            "total": counts.get(status.value, 0) if status else sum(counts.values()),
            "page": page, "page_size": page_size, "max_pending": state.intake.max_pending,
            "documents": [{"id": k, **v.to_dict(), "progress": progress.get(k)} for k, v in rows]}


@router.get("/documents/{doc_id:path}", summary="One document's status")
async def get_document(doc_id: str, request: Request) -> Dict[str, Any]:
    """One document's status record (404 when the workspace has no such document)."""
    return _one_document(_state(request), doc_id)


def _one_document(state: Any, doc_id: str) -> Dict[str, Any]:
    record = state.rag.doc_status.get_by_id(doc_id)
    if record is None:
        raise HTTPException(404, f"no document with id {doc_id!r}")
    return {"id": doc_id, **record, "progress": state.intake.progress().get(doc_id)}


@router.delete("/documents", summary="Delete a document (its id as the query parameter doc_id)")
async def delete_document_by_query(request: Request,
                                   doc_id: str = Query(..., description=DOC_ID_QUERY)) -> Dict[str, Any]:
    """``DELETE /documents/{doc_id}`` with the id in the query string: an id such as ``.`` or
    ``..`` cannot be sent in a URL path (clients remove such path segments)."""
    return await _delete_one(_state(request), doc_id)


@router.delete("/documents/{doc_id:path}", summary="Delete a document")
async def delete_document(doc_id: str, request: Request) -> Dict[str, Any]:
    """Delete a document; 503 with ``Retry-After`` while an insert of its workspace runs for
    longer than :data:`DELETE_LOCK_WAIT` seconds (instead of a client timeout). The delete
    itself is one transaction under the store's writer lock."""
    return await _delete_one(_state(request), doc_id)


async def _delete_one(state: Any, doc_id: str) -> Dict[str, Any]:
    """Delete between two processing runs (before the next one, so a steady stream of inserts
    never starves it); 503 when the run going lasts over :data:`DELETE_LOCK_WAIT` seconds."""
    try:
        result = await state.intake.between_runs(lambda: state.rag.adelete_by_doc_id(doc_id),
                                                 DELETE_LOCK_WAIT)
    except RunningTooLong:
        retry = max(1, state.intake.retry_after(state.intake.unfinished()))
        raise HTTPException(503, "an insert is running; retry the delete later",
                            headers={"Retry-After": str(retry)}) from None
    except KeyError:
        raise HTTPException(404, f"no document with id {doc_id!r}") from None
    return result.to_dict()
