"""The ``lightrag`` command.

    lightrag demo [--question Q] [--config PATH]   run the RAG demo on the embedded defaults
    lightrag print-config PATH                      build a YAML config and print its tree
    lightrag version

The demo builds its pipeline from the YAML config shipped in the package
(``lightrag/configs/numpy_rag.yaml``), indexes a small sample corpus, prints the component tree,
the retrieved passages with their scores, the prompt and the answer.
"""

from __future__ import annotations

import argparse
import logging
import sys
from importlib import resources
from pathlib import Path
from typing import List, Optional

import yaml

import lightrag
from lightrag.utils.config import build, load_config

DEFAULT_DEMO_CONFIG = "numpy_rag.yaml"
DEMO_QUESTIONS = ["Which planet is the biggest?", "Which planet has rings?"]


def _packaged_config(name: str) -> Path:
    return Path(str(resources.files("lightrag.configs").joinpath(name)))


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def cmd_demo(args: argparse.Namespace) -> int:
    from lightrag.data import load_sample_corpus

    config_path = Path(args.config) if args.config else _packaged_config(DEFAULT_DEMO_CONFIG)
    rag = build(config_path)
    corpus = load_sample_corpus("planets")
    rag.build_index(corpus)
    _out(f"== Pipeline (built from {config_path.name}) ==\n{rag}\n")
    _out(f"== Corpus: {len(corpus)} documents ==")
    for question in args.question or DEMO_QUESTIONS:
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


def cmd_print_config(args: argparse.Namespace) -> int:
    config = load_config(Path(args.path))
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
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the RAG demo on the embedded defaults")
    demo.add_argument("--question", action="append", help="a question (repeatable)")
    demo.add_argument("--config", help="a pipeline YAML (default: the packaged demo config)")
    demo.set_defaults(func=cmd_demo)
    show = sub.add_parser("print-config", help="build a YAML config and print its tree")
    show.add_argument("path")
    show.set_defaults(func=cmd_print_config)
    version = sub.add_parser("version", help="print the version")
    version.set_defaults(func=cmd_version)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = make_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, ImportError) as e:
        sys.stderr.write(f"lightrag: error: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
