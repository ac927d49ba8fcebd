"""The store's commands: ``docs``, ``status``, ``delete``, ``export``, ``check``, ``migrate``,
``import-kg``.

``docs``/``status``/``delete``/``export`` stop with a hint to run ``lightrag index`` when the
store does not exist or holds no document. ``migrate`` converts a working directory of
lightrag 0.2's file stores into the SQLite store
(:func:`~lightrag.components.graph_rag.index.migrate.migrate_legacy_store`); ``check`` opens a
store and lists any broken invariant (``GraphIndex.verify``), exiting 1 when there is one.
``import-kg`` imports a knowledge graph built elsewhere (a JSON file or a folder of CSV files,
HKU LightRAG's ``custom_kg`` format: ``docs/custom_kg.md``) as one document.

Example:
    >>> export_format("graph.graphml", None), export_format("g.out", "csv")
    ('graphml', 'csv')
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import yaml

from lightrag.cli.common import (
    DEFAULT_WORKING_DIR,
    CliError,
    StoredPaths,
    check_store_exists,
    graph_config,
    load_rag,
    open_store,
    out,
    terminal_safe,
)
from lightrag.utils.config import build

EXPORT_FORMATS = {".graphml": "graphml", ".xml": "graphml", ".json": "json", ".csv": "csv"}


def _doc_rows(rag: Any, status: Optional[str] = None, limit: Optional[int] = None,
              page: int = 1) -> List[Dict[str, Any]]:
    """The documents (of ``status``) by file path; with ``limit``, that page of them, most
    recently updated first (read in index order: a page of a 268k-document store takes
    milliseconds, the whole list ~2 s and ~290 MB)."""
    from lightrag.components.graph_rag.schemas import DocStatus

    wanted = DocStatus(status) if status else None
    if limit is None:
        listed = rag.doc_status.listing(wanted)
    else:
        listed = [{"id": doc_id, "status": getattr(r.status, "value", str(r.status)),
                   "file_path": r.file_path, "chunks_count": r.chunks_count,
                   "content_length": r.content_length, "updated_at": r.updated_at,
                   "error_msg": r.error_msg}
                  for doc_id, r in rag.doc_status.get_docs_paginated(page, limit, wanted)]
    rows = [{"id": r["id"], "file_path": r["file_path"], "status": r["status"],
             "chunks": r["chunks_count"] or 0, "chars": r["content_length"] or 0,
             "updated_at": r["updated_at"], "error": r["error_msg"] or ""} for r in listed]
    if limit is None:
        rows.sort(key=lambda r: (r["file_path"] or "", r["id"]))
    return rows


def cmd_docs(args: argparse.Namespace) -> int:
    """List the documents: ids, status, counts, file paths, errors (a table or JSON); with
    ``--limit``, one page of them, most recently updated first."""
    if args.limit is not None and args.limit < 1 or args.page < 1:
        raise CliError("--limit and --page must be at least 1")
    if args.page > 1 and args.limit is None:
        raise CliError("--page needs --limit (the page size)")
    rows = _doc_rows(open_store(args), args.status, args.limit, args.page)
    if args.json:
        out(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        out(f"no {args.status} documents")
        return 0
    header = ["id", "status", "chunks", "chars", "file_path", "error"]
    table = [header] + [[terminal_safe(str(r[k]), one_line=True) for k in header] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        out("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1][:200])
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Document counts by status and the graph's size, as YAML."""
    out(yaml.safe_dump(open_store(args).status(), sort_keys=False).rstrip())
    return 0


def _resolve_targets(rag: Any, targets: List[str]) -> Tuple[List[str], List[str]]:
    """``(doc ids, targets not found)``: each target is a document id or a file path (as stored,
    or the same file by its absolute path). Ids are looked up by key; paths in one pass over the
    documents' paths alone."""
    stored: Optional[StoredPaths] = None
    found: List[str] = []
    missing: List[str] = []
    for target, record in zip(targets, rag.doc_status.get_by_ids(targets)):
        if record is not None:
            found.append(target)
            continue
        stored = stored or StoredPaths(rag)
        matches = stored.ids(target)
        if not matches:
            missing.append(target)
        found.extend(matches)
    return list(dict.fromkeys(found)), missing


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete documents; a target that is not (or no longer) stored is reported and skipped, so
    re-running an interrupted delete succeeds. Vectors a killed delete left queued are embedded
    even when nothing is left to delete."""
    config = graph_config(args)
    check_store_exists(config)
    rag = build(config)
    doc_ids, missing = _resolve_targets(rag, args.targets)
    for target in missing:
        out(f"not found {target}: no document with this id or file path (already deleted?)")
    for doc_id in doc_ids:
        try:
            result = rag.delete_by_doc_id(doc_id)
        except KeyError:
            out(f"not found {doc_id}: deleted meanwhile")
            continue
        out(f"deleted {result.doc_id}: {result.chunks_deleted} chunks, "
            f"{len(result.entities_deleted)} entities removed, {len(result.entities_rebuilt)} "
            f"rebuilt, {len(result.relations_deleted)} relations removed, "
            f"{len(result.relations_rebuilt)} rebuilt")
    rag.flush()
    return 0


def export_format(path: str, explicit: Optional[str]) -> str:
    """The export format: ``--format`` when given (it must agree with a known extension), else
    from the extension (``.graphml``/``.xml``, ``.json``, ``.csv``)."""
    by_extension = EXPORT_FORMATS.get(Path(path).suffix.lower())
    if explicit:
        if by_extension and by_extension != explicit:
            raise CliError(f"--format {explicit} does not match the file name {path} "
                           f"({by_extension}); rename the file or drop --format")
        return explicit
    if by_extension is None:
        raise CliError(f"cannot tell the export format from {path!r}: use a .graphml, .json or "
                       ".csv name, or --format")
    return by_extension


def _snapshot(folder: Path) -> Dict[Path, float]:
    return {p: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()} if folder.is_dir() else {}


def cmd_export(args: argparse.Namespace) -> int:
    """Export the graph as GraphML, JSON or CSV."""
    fmt = export_format(args.path, args.format)
    rag = open_store(args)
    folder = Path(args.path).resolve().parent
    before = _snapshot(folder)
    rag.export(args.path, format=fmt)
    written = sorted(p for p, m in _snapshot(folder).items() if before.get(p) != m)
    umask = os.umask(0)
    os.umask(umask)
    for path in written:  # atomic writes create 0600 temp files: give exports normal modes
        os.chmod(path, 0o666 & ~umask)
    names = ", ".join(str(p) for p in written) or args.path
    out(f"exported the graph ({fmt}) to {names}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Convert an old JSON/GraphML working directory to the SQLite store."""
    from lightrag.components.graph_rag.index.migrate import migrate_legacy_store

    counts = migrate_legacy_store(args.working_dir or DEFAULT_WORKING_DIR, args.workspace or "",
                                  extractor_name=args.extractor or "")
    sys.stdout.write("migrated: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items())
                     + "\n")
    return 0


