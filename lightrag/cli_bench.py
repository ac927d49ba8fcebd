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
import sys
from pathlib import Path
from typing import Any

from lightrag.optim.bench_cli import (
    ProgressBar,
    add_bench_prompts_parser,
    make_metric,
    runner_from_config,
)
from lightrag.utils.config import load_config

__all__ = ["METRICS", "add_parser", "run"]

METRICS = ["f1", "exact_match", "em", "normalized", "fuzzy_match", "contains"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``bench-prompts`` (with ``--metric``) on an argparse subparsers object."""
    parser = add_bench_prompts_parser(subparsers)
    parser.add_argument("--metric", choices=METRICS, default=None,
                        help="score with this metric instead of the config's (cached replies "
                             "are re-scored without model calls)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; returns 0, or 2 for a bad config, dataset or import."""
    config = Path(args.config)
    out = Path(args.out) if args.out else Path(".cache") / "bench-prompts" / config.stem
    cache = Path(args.cache) if getattr(args, "cache", None) else out / "responses.sqlite"
    try:
        runner, config_limit = runner_from_config(config, getattr(args, "data", None),
                                                  cache_path=cache)
        spec = load_config(config).get("metric") or {"name": "f1"}
        spec = {"name": spec} if isinstance(spec, str) else dict(spec)
        runner.answer_key = spec.get("answer_key", "answer")
        if getattr(args, "metric", None):
            runner.metric, runner.metric_name = make_metric({**spec, "name": args.metric})
        limit = args.limit if args.limit is not None else config_limit
        report = runner.run(limit=limit, progress=ProgressBar())
    except (FileNotFoundError, ValueError, TypeError, ImportError) as e:
        sys.stderr.write(f"bench-prompts: {e}\n")
        return 2
    paths = report.save(out, plot=not getattr(args, "no_plot", False))
    sys.stdout.write((report.to_markdown() if getattr(args, "markdown", False)
                      else report.to_text()) + "\n")
    failures = sum(v.failures for v in report.variants)
    sys.stderr.write(f"{failures} failed items; wrote " + ", ".join(str(p) for p in paths.values())
                     + "\n")
    return 0
