"""HKU LightRAG's return shapes for :class:`~lightrag.components.graph_rag.hku_compat.LightRAG`.

HKU programs read results by HKU's names: a deletion's ``result.status == "success"``, an edit's
``result["graph_data"]["description"]``, ``(await rag.get_knowledge_graph(label)).nodes[0].labels``,
``(await rag.aquery_llm(q))["llm_response"]["content"]``. The classes here give those names and
keep this package's own ones (``result.entities_deleted``, ``created["description"]``,
``result.content``), so code written for either reads them.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Iterable, List, Optional

from lightrag.components.storage.graph_export import csv_cell

__all__ = ["HKUDeletionResult", "HKUNotFoundError", "HKUKnowledgeGraph", "HKUQueryResult",
           "entity_result", "relation_result", "hku_timestamps", "write_hku_export",
           "HKU_EXPORT_FORMATS"]


class HKUNotFoundError(KeyError, ValueError):
    """A missing entity or relation: a ``ValueError`` as HKU raises, and a ``KeyError`` as this
    package raises, so ``except`` clauses written for either catch it."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass
class HKUDeletionResult:
    """HKU's ``DeletionResult`` (``status``, ``doc_id``, ``message``, ``status_code``,
    ``file_path``); ``details`` is this package's deletion record (its fields are readable on
    the result too: ``result.entities_deleted``)."""

    status: str
    doc_id: str
    message: str
    status_code: int = 200
    file_path: Optional[str] = None
    details: Any = field(default=None, repr=False)

    def __getattr__(self, name: str) -> Any:
        details = self.__dict__.get("details")
        if name.startswith("_") or details is None:
            raise AttributeError(name)
        return getattr(details, name)


def hku_timestamp(value: Any) -> Any:
    """An ISO ``created_at`` as HKU's unix seconds (other values as they are)."""
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value).timestamp())
        except ValueError:
            return value
    return value


def hku_timestamps(records: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """``records`` with ``created_at`` as HKU's int (copies)."""
    out = []
    for record in records:
        record = dict(record)
        if "created_at" in record:
            record["created_at"] = hku_timestamp(record["created_at"])
        out.append(record)
    return out


def entity_result(name: str, node: Optional[Dict[str, Any]], **extra: Any) -> Dict[str, Any]:
    """HKU's entity record ``{"entity_name", "source_id", "graph_data", ...}``, with the node's
    fields at the top level too (this package's shape)."""
    node = dict(node or {})
    return {**node, "entity_name": name, "source_id": node.get("source_id"), "graph_data": node, **extra}


def relation_result(src: str, tgt: str, edge: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """HKU's relation record ``{"src_entity", "tgt_entity", "source_id", "graph_data"}``, with
    the edge's fields at the top level too."""
    edge = dict(edge or {})
    return {**edge, "src_entity": src, "tgt_entity": tgt, "source_id": edge.get("source_id"),
            "graph_data": edge}


class _Record(dict):
    """A dict whose keys read as attributes too (``node.labels`` and ``node["labels"]``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def model_dump(self) -> Dict[str, Any]:
        return dict(self)


class HKUKnowledgeGraph:
    """HKU's ``KnowledgeGraph``: ``nodes`` (``id``, ``labels``, ``properties``), ``edges``
    (``id``, ``type``, ``source``, ``target``, ``properties``), ``is_truncated`` and
    ``model_dump()``. Awaiting it gives itself: HKU's ``get_knowledge_graph`` is async, and
    ``kg = await rag.get_knowledge_graph(...)`` and ``kg = rag.get_knowledge_graph(...)`` both
    work."""

    def __init__(self, graph: Any) -> None:
        self.nodes = [_Record(id=n.get("id"), labels=list(n.get("labels") or [n.get("id")]),
                              properties=dict(n.get("properties") or {})) for n in graph.nodes]
        self.edges = [_Record(id=e.get("id"), type=e.get("type") or "DIRECTED", source=e.get("source"),
                              target=e.get("target"), properties=dict(e.get("properties") or {}))
                      for e in graph.edges]
        self.is_truncated = bool(getattr(graph, "is_truncated", False))

    def model_dump(self) -> Dict[str, Any]:
        return {"nodes": [dict(n) for n in self.nodes], "edges": [dict(e) for e in self.edges],
                "is_truncated": self.is_truncated}

    to_dict = model_dump

    def __await__(self) -> Any:
        async def itself() -> HKUKnowledgeGraph:
            return self
        return itself().__await__()

    def __repr__(self) -> str:
        return (f"KnowledgeGraph(nodes={len(self.nodes)}, edges={len(self.edges)}, "
                f"is_truncated={self.is_truncated})")


class HKUQueryResult(dict):
    """HKU's ``aquery_llm`` dict (``status``, ``message``, ``data``, ``metadata``,
    ``llm_response``: ``content``, ``response_iterator``, ``is_streaming``); this package's
    :class:`QueryResult` fields read as attributes (``result.content``, ``result.sources``)."""

    def __init__(self, result: Any, data: Dict[str, Any]) -> None:
        super().__init__(data)
        self.result = result

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.__dict__["result"], name)


# ------------------------------------------------------------------ export_data
#: the formats ``export_data`` writes in HKU's layout (one file at the given path)
HKU_EXPORT_FORMATS = ("csv", "md", "txt")


def _rows(graph: Any) -> tuple:
    """HKU's export rows: ``(entities, relations)``, each ``{name(s), source_id, graph_data}``."""
    entities = []
    for node in sorted(graph.get_all_nodes(), key=lambda n: str(n.get("id") or n.get("entity_id"))):
        data = {k: v for k, v in node.items() if k != "id"}
        entities.append({"entity_name": node.get("id") or node.get("entity_id"),
                         "source_id": data.get("source_id"), "graph_data": str(data)})
    relations = []
    for edge in sorted(graph.get_all_edges(), key=lambda e: (str(e.get("source")), str(e.get("target")))):
        data = {k: v for k, v in edge.items() if k not in ("source", "target")}
        relations.append({"src_entity": edge.get("source"), "tgt_entity": edge.get("target"),
                          "source_id": data.get("source_id"), "graph_data": str(data)})
    return entities, relations


def _table_text(rows: List[Dict[str, Any]]) -> str:
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in rows[0]}
    header = "  ".join(k.ljust(widths[k]) for k in rows[0])
    lines = [header, "-" * len(header)]
    lines += ["  ".join(str(v).ljust(widths[k]) for k, v in r.items()) for r in rows]
    return "\n".join(lines) + "\n\n\n"