def cmd_import_kg(args: argparse.Namespace) -> int:
    """Import a knowledge graph (JSON file or CSV folder) as one document of the store."""
    if not Path(args.source).exists():
        raise FileNotFoundError(f"no such file or folder: {args.source}")
    rag = load_rag(args)
    result = rag.insert_custom_kg(args.source, doc_id=args.id)
    if result.status == "skipped":
        out(f"{result.doc_id}: imported before with the same content; nothing to do")
        return 0
    out(f"imported {result.doc_id}: {result.chunks} chunks, {len(result.entities)} entities, "
        f"{len(result.relations)} relations{' (replaced the earlier version)' if result.replaced else ''}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Check the store's consistency (exit status 1 on a problem)."""
    working_dir = Path(args.working_dir or DEFAULT_WORKING_DIR)
    if args.config is None and not working_dir.exists():
        raise FileNotFoundError(f"no store in {working_dir.resolve()}")
    rag = load_rag(args)
    problems = rag.index.verify()
    status = rag.status()
    sys.stdout.write(f"{status['chunks']} chunks, {status['entities']} entities, "
                     f"{status['relations']} relations, {status['pending_vectors']} vectors "
                     f"queued: {'consistent' if not problems else f'{len(problems)} problems'}\n")
    for problem in problems[:50]:
        sys.stdout.write(f"  {problem}\n")
    return 1 if problems else 0


def add_store_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``docs``, ``status``, ``delete``, ``export``, ``check``, ``migrate`` and
    ``import-kg``."""
    docs = sub.add_parser("docs", parents=[common],
                          help="list documents: ids, file paths, status, counts, errors")
    docs.add_argument("--status", choices=["pending", "processing", "processed", "failed"])
    docs.add_argument("--json", action="store_true")
    docs.add_argument("--limit", type=int, help="list this many, most recently updated first")
    docs.add_argument("--page", type=int, default=1, help="which page of --limit documents")
    docs.set_defaults(func=cmd_docs)
    sub.add_parser("status", parents=[common],
                   help="document counts by status, graph size").set_defaults(func=cmd_status)
    delete = sub.add_parser("delete", parents=[common], help="delete documents by id or file path")
    delete.add_argument("targets", nargs="+")
    delete.set_defaults(func=cmd_delete)
    export = sub.add_parser("export", parents=[common],
                            help="export the graph (format from the file extension)")
    export.add_argument("path", help="PATH.graphml, PATH.json or PATH.csv (CSV writes "
                                     "PATH_entities.csv and PATH_relations.csv)")
    export.add_argument("--format", choices=["graphml", "json", "csv"], default=None)
    export.set_defaults(func=cmd_export)
    migrate = sub.add_parser("migrate", parents=[common],
                             help="convert an old JSON/GraphML working directory to the SQLite store")
    migrate.add_argument("--extractor", choices=["EntityExtractor", "SpacyEntityExtractor"],
                         help="the extractor that built the store (default: keep the cache for both)")
    migrate.set_defaults(func=cmd_migrate)
    check = sub.add_parser("check", parents=[common],
                           help="check the store's consistency (exit status 1 on a problem)")
    check.set_defaults(func=cmd_check)
    kg = sub.add_parser("import-kg", parents=[common],
                        help="import a knowledge graph (JSON file or CSV folder) as one document")
    kg.add_argument("source", help="a JSON file ({chunks, entities, relationships}) or a folder "
                                   "of chunks.csv / entities.csv / relationships.csv")
    kg.add_argument("--id", default=None, help="the document id (default: kg- + hash of the graph)")
    kg.set_defaults(func=cmd_import_kg)
