"""Which chunks of an entity or relation a query considers, with a cost bounded for hubs.

An entity cited by 100k chunks must not make a query slow: a query takes at most
:data:`MAX_CHUNKS_PER_ITEM` chunks of any item, for a hub the ones most similar to the query
among the :data:`HUB_SCAN_CHUNKS` of its record's window (a uniform sample of its chunks, see
:func:`~lightrag.components.storage.node_sources.window_ids`; :func:`hub_chunk_choice`), and the
joined id lists are split once and cached.

Example:
    >>> item_chunk_ids({"source_id": "c1<SEP>c2<SEP>c1"})
    ['c1', 'c2']
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag.merger import split_field
from lightrag.components.storage.base import BaseVectorStorage


def query_similarities(chunks_vdb: Any, ids: Sequence[str], query_vector: np.ndarray,
                       known: Optional[Dict[str, float]] = None) -> Dict[str, float]:
    """Cosine of each stored chunk in ``ids`` to the query: one vector fetch, one product.
    ``known`` holds cosines to the same query computed before (reused; the new ones are added
    to it)."""
    known = {} if known is None else known
    fresh = [c for c in dict.fromkeys(ids) if c not in known]
    found, vectors = _vector_matrix(chunks_vdb, fresh) if fresh else ([], None)
    if found:
        norm = float(np.linalg.norm(query_vector)) or 1.0
        unit_query = np.asarray(query_vector, dtype=np.float32) / norm
        known.update(zip(found, (vectors @ unit_query).tolist()))
    return {c: known[c] for c in ids if c in known}


def _vector_matrix(store: Any, ids: Sequence[str]) -> Tuple[List[str], np.ndarray]:
    """``store.get_vector_matrix(ids)``; for a store that only reads vectors by id (the duck
    type of :meth:`get_vectors_by_ids`), the base class's version built on that."""
    read = getattr(store, "get_vector_matrix", None)
    return read(ids) if read is not None else BaseVectorStorage.get_vector_matrix(store, ids)


#: chunks of one entity or relation considered by a query: a hub cited by 100k chunks
#: contributes this many (the closest to the query among its window's), never all of them
MAX_CHUNKS_PER_ITEM = 64


def item_chunk_ids(item: Dict[str, Any], chosen: Optional[Dict[str, tuple]] = None,
                   cap: int = MAX_CHUNKS_PER_ITEM) -> List[str]:
    """The distinct chunk ids an entity or relation cites, at most ``cap``: a hub's ``chosen``
    ones (by :func:`hub_chunk_choice`) when given, else the last of its window (an item cited by
    up to 512 chunks: its most recently added). The cost is
    bounded for hubs (a split of the id list, cached; no per-id work beyond the cap)."""
    source = str(item.get("source_id") or "")
    if chosen and source in chosen:
        return list(chosen[source])
    return list(_capped_chunk_ids(source, cap))


#: chunks of a hub compared with the query to choose its ``MAX_CHUNKS_PER_ITEM`` (its most
#: recent ones beyond this are not looked at: the cost stays bounded however large the hub)
HUB_SCAN_CHUNKS = 512

#: chunk vectors one query compares for all its hubs together. Hubs take up to
#: ``HUB_SCAN_CHUNKS`` each in the order the items are ranked while the budget lasts; the rest
#: keep the last ``MAX_CHUNKS_PER_ITEM`` of their windows. In a store of 1M chunks a query's entities and
#: relations held ~100 hubs (50k-70k vectors read, ~0.4 s). MuSiQue-100 R@2/R@5 are the same in
#: every mode with budgets (this and ``CITED_BUDGET``) of 2,048 as with none; at 1,024 hybrid
#: R@2 lost 0.5.
HUB_SCAN_BUDGET = 2048


def hub_chunk_choice(chunks_vdb: Any, items: Sequence[Dict[str, Any]],
                     query_vector: Optional[np.ndarray],
                     budget: Optional[int] = None,
                     known: Optional[Dict[str, float]] = None) -> Dict[str, tuple]:
    """For the hubs among ``items`` (citing more than ``MAX_CHUNKS_PER_ITEM`` chunks), best
    ranked first while ``budget`` chunk vectors last: the ``MAX_CHUNKS_PER_ITEM`` of a hub's
    window's last ``HUB_SCAN_CHUNKS`` chunks most similar to the query, keyed by its ``source_id``
    text. One vector look-up for all hubs; ``known`` as in :func:`query_similarities`."""
    if query_vector is None:
        return {}
    budget = HUB_SCAN_BUDGET if budget is None else budget
    hubs: Dict[str, tuple] = {}
    for item in items:
        source = str(item.get("source_id") or "")
        ids = _all_chunk_ids(source)
        if len(ids) <= MAX_CHUNKS_PER_ITEM or source in hubs:
            continue
        scan = min(HUB_SCAN_CHUNKS, len(ids), budget)
        if scan <= MAX_CHUNKS_PER_ITEM:
            break
        hubs[source] = ids[-scan:]
        budget -= scan
    if not hubs:
        return {}
    similarity = query_similarities(chunks_vdb, list(dict.fromkeys(c for ids in hubs.values()
                                                                   for c in ids)), query_vector, known)
    return {source: tuple(sorted(ids, key=lambda c: -similarity.get(c, -2.0))[:MAX_CHUNKS_PER_ITEM])
            for source, ids in hubs.items()}


#: chunk ids one query takes from all its items together (entities, relations, bridges, in rank
#: order): items take theirs while the budget lasts, later ones only their first ``floor``. In
#: a store of 1M chunks a query's ~400 items offered ~11k ids (0.1-0.2 s of vector look-ups) to
#: pick ~20 chunks from.
CITED_BUDGET = 2048


def allot_chunk_ids(items: Sequence[Dict[str, Any]], chosen: Dict[str, tuple], floor: int,
                    budget: Optional[int] = None) -> Dict[str, tuple]:
    """``chosen`` (from :func:`hub_chunk_choice`) extended so that the ids of all ``items``
    together stay within ``budget``: in order, each item keeps its ids (at most
    ``MAX_CHUNKS_PER_ITEM``) while the budget lasts; once it is spent, an item keeps its first
    ``floor`` (a hub's most similar to the query, another item's last cited)."""
    budget = CITED_BUDGET if budget is None else budget
    allotted = dict(chosen)
    seen: set = set()
    for item in items:
        source = str(item.get("source_id") or "")
        if source in seen:
            continue
        seen.add(source)
        ids = item_chunk_ids(item, chosen)
        keep = max(floor, min(len(ids), budget))
        if keep < len(ids):
            allotted[source] = tuple(ids[:keep])
        budget -= min(len(ids), keep)
    return allotted


@functools.lru_cache(maxsize=512)
def _all_chunk_ids(source_id: str) -> tuple:
    return tuple(dict.fromkeys(split_field(source_id)))


@functools.lru_cache(maxsize=4096)
def _capped_chunk_ids(source_id: str, cap: int) -> tuple:
    ids = _all_chunk_ids(source_id)
    return ids if len(ids) <= cap else tuple(reversed(ids[-cap:]))
