"""``lightrag demo`` (graph RAG on a packaged corpus, every query mode) and ``lightrag demo-rag``
(classic RAG: MiniLM + NumPy top-k + SmolLM2)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from lightrag.cli.common import (
    DEFAULT_GRAPH_CONFIG,
    DEFAULT_RAG_CONFIG,
    load_rag,
    out,
    packaged_config,
    print_insert_summary,
    references,
)
from lightrag.components.graph_rag.schemas import QUERY_MODES
from lightrag.utils.config import build

RAG_DEMO_QUESTIONS = ["Which planet is the biggest?", "Which planet has rings?"]
GRAPH_DEMO_QUESTION = "What did the Voyager missions discover about Saturn and its moon Titan?"


def _quotes(rag: Any) -> bool:
    """The answer "model" quotes the context (no LLM runs)."""
    return type(rag.engine.answer_generator).__name__ == "ExtractiveAnswerer"


def _show_mode(rag: Any, question: str, mode: str) -> None:
    out(f"\n--- mode: {mode} ---")
    if mode == "bypass" and _quotes(rag):
        out("(skipped: it asks the answer model without context; this config quotes the "
            "context instead of running a model)")
        return
    result = rag.query(question, mode=mode)
    info = result.raw_data.get("processing_info", {})
    kw = result.raw_data.get("keywords", {})
    if mode != "bypass":
        out(f"keywords: high={kw.get('high_level', [])} low={kw.get('low_level', [])}")
        out(f"retrieved: {info.get('entities_kept', 0)} entities, "
            f"{info.get('relations_kept', 0)} relations, {info.get('chunks_kept', 0)} "
            f"chunks ({info.get('context_tokens', 0)} context tokens, "
            f"{info.get('retrieval_ms', 0):.1f} ms)")
        refs = ", ".join(f"[{r['reference_id']}] {r['file_path']}" for r in references(result))
        out(f"references: {refs or '-'}")
    answer = result.content if result.content is not None else f"ERROR: {result.raw_data.get('error')}"
    out(f"answer: {answer.strip()}")
    unsupported = info.get("unsupported_sentences") or []
    if unsupported and mode != "bypass":
        out("not supported by the context (the model wrote them): "
            + " ".join(repr(s) for s in unsupported))


def cmd_demo(args: argparse.Namespace) -> int:
    """Index the packaged sample documents in a temporary store and ask in every mode."""
    from lightrag.cli.index import index_texts, stdout_is_terminal
    from lightrag.data import load_sample_docs

    with tempfile.TemporaryDirectory(prefix="lightrag-demo-") as tmp:
        temporary = not args.working_dir
        if temporary:
            args.working_dir = tmp
        rag = load_rag(args)
        out(f"== GraphRAG (built from {args.config or DEFAULT_GRAPH_CONFIG}) ==\n{rag}\n")
        docs = load_sample_docs()
        out(f"== Indexing {len(docs)} sample documents ==")
        print_insert_summary(rag, index_texts(rag, docs, stdout_is_terminal()))
        question = args.question or GRAPH_DEMO_QUESTION
        out(f"\n== Question ==\n{question}")
        for mode in QUERY_MODES:
            _show_mode(rag, question, mode)
        if temporary:
            out(f"\n(The demo's store in {tmp} is deleted now; `lightrag demo --working-dir DIR` "
                "keeps it for `lightrag query --working-dir DIR`.)")
    return 0


def cmd_demo_rag(args: argparse.Namespace) -> int:
    """The classic RAG demo over the packaged planets corpus."""
    from lightrag.data import load_sample_corpus

    config_path = Path(args.config) if args.config else packaged_config(DEFAULT_RAG_CONFIG)
    rag = build(config_path)
    corpus = load_sample_corpus("planets")
    rag.build_index(corpus)
    out(f"== Pipeline (built from {config_path.name}) ==\n{rag}\n")
    out(f"== Corpus: {len(corpus)} documents ==")
    for question in args.question or RAG_DEMO_QUESTIONS:
        result = rag(question)
        out(f"\n== Question ==\n{question}\n\n== Retrieved ==")
        hits = result.retrieved
        for rank, (idx, score) in enumerate(zip(hits.doc_indices, hits.doc_scores), start=1):
            out(f"{rank}. score={score:.4f}  {corpus[idx]}")
        prompt = rag.generator.get_prompt(context=result.context, question=question)
        out(f"\n== Prompt ==\n{prompt}\n\n== Answer ==")
        answer = result.answer
        out(answer.data if answer.error is None else f"ERROR: {answer.error}")
        if result.unsupported:
            out("(not supported by the retrieved passages: "
                + " ".join(repr(s) for s in result.unsupported)
                + f"; the best passage says: {corpus[hits.doc_indices[0]]!r})"
                if hits.doc_indices else "(not supported by the retrieved passages)")
    usage = rag.generator.usage
    out(f"\n(LLM calls: {usage.calls}, tokens: {usage.total_tokens})")
    return 0


def add_demo_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``demo`` and ``demo-rag``."""
    demo = sub.add_parser("demo", parents=[common], help="graph RAG demo on the embedded defaults")
    demo.add_argument("--question")
    demo.set_defaults(func=cmd_demo)
    rag = sub.add_parser("demo-rag", help="classic RAG demo (NumPy retrieval)")
    rag.add_argument("--question", action="append", help="a question (repeatable)")
    rag.add_argument("--config", help="a SimpleRAG YAML (default: the packaged demo config)")
    rag.set_defaults(func=cmd_demo_rag)
