"""Turn an LLM's entity/relation extraction output into records, repairing what can be repaired.

:func:`parse_extraction_output` reads both formats of :mod:`~lightrag.components.graph_rag.prompts`:
lines (``entity<|#|>name<|#|>type<|#|>description``,
``relation<|#|>source<|#|>target<|#|>keywords<|#|>description``, then ``<|DONE|>``) and JSON
(``{"entities": [...], "relationships": [...]}``). It tolerates ``<think>`` blocks, code fences,
prose, mangled delimiters (``<|##|>``, ``<|>``, ``<#>``, ``<|SEP|>``, a missing bracket), records
run together on one line, the older ``("entity"<|>...)##`` style with a strength field, 5-field
rows labelled ``entity``, unlabelled rows, quoted fields, bullets and numbering, a missing
completion marker and truncated JSON. What it repairs or drops is listed in ``problems``.

Example:
    >>> text = 'entity<|#|>Ada Lovelace<|#|>Person<|#|>A mathematician.\\n<|DONE|>'
    >>> entities, relations, problems = parse_extraction_output(text, "chunk-1")
    >>> entities[0].entity_name, entities[0].entity_type, problems
    ('Ada Lovelace', 'person', [])
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any, Iterable, List, Optional, Tuple

from lightrag.components.graph_rag.prompts import COMPLETION_MARKER, TUPLE_DELIMITER
from lightrag.components.graph_rag.schemas import (
    EntityRecord,
    RelationRecord,
    normalize_entity_name,
    now_iso,
)
from lightrag.core.text_extract import (
    find_json_candidates,
    parse_json_str_to_obj,
    strip_think_blocks,
)

log = logging.getLogger(__name__)

MAX_NAME_CHARS = 256
MAX_NAME_BYTES = 512

_COMPLETION = re.compile(
    r"<\s*\|*\s*(?:DONE|COMPLETE|COMPLETED|COMPLETION|END|FINISHED)\s*\|*\s*>", re.IGNORECASE
)
_DELIM_BRACKETED = re.compile(r"<[ |#]*(?:sep|s|tuple[_ ]?delimiter)?[ |#]*>", re.I)
_DELIM_BARE = re.compile(r"<?\|\s*#+\s*\|>?")
_FENCE_LINE = re.compile(r"^\s*```[^\n]*$", re.MULTILINE)
_OLD_RECORD_SEP = re.compile(  # "##" between records of the older tuple format
    r"\)\s*##\s*\(|##\s*$|##\s*(?=\(?\s*[\"']?(?:entity|relation)[a-z]*[\"']?\s*<\|#\|>)",
    re.IGNORECASE | re.MULTILINE,
)
_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d{1,4}\s*[.)]|\(\d{1,4}\))\s+")
_HTML_TAG = re.compile(r"</?(?:p|br)\s*/?>", re.IGNORECASE)
_KEYWORD_SPLIT = re.compile(r"[,;，；、\n]+")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_QUOTE_PAIRS = {'"': '"', "'": "'", "“": "”", "‘": "’", "《": "》", "`": "`"}
_BAD_TYPE_CHARS = set("()<>|/\\")
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FULL_WIDTH[0x3000] = 0x20

_LABELS = {
    **dict.fromkeys(("entity", "entities", "node"), "entity"),
    **dict.fromkeys(("relation", "relations", "relationship", "relationships", "edge"), "relation"),
    **dict.fromkeys(("content_keywords", "contentkeywords", "keywords"), "skip"),
}
_RECORD_SIZE = {"entity": 4, "relation": 5}

Problems = List[str]


MAX_OUTPUT_CHARS = 2_000_000  # one extraction reply; the rest is cut (and logged)
MAX_RECORDS = 2_000  # entities, and relations, kept from one reply
# zero-width characters, the soft hyphen and bidirectional controls: invisible, so names that
# differ only by them would become separate look-alike nodes
_INVISIBLE = dict.fromkeys([0x00AD, 0x034F, 0x061C, 0x180E, *range(0x200B, 0x2010),
                            *range(0x202A, 0x202F), *range(0x2060, 0x2070), 0xFEFF])


#: terminal escape sequences (``ESC [ 31 m``) a model may emit: they recolour or move the cursor
#: of whoever prints a name
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
#: other control characters (C0 but tab and newlines, DEL, C1), NUL included
_CONTROL = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
#: characters of one record's description; a longer one (a model repeating itself) is cut at a
#: word end: a description longer than a chunk describes nothing
MAX_DESCRIPTION_CHARS = 4_000


def clean_text(value: Any) -> str:
    """Whitespace collapsed, full-width ASCII made half-width, invisible characters (zero-width,
    soft hyphen, bidi controls), control characters and terminal escape sequences dropped,
    ``<p>``/``<br>`` and matching outer quotes removed."""
    text = _ESCAPE_SEQUENCE.sub("", str(value))
    text = _HTML_TAG.sub(" ", text).replace("\u00a0", " ").translate(_FULL_WIDTH)
    text = text.translate(_INVISIBLE).translate(_CONTROL)
    text = " ".join(text.split())
    for _ in range(2):
        if len(text) >= 2 and _QUOTE_PAIRS.get(text[0]) == text[-1]:
            text = text[1:-1].strip()
    return text


def _description(value: Any) -> str:
    text = clean_text(value)
    if len(text) > MAX_DESCRIPTION_CHARS:
        cut = text.rfind(" ", 0, MAX_DESCRIPTION_CHARS)
        text = text[: cut if cut > 0 else MAX_DESCRIPTION_CHARS]
    return text


def _entity_name(value: Any) -> str:
    name = normalize_entity_name(clean_text(value))[:MAX_NAME_CHARS]
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1]
    return name.strip()


def _entity_type(value: Any, problems: Problems) -> str:
    raw = clean_text(value)
    if any(ch in _BAD_TYPE_CHARS for ch in raw):
        problems.append(f"entity type {raw!r} rejected (bad characters); using 'unknown'")
        return "unknown"
    first = _KEYWORD_SPLIT.split(raw)[0] if raw else ""
    return first.replace(" ", "").lower() or "unknown"


def _keywords(value: Any) -> str:
    items = value if isinstance(value, (list, tuple)) else _KEYWORD_SPLIT.split(str(value or ""))
    seen: dict[str, str] = {}
    for item in items:
        word = clean_text(item)
        if word and word.lower() not in seen:
            seen[word.lower()] = word
    return ", ".join(seen.values())


#: the largest relation weight a model's answer may give (a custom KG's bound too): summed
#: weights of 1e308 were stored as Infinity, which SQLite's JSON functions and JSON readers reject
MAX_WEIGHT = 1e6


def _as_weight(value: Any) -> Optional[float]:
    """A relation strength from a model's answer: a finite number >= 0, at most
    :data:`MAX_WEIGHT`; ``None`` (the default weight) for anything else."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        text = clean_text(value) if isinstance(value, str) else ""
        number = float(text) if _NUMBER.fullmatch(text) else math.nan
    return min(number, MAX_WEIGHT) if math.isfinite(number) and number >= 0 else None


