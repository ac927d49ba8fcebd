"""Graph exports: GraphML, JSON (``{"nodes", "edges"}``) or CSV (``<stem>_entities.csv`` and
``<stem>_relations.csv``), written from streams of nodes and edges.

JSON and CSV are written as the items stream by (CSV reads them twice: its header needs every
property name first), so a store read a batch at a time exports in bounded memory: the SQL
graph of a 1M-chunk store (500k entities, 2.1M relations) held 5.2 GB to export CSV as one
in-memory graph. GraphML is built as a NetworkX graph first (``networkx.write_graphml``).

Exports hold user data only, readable: description fragments joined by newlines, source chunk
ids and file paths as lists in JSON (``"; "``-joined in GraphML and CSV), no internal fields.
Files are written atomically and get the usual permissions (``0666`` minus the umask).

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
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, Iterable, List, Set, Tuple

import networkx as nx

from lightrag.components.storage.base import GRAPH_FIELD_SEP, LEGACY_FIELDS
from lightrag.utils.file_io import atomic_open, atomic_write_bytes

EXPORT_FORMATS = ("graphml", "json", "csv")
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
        graph = nx.Graph()
        graph.add_nodes_from((n.pop("id"), n) for n in node_rows())
        graph.add_edges_from((e.pop("source"), e.pop("target"), e) for e in edge_rows())
        atomic_write_bytes(target, graphml_bytes(graph))
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
                writer = csv.DictWriter(text, fieldnames=first + sorted(names - set(first)))
                writer.writeheader()
                writer.writerows(rows())
                text.flush()
                text.detach()
            written.append(file)
    mode = 0o666 & ~_umask()
    for file in written:
        file.chmod(mode)
    return written


def graphml_bytes(graph: nx.Graph) -> bytes:
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    return buffer.getvalue()


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
