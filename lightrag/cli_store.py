"""``lightrag migrate`` and ``lightrag check``: the store's own commands.

``migrate`` converts a working directory of lightrag 0.2's file stores into the SQLite store
(:func:`~lightrag.components.graph_rag.migrate.migrate_legacy_store`); ``check`` opens a store
and lists any broken invariant (:meth:`~lightrag.components.graph_rag.index.GraphIndex.verify`),
exiting 1 when there is one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

DEFAULT_WORKING_DIR = "./lightrag_storage"


def cmd_migrate(args: argparse.Namespace) -> int:
    from lightrag.components.graph_rag.migrate import migrate_legacy_store

    counts = migrate_legacy_store(args.working_dir or DEFAULT_WORKING_DIR, args.workspace or "",
                                  extractor_name=args.extractor or "")
    sys.stdout.write("migrated: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items())
                     + "\n")
    return 0


def make_check(load_rag: Callable[[argparse.Namespace], Any]) -> Callable[[argparse.Namespace], int]:
    """``check`` over the CLI's own way of opening a store (``load_rag(args)``)."""

    def cmd_check(args: argparse.Namespace) -> int:
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

    return cmd_check


def add_store_parsers(sub: Any, common: argparse.ArgumentParser,
                      load_rag: Callable[[argparse.Namespace], Any]) -> None:
    """Register ``migrate`` and ``check`` on the ``lightrag`` command's subparsers."""
    migrate = sub.add_parser("migrate", parents=[common],
                             help="convert an old JSON/GraphML working directory to the SQLite store")
    migrate.add_argument("--extractor", choices=["EntityExtractor", "SpacyEntityExtractor"],
                         help="the extractor that built the store (default: keep the cache for both)")
    migrate.set_defaults(func=cmd_migrate)
    check = sub.add_parser("check", parents=[common],
                           help="check the store's consistency (exit status 1 on a problem)")
    check.set_defaults(func=make_check(load_rag))