def make_entity(
    name: Any, etype: Any, description: Any, chunk_id: str, file_path: str, problems: Problems
) -> Optional[EntityRecord]:
    """An :class:`EntityRecord` from raw fields, or None (reason added to ``problems``)."""
    entity_name = _entity_name(name)
    desc = _description(description)
    if not entity_name:
        problems.append("dropped an entity with an empty name")
        return None
    if not desc:
        problems.append(f"dropped entity {entity_name!r}: empty description")
        return None
    etype = _entity_type(etype, problems)
    return EntityRecord(entity_name=entity_name, entity_type=etype, description=desc,
                        source_id=chunk_id, file_path=file_path, created_at=now_iso())  # fmt: skip


def make_relation(
    source: Any, target: Any, keywords: Any, description: Any, chunk_id: str, file_path: str,
    problems: Problems, weight: Optional[float] = None,
) -> Optional[RelationRecord]:  # fmt: skip
    """A :class:`RelationRecord` from raw fields, or None (reason added to ``problems``)."""
    src, tgt = _entity_name(source), _entity_name(target)
    desc = _description(description)
    if not src or not tgt:
        problems.append(f"dropped a relation with an empty endpoint ({src!r}, {tgt!r})")
        return None
    if src == tgt:
        problems.append(f"dropped self-loop relation on {src!r}")
        return None
    if not desc:
        problems.append(f"dropped relation {src!r} - {tgt!r}: empty description")
        return None
    return RelationRecord(src_id=src, tgt_id=tgt, description=desc, keywords=_keywords(keywords),
                          weight=1.0 if weight is None else weight, source_id=chunk_id,
                          file_path=file_path, created_at=now_iso())  # fmt: skip


