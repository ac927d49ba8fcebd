"""The format of an imported knowledge graph (HKU LightRAG's ``insert_custom_kg``): its typed
records (:class:`CustomKG`, :class:`CustomChunk`, :class:`CustomEntity`, :class:`CustomRelation`)
and :func:`load_custom_kg`, which reads a dict, JSON text or file, or CSV files and validates
them, reporting every problem with the record that has it (``relationships[3]: unknown endpoint
'Acme'``). Writing a graph into the index is :mod:`.custom_kg`. A CSV cell that a spreadsheet-safe
export quoted (``'=SUM(A1)``: one single quote before ``=``, ``+``, ``-``, ``@``, tab or carriage
return) is read without that quote (:func:`~lightrag.components.storage.graph_export.csv_uncell`).

Example:
    >>> kg = load_custom_kg({"entities": [{"entity_name": "Acme", "description": "A company."}]})
    >>> [e.entity_name for e in kg.entities], kg.document_id()[:3]
    (['Acme'], 'kg-')
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from lightrag.components.graph_rag.schemas import (
    GRAPH_FIELD_SEP,
    compute_mdhash_id,
    normalize_entity_name,
)
from lightrag.components.storage.graph_export import csv_uncell
from lightrag.core.base_data_class import DataClass

MAX_FILE_BYTES = 256 * 1024 * 1024  #: one JSON or CSV file
MAX_RECORDS = 500_000  #: per list (chunks, entities, relationships)
MAX_CONTENT_CHARS = 200_000  #: one chunk's text
MAX_DESCRIPTION_CHARS = 50_000
MAX_NAME_CHARS = 256  #: entity names and source ids (as the extraction parser)
MAX_SHORT_CHARS = 2_000  #: entity_type, keywords, file_path
#: the largest relation weight: weights of a relation are summed when it merges, and a sum that
#: reaches infinity is stored as ``Infinity``, which is no JSON (the store's checks fail on it)
MAX_WEIGHT = 1_000_000.0
MAX_ORDER_INDEX = 2**31 - 1  #: the largest chunk_order_index
#: characters no text field may hold: C0 controls but tab, newline and carriage return, DEL,
#: C1 controls (ESC starts terminal escape sequences) and lone surrogates (not Unicode text)
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
DEFAULT_FILE_PATH = "custom_kg"
CSV_FILES = ("chunks", "entities", "relationships")  #: ``<name>.csv``, in this order

_FIELDS = {
    "chunks": ("content", "source_id", "file_path", "chunk_order_index"),
    "entities": ("entity_name", "entity_type", "description", "source_id", "file_path"),
    "relationships": ("src_id", "tgt_id", "description", "keywords", "weight", "source_id",
                      "file_path"),
}


class CustomKGError(ValueError):
    """A custom knowledge graph that cannot be imported; ``record`` names the culprit
    (``"entities[0]"``, or ``""`` for the whole graph)."""

    def __init__(self, record: str, reason: str) -> None:
        super().__init__(f"{record}: {reason}" if record else reason)
        self.record = record
        self.reason = reason


def _d(text: str) -> Dict[str, str]:
    return {"desc": text}


@dataclass
class CustomChunk(DataClass):
    """A chunk of text the graph's items cite."""

    content: str = field(default="", metadata=_d("The chunk text"))
    source_id: str = field(default="", metadata=_d("The label entities and relations cite"))
    file_path: str = field(default=DEFAULT_FILE_PATH, metadata=_d("Source file, for references"))
    chunk_order_index: int = field(default=0, metadata=_d("Position in its source"))


@dataclass
class CustomEntity(DataClass):
    """An entity; merges by normalised name with entities already in the graph."""

    entity_name: str = field(default="", metadata=_d("Normalised name"))
    entity_type: str = field(default="unknown", metadata=_d("Type, lower case"))
    description: str = field(default="", metadata=_d("What is known of it"))
    source_ids: List[str] = field(default_factory=list, metadata=_d("Chunk labels; [] = synthetic"))
    file_path: str = field(default="", metadata=_d("Source file of a source-less item"))


@dataclass
class CustomRelation(DataClass):
    """An undirected relation between two entities of the graph."""

    src_id: str = field(default="", metadata=_d("One entity name"))
    tgt_id: str = field(default="", metadata=_d("The other entity name"))
    description: str = field(default="", metadata=_d("What relates them"))
    keywords: str = field(default="", metadata=_d("Comma-separated keywords"))
    weight: float = field(default=1.0, metadata=_d("Strength, finite and >= 0"))
    source_ids: List[str] = field(default_factory=list, metadata=_d("Chunk labels; [] = synthetic"))
    file_path: str = field(default="", metadata=_d("Source file of a source-less item"))


