"""Graph exports: GraphML, JSON (``{"nodes", "edges"}``) or CSV (``<stem>_entities.csv`` and
``<stem>_relations.csv``), written from streams of nodes and edges.

Every format is written as the items stream by (CSV and GraphML read them twice: the CSV header
and the GraphML keys need every property name first), so a store read a batch at a time exports
in bounded memory: the SQL graph of a 1M-chunk store (500k entities, 2.1M relations) held 5.2 GB
to export CSV as one in-memory graph. The GraphML is what ``networkx.write_graphml`` writes for
the same nodes and edges (keys, types, escaping; byte for byte when the edges come in the order
NetworkX lists them), without building the graph and its XML tree in memory.

Exports hold user data only, readable: description fragments joined by newlines, source chunk
ids and file paths as lists in JSON (``"; "``-joined in GraphML and CSV), no internal fields.
Files are written atomically and get the usual permissions (``0666`` minus the umask).

CSV cells are safe to open in a spreadsheet: a text cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return (after any leading single quotes) gets one more single quote
in front (:func:`csv_cell`), so an entity name from a document such as ``=HYPERLINK(...)`` is
shown as text, never run as a formula. :func:`csv_uncell` removes exactly that quote again (the
custom-KG CSV import reads cells through it).

Example:
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> files = export_graph(os.path.join(folder, "g.json"), "json",
    ...                      lambda: [("Titan", {"entity_type": "moon"})],
    ...                      lambda: [("Titan", "Saturn", {"source_id": "c1<SEP>c2"})])
    >>> print(open(files[0]).read())
    {
     "nodes": [
      {
       "id": "Titan",
       "entity_type": "moon"
      }
     ],
     "edges": [
      {
       "source": "Titan",
       "target": "Saturn",
       "source_id": [
        "c1",
        "c2"
       ]
      }
     ]
    }
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Dict, Iterable, List, Set, Tuple
from xml.sax.saxutils import escape as xml_escape

from lightrag.components.storage.base import GRAPH_FIELD_SEP, LEGACY_FIELDS
from lightrag.utils.file_io import atomic_open

if TYPE_CHECKING:
    import networkx as nx

EXPORT_FORMATS = ("graphml", "json", "csv")
#: what a spreadsheet reads as the start of a formula (or DDE command) in a cell
CSV_FORMULA_CHARS = "=+-@\t\r"
_FORMULA_START = re.compile("'*[" + re.escape(CSV_FORMULA_CHARS) + "]")
_LIST_FIELDS = ("source_id", "file_path")

Nodes = Callable[[], Iterable[Tuple[str, Dict[str, Any]]]]
Edges = Callable[[], Iterable[Tuple[str, str, Dict[str, Any]]]]


def export_graph(path: str, format: str, nodes: Nodes, edges: Edges) -> List[Path]:
    """Write the graph whose ``nodes()`` yield ``(id, properties)`` and ``edges()`` yield
    ``(source, target, properties)`` as ``format``; returns the files written."""
    target, fmt = Path(path), format.lower()
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; use one of {', '.join(EXPORT_FORMATS)}")
    as_lists = fmt == "json"

    def node_rows() -> Iterable[Dict[str, Any]]:
        return ({"id": n, **_public(d, as_lists)} for n, d in nodes())

    def edge_rows() -> Iterable[Dict[str, Any]]:
        return ({"source": s, "target": t, **_public(d, as_lists)} for s, t, d in edges())

    written: List[Path] = []
    if fmt == "graphml":
        with atomic_open(target) as f:
            _write_graphml(f, node_rows, edge_rows)
        written.append(target)
    elif fmt == "json":
        with atomic_open(target) as f:
            f.write(b'{\n "nodes": ')
            _write_json_list(f, node_rows())
            f.write(b',\n "edges": ')
            _write_json_list(f, edge_rows())
            f.write(b"\n}")
        written.append(target)
    else:
        for suffix, rows, first in (("entities", node_rows, ["id"]),
                                    ("relations", edge_rows, ["source", "target"])):
            names: Set[str] = set()
            for row in rows():
                names.update(row)
            file = target.with_name(f"{target.stem}_{suffix}.csv")
            with atomic_open(file) as f:
                text = io.TextIOWrapper(f, encoding="utf-8", newline="")
                fields = first + sorted(names - set(first))
                writer = csv.writer(text)
                writer.writerow([csv_cell(name) for name in fields])
                writer.writerows([csv_cell(row.get(name, "")) for name in fields] for row in rows())
                text.flush()
                text.detach()
            written.append(file)
    mode = 0o666 & ~_umask()
    for file in written:
        file.chmod(mode)
    return written


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as text: a string whose first character
    after any leading single quotes is one of :data:`CSV_FORMULA_CHARS` gets one more quote in
    front (numbers and other strings are unchanged); :func:`csv_uncell` undoes it.

    Example:
        >>> csv_cell("=1+1"), csv_cell("'=1+1"), csv_cell("-x"), csv_cell("'tis"), csv_cell(-2.5)
        ("'=1+1", "''=1+1", "'-x", "'tis", -2.5)
    """
    if isinstance(value, str) and _FORMULA_START.match(value):
        return "'" + value
    return value