def has_completion_marker(text: str) -> bool:
    """Whether the output carries a completion marker (``<|DONE|>``, ``<|COMPLETE|>``, ...)."""
    return bool(_COMPLETION.search(text or ""))


def normalize_delimiters(text: str) -> str:
    """Rewrite mangled tuple delimiters (``<|##|>``, ``<|>``, ``<#>``, ``<|SEP|>``, ``|#|``)
    as ``<|#|>``.

    Example:
        >>> normalize_delimiters("entity<|##|>A<|>person<#>x<|SEP|>y|#|z")
        'entity<|#|>A<|#|>person<|#|>x<|#|>y<|#|>z'
    """

    def fix(match: re.Match[str]) -> str:
        token = match.group(0)
        inner = token[1:-1].strip().lower()
        if "|" in inner or "#" in inner or "sep" in inner or "delimiter" in inner:
            return TUPLE_DELIMITER
        return token

    text = _DELIM_BRACKETED.sub(fix, text)
    return _DELIM_BARE.sub(TUPLE_DELIMITER, text)


def _prepare(text: str) -> str:
    text = strip_think_blocks(text or "")
    text = _COMPLETION.sub("\n", text)
    return _FENCE_LINE.sub("", text)


def is_explicit_empty(text: str) -> bool:
    """True when the model said there is nothing to extract: only a completion marker (prose
    around it allowed, no record rows), or JSON with nothing but empty lists."""
    payload = _load_json(text or "")
    if payload is not None:
        return not any(isinstance(v, list) and v for v in payload.values())
    marked = has_completion_marker(strip_think_blocks(text or ""))
    return marked and TUPLE_DELIMITER not in normalize_delimiters(_prepare(text))


def _load_json(text: str, repair: bool = True) -> Optional[dict]:
    try:
        candidates = find_json_candidates(text, repair, openers="{") if "{" in text else []
    except ValueError:
        return None
    for candidate in candidates:
        try:
            obj = parse_json_str_to_obj(candidate)
        except ValueError:
            continue
        if isinstance(obj, dict) and any(isinstance(v, list) for v in obj.values()):
            return obj
    return None


def truncation_reason(text: str) -> Optional[str]:
    """Why an extraction answer looks cut off (max tokens reached, connection dropped), or
    None: a JSON answer whose brackets had to be closed, or a line-format answer with records
    but no completion marker (the parser would silently lose what came after the cut).

    Example:
        >>> truncation_reason("entity<|#|>Ada<|#|>person<|#|>A mathem")
        'no completion marker after the records (the last record may be cut)'
        >>> truncation_reason("entity<|#|>Ada<|#|>person<|#|>A mathematician.\\n<|DONE|>") is None
        True
        >>> truncation_reason('{"entities": [{"name": "Ada", "type": "person", "descr')
        'the JSON answer is cut off (unclosed brackets)'
    """
    text = str(text or "")
    if not text.strip():
        return None
    if "{" in text and _load_json(text, repair=False) is None and _load_json(text) is not None:
        return "the JSON answer is cut off (unclosed brackets)"
    if _load_json(text) is not None or has_completion_marker(strip_think_blocks(text)):
        return None
    rows = [line for line in normalize_delimiters(_prepare(text)).splitlines()
            if TUPLE_DELIMITER in line]  # fmt: skip
    if not rows:
        return None
    last = _split_fields(rows[-1])
    kind = _label(last[0]) if last else None
    if kind in _RECORD_SIZE and len(last) < _RECORD_SIZE[kind]:
        return f"no completion marker and the last record has only {len(last)} fields"
    return "no completion marker after the records (the last record may be cut)"


def _collect(record: Any, entities: List[EntityRecord], relations: List[RelationRecord]) -> None:
    if isinstance(record, EntityRecord):
        entities.append(record)
    elif isinstance(record, RelationRecord):
        relations.append(record)


def _pick(item: dict, *keys: str) -> Any:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for key in keys:
        if lowered.get(key) not in (None, ""):
            return lowered[key]
    return None