@dataclass
class CustomKG(DataClass):
    """A validated custom knowledge graph (:func:`load_custom_kg`)."""

    chunks: List[CustomChunk] = field(default_factory=list, metadata=_d("Chunks"))
    entities: List[CustomEntity] = field(default_factory=list, metadata=_d("Entities"))
    relationships: List[CustomRelation] = field(default_factory=list, metadata=_d("Relations"))

    def canonical_json(self) -> str:
        """The graph as sorted, compact JSON: the imported document's text."""
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))

    def document_id(self, text: Optional[str] = None) -> str:
        """The default document id of an import: ``"kg-"`` + MD5 of :meth:`canonical_json`
        (given as ``text`` when already made)."""
        return compute_mdhash_id(self.canonical_json() if text is None else text, prefix="kg-")


# ----------------------------------------------------------------------------- reading
KGSource = Union[CustomKG, Mapping[str, Any], str, Path, Sequence[Union[str, Path]]]


def load_custom_kg(source: KGSource) -> CustomKG:
    """Read and validate a custom knowledge graph.

    Args:
        source: a :class:`CustomKG`; a dict ``{"chunks": [...], "entities": [...],
            "relationships": [...]}`` (each list optional); JSON text of one; the path of a
            ``.json`` file; the path of a folder holding ``chunks.csv``, ``entities.csv``,
            ``relationships.csv`` (each optional); or a list of such CSV paths (a file's name
            ends with ``chunks.csv``, ``entities.csv`` or ``relationships.csv``). CSV columns are
            the JSON field names; several source ids are joined with ``<SEP>``.

    Raises:
        CustomKGError: naming the record and what is wrong with it (also for unreadable
            files, bad JSON and sizes over the limits of this module).
    """
    if isinstance(source, CustomKG):
        return source
    if isinstance(source, Mapping):
        return _validate(source, {})
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        return _validate(_parse_json(source, "the JSON text"), {})
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            folder = path.is_dir()
        except (OSError, ValueError) as e:  # a name too long to be a path, a NUL in it
            raise CustomKGError("", f"cannot read {str(path)[:200]!r}: "
                                f"{getattr(e, 'strerror', None) or e}") from e
        if folder:
            files = [path / f"{name}.csv" for name in CSV_FILES if (path / f"{name}.csv").is_file()]
            if not files:
                raise CustomKGError("", f"{path}: no chunks.csv, entities.csv or relationships.csv")
            for file in files:  # a link to a file outside the folder (~/.ssh/...) is not read
                if not file.resolve().is_relative_to(path.resolve()):
                    raise CustomKGError("", f"{file}: a link to a file outside {path}; copy "
                                        "the file into the folder or give its path")
            return _load_csv(files)
        if path.suffix.lower() == ".csv":
            return _load_csv([path])
        return _validate(_parse_json(_read(path), str(path)), {})
    if isinstance(source, Sequence) and all(isinstance(p, (str, Path)) for p in source):
        return _load_csv([Path(p) for p in source])
    raise CustomKGError("", f"cannot read a knowledge graph from a {type(source).__name__}; give "
                        "a dict, JSON text, a .json file, a folder of CSV files or CSV paths")


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CustomKGError("", f"{path}: {size} bytes; at most {MAX_FILE_BYTES} are read")
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise CustomKGError("", f"cannot read {path}: {e}") from e


