"""``lightrag query "..."``: answer a question from the store.

A written answer is streamed to stdout as the model makes it; progress lines go to stderr, so
``lightrag query ... > answer.txt`` keeps only the answer. ``--json`` prints the answer,
references and retrieval details as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List

from lightrag.cli.common import cited_references, open_store, out, references, stage, terminal_safe
from lightrag.components.graph_rag.schemas import QUERY_MODES


def cmd_query(args: argparse.Namespace) -> int:
    """Run ``query``; Ctrl-C exits with 130."""
    try:
        return _query(args)
    except KeyboardInterrupt:
        stage("cancelled")
        return 130


def _quotes(rag: Any) -> bool:
    return type(rag.engine.answer_generator).__name__ == "ExtractiveAnswerer"


def _overrides(args: argparse.Namespace, quoting: bool) -> Dict[str, Any]:
    overrides: Dict[str, Any] = {"mode": args.mode} if args.mode else {}
    if args.top_k is not None:
        overrides["top_k"] = args.top_k
    if args.context_only:
        overrides["only_need_context"] = True
    # a written answer is streamed so its first words show as soon as the model makes them
    if not args.json and not args.context_only and (args.stream or not quoting):
        overrides["stream"] = True
    return overrides


def _print_json(args: argparse.Namespace, mode: str, result: Any) -> int:
    out(json.dumps({
        "question": args.question, "mode": mode, "answer": result.content,
        "error": result.raw_data.get("error"), "references": references(result),
        "keywords": result.raw_data.get("keywords", {}),
        "processing_info": result.raw_data.get("processing_info", {}),
    }, ensure_ascii=False, indent=2, default=str))
    return 1 if result.raw_data.get("processing_info", {}).get("answer_failed") else 0


def _print_stream(result: Any, asked: float, progress: bool, pieces: List[str]) -> int:
    """Print the answer as it streams (its pieces kept in ``pieces``); 1 when it failed."""
    for piece in result.response_iterator:
        if not pieces and progress:
            stage(f"first token after {time.perf_counter() - asked:.1f} s")
        pieces.append(piece)
        sys.stdout.write(terminal_safe(piece))
        sys.stdout.flush()
    out()
    error = getattr(result.response_iterator, "error", None)
    if error:
        out(f"ERROR: {error}")
        return 1
    _warn_unsupported("".join(pieces), result)
    return 0


def _query(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    rag = open_store(args)
    rag.warm_up()
    mode = args.mode or rag.query_defaults.get("mode", "mix")
    quoting = _quotes(rag)
    progress = not args.json
    if progress:
        stage(f"store opened, models loaded in {time.perf_counter() - started:.1f} s; retrieving ({mode}) "
              "... (Ctrl-C cancels)")
    asked = time.perf_counter()
    result = rag.query(args.question, **_overrides(args, quoting))
    if args.json:
        return _print_json(args, mode, result)
    info = result.raw_data.get("processing_info", {})
    if progress:
        stage(f"retrieved {info.get('chunks_kept', 0)} chunks in {time.perf_counter() - asked:.1f} s"
              + ("; generating ..." if result.is_streaming and not quoting else ""))
    streamed: List[str] = []
    if result.is_streaming:
        if _print_stream(result, asked, progress and not quoting, streamed):
            return 1
    elif info.get("answer_failed"):
        out(f"ERROR: {result.raw_data.get('error')}")
        return 1
    else:
        out(result.content)
    if references(result) and not args.context_only:
        shown = result.content if not result.is_streaming else "".join(streamed)
        out("\nSources: " + ", ".join(f"[{r['reference_id']}] {terminal_safe(str(r['file_path']), True)}"
                                      for r in cited_references(result, shown)))
    return 0


def _warn_unsupported(answer: str, result: Any) -> None:
    """After a streamed, generated answer: name the sentences its context does not support."""
    from lightrag.components.graph_rag.grounding import check_answer

    chunks = [str(c.get("content", "")) for c in result.raw_data.get("chunks", [])]
    if not chunks or not answer.strip():
        return
    checked = check_answer(answer, chunks, {r["reference_id"] for r in references(result)})
    for sentence in checked.unsupported:
        stage(f"not found in the sources: {sentence}")


def add_query_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``query``."""
    query = sub.add_parser("query", parents=[common], help="answer a question")
    query.add_argument("question")
    query.add_argument("--mode", default=None, choices=list(QUERY_MODES),
                       help="query mode (default: the config's query_defaults, else mix)")
    query.add_argument("--top-k", type=int, help="entities (local) / relations (global) to fetch")
    query.add_argument("--json", action="store_true", help="print the answer, references and "
                                                           "retrieval details as JSON")
    query.add_argument("--stream", action="store_true")
    query.add_argument("--context-only", action="store_true")
    query.set_defaults(func=cmd_query)