def _parse_json_payload(
    payload: dict, chunk_id: str, file_path: str, problems: Problems
) -> Tuple[List[EntityRecord], List[RelationRecord]]:
    entities: List[EntityRecord] = []
    relations: List[RelationRecord] = []
    for key, items in payload.items():
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                problems.append(f"skipped a non-object item in {key!r}: {str(item)[:60]!r}")
                continue
            source = _pick(item, "source", "src", "src_id", "source_entity", "from", "head")
            target = _pick(item, "target", "tgt", "tgt_id", "target_entity", "to", "tail")
            if source is not None or target is not None:
                record = make_relation(
                    source or "", target or "", _pick(item, "keywords", "relationship_keywords", "type"),
                    _pick(item, "description", "relationship_description", "desc") or "",
                    chunk_id, file_path, problems,
                    _as_weight(_pick(item, "weight", "strength", "relationship_strength")),
                )  # fmt: skip
                _collect(record, entities, relations)
                continue
            name = _pick(item, "name", "entity_name", "entity", "title")
            record = make_entity(
                name or "", _pick(item, "type", "entity_type", "category") or "",
                _pick(item, "description", "entity_description", "desc") or "",
                chunk_id, file_path, problems,
            )  # fmt: skip
            _collect(record, entities, relations)
    return entities, relations


def _label(field: str) -> Optional[str]:
    return _LABELS.get(field.strip().strip("()[]*\"'`“” ").lower().replace(" ", "_"))


def _segment(fields: List[str]) -> List[List[str]]:
    """Split one line's fields into records: a label field starts a new record when the record
    being built is complete (or has no label), which repairs records run together on a line."""
    records: List[List[str]] = []
    current: List[str] = []
    for field in fields:
        kind = _label(field)
        if kind is not None and current:
            current_kind = _label(current[0])
            if current_kind is None or len(current) >= _RECORD_SIZE.get(current_kind, 1):
                records.append(current)
                current = []
        current.append(field)
    if current:
        records.append(current)
    return records


def _split_fields(line: str) -> List[str]:
    line = _BULLET.sub("", line.strip()).strip()
    if line.startswith("(") and line.endswith(")"):
        line = line[1:-1]
    return [field.strip() for field in line.split(TUPLE_DELIMITER)]


def _record(
    fields: List[str], chunk_id: str, file_path: str, problems: Problems
) -> Optional[EntityRecord | RelationRecord]:
    kind = _label(fields[0])
    rest = list(fields[1:]) if kind else list(fields)
    while len(rest) > _RECORD_SIZE.get(kind or "", 4) - 1 and not rest[-1]:
        rest.pop()  # a trailing delimiter
    shown = TUPLE_DELIMITER.join(fields)[:80]
    if kind == "skip":
        return None
    if kind is None:
        if len(rest) not in (3, 4):
            problems.append(f"skipped a row without a record label: {shown!r}")
            return None
        kind = "entity" if len(rest) == 3 else "relation"
        problems.append(f"row without a label read as {kind}: {shown!r}")
    if [f.lower() for f in rest[:2]] in (["name", "type"], ["source", "target"]):
        problems.append("skipped a copy of the format template")
        return None
    if kind == "entity" and len(rest) == 4:
        problems.append(f"5-field row labelled entity read as a relation: {shown!r}")
        kind = "relation"
    if kind == "entity":
        if len(rest) != 3:
            problems.append(f"dropped entity row with {len(rest) + 1} fields: {shown!r}")
            return None
        return make_entity(rest[0], rest[1], rest[2], chunk_id, file_path, problems)
    return _relation(rest, shown, chunk_id, file_path, problems)


def _relation(rest: List[str], shown: str, chunk_id: str, file_path: str,
              problems: Problems) -> Optional[RelationRecord]:
    """A relation row's fields (label removed) as a record, tolerating the usual variants."""
    if len(rest) < 3:
        problems.append(f"dropped relation row with {len(rest) + 1} fields: {shown!r}")
        return None
    weight = _as_weight(rest[-1]) if len(rest) >= 4 else None
    if weight is not None:
        rest = rest[:-1]
        if len(rest) == 4:  # ("relationship", src, tgt, description, keywords, strength)
            rest = [rest[0], rest[1], rest[3], rest[2]]
    if len(rest) == 3:
        problems.append(f"relation row without keywords: {shown!r}")
        rest = [rest[0], rest[1], "", rest[2]]
    elif len(rest) > 4:
        problems.append(f"relation row with {len(rest) + 1} fields; extra fields joined: {shown!r}")
        rest = rest[:3] + ["; ".join(rest[3:])]
    return make_relation(*rest, chunk_id, file_path, problems, weight)


