"""Benchmark QA prompt variants: plain vs chain-of-thought vs answer-only.

The questions are the set shipped in ``data/`` unless ``--data DIR`` names another folder with a
``queries.json`` in the same format (docs/prompt_benchmark.md ran MuSiQue-100, a set that is not
part of this repository).

Runs on the embedded local model (SmolLM2-135M through llama.cpp, no network) unless
``--provider`` names OpenAI or Groq, or ``--provider auto`` (the default) finds
``GROQ_API_KEY`` or ``OPENAI_API_KEY`` set. Progress goes to stderr, the table to stdout; JSON,
CSV, a markdown table and a PNG plot go to ``--out``. Replies are cached in
``OUT/responses.sqlite``, so running the same command again costs no model calls.

    python use_cases/prompt_benchmark/run.py --limit 20
    python use_cases/prompt_benchmark/run.py --limit 20 --metric exact_match   # free: cached
    python use_cases/prompt_benchmark/run.py --data my_questions/ --limit 20   # my_questions/queries.json
    python use_cases/prompt_benchmark/run.py --provider openai --limit 100
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any, Dict

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

from lightrag.optim.bench_cli import ProgressBar, runner_from_config  # noqa: E402

PROVIDERS: Dict[str, Dict[str, Any]] = {
    "openai": {"model_client": {"component_name": "OpenAIClient", "component_config": {}},
               "model_kwargs.model": "gpt-4o-mini"},
    "groq": {"model_client": {"component_name": "GroqAPIClient", "component_config": {}},
             "model_kwargs.model": "llama-3.1-8b-instant"},
    "local": {},
}


def pick_provider(name: str) -> str:
    if name != "auto":
        return name
    if os.environ.get("GROQ_API_KEY"):
        return "groq"
    if os.environ.get("OPENAI_API_KEY"):
        return "openai"
    return "local"


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=None,
                        help="a data folder with queries.json (default: the set in data/)")
    parser.add_argument("--data", dest="data_option", default=None,
                        help="the same, e.g. --data my_questions/")
    parser.add_argument("--config", default=str(HERE / "variants.yaml"))
    parser.add_argument("--limit", type=int, default=20, help="first N questions (default 20)")
    parser.add_argument("--provider", choices=["auto", *PROVIDERS], default="auto")
    parser.add_argument("--metric", choices=["f1", "exact_match", "contains", "normalized", "fuzzy_match"],
                        default=None,
                        help="override the config's metric (f1)")
    parser.add_argument("--out", default=str(REPO / ".cache/prompt_benchmark"))
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)

    provider = pick_provider(args.provider)
    out = Path(args.out) / provider
    data = args.data_option or args.data
    try:
        runner, _ = runner_from_config(args.config, data=data,
                                       pipeline_overrides=PROVIDERS[provider],
                                       cache_path=out / "responses.sqlite")
    except (FileNotFoundError, ValueError, ImportError) as e:
        sys.stderr.write(f"run.py: {e}\n")
        return 2
    if provider != "local":
        runner.concurrency = 8  # API calls overlap; the local model serves one request at a time
    if args.metric:
        from lightrag.optim.bench_cli import make_metric

        runner.metric, runner.metric_name = make_metric(
            {"name": args.metric, "answer_key": "answer", "aliases_key": "answer_aliases"})
    sys.stderr.write(f"provider: {provider}; {min(args.limit, len(runner.dataset))} questions; "
                     f"variants: {', '.join(v.name for v in runner.variants)}\n")
    report = runner.run(limit=args.limit, progress=ProgressBar())
    paths = report.save(out / runner.metric_name)
    print(report.to_markdown() if args.markdown else report.to_text())
    print(f"\nfiles: {', '.join(str(p) for p in paths.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
