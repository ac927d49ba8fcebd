"""``lightrag bench-prompts CONFIG.yaml``: the prompt-variant benchmark command.

It is :mod:`lightrag.optim.bench_cli`'s command plus ``--metric NAME``, which replaces the
metric of the config (keeping its ``answer_key`` and ``aliases_key``): re-scoring cached replies
with another metric costs no model calls. ``items.csv`` has the ``question`` and ``gold``
columns of each item (the config metric's ``answer_key``).

**Security:** the Python files listed under the config's ``imports`` are executed (see
:mod:`lightrag.optim.bench_cli`); run only configs you trust.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> parser = add_parser(sub)
    >>> parser.parse_args(["cfg.yaml", "--metric", "em"]).metric
    'em'
"""

from __future__ import annotations

import argparse
from typing import Any

from lightrag.optim.bench_cli import add_bench_prompts_parser, run_bench_prompts

__all__ = ["METRICS", "add_parser", "run"]

METRICS = ["f1", "exact_match", "em", "normalized", "fuzzy_match", "contains"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``bench-prompts`` (with ``--metric``) on an argparse subparsers object."""
    parser = add_bench_prompts_parser(subparsers)
    parser.add_argument("--metric", choices=METRICS, default=None,
                        help="score with this metric instead of the config's (cached replies "
                             "are re-scored without model calls)")
    return parser


run = run_bench_prompts
