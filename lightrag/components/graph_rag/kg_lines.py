"""The JSON lines that put entities and relations into a query context, and their token counts.

Token budgets (``max_entity_tokens``, ``max_relation_tokens``) need the token count of every
candidate line, and tokenising ~14k tokens of lines per query is most of a query's CPU time. So
the merger records, with each node and edge, the token count of its line and a CRC-32 of the
line's text (:func:`annotate_entity`, :func:`annotate_relation`). At query time the line is built
anyway (it goes into the context); when its CRC matches the stored one the stored count is used,
otherwise (an item written by other code, an edited description) the line is tokenised then.
The counts are therefore exact, whoever wrote the item.

Example:
    >>> node = annotate_entity("Saturn", {"entity_type": "location", "description": "A planet."})
    >>> line = json.dumps(entity_line({**node, "entity_name": "Saturn"}), ensure_ascii=False)
    >>> line_tokens([{**node, "entity_name": "Saturn"}], [line]) == [count_tokens(line)]
    True
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Dict, List, Sequence

from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, relation_key
from lightrag.core.tokenizer import count_tokens, count_tokens_batch

LINE_TOKENS = "context_line_tokens"
LINE_CRC = "context_line_crc"


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


def _crc(line: str) -> int:
    return zlib.crc32(line.encode("utf-8"))


def _annotated(data: Dict[str, Any], line: str) -> Dict[str, Any]:
    return {**data, LINE_TOKENS: count_tokens(line), LINE_CRC: _crc(line)}


def annotate_entity(name: str, node: Dict[str, Any]) -> Dict[str, Any]:
    """``node`` with the token count and CRC of its context line added."""
    return _annotated(node, dump_line(entity_line({**node, "entity_name": name})))


def annotate_relation(src: str, tgt: str, edge: Dict[str, Any]) -> Dict[str, Any]:
    """``edge`` with the token count and CRC of its context line added (endpoints in the
    sorted order the query side uses)."""
    a, b = relation_key(src, tgt)
    return _annotated(edge, dump_line(relation_line({**edge, "src_id": a, "tgt_id": b})))


def line_tokens(items: Sequence[Dict[str, Any]], lines: Sequence[str]) -> List[int]:
    """Token count of each line: the stored one when the item's CRC matches the line, else
    counted now (all recounts in one batch)."""
    counts: List[Any] = []
    missing: List[int] = []
    for i, (item, line) in enumerate(zip(items, lines)):
        stored = item.get(LINE_TOKENS)
        if isinstance(stored, int) and item.get(LINE_CRC) == _crc(line):
            counts.append(stored)
        else:
            counts.append(None)
            missing.append(i)
    if missing:
        for i, n in zip(missing, count_tokens_batch([lines[i] for i in missing])):
            counts[i] = n
    return counts


def public_fields(data: Dict[str, Any]) -> Dict[str, Any]:
    """``data`` without the bookkeeping fields added here (for results shown to users)."""
    if LINE_TOKENS not in data and LINE_CRC not in data:
        return data
    return {k: v for k, v in data.items() if k not in (LINE_TOKENS, LINE_CRC)}