def _parse_json(text: str, where: str) -> Any:
    if len(text) > MAX_FILE_BYTES:
        raise CustomKGError("", f"{where}: {len(text)} characters; at most {MAX_FILE_BYTES}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CustomKGError("", f"{where} is not valid JSON: {e}") from e
    except RecursionError:
        raise CustomKGError("", f"{where}: the JSON nests too deeply") from None
    except ValueError as e:  # an integer of more than 4300 digits
        raise CustomKGError("", f"{where}: {e}") from None


def _load_csv(paths: Sequence[Path]) -> CustomKG:
    data: Dict[str, List[Dict[str, str]]] = {}
    where: Dict[str, Any] = {}
    for path in paths:
        kind = next((k for k in CSV_FILES if path.name.lower().endswith(f"{k}.csv")), None)
        if kind is None:
            raise CustomKGError("", f"{path}: a CSV file's name must end with chunks.csv, "
                                "entities.csv or relationships.csv")
        if kind in data:
            raise CustomKGError("", f"{path}: a second {kind}.csv")
        reader = csv.DictReader(io.StringIO(_read(path), newline=""))
        if reader.fieldnames:
            reader.fieldnames = [csv_uncell(c) for c in reader.fieldnames]
        unknown = [c for c in reader.fieldnames or [] if c not in _FIELDS[kind]]
        if unknown:
            raise CustomKGError("", f"{path}: unknown column(s) {unknown}; {kind}.csv has "
                                f"{', '.join(_FIELDS[kind])}")
        rows, lines = [], []
        try:
            for row in reader:
                if len(rows) >= MAX_RECORDS:
                    raise CustomKGError("", f"{path}: more than {MAX_RECORDS} rows")
                if None in row:
                    raise CustomKGError(f"{kind}[{len(rows)}]", "more values than columns "
                                        f"({path.name} line {reader.line_num})")
                # a cell a spreadsheet-safe export quoted ("'=x") reads as its value ("=x")
                rows.append({k: csv_uncell(v) for k, v in row.items() if v not in (None, "")})
                lines.append(reader.line_num)
        except csv.Error as e:
            raise CustomKGError("", f"{path} line {reader.line_num}: {e}") from e
        data[kind] = rows
        where[kind] = (path.name, lines)
    return _validate(data, where)


# -------------------------------------------------------------------------- validation
class _Record:
    """The fields of one input record, checked and converted, with errors naming it."""

    def __init__(self, kind: str, index: int, raw: Any, where: Dict[str, Any]) -> None:
        self.name = f"{kind}[{index}]"
        self.suffix = ""
        if kind in where:
            file, lines = where[kind]
            self.suffix = f" ({file} line {lines[index]})"
        if not isinstance(raw, Mapping):
            self.fail(f"must be an object, got {type(raw).__name__}")
        unknown = [k for k in raw if k not in _FIELDS[kind]]
        if unknown:
            self.fail(f"unknown field(s) {unknown}; use {', '.join(_FIELDS[kind])}")
        self.raw = raw

    def fail(self, reason: str) -> Any:
        raise CustomKGError(self.name, reason + self.suffix)

    def text(self, key: str, limit: int, default: str = "", required: bool = False,
             check: bool = True) -> str:
        value = self.raw.get(key, default)
        if value is None:
            value = default
        if not isinstance(value, str):
            self.fail(f"{key} must be a string, got {type(value).__name__}")
        if required and not value.strip():
            self.fail(f"empty {key}")
        if len(value) > limit:
            self.fail(f"{key} has {len(value)} characters; at most {limit}")
        if check:
            self.check_chars(key, value)
        return value.strip() if key != "content" else value

    def check_chars(self, key: str, value: str) -> None:
        """Refuse control characters (a chunk's ``content`` is document text: only lone
        surrogates are refused there, as a document's)."""
        bad = (_SURROGATE if key == "content" else _BAD_CHARS).search(value)
        if bad:
            what = "a lone surrogate" if "\ud800" <= bad.group() <= "\udfff" else "the control character"
            self.fail(f"{key} holds {what} {bad.group()!r} at character {bad.start()} (tab, newline "
                      "and carriage return are the only control characters allowed)")

    def name_field(self, key: str) -> str:
        name = normalize_entity_name(self.text(key, MAX_NAME_CHARS, required=True, check=False))
        if GRAPH_FIELD_SEP in name or any(unicodedata.category(ch) in ("Cc", "Cs") for ch in name):
            self.fail(f"{key} {name[:80]!r} holds a control character or {GRAPH_FIELD_SEP}")
        return name or self.fail(f"empty {key}")

    def sources(self) -> List[str]:
        value = self.raw.get("source_id")
        if value is None or value == "":
            return []
        items = value if isinstance(value, list) else [value]
        labels = []
        for item in items:
            if not isinstance(item, str):
                self.fail(f"source_id must be a string or a list of strings, got {item!r}")
            labels += [s.strip() for s in item.split(GRAPH_FIELD_SEP) if s.strip()]
            self.check_chars("source_id", item)
        if any(len(s) > MAX_NAME_CHARS for s in labels):
            self.fail(f"a source_id is longer than {MAX_NAME_CHARS} characters")
        return list(dict.fromkeys(labels))

    def keywords(self) -> str:
        value = self.raw.get("keywords", "")
        if isinstance(value, list) and all(isinstance(k, str) for k in value):
            value = ",".join(value)
        if not isinstance(value, str):
            self.fail(f"keywords must be a string or a list of strings, got {value!r}")
        if len(value) > MAX_SHORT_CHARS:
            self.fail(f"keywords has {len(value)} characters; at most {MAX_SHORT_CHARS}")
        self.check_chars("keywords", value)
        return ",".join(k.strip() for k in value.split(",") if k.strip())

    def number(self, key: str, default: float, integer: bool = False) -> Any:
        value = self.raw.get(key, default)
        wanted = "an integer >= 0" if integer else "a finite number >= 0"
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value.strip()) if isinstance(value, str) else float(value)
            if not math.isfinite(number) or number < 0 or (integer and number != int(number)):
                raise ValueError
        except (TypeError, ValueError, AttributeError, OverflowError):
            return self.fail(f"{key} must be {wanted}, got {value!r:.80}")
        highest = MAX_ORDER_INDEX if integer else MAX_WEIGHT
        if number > highest:
            return self.fail(f"{key} {number:g} is over the limit of {highest:g}")
        return int(number) if integer else number


