"""The ``lightrag`` command.

    lightrag --version
    lightrag demo                       graph RAG on a packaged corpus, every query mode
    lightrag demo-rag                   classic RAG (MiniLM + NumPy top-k + SmolLM2)
    lightrag index PATH... [--encoding cp1252]   index PDF, DOCX, HTML, Markdown and text files
    lightrag query "..." [--mode mix] [--top-k 10] [--json] [--stream] [--context-only]
    lightrag docs [--status failed] [--json]      documents: ids, files, status, counts, errors
    lightrag delete DOC_ID_OR_FILE_PATH...
    lightrag status | export PATH.{graphml,json,csv}
    lightrag print-config [PATH] [--tree]         the config as YAML (or its component tree)
    lightrag serve [--host 127.0.0.1] [--port 9621]   HTTP API and web UI
    lightrag check | migrate            the store's consistency; convert an old file store
    lightrag bench-prompts CONFIG.yaml [--limit N] [--metric f1] [--out DIR]

Graph commands read ``--config`` (default: the packaged ``graph_rag_default.yaml``: spaCy
extraction, MiniLM embeddings, a local answer model) and ``--working-dir``. Commands that read a
store (query, docs, delete, status, export) stop with a hint to run ``lightrag index`` when the
store does not exist or holds no document.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

import lightrag
from lightrag.utils.config import build, load_config

DEFAULT_GRAPH_CONFIG = "graph_rag_default.yaml"
DEFAULT_RAG_CONFIG = "numpy_rag.yaml"
DEFAULT_WORKING_DIR = "./lightrag_storage"
RAG_DEMO_QUESTIONS = ["Which planet is the biggest?", "Which planet has rings?"]
GRAPH_DEMO_QUESTION = "What did the Voyager missions discover about Saturn and its moon Titan?"
EXPORT_FORMATS = {".graphml": "graphml", ".xml": "graphml", ".json": "json", ".csv": "csv"}
# the query modes of graph_rag.schemas.QUERY_MODES (not imported: `lightrag --version` stays fast)
QUERY_MODES = ["naive", "local", "global", "hybrid", "mix", "ppr", "bypass"]


class CliError(Exception):
    """A user-facing error: printed as ``lightrag: error: ...`` with exit status 2."""


def _packaged_config(name: str) -> Path:
    return Path(str(resources.files("lightrag.configs").joinpath(name)))


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _config_path(name: Optional[str]) -> Path:
    """A config file: the given path, or a packaged config named by its file name
    (``graph_rag_local_llm.yaml``) when no such file exists here."""
    if not name:
        return _packaged_config(DEFAULT_GRAPH_CONFIG)
    path = Path(name)
    if not path.exists() and path.name == name and _packaged_config(name).is_file():
        return _packaged_config(name)
    return path


def _graph_config(args: argparse.Namespace) -> Dict[str, Any]:
    config = load_config(_config_path(args.config))
    overrides = config.setdefault("component_config", {})
    if getattr(args, "working_dir", None):
        overrides["working_dir"] = args.working_dir
    if getattr(args, "workspace", None):
        overrides["workspace"] = args.workspace
    return config


def _load_rag(args: argparse.Namespace) -> Any:
    return build(_graph_config(args))


def _index_hint(where: Any) -> str:
    return (f"no documents indexed in {where}: run `lightrag index PATH...` first "
            "(or pass --working-dir / --config to name another store)")


def _open_store(args: argparse.Namespace) -> Any:
    """The GraphRAG of an existing, non-empty store, or a CliError with the index hint."""
    config = _graph_config(args)
    settings = config.get("component_config", {})
    working_dir = settings.get("working_dir", DEFAULT_WORKING_DIR)
    embedded = settings.get("storage", "sqlite") == "sqlite"  # a PostgreSQL store has no folder
    if embedded and isinstance(working_dir, str) and not Path(working_dir).exists():
        raise CliError(_index_hint(Path(working_dir).resolve()))
    rag = build(config)
    counts = rag.status().get("documents", {})
    if not sum(int(v) for v in counts.values()):
        raise CliError(_index_hint(rag.index.db.describe()))
    return rag


def _print_insert_summary(rag: Any, result: Any) -> None:
    status = rag.status()
    _out(f"documents: {len(result.processed)} processed, {len(result.skipped)} already indexed, "
         f"{len(result.failed)} failed")
    _out(f"store: {status['chunks']} chunks, {status['entities']} entities, "
         f"{status['relations']} relations  ({rag.index.db.describe()})")
    for doc_id, error in result.failed.items():
        _out(f"  FAILED {doc_id}: {error}")


def _references(result: Any) -> List[Dict[str, Any]]:
    return list(result.references or [])


# ------------------------------------------------------------------------ commands
def cmd_demo(args: argparse.Namespace) -> int:
    from lightrag.cli_index import index_texts, stdout_is_terminal
    from lightrag.data import load_sample_docs

    with tempfile.TemporaryDirectory(prefix="lightrag-demo-") as tmp:
        if not args.working_dir:
            args.working_dir = tmp
        rag = _load_rag(args)
        _out(f"== GraphRAG (built from {args.config or DEFAULT_GRAPH_CONFIG}) ==\n{rag}\n")
        docs = load_sample_docs()
        _out(f"== Indexing {len(docs)} sample documents ==")
        _print_insert_summary(rag, index_texts(rag, docs, stdout_is_terminal()))
        question = args.question or GRAPH_DEMO_QUESTION
        _out(f"\n== Question ==\n{question}")
        quoting = type(rag.engine.answer_generator).__name__ == "ExtractiveAnswerer"
        for mode in QUERY_MODES:
            if mode == "bypass" and quoting:
                _out("\n--- mode: bypass ---\n(skipped: it asks the answer model without "
                     "context; this config quotes the context instead of running a model)")
                continue
            result = rag.query(question, mode=mode)
            info = result.raw_data.get("processing_info", {})
            kw = result.raw_data.get("keywords", {})
            _out(f"\n--- mode: {mode} ---")
            if mode != "bypass":
                _out(f"keywords: high={kw.get('high_level', [])} low={kw.get('low_level', [])}")
                _out(f"retrieved: {info.get('entities_kept', 0)} entities, "
                     f"{info.get('relations_kept', 0)} relations, {info.get('chunks_kept', 0)} "
                     f"chunks ({info.get('context_tokens', 0)} context tokens, "
                     f"{info.get('retrieval_ms', 0):.1f} ms)")
                refs = ", ".join(f"[{r['reference_id']}] {r['file_path']}" for r in _references(result))
                _out(f"references: {refs or '-'}")
            answer = result.content if result.content is not None else f"ERROR: {result.raw_data.get('error')}"
            _out(f"answer: {answer.strip()}")
    return 0


def cmd_demo_rag(args: argparse.Namespace) -> int:
    from lightrag.data import load_sample_corpus

    config_path = Path(args.config) if args.config else _packaged_config(DEFAULT_RAG_CONFIG)
    rag = build(config_path)
    corpus = load_sample_corpus("planets")
    rag.build_index(corpus)
    _out(f"== Pipeline (built from {config_path.name}) ==\n{rag}\n")
    _out(f"== Corpus: {len(corpus)} documents ==")
    for question in args.question or RAG_DEMO_QUESTIONS:
        result = rag(question)
        _out(f"\n== Question ==\n{question}\n\n== Retrieved ==")
        hits = result.retrieved
        for rank, (idx, score) in enumerate(zip(hits.doc_indices, hits.doc_scores), start=1):
            _out(f"{rank}. score={score:.4f}  {corpus[idx]}")
        prompt = rag.generator.get_prompt(context=result.context, question=question)
        _out(f"\n== Prompt ==\n{prompt}\n\n== Answer ==")
        answer = result.answer
        _out(answer.data if answer.error is None else f"ERROR: {answer.error}")
    usage = rag.generator.usage
    _out(f"\n(LLM calls: {usage.calls}, tokens: {usage.total_tokens})")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from lightrag.cli_index import index_texts, load_for_index, stdout_is_terminal

    docs, skipped = load_for_index(args.paths, encoding=args.encoding)
    for path, reason, message in skipped:
        _out(f"skipped {path}: {reason} ({message.strip()})")
    if not docs:
        raise CliError(f"nothing to index in {' '.join(args.paths)}: {len(skipped)} file(s) "
                       "skipped (supported: PDF, DOCX, HTML, Markdown, text)")
    rag = _load_rag(args)
    result = index_texts(rag, docs, stdout_is_terminal())
    _print_insert_summary(rag, result)
    if skipped:
        _out(f"skipped {len(skipped)} file(s) (listed above)")
    return 1 if result.failed else 0


def _stage(text: str) -> None:
    """A progress line on stderr (stdout keeps only the answer, for pipes)."""
    sys.stderr.write(f"[{text}]\n")
    sys.stderr.flush()


def cmd_query(args: argparse.Namespace) -> int:
    try:
        return _query(args)
    except KeyboardInterrupt:
        _stage("cancelled")
        return 130


def _query(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    rag = _open_store(args)
    overrides: Dict[str, Any] = {"mode": args.mode} if args.mode else {}
    mode = args.mode or rag.query_defaults.get("mode", "mix")
    if args.top_k is not None:
        overrides["top_k"] = args.top_k
    if args.context_only:
        overrides["only_need_context"] = True
    quoting = type(rag.engine.answer_generator).__name__ == "ExtractiveAnswerer"
    # a written answer is streamed so its first words show as soon as the model makes them
    streamed = not args.json and not args.context_only and (args.stream or not quoting)
    if streamed:
        overrides["stream"] = True
    progress = not args.json
    if progress:
        _stage(f"store opened in {time.perf_counter() - started:.1f} s; retrieving ({mode}) "
               "... (Ctrl-C cancels)")
    asked = time.perf_counter()
    result = rag.query(args.question, **overrides)
    if args.json:
        _out(json.dumps({
            "question": args.question, "mode": mode, "answer": result.content,
            "error": result.raw_data.get("error"), "references": _references(result),
            "keywords": result.raw_data.get("keywords", {}),
            "processing_info": result.raw_data.get("processing_info", {}),
        }, ensure_ascii=False, indent=2, default=str))
        return 1 if result.raw_data.get("processing_info", {}).get("answer_failed") else 0
    info = result.raw_data.get("processing_info", {})
    if progress:
        _stage(f"retrieved {info.get('chunks_kept', 0)} chunks in {time.perf_counter() - asked:.1f} s"
               + ("; generating ..." if result.is_streaming and not quoting else ""))
    if result.is_streaming:
        pieces: List[str] = []
        for piece in result.response_iterator:
            if not pieces and progress and not quoting:
                _stage(f"first token after {time.perf_counter() - asked:.1f} s")
            pieces.append(piece)
            sys.stdout.write(piece)
            sys.stdout.flush()
        _out()
        error = getattr(result.response_iterator, "error", None)
        if error:
            _out(f"ERROR: {error}")
            return 1
        _warn_unsupported("".join(pieces), result)
    elif info.get("answer_failed"):
        _out(f"ERROR: {result.raw_data.get('error')}")
        return 1
    else:
        _out(result.content)
    if _references(result) and not args.context_only:
        _out("\nSources: " + ", ".join(f"[{r['reference_id']}] {r['file_path']}"
                                       for r in _references(result)))
    return 0


def _warn_unsupported(answer: str, result: Any) -> None:
    """After a streamed, generated answer: name the sentences its context does not support."""
    from lightrag.components.graph_rag.grounding import check_answer

    chunks = [str(c.get("content", "")) for c in result.raw_data.get("chunks", [])]
    if not chunks or not answer.strip():
        return
    checked = check_answer(answer, chunks, {r["reference_id"] for r in _references(result)})
    for sentence in checked.unsupported:
        _stage(f"not found in the sources: {sentence}")


def _doc_rows(rag: Any, status: Optional[str] = None) -> List[Dict[str, Any]]:
    from lightrag.components.graph_rag.schemas import DocStatus

    wanted = [DocStatus(status)] if status else list(DocStatus)
    rows = []
    for doc_id, record in rag.doc_status.get_by_statuses(wanted).items():
        state = record.status.value if hasattr(record.status, "value") else str(record.status)
        rows.append({"id": doc_id, "file_path": record.file_path, "status": state,
                     "chunks": record.chunks_count or 0, "chars": record.content_length,
                     "updated_at": record.updated_at, "error": record.error_msg or ""})
    rows.sort(key=lambda r: (r["file_path"], r["id"]))
    return rows


def cmd_docs(args: argparse.Namespace) -> int:
    rows = _doc_rows(_open_store(args), args.status)
    if args.json:
        _out(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        _out(f"no {args.status} documents")
        return 0
    header = ["id", "status", "chunks", "chars", "file_path", "error"]
    table = [header] + [[str(r[k]) for k in header] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        _out("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1][:200])
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    _out(yaml.safe_dump(_open_store(args).status(), sort_keys=False).rstrip())
    return 0


def _resolve_targets(rag: Any, targets: List[str]) -> tuple[List[str], List[str]]:
    """``(doc ids, targets not found)``: each target is a document id or a file path."""
    rows = _doc_rows(rag)
    ids = {r["id"] for r in rows}
    found: List[str] = []
    missing: List[str] = []
    for target in targets:
        if target in ids:
            found.append(target)
            continue
        absolute = os.path.abspath(target)
        matches = [r["id"] for r in rows
                   if r["file_path"] == target or os.path.abspath(r["file_path"]) == absolute]
        if not matches:
            missing.append(target)
        found.extend(matches)
    return list(dict.fromkeys(found)), missing


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete documents; a target that is not (or no longer) stored is reported and skipped, so
    re-running an interrupted delete succeeds. Vectors a killed delete left queued are embedded
    even when nothing is left to delete."""
    config = _graph_config(args)
    working_dir = config.get("component_config", {}).get("working_dir", DEFAULT_WORKING_DIR)
    if (config.get("component_config", {}).get("storage", "sqlite") == "sqlite"
            and isinstance(working_dir, str) and not Path(working_dir).exists()):
        raise CliError(_index_hint(Path(working_dir).resolve()))
    rag = build(config)
    doc_ids, missing = _resolve_targets(rag, args.targets)
    for target in missing:
        _out(f"not found {target}: no document with this id or file path (already deleted?)")
    for doc_id in doc_ids:
        try:
            result = rag.delete_by_doc_id(doc_id)
        except KeyError:
            _out(f"not found {doc_id}: deleted meanwhile")
            continue
        _out(f"deleted {result.doc_id}: {result.chunks_deleted} chunks, "
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
    fmt = export_format(args.path, args.format)
    rag = _open_store(args)
    folder = Path(args.path).resolve().parent
    before = _snapshot(folder)
    rag.export(args.path, format=fmt)
    written = sorted(p for p, m in _snapshot(folder).items() if before.get(p) != m)
    umask = os.umask(0)
    os.umask(umask)
    for path in written:  # atomic writes create 0600 temp files: give exports normal modes
        os.chmod(path, 0o666 & ~umask)
    names = ", ".join(str(p) for p in written) or args.path
    _out(f"exported the graph ({fmt}) to {names}")
    return 0


def cmd_print_config(args: argparse.Namespace) -> int:
    config = load_config(Path(args.path)) if args.path else _graph_config(args)
    component = build(config)
    if args.tree:
        _out(str(component))
    else:
        sys.stdout.write(yaml.safe_dump(component.to_config(), sort_keys=False, allow_unicode=True))
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    _out(f"lightrag {lightrag.__version__}")
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lightrag", description="lightrag command line")
    parser.add_argument("--version", action="version", version=f"lightrag {lightrag.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="a GraphRAG YAML config (default: the packaged one)")
    common.add_argument("--working-dir", help="where the stores live (overrides the config)")
    common.add_argument("--workspace", help="a workspace inside the working dir")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, func: Any, help: str, parents: Optional[list] = None) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, parents=[common] if parents is None else parents)
        p.set_defaults(func=func)
        return p

    add("demo", cmd_demo, "graph RAG demo on the embedded defaults").add_argument("--question")
    rag = add("demo-rag", cmd_demo_rag, "classic RAG demo (NumPy retrieval)", parents=[])
    rag.add_argument("--question", action="append", help="a question (repeatable)")
    rag.add_argument("--config", help="a SimpleRAG YAML (default: the packaged demo config)")
    index = add("index", cmd_index, "index PDF, DOCX, HTML, Markdown and text files or folders")
    index.add_argument("paths", nargs="+")
    index.add_argument("--encoding", help="encoding of text files that are not UTF-8 "
                                          "(default: detected with charset-normalizer)")
    query = add("query", cmd_query, "answer a question")
    query.add_argument("question")
    query.add_argument("--mode", default=None, choices=QUERY_MODES,
                       help="query mode (default: the config's query_defaults, else mix)")
    query.add_argument("--top-k", type=int, help="entities (local) / relations (global) to fetch")
    query.add_argument("--json", action="store_true", help="print the answer, references and "
                                                           "retrieval details as JSON")
    query.add_argument("--stream", action="store_true")
    query.add_argument("--context-only", action="store_true")
    docs = add("docs", cmd_docs, "list documents: ids, file paths, status, counts, errors")
    docs.add_argument("--status", choices=["pending", "processing", "processed", "failed"])
    docs.add_argument("--json", action="store_true")
    add("status", cmd_status, "document counts by status, graph size")
    add("delete", cmd_delete, "delete documents by id or file path").add_argument("targets", nargs="+")
    export = add("export", cmd_export, "export the graph (format from the file extension)")
    export.add_argument("path", help="PATH.graphml, PATH.json or PATH.csv (CSV writes "
                                     "PATH_entities.csv and PATH_relations.csv)")
    export.add_argument("--format", choices=["graphml", "json", "csv"], default=None)
    config = add("print-config", cmd_print_config, "print a config as YAML (or its tree)")
    config.add_argument("path", nargs="?")
    shape = config.add_mutually_exclusive_group()
    shape.add_argument("--yaml", action="store_true", help="valid YAML on stdout (the default)")
    shape.add_argument("--tree", action="store_true", help="the printed component tree instead")
    add("version", cmd_version, "print the version", parents=[])
    from lightrag.cli_bench import add_parser as add_bench_prompts_parser
    from lightrag.cli_store import add_store_parsers
    from lightrag.server.serve import add_serve_parser

    add_serve_parser(sub)
    add_bench_prompts_parser(sub)
    add_store_parsers(sub, common, _load_rag)
    return parser


def _silence_stdout() -> None:
    """After a closed pipe (``lightrag print-config | head``): no traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Optional[List[str]] = None) -> int:
    from lightrag.components.loaders import DocumentLoadError

    args = make_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        code = args.func(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except (CliError, DocumentLoadError, FileNotFoundError, ValueError, KeyError, ImportError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        sys.stderr.write(f"lightrag: error: {message}\n")
        return 2
