"""The JSON lines that put entities and relations into a query context, and their token counts.

Token budgets (``max_entity_tokens``, ``max_relation_tokens``) need the token count of every
candidate line, and tokenising ~14k tokens of lines per query is most of a query's CPU time. The
counts are therefore remembered per line text (a 16-byte BLAKE2 digest of the line, so an edited
description is simply a new line) in a bounded in-process table: the first query that shows a
line counts it, later ones look it up. Nothing is written into the graph: user data holds only
user data.

Example:
    >>> line = dump_line(entity_line({"entity_name": "Saturn", "description": "A planet."}))
    >>> line_tokens([{}], [line]) == [count_tokens(line)]
    True
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Dict, List, Sequence

from lightrag.components.storage.base import GRAPH_FIELD_SEP, LEGACY_FIELDS
from lightrag.core.tokenizer import count_tokens, count_tokens_batch  # noqa: F401 (doctest)

MAX_REMEMBERED_LINES = 400_000

_counts: OrderedDict[bytes, int] = OrderedDict()
_counts_lock = threading.Lock()


def entity_line(e: Dict[str, Any]) -> Dict[str, Any]:
    """The context record of an entity (``entity_name`` plus its node properties)."""
    return {"entity": e["entity_name"], "type": e.get("entity_type", "unknown"),
            "description": str(e.get("description", "")).replace(GRAPH_FIELD_SEP, "\n")}


def relation_line(r: Dict[str, Any]) -> Dict[str, Any]:
    """The context record of a relation (``src_id``/``tgt_id`` plus its edge properties)."""
    return {"entity1": r["src_id"], "entity2": r["tgt_id"],
            "description": str(r.get("description", "")).replace(GRAPH_FIELD_SEP, "\n")}


def dump_line(record: Dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def _key(line: str) -> bytes:
    return hashlib.blake2b(line.encode("utf-8"), digest_size=16).digest()


def line_tokens(items: Sequence[Dict[str, Any]], lines: Sequence[str]) -> List[int]:
    """Token count of each line (``items`` are the records the lines were made from; kept for
    callers, unused): remembered counts where known, the rest counted in one batch."""
    keys = [_key(line) for line in lines]
    with _counts_lock:
        counts: List[Any] = [_counts.get(k) for k in keys]
    missing = [i for i, n in enumerate(counts) if n is None]
    if missing:
        fresh = count_tokens_batch([lines[i] for i in missing])
        with _counts_lock:
            for i, n in zip(missing, fresh):
                counts[i] = n
                _counts[keys[i]] = n
            while len(_counts) > MAX_REMEMBERED_LINES:
                _counts.popitem(last=False)
    return counts


def public_fields(data: Dict[str, Any]) -> Dict[str, Any]:
    """``data`` without bookkeeping fields (for results shown to users and exports)."""
    if not any(f in data for f in LEGACY_FIELDS):
        return data
    return {k: v for k, v in data.items() if k not in LEGACY_FIELDS}