def csv_uncell(text: str) -> str:
    """The value :func:`csv_cell` wrote as ``text``: one leading single quote removed where it
    was added (``"'=1+1"`` -> ``"=1+1"``), any other text unchanged (``"'tis"``).

    Example:
        >>> csv_uncell("'=1+1"), csv_uncell("''=1+1"), csv_uncell("'tis"), csv_uncell("=1+1")
        ('=1+1', "'=1+1", "'tis", '=1+1')
    """
    if text[:1] == "'" and _FORMULA_START.match(text):
        return text[1:]
    return text


def graphml_bytes(graph: nx.Graph) -> bytes:
    buffer = io.BytesIO()
    import networkx as nx  # (imported when used: ~0.2 s)

    nx.write_graphml(graph, buffer)
    return buffer.getvalue()


#: GraphML's type of each property type (``networkx``'s names)
_GRAPHML_TYPES = {str: "string", int: "long", float: "double", bool: "boolean"}
_GRAPHML_HEAD = ("<?xml version='1.0' encoding='utf-8'?>\n"
                 '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
                 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
                 'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
                 'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')


def _write_graphml(f: BinaryIO, node_rows: Callable[[], Iterable[Dict[str, Any]]],
                   edge_rows: Callable[[], Iterable[Dict[str, Any]]]) -> None:
    """The GraphML of the rows: a first pass names the keys (one per property name, scope and
    type, numbered in the order met, written last first as NetworkX does), a second writes the
    nodes and edges."""
    scopes = (("node", node_rows, ("id",)), ("edge", edge_rows, ("source", "target")))
    keys: Dict[Tuple[str, str, str], str] = {}
    for scope, rows, ends in scopes:
        for row in rows():
            for name, value in row.items():
                if name not in ends:
                    keys.setdefault((name, _graphml_type(name, value), scope), f"d{len(keys)}")
    f.write(_GRAPHML_HEAD.encode("utf-8"))
    for (name, kind, scope), key in reversed(keys.items()):
        f.write(f'  <key id="{key}" for="{scope}" attr.name={_attr(name)} attr.type="{kind}" />\n'
                .encode())
    f.write(b'  <graph edgedefault="undirected">\n')
    for scope, rows, ends in scopes:
        for row in rows():
            head = f"    <{scope} " + " ".join(f"{end}={_attr(str(row[end]))}" for end in ends)
            data = [f'      <data key="{keys[(name, _graphml_type(name, value), scope)]}">'
                    f"{xml_escape(_xml_chars(str(value)))}</data>\n"
                    for name, value in row.items() if name not in ends]
            text = f"{head} />\n" if not data else f"{head}>\n{''.join(data)}    </{scope}>\n"
            f.write(text.encode("utf-8"))
    f.write(b"  </graph>\n</graphml>\n")


def _graphml_type(name: str, value: Any) -> str:
    kind = _GRAPHML_TYPES.get(type(value))
    if kind is None:
        raise TypeError(f"property {name!r} is a {type(value).__name__}: GraphML holds str, int, "
                        "float and bool")
    return kind


#: what XML 1.0 cannot hold, even escaped: C0 controls but tab, newline and carriage return,
#: lone surrogates, U+FFFE and U+FFFF
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_chars(text: str) -> str:
    """``text`` with the characters XML cannot hold replaced by U+FFFD: a control character in
    a description or a file name must not make the whole export unreadable."""
    return _NOT_XML.sub("\ufffd", text)


def _attr(text: str) -> str:
    """``text`` as a quoted XML attribute, escaped as ElementTree escapes attributes."""
    text = _xml_chars(text)
    return '"' + xml_escape(text, {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#09;"}) + '"'


def _write_json_list(f: BinaryIO, items: Iterable[Dict[str, Any]]) -> None:
    """``items`` as the JSON list ``json.dumps(..., indent=1)`` writes at the second level."""
    first = True
    for item in items:
        text = json.dumps(item, ensure_ascii=False, indent=1).replace("\n", "\n  ")
        f.write((b"[\n  " if first else b",\n  ") + text.encode("utf-8"))
        first = False
    f.write(b"[]" if first else b"\n ]")


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _public(data: Dict[str, Any], as_lists: bool) -> Dict[str, Any]:
    """An item's properties for an export: no bookkeeping fields, ``<SEP>`` lists made readable."""
    public: Dict[str, Any] = {}
    for key, value in data.items():
        if key in LEGACY_FIELDS:
            continue
        if isinstance(value, str) and (GRAPH_FIELD_SEP in value or key in _LIST_FIELDS):
            parts = [p for p in value.split(GRAPH_FIELD_SEP) if p]
            if key in _LIST_FIELDS:
                value = parts if as_lists else "; ".join(parts)
            else:
                value = "\n".join(parts)
        public[key] = value
    return public
