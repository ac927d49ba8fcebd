"""The ``lightrag`` command (``python -m lightrag.cli`` runs it too).

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

One module per command group: :mod:`.demo`, :mod:`.index`, :mod:`.query`, :mod:`.store` (docs,
status, delete, export, check, migrate), :mod:`.serve`, :mod:`.bench`; :mod:`.common` holds what
they share (config loading, opening a store). Graph commands read ``--config`` (default: the
packaged ``graph_rag_default.yaml``: spaCy extraction, MiniLM embeddings, a local answer model),
``--working-dir`` and ``--workspace``.

Example:
    >>> make_parser().parse_args(["query", "Who?", "--mode", "local"]).mode
    'local'
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import List, Optional

import yaml

import lightrag
from lightrag.cli.bench import add_bench_prompts_parser
from lightrag.cli.common import CliError, TerminalLogFormatter, graph_config, out, terminal_safe
from lightrag.cli.demo import add_demo_parsers
from lightrag.cli.index import add_index_parser
from lightrag.cli.query import add_query_parser
from lightrag.cli.serve import add_serve_parser
from lightrag.cli.store import add_store_parsers
from lightrag.components.graph_rag.schemas import QUERY_MODES
from lightrag.utils.config import build, load_config
from lightrag.utils.secrets import redact_text

__all__ = ["CliError", "QUERY_MODES", "main", "make_parser"]


def cmd_print_config(args: argparse.Namespace) -> int:
    """Print a config as YAML, or the printed component tree with ``--tree``."""
    config = load_config(Path(args.path)) if args.path else graph_config(args)
    component = build(config)
    if args.tree:
        out(str(component))
    else:
        sys.stdout.write(yaml.safe_dump(component.to_config(), sort_keys=False, allow_unicode=True))
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    """Print the version."""
    out(f"lightrag {lightrag.__version__}")
    return 0


def _add_config_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    config = sub.add_parser("print-config", parents=[common],
                            help="print a config as YAML (or its tree)")
    config.add_argument("path", nargs="?")
    shape = config.add_mutually_exclusive_group()
    shape.add_argument("--yaml", action="store_true", help="valid YAML on stdout (the default)")
    shape.add_argument("--tree", action="store_true", help="the printed component tree instead")
    config.set_defaults(func=cmd_print_config)
    sub.add_parser("version", help="print the version").set_defaults(func=cmd_version)


def make_parser() -> argparse.ArgumentParser:
    """The ``lightrag`` argument parser with every command."""
    parser = argparse.ArgumentParser(prog="lightrag", description="lightrag command line")
    parser.add_argument("--version", action="version", version=f"lightrag {lightrag.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="a GraphRAG YAML config (default: the packaged one)")
    common.add_argument("--working-dir", help="where the stores live (overrides the config)")
    common.add_argument("--workspace", help="a workspace inside the working dir")
    sub = parser.add_subparsers(dest="command", required=True)
    add_demo_parsers(sub, common)
    add_index_parser(sub, common)
    add_query_parser(sub, common)
    add_store_parsers(sub, common)
    _add_config_parsers(sub, common)
    add_serve_parser(sub)
    add_bench_prompts_parser(sub)
    return parser


def _silence_stdout() -> None:
    """After a closed pipe (``lightrag print-config | head``): no traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Optional[List[str]] = None) -> int:
    """Run the ``lightrag`` command; returns the exit status (2 on a user error)."""
    from lightrag.components.loaders import DocumentLoadError

    args = make_parser().parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(TerminalLogFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[handler])
    from lightrag.tracing import enable_tracing_from_env

    enable_tracing_from_env()  # LIGHTRAG_TRACE_JSONL / LIGHTRAG_TRACE_OTLP_ENDPOINT, if set
    try:
        code = args.func(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except (CliError, DocumentLoadError, FileNotFoundError, ValueError, KeyError, ImportError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        sys.stderr.write(f"lightrag: error: {terminal_safe(redact_text(str(message)))}\n")
        return 2
    except Exception as e:  # a model provider's failure (its SDK error), a locked store, or a bug
        return _unexpected(e, args.verbose)


def _unexpected(error: Exception, verbose: bool) -> int:
    """Report an error the commands do not expect (exit status 1): one line, its credentials
    removed (an SDK error carries what the provider echoed of the request: its key, the
    ``Basic`` value of a base URL's password); with ``-v`` the traceback too, redacted alike."""
    from lightrag.components.storage.sql_db import StoreFullError, StoreLockedError

    if isinstance(error, (StoreLockedError, StoreFullError)):  # the message says it all
        sys.stderr.write(f"lightrag: error: {terminal_safe(redact_text(str(error)), one_line=True)}\n")
        return 1
    if verbose:
        logging.getLogger("lightrag.cli").error("the command failed", exc_info=error)
    line = terminal_safe(redact_text(f"{type(error).__name__}: {error}"), one_line=True)
    hint = "" if verbose else " (run `lightrag -v ...` for the traceback)"
    sys.stderr.write(f"lightrag: error: {line}{hint}\n")
    return 1