def write_hku_export(graph: Any, output_path: str, file_format: str) -> None:
    """Write the graph's entities and relations to ``output_path`` as HKU's ``export_data``
    does for ``csv`` (``# ENTITIES`` / ``# RELATIONS`` sections), ``md`` and ``txt``. A CSV cell
    a spreadsheet would run as a formula gets a leading single quote
    (:func:`~lightrag.components.storage.graph_export.csv_cell`)."""
    entities, relations = _rows(graph)
    if file_format == "csv":
        out = io.StringIO()
        for title, rows in (("ENTITIES", entities), ("RELATIONS", relations)):
            if rows:
                out.write(f"# {title}\n")
                writer = csv.writer(out)  # cells a spreadsheet would run as formulas get a quote
                writer.writerow(list(rows[0]))
                writer.writerows([csv_cell(v) for v in row.values()] for row in rows)
                out.write("\n\n")
        text = out.getvalue()
    elif file_format == "md":
        parts = ["# LightRAG Data Export\n\n"]
        for title, rows in (("Entities", entities), ("Relations", relations)):
            parts.append(f"## {title}\n\n")
            if rows:
                parts.append("| " + " | ".join(rows[0]) + " |\n")
                parts.append("| " + " | ".join(["---"] * len(rows[0])) + " |\n")
                parts += ["| " + " | ".join(str(v) for v in r.values()) + " |\n" for r in rows]
                parts.append("\n\n")
            else:
                parts.append(f"*No {title[:-1].lower()} data available*\n\n")
        text = "".join(parts)
    elif file_format == "txt":
        parts = ["LIGHTRAG DATA EXPORT\n", "=" * 80 + "\n\n"]
        for title, rows in (("ENTITIES", entities), ("RELATIONS", relations)):
            parts += [f"{title}\n", "-" * 80 + "\n"]
            parts.append(_table_text(rows) if rows else f"No {title[:-1].lower()} data available\n\n")
        text = "".join(parts)
    else:
        raise ValueError(f"export format {file_format!r} is not one of {HKU_EXPORT_FORMATS}")
    with open(output_path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
