"""Create, edit and delete single relations of a
:class:`~lightrag.components.graph_rag.index.GraphIndex`'s graph by hand.

Like :mod:`~lightrag.components.graph_rag.index.maintenance`, each function receives the
index's :class:`~lightrag.components.graph_rag.index.stores.IndexStores`, runs inside the
index's write transaction (``with index.writing_sync(): create_relation(index.stores, ...)``)
and queues what it changed for re-embedding (``index_pending``).

A relation created by hand belongs to no document and cites no chunk (``source_id`` is
empty): deleting documents leaves it alone, unless one of its entities goes (a relation never
outlives its entities). Deleting a relation removes its pair from the graph items of the
documents of its chunks; an entry left elsewhere (a document that named the pair before it was
removed with an entity) is stale, and a document delete passes over an item its chunks do not
cite. If a document inserted later extracts the same pair, the relation becomes that
document's too: its description is merged, and deleting that document removes it.

Example:
    >>> with index.writing_sync():  # doctest: +SKIP
    ...     create_relation(index.stores, "Alice", "Acme", {"description": "Alice runs Acme."})
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

from lightrag.components.graph_rag.index.item_documents import forget_in_documents
from lightrag.components.graph_rag.index.stores import IndexStores
from lightrag.components.graph_rag.index.vectors import pending_key, queue_vectors
from lightrag.components.graph_rag.merger import relation_vector_id, split_field
from lightrag.components.graph_rag.schemas import normalize_entity_name, now_iso, relation_key

EDITABLE = ("description", "keywords", "weight", "file_path")
MANUAL_FILE_PATH = "manual"
MAX_DESCRIPTION_CHARS = 50_000
MAX_SHORT_CHARS = 2_000


def _entity(stores: IndexStores, name: Any) -> str:
    """The stored name of an entity given as stored or in any spelling that normalises to it."""
    if isinstance(name, str):
        for candidate in (name, normalize_entity_name(name)):
            if candidate and stores.graph.has_node(candidate):
                return candidate
    raise KeyError(f"no entity named {name!r}")


def _pair(stores: IndexStores, src: Any, tgt: Any) -> Tuple[str, str]:
    a, b = _entity(stores, src), _entity(stores, tgt)
    if a == b:
        raise ValueError(f"a relation joins two entities; both ends are {a!r}")
    return relation_key(a, b)


def _fields(updates: Any) -> Dict[str, Any]:
    """``updates`` checked: known fields, strings of bounded size, a finite weight >= 0."""
    if not isinstance(updates, dict):
        raise TypeError(f"relation fields must be a dict, got {type(updates).__name__}")
    unknown = sorted(set(updates) - set(EDITABLE))
    if unknown:
        raise ValueError(f"cannot set relation fields {unknown}; editable: {list(EDITABLE)}")
    clean: Dict[str, Any] = {}
    for key, value in updates.items():
        if key == "weight":
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise ValueError(f"weight must be a finite number >= 0, got {value!r}")
            clean[key] = float(value)
            continue
        if key == "keywords" and isinstance(value, (list, tuple)) \
                and all(isinstance(k, str) for k in value):
            value = ",".join(value)
        if not isinstance(value, str):
            raise TypeError(f"{key} must be a string, got {type(value).__name__}")
        limit = MAX_DESCRIPTION_CHARS if key == "description" else MAX_SHORT_CHARS
        if len(value) > limit:
            raise ValueError(f"{key} has {len(value)} characters; at most {limit}")
        if key == "keywords":
            value = ",".join(sorted({k.strip() for k in value.split(",") if k.strip()}))
        clean[key] = value.strip()
    return clean


def create_relation(stores: IndexStores, src: str, tgt: str,
                    fields: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Add a relation between two existing entities; returns its stored fields.

    Args:
        src / tgt: the entities (stored names, or names normalising to them).
        fields: ``description``, ``keywords`` (a string or a list), ``weight`` (default 1.0),
            ``file_path`` (default ``"manual"``).

    Raises:
        KeyError: an entity is missing. ValueError: the relation exists already, both ends
            are one entity, or a field is unknown or invalid. TypeError: a field of the wrong
            type.
    """
    pair = _pair(stores, src, tgt)
    clean = _fields({} if fields is None else fields)
    if stores.graph.get_edge(*pair) is not None:
        raise ValueError(f"a relation between {pair[0]!r} and {pair[1]!r} exists already: "
                         "use edit_relation")
    edge = {"weight": 1.0, "description": "", "keywords": "", "file_path": MANUAL_FILE_PATH,
            **clean, "source_id": "", "created_at": now_iso()}
    stores.graph.upsert_edge(*pair, edge)
    queue_vectors(stores, relations=[pair])
    return stores.graph.get_edge(*pair)


def edit_relation(stores: IndexStores, src: str, tgt: str,
                  updates: Dict[str, Any]) -> Dict[str, Any]:
    """Change a relation's ``description``, ``keywords``, ``weight`` or ``file_path``; returns
    its stored fields. Its chunks (``source_id``) stay: a later delete of a document it came
    from rebuilds it from the cached extractions, as for an edited entity.

    Raises:
        KeyError: no such entity or relation. ValueError / TypeError: an invalid update.
    """
    pair = _pair(stores, src, tgt)
    edge = stores.graph.get_edge(*pair)
    if edge is None:
        raise KeyError(f"no relation between {pair[0]!r} and {pair[1]!r}")
    clean = _fields(updates)
    stores.graph.upsert_edge(*pair, {**edge, **clean})
    queue_vectors(stores, relations=[pair])
    return stores.graph.get_edge(*pair)


def delete_relation(stores: IndexStores, src: str, tgt: str) -> None:
    """Remove a relation, its vector and its queued re-embedding; its entities stay.

    Raises:
        KeyError: no such entity or relation.
    """
    pair = _pair(stores, src, tgt)
    edge = stores.graph.get_edge(*pair)
    if edge is None:
        raise KeyError(f"no relation between {pair[0]!r} and {pair[1]!r}")
    stores.graph.remove_edges([pair])
    stores.relations_vdb.delete([relation_vector_id(*pair)])
    stores.pending_vectors.delete([pending_key("r", *pair)])
    forget_in_documents(stores, split_field(edge.get("source_id")), pair)