def _records(data: Mapping[str, Any], kind: str) -> List[Any]:
    items = data.get(kind)
    items = [] if items is None else items
    if not isinstance(items, list):
        raise CustomKGError(kind, f"must be a list, got {type(items).__name__}")
    if len(items) > MAX_RECORDS:
        raise CustomKGError(kind, f"{len(items)} records; at most {MAX_RECORDS}")
    return items


def _validate(data: Any, where: Dict[str, Any]) -> CustomKG:
    if not isinstance(data, Mapping):
        raise CustomKGError("", f"a knowledge graph is an object with chunks, entities and "
                            f"relationships, got {type(data).__name__}")
    unknown = [k for k in data if k not in _FIELDS]
    if unknown:
        raise CustomKGError("", f"unknown key(s) {unknown}; use chunks, entities, relationships")
    kg = CustomKG()
    labels: Dict[str, str] = {}
    for i, raw in enumerate(_records(data, "chunks")):
        r = _Record("chunks", i, raw, where)
        chunk = CustomChunk(content=r.text("content", MAX_CONTENT_CHARS, required=True),
                            source_id=r.text("source_id", MAX_NAME_CHARS, required=True),
                            file_path=r.text("file_path", MAX_SHORT_CHARS) or DEFAULT_FILE_PATH,
                            chunk_order_index=r.number("chunk_order_index", i, integer=True))
        if chunk.source_id in labels:
            r.fail(f"duplicate source_id {chunk.source_id!r}")
        labels[chunk.source_id] = chunk.file_path
        kg.chunks.append(chunk)
    declared = set()
    for i, raw in enumerate(_records(data, "entities")):
        r = _Record("entities", i, raw, where)
        entity = CustomEntity(entity_name=r.name_field("entity_name"),
                              entity_type=r.text("entity_type", MAX_SHORT_CHARS).lower() or "unknown",
                              description=r.text("description", MAX_DESCRIPTION_CHARS),
                              source_ids=r.sources(), file_path=r.text("file_path", MAX_SHORT_CHARS))
        _check_sources(r, entity.source_ids, entity.file_path, labels)
        declared.add(entity.entity_name)
        kg.entities.append(entity)
    for i, raw in enumerate(_records(data, "relationships")):
        r = _Record("relationships", i, raw, where)
        relation = CustomRelation(src_id=r.name_field("src_id"), tgt_id=r.name_field("tgt_id"),
                                  description=r.text("description", MAX_DESCRIPTION_CHARS),
                                  keywords=r.keywords(), weight=r.number("weight", 1.0),
                                  source_ids=r.sources(),
                                  file_path=r.text("file_path", MAX_SHORT_CHARS))
        for end in (relation.src_id, relation.tgt_id):
            if end not in declared:
                r.fail(f"unknown endpoint {end!r} (declare it in entities; an entity already "
                       "in the graph may be declared again)")
        if relation.src_id == relation.tgt_id:
            r.fail(f"src_id and tgt_id are the same entity {relation.src_id!r}")
        _check_sources(r, relation.source_ids, relation.file_path, labels)
        kg.relationships.append(relation)
    if not kg.chunks and not kg.entities:
        raise CustomKGError("", "the knowledge graph has no chunks and no entities")
    return kg


def _check_sources(r: _Record, sources: List[str], file_path: str, labels: Dict[str, str]) -> None:
    for label in sources:
        if label not in labels:
            r.fail(f"unknown source_id {label!r} (no chunk has it)")
        if file_path and labels[label] != file_path:
            r.fail(f"file_path {file_path!r} differs from that of its chunk {label!r} "
                   f"({labels[label]!r}); a cited item takes its chunk's file_path")
