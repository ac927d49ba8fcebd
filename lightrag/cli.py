"""The ``lightrag`` command.

    lightrag demo                       graph RAG on a packaged corpus, all six query modes
    lightrag demo-rag                   classic RAG (MiniLM + NumPy top-k + SmolLM2)
    lightrag index PATH...              index .txt/.md files or folders
    lightrag query "..." [--mode mix] [--stream] [--context-only]
    lightrag status | delete DOC_ID | export PATH [--format graphml|json|csv]
    lightrag print-config [PATH]        print a config's component tree and its YAML
    lightrag serve [--host 127.0.0.1] [--port 9621]   HTTP API (FastAPI + uvicorn)
    lightrag bench-prompts CONFIG.yaml [--limit N] [--out DIR]   benchmark prompt variants

Graph commands read ``--config`` (default: the packaged ``graph_rag_default.yaml``: spaCy
extraction, MiniLM embeddings, SmolLM2 answers) and ``--working-dir``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

import lightrag
from lightrag.utils.config import build, load_config

DEFAULT_GRAPH_CONFIG = "graph_rag_default.yaml"
DEFAULT_RAG_CONFIG = "numpy_rag.yaml"
RAG_DEMO_QUESTIONS = ["Which planet is the biggest?", "Which planet has rings?"]
GRAPH_DEMO_QUESTION = "What did the Voyager missions discover about Saturn and its moon Titan?"
INDEXABLE = (".txt", ".md")


def _packaged_config(name: str) -> Path:
    return Path(str(resources.files("lightrag.configs").joinpath(name)))


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _graph_config(args: argparse.Namespace) -> Dict[str, Any]:
    config = load_config(Path(args.config) if args.config else _packaged_config(DEFAULT_GRAPH_CONFIG))
    overrides = config.setdefault("component_config", {})
    if getattr(args, "working_dir", None):
        overrides["working_dir"] = args.working_dir
    if getattr(args, "workspace", None):
        overrides["workspace"] = args.workspace
    return config


def _load_rag(args: argparse.Namespace) -> Any:
    return build(_graph_config(args))


def _collect_files(paths: List[str]) -> List[Path]:
    files: List[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in INDEXABLE))
        elif path.is_file():
            if path.suffix.lower() not in INDEXABLE:
                raise ValueError(f"{path}: only .txt and .md files can be indexed")
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    if not files:
        raise ValueError("no .txt or .md files found")
    return files


def _print_insert_summary(rag: Any, result: Any) -> None:
    status = rag.status()
    _out(f"documents: {len(result.processed)} processed, {len(result.skipped)} already indexed, "
         f"{len(result.failed)} failed")
    _out(f"store: {status['chunks']} chunks, {status['entities']} entities, "
         f"{status['relations']} relations  ({rag.working_dir})")
    for doc_id, error in result.failed.items():
        _out(f"  FAILED {doc_id}: {error}")


def _index_texts(rag: Any, named_texts: List[tuple[str, str]]) -> Any:
    from lightrag.components.graph_rag.system import InsertResult

    total = InsertResult()
    for i, (name, text) in enumerate(named_texts, start=1):
        sys.stderr.write(f"\r[{i}/{len(named_texts)}] indexing {name[:50]:<50}")
        sys.stderr.flush()
        result = rag.insert(text, file_paths=name)
        total.processed += result.processed
        total.skipped += result.skipped
        total.failed.update(result.failed)
        total.chunks += result.chunks
    sys.stderr.write("\n")
    return total


# ------------------------------------------------------------------------ commands
def cmd_demo(args: argparse.Namespace) -> int:
    from lightrag.components.graph_rag.schemas import QUERY_MODES
    from lightrag.data import load_sample_docs

    with tempfile.TemporaryDirectory(prefix="lightrag-demo-") as tmp:
        if not args.working_dir:
            args.working_dir = tmp
        rag = _load_rag(args)
        _out(f"== GraphRAG (built from {args.config or DEFAULT_GRAPH_CONFIG}) ==\n{rag}\n")
        docs = load_sample_docs()
        _out(f"== Indexing {len(docs)} sample documents ==")
        _print_insert_summary(rag, _index_texts(rag, docs))
        question = args.question or GRAPH_DEMO_QUESTION
        _out(f"\n== Question ==\n{question}")
        for mode in QUERY_MODES:
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
                refs = ", ".join(f"[{r['reference_id']}] {r['file_path']}" for r in result.references)
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
    files = _collect_files(args.paths)
    rag = _load_rag(args)
    named = [(str(f), f.read_text(encoding="utf-8", errors="replace")) for f in files]
    named = [(n, t) for n, t in named if t.strip()]
    result = _index_texts(rag, named)
    _print_insert_summary(rag, result)
    return 1 if result.failed else 0


def cmd_query(args: argparse.Namespace) -> int:
    rag = _load_rag(args)
    overrides: Dict[str, Any] = {"mode": args.mode}
    if args.context_only:
        overrides["only_need_context"] = True
    if args.stream:
        overrides["stream"] = True
    result = rag.query(args.question, **overrides)
    if result.is_streaming:
        for piece in result.response_iterator:
            sys.stdout.write(piece)
            sys.stdout.flush()
        _out()
    else:
        _out(result.content if result.content is not None else f"ERROR: {result.raw_data.get('error')}")
    if result.references and not args.context_only:
        _out("\nSources: " + ", ".join(f"[{r['reference_id']}] {r['file_path']}" for r in result.references))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    _out(yaml.safe_dump(_load_rag(args).status(), sort_keys=False).rstrip())
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    result = _load_rag(args).delete_by_doc_id(args.doc_id)
    _out(f"deleted {result.doc_id}: {result.chunks_deleted} chunks, "
         f"{len(result.entities_deleted)} entities removed, {len(result.entities_rebuilt)} rebuilt, "
         f"{len(result.relations_deleted)} relations removed, {len(result.relations_rebuilt)} rebuilt")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    _load_rag(args).export(args.path, format=args.format)
    _out(f"exported the graph to {args.path} ({args.format})")
    return 0


def cmd_print_config(args: argparse.Namespace) -> int:
    config = load_config(Path(args.path)) if args.path else _graph_config(args)
    component = build(config)
    _out(f"{component}\n")
    _out(yaml.safe_dump(component.to_config(), sort_keys=False, allow_unicode=True))
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    _out(f"lightrag {lightrag.__version__}")
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lightrag", description="lightrag command line")
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
    add("index", cmd_index, "index .txt/.md files or folders").add_argument("paths", nargs="+")
    query = add("query", cmd_query, "answer a question")
    query.add_argument("question")
    query.add_argument("--mode", default="mix",
                       choices=["naive", "local", "global", "hybrid", "mix", "bypass"])
    query.add_argument("--stream", action="store_true")
    query.add_argument("--context-only", action="store_true")
    add("status", cmd_status, "document counts by status, graph size")
    add("delete", cmd_delete, "delete a document").add_argument("doc_id")
    export = add("export", cmd_export, "export the graph")
    export.add_argument("path")
    export.add_argument("--format", default="graphml", choices=["graphml", "json", "csv"])
    add("print-config", cmd_print_config, "print a config's tree and YAML").add_argument("path", nargs="?")
    add("version", cmd_version, "print the version", parents=[])
    from lightrag.optim.bench_cli import add_bench_prompts_parser
    from lightrag.server.serve import add_serve_parser

    add_serve_parser(sub)
    add_bench_prompts_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = make_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, KeyError, ImportError) as e:
        sys.stderr.write(f"lightrag: error: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