def _parse_lines(
    text: str, chunk_id: str, file_path: str, problems: Problems
) -> Tuple[List[EntityRecord], List[RelationRecord]]:
    entities: List[EntityRecord] = []
    relations: List[RelationRecord] = []
    text = normalize_delimiters(text)
    text = _OLD_RECORD_SEP.sub(lambda m: ")\n(" if m.group(0).startswith(")") else "\n", text)
    ignored = 0
    for line in text.splitlines():
        if TUPLE_DELIMITER not in line:
            ignored += bool(line.strip())
            continue
        for fields in _segment(_split_fields(line)):
            _collect(_record(fields, chunk_id, file_path, problems), entities, relations)
    if ignored:
        problems.append(f"ignored {ignored} line(s) that are not records")
    return entities, relations


def parse_extraction_output(
    text: str, chunk_id: str, file_path: str = "unknown_source"
) -> Tuple[List[EntityRecord], List[RelationRecord], List[str]]:
    """Parse one extraction answer (line format or JSON) into entities, relations and a list of
    what was repaired or dropped. Never raises on bad model output.

    Example:
        >>> raw = ('```json\\n{"entities": [{"name": "paris", "type": "Location", '
        ...        '"description": "Capital of France."}], "relationships": []}\\n```')
        >>> entities, relations, problems = parse_extraction_output(raw, "c1", "notes.md")
        >>> entities[0].entity_name, entities[0].file_path
        ('Paris', 'notes.md')
    """
    problems: Problems = []
    if not text or not str(text).strip():
        return [], [], ["empty output"]
    text = str(text)
    if len(text) > MAX_OUTPUT_CHARS:
        log.warning("chunk %s: extraction reply of %d characters cut to %d", chunk_id, len(text),
                    MAX_OUTPUT_CHARS)
        problems.append(f"reply of {len(text)} characters cut to {MAX_OUTPUT_CHARS}")
        text = text[:MAX_OUTPUT_CHARS]
    entities, relations = _parse_any(text, chunk_id, file_path, problems)
    for kind, records in (("entities", entities), ("relations", relations)):
        if len(records) > MAX_RECORDS:
            log.warning("chunk %s: %d %s in one reply; the first %d kept", chunk_id, len(records),
                        kind, MAX_RECORDS)
            problems.append(f"{len(records)} {kind} cut to {MAX_RECORDS}")
            del records[MAX_RECORDS:]
    if problems:
        log.debug("chunk %s: %s", chunk_id, "; ".join(problems))
    return entities, relations, problems


def _parse_any(text: str, chunk_id: str, file_path: str, problems: Problems
               ) -> Tuple[List[EntityRecord], List[RelationRecord]]:
    payload = _load_json(text) if "{" in text else None
    if payload is not None:
        entities, relations = _parse_json_payload(payload, chunk_id, file_path, problems)
        if entities or relations or TUPLE_DELIMITER not in normalize_delimiters(text):
            return entities, relations
        problems.append("JSON held no records; reading the line format instead")
    elif text.lstrip().startswith("{") or '"entities"' in text:
        problems.append("output looks like JSON but could not be parsed; trying the line format")
    if not has_completion_marker(strip_think_blocks(text)):
        problems.append("completion marker missing")
    return _parse_lines(_prepare(text), chunk_id, file_path, problems)


def records_to_lines(entities: Iterable[EntityRecord], relations: Iterable[RelationRecord]) -> str:
    """Render records in the line format (for few-shot examples, fakes and round-trip tests)."""
    d = TUPLE_DELIMITER
    lines = [f"entity{d}{e.entity_name}{d}{e.entity_type}{d}{e.description}" for e in entities]
    lines += [f"relation{d}{r.src_id}{d}{r.tgt_id}{d}{r.keywords}{d}{r.description}" for r in relations]
    return "\n".join(lines + [COMPLETION_MARKER])


def records_to_json(entities: Iterable[EntityRecord], relations: Iterable[RelationRecord]) -> str:
    """Render records in the JSON format of the JSON-mode prompt."""
    ents = [{"name": e.entity_name, "type": e.entity_type, "description": e.description}
            for e in entities]
    rels = [{"source": r.src_id, "target": r.tgt_id, "keywords": r.keywords,
             "description": r.description} for r in relations]
    return json.dumps({"entities": ents, "relationships": rels}, ensure_ascii=False)  # fmt: skip
