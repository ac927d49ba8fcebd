"""``lightrag bench-prompts CONFIG.yaml``: the prompt-variant benchmark command.

The benchmark itself is :mod:`lightrag.optim.bench_cli` (the config format, datasets, metrics);
this module is the command: ``--limit``, ``--out``, ``--data``, ``--cache``, ``--markdown``,
``--no-plot``, ``--metric NAME`` and ``--normalize squad|unicode``, which replace the metric of
the config (keeping its ``answer_key`` and ``aliases_key``): re-scoring cached replies with
another metric costs no model calls; ``--on-error zero|exclude`` replaces the config's
``on_error``, ``--requests-per-minute N`` its ``requests_per_minute``, and ``--samples K`` its
``samples`` (runs per variant, each cached apart: the report's run-to-run SD says how much a
re-run of one prompt moves its mean). ``items.csv`` has the ``question`` and ``gold`` columns
of each item (the config metric's ``answer_key``). The table goes to stdout, followed by the
verdict (which variant beats the baseline, by how much, and whether the run is incomplete).

Ctrl-C stops the run at once (exit status 130): the requests in flight finish and are cached,
no other is sent, and running the same command again resumes without paying for them again.

**Security:** the Python files listed under the config's ``imports`` are executed (see
:mod:`lightrag.optim.bench_cli`); run only configs you trust.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> parser = add_bench_prompts_parser(sub)
    >>> parser.parse_args(["cfg.yaml", "--metric", "em"]).metric
    'em'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lightrag.eval.answer_match_acc import NORMALIZATIONS
from lightrag.optim.bench_cli import ProgressBar, make_metric, runner_from_config
from lightrag.utils.config import load_config
from lightrag.utils.rate_limit import RequestRateLimit

__all__ = ["METRICS", "add_bench_prompts_parser", "run_bench_prompts"]

METRICS = ["f1", "exact_match", "em", "normalized", "fuzzy_match", "contains"]


def add_bench_prompts_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``bench-prompts CONFIG.yaml [--limit N] [--out DIR] [--metric M]``."""
    parser = subparsers.add_parser(
        "bench-prompts", help="benchmark prompt variants described in a YAML config",
        description="Run every prompt variant of a YAML bench config over its dataset; print the "
                    "table (mean, 95% CI, paired difference and p-value vs the baseline, "
                    "failures, tokens, latency) and write JSON, CSV and PNG to --out. "
                    "The Python files listed under the config's 'imports' key are executed: "
                    "run only configs you trust.")
    parser.add_argument("config", help="bench config (YAML)")
    parser.add_argument("--limit", type=int, default=None, help="first N items only")
    parser.add_argument("--out", default=None,
                        help="output folder (default: .cache/bench-prompts/<config name>); the "
                             "reply cache is OUT/responses.sqlite, the results OUT/<metric>/")
    parser.add_argument("--data", default=None, help="dataset file or folder (replaces the config's)")
    parser.add_argument("--cache", default=None,
                        help="SQLite response cache (default: OUT/responses.sqlite)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--no-plot", action="store_true", help="do not draw scores.png")
    parser.add_argument("--metric", choices=METRICS, default=None,
                        help="score with this metric instead of the config's (cached replies "
                             "are re-scored without model calls)")
    parser.add_argument("--normalize", choices=list(NORMALIZATIONS), default=None,
                        help="answer normalisation of the metric: squad (official, ASCII only) "
                             "or unicode (curly quotes, accents, full-width text; keeps numbers "
                             "whole: 3.14 is not 314)")
    parser.add_argument("--on-error", choices=["zero", "exclude"], default=None,
                        help="an item the model never answered (provider error after retries): "
                             "score it 0 (zero) or leave it out of every variant's statistics "
                             "(exclude); default: the config's on_error, else zero")
    parser.add_argument("--samples", type=int, default=None,
                        help="runs of every variant over the dataset, each cached apart (for a "
                             "model at temperature > 0): items score the mean of their samples "
                             "and the table adds each variant's run-to-run SD; default: the "
                             "config's samples, else 1")
    parser.add_argument("--requests-per-minute", type=float, default=None,
                        help="start at most this many model requests a minute (retries "
                             "included; a provider's rate limit); default: the config's "
                             "requests_per_minute, else no limit")
    parser.set_defaults(func=run_bench_prompts)
    return parser


def _run(args: argparse.Namespace, config: Path, cache: Path) -> Any:
    runner, config_limit = runner_from_config(config, getattr(args, "data", None),
                                              cache_path=cache)
    spec = load_config(config).get("metric") or {"name": "f1"}
    spec = {"name": spec} if isinstance(spec, str) else dict(spec)
    runner.answer_key = spec.get("answer_key", "answer")
    new_metric = {k: v for k, v in (("name", getattr(args, "metric", None)),
                                    ("normalize", getattr(args, "normalize", None))) if v}
    if new_metric:  # re-score with another metric, keeping its keys
        runner.metric, runner.metric_name = make_metric({**spec, **new_metric})
        runner.run_info["metric_spec"] = {**spec, **new_metric}
    if getattr(args, "on_error", None):
        runner.on_error = args.on_error
    if getattr(args, "samples", None) is not None:
        if args.samples < 1:
            raise ValueError(f"--samples must be at least 1, got {args.samples}")
        runner.samples = args.samples
    if getattr(args, "requests_per_minute", None) is not None:
        runner.rate_limit = RequestRateLimit(args.requests_per_minute)
    limit = args.limit if args.limit is not None else config_limit
    try:
        return runner, runner.run(limit=limit, progress=ProgressBar())
    except KeyboardInterrupt:
        sys.stderr.write(f"\ninterrupted: {len(runner.cache)} replies are cached in {cache}; run "
                         "the same command again to resume (cached calls are not sent again)\n")
        raise


def run_bench_prompts(args: argparse.Namespace) -> int:
    """Run the ``bench-prompts`` command; returns the exit status (0 ok, 2 bad config)."""
    config = Path(args.config)
    out = Path(args.out) if args.out else Path(".cache") / "bench-prompts" / config.stem
    cache = Path(args.cache) if getattr(args, "cache", None) else out / "responses.sqlite"
    try:
        runner, report = _run(args, config, cache)
    except KeyboardInterrupt:
        return 130
    except (FileNotFoundError, ValueError, TypeError, ImportError) as e:
        sys.stderr.write(f"bench-prompts: {e}\n")
        return 2
    # one folder per metric: re-scoring the cached replies with another metric keeps the others
    paths = report.save(out / runner.metric_name, plot=not getattr(args, "no_plot", False))
    sys.stdout.write((report.to_markdown() if getattr(args, "markdown", False)
                      else report.to_text()) + "\n\n" + "\n".join(report.verdict()) + "\n")
    failures = sum(v.failures for v in report.variants)
    sys.stderr.write(f"{failures} failed items; wrote " + ", ".join(str(p) for p in paths.values())
                     + "\n")
    return 0
