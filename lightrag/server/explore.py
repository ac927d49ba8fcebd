"""JSON endpoints of the web UI's graph explorer and query playground.

===============================  ================================================================
``GET /info``                    version, the query modes this server knows, the query defaults
``GET /chunks/{chunk_id}``       one chunk: content, source file, document, order
``GET /graph/search``            entity names matching ``q`` (exact, then prefix, then substring)
``GET /graph/entity/{name}``     an entity: type, descriptions, files, neighbours with their
                                 relations, and its source chunks (``max_chunks``)
===============================  ================================================================

They read through the GraphRAG's public stores (``rag.graph``, ``rag.text_chunks``) of the
request's workspace and are mounted with the same key and workspace dependency as the rest of
the API.

Example:
    >>> app.include_router(explore_router(), dependencies=protected)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Dict, List

from fastapi import APIRouter, HTTPException, Query, Request

import lightrag
from lightrag.components.graph_rag import schemas

SEP = schemas.GRAPH_FIELD_SEP
INTERNAL_PREFIXES = ("context_line", "_")


def split_field(value: Any) -> List[str]:
    """The parts of a ``<SEP>``-joined field, blanks and repeats dropped.

    >>> split_field("a<SEP>b<SEP>a<SEP>")
    ['a', 'b']
    """
    if value is None:
        return []
    parts = value if isinstance(value, list) else str(value).split(SEP)
    return list(dict.fromkeys(p.strip() for p in parts if str(p).strip()))


def public_properties(data: Dict[str, Any]) -> Dict[str, Any]:
    """Node or edge properties without the index's internal fields (query-time caches).

    >>> public_properties({"description": "d", "context_line_tokens": 7})
    {'description': 'd'}
    """
    return {k: v for k, v in data.items() if not k.startswith(INTERNAL_PREFIXES)}


def query_modes() -> List[str]:
    """The query modes of the installed GraphRAG (``schemas.QUERY_MODES``, read at call time)."""
    return list(schemas.QUERY_MODES)


def _rag(request: Request) -> Any:
    return request.state.workspace.rag  # the GraphRAG of the workspace this request selected


def _chunk(rag: Any, chunk_id: str) -> Dict[str, Any]:
    record = rag.text_chunks.get_by_id(chunk_id)
    if record is None:
        raise HTTPException(404, f"no chunk with id {chunk_id!r}")
    return {"id": chunk_id, "content": record.get("content", ""),
            "file_path": record.get("file_path", "unknown_source"),
            "full_doc_id": record.get("full_doc_id"), "tokens": record.get("tokens"),
            "chunk_order_index": record.get("chunk_order_index")}


#: neighbours of an entity read to choose the ``max_neighbours`` heaviest shown, per one shown
NEIGHBOURS_READ_PER_SHOWN = 4


def _neighbours(rag: Any, name: str, limit: int) -> List[Dict[str, Any]]:
    """The ``limit`` heaviest relations of ``name`` among the first ``NEIGHBOURS_READ_PER_SHOWN``
    times as many read (a hub of a large store has 100k: each was read by a query of its own)."""
    pairs = rag.graph.get_nodes_edges_bounded([name], max(1, limit) * NEIGHBOURS_READ_PER_SHOWN)[name]
    edges = rag.graph.get_edges_batch(pairs)
    found = []
    for pair in pairs:
        edge = edges.get(pair) or {}
        found.append({"entity": pair[1], "description": split_field(edge.get("description")),
                      "keywords": edge.get("keywords", ""), "weight": edge.get("weight"),
                      "source_ids": split_field(edge.get("source_id"))})
    found.sort(key=lambda n: (-(n["weight"] or 0), n["entity"]))
    return found[:limit]


router = APIRouter(tags=["explore"])


@router.get("/info", summary="Version, query modes and query defaults")
async def info(request: Request) -> Dict[str, Any]:
    """The version, the query modes and the workspace's query defaults."""
    rag = _rag(request)
    return {"version": lightrag.__version__, "modes": query_modes(),
            "query_defaults": dict(getattr(rag, "query_defaults", {}) or {})}


@router.get("/chunks/{chunk_id:path}", summary="One chunk with its source")
async def chunk(chunk_id: str, request: Request) -> Dict[str, Any]:
    """One chunk of the workspace (404 when it has none with this id)."""
    return _chunk(_rag(request), chunk_id)


@router.get("/graph/search", summary="Entity names matching a text", tags=["graph"])
async def search(request: Request, q: str = Query(..., min_length=1),
                 limit: int = Query(20, ge=1, le=500)) -> List[str]:
    """Entity names matching ``q``: exact first, then prefix, then substring."""
    return _rag(request).graph.search_labels(q, limit)


@router.get("/graph/entity/{name:path}", summary="An entity, its neighbours and source chunks",
            tags=["graph"])
async def entity(name: str, request: Request,
                 max_chunks: int = Query(10, ge=0, le=200),
                 max_neighbours: int = Query(100, ge=0, le=2000)) -> Dict[str, Any]:
    """An entity with its descriptions, its ``max_neighbours`` heaviest relations (of
    ``neighbour_count``) and source chunks."""
    rag = _rag(request)
    node = rag.graph.get_node(name)
    if node is None:
        raise HTTPException(404, f"no entity named {name!r}")
    chunk_ids = split_field(node.get("source_id"))
    chunks = []
    for chunk_id in chunk_ids[:max_chunks]:
        try:
            chunks.append(_chunk(rag, chunk_id))
        except HTTPException:
            continue  # a source chunk removed with its document
    props = public_properties(node)
    for key in ("description", "source_id", "file_path"):
        props.pop(key, None)
    return {"name": name, "entity_type": node.get("entity_type", ""),
            "descriptions": split_field(node.get("description")),
            "file_paths": split_field(node.get("file_path")),
            "source_ids": chunk_ids, "properties": props,
            "neighbours": _neighbours(rag, name, max_neighbours) if max_neighbours else [],
            "neighbour_count": rag.graph.node_degree(name), "chunks": chunks}


def explore_router() -> APIRouter:
    """The routes above (mount them with the key and workspace dependencies)."""
    return router
