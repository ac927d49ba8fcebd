"""A prompt-variant benchmark described in YAML (what ``lightrag bench-prompts CONFIG.yaml`` runs;
the command itself is :mod:`lightrag.cli.bench`).

The config names everything a run needs (relative paths are relative to the YAML file)::

    imports: [qa_pipeline.py]            # Python files that register the pipeline's classes
    dataset: {path: data/queries.json, limit: 20}   # .json list or .jsonl; a folder + file: name
    inputs: [question, paragraphs]       # item keys passed to the pipeline (or one key)
    metric: {name: f1, answer_key: answer, aliases_key: answer_aliases, normalize: squad}
    pipeline: {component_name: MyQA, component_config: {...}}
    # results go to OUT/<metric name>/ (results.json, summary.csv, items.csv, table.md, scores.png)
    baseline: plain
    concurrency: 2
    on_error: zero                       # or exclude: items without a reply leave the stats
    prices: {prompt: 0.15, completion: 0.60}   # USD per million tokens: cost columns
    variants: [{name: plain}, {name: cot, template: "...", model_kwargs: {max_tokens: 256}}]

Metric names: ``f1``, ``exact_match`` (or ``em``), and the :class:`AnswerMatchAcc` types
``normalized``, ``fuzzy_match`` and ``contains``; ``normalize: unicode`` makes ``f1``,
``exact_match``, ``normalized`` and ``contains`` Unicode- and number-aware (see
:func:`lightrag.eval.answer_match_acc.normalize_answer`).

**Security: ``imports`` executes code.** Each file listed under ``imports`` is run as Python
(like ``import``) with your permissions, before anything else, so that the classes it registers
can be named in ``pipeline``. Run only configs whose imported files you trust. Everything else in
a config is data: component configs only name classes that are already registered. A missing
file, a file that is not ``.py``, or a file that raises while running stops the command with an
``ImportError`` naming the config and the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from lightrag.eval.answer_match_acc import NORMALIZATIONS, AnswerMatchAcc, ExactMatch, F1Score
from lightrag.eval.base import BaseEvaluator
from lightrag.optim.benchmark import BenchmarkRunner, override_config
from lightrag.utils.config import load_config
from lightrag.utils.secrets import redact

log = logging.getLogger(__name__)

CONFIG_KEYS = {"imports", "dataset", "inputs", "metric", "pipeline", "baseline", "concurrency",
               "variants", "seed", "n_resamples", "id_key", "description", "on_error", "prices",
               "samples", "requests_per_minute"}


def make_metric(spec: Any) -> Tuple[Callable[[Any, Dict[str, Any]], float], str]:
    """``(metric(prediction, item), name)`` from a name or
    ``{name, answer_key, aliases_key, normalize}``; the name of a ``unicode`` metric says so.

    Example:
        >>> metric, name = make_metric({"name": "em", "normalize": "unicode"})
        >>> name, metric("“3.14”", {"answer": "3.14"}), metric("314", {"answer": "3.14"})
        ('em_unicode', 1.0, 0.0)
    """
    spec = {"name": spec} if isinstance(spec, str) else dict(spec or {"name": "f1"})
    name = str(spec.pop("name", "f1")).lower()
    if name == "llm_judge":
        return _judge_metric(spec)
    answer_key = spec.pop("answer_key", "answer")
    aliases_key = spec.pop("aliases_key", None)
    normalize = spec.pop("normalize", "squad")
    if spec:
        raise ValueError(f"metric: unknown keys {sorted(spec)}")
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"metric: normalize must be one of {list(NORMALIZATIONS)}, "
                         f"got {normalize!r}")
    evaluator: BaseEvaluator
    if name == "f1":
        evaluator = F1Score(normalize=normalize)
    elif name in ("exact_match", "em"):
        evaluator = ExactMatch(normalize=normalize)
    elif name in ("normalized", "fuzzy_match", "contains"):
        evaluator = AnswerMatchAcc(type=name, normalize=normalize)  # type: ignore[arg-type]
    else:
        raise ValueError(f"unknown metric {name!r}: use f1, exact_match, normalized, "
                         "fuzzy_match or contains")

    def metric(prediction: Any, item: Dict[str, Any]) -> float:
        aliases = item.get(aliases_key) if aliases_key else None
        refs = [item[answer_key], *(aliases or [])]
        return evaluator.compute_single_item(prediction, refs)

    if normalize != "squad" and name != "fuzzy_match":
        name = f"{name}_{normalize}"
    metric.__name__ = name
    return metric, name


#: the keys of an ``llm_judge`` metric (see :func:`_judge_metric`)
JUDGE_KEYS = {"model_client", "model_kwargs", "judgement_query", "question_key", "answer_key",
              "aliases_key", "cache_path"}


def _judge_metric(spec: Dict[str, Any]) -> Tuple[Callable[[Any, Dict[str, Any]], float], str]:
    """An LLM-as-judge metric from a config: ``{name: llm_judge, model_client: {component_name:
    ..., component_config: ...}, model_kwargs: {...}, judgement_query, question_key,
    answer_key, aliases_key, cache_path}``: 1.0 when the judge says the prediction answers the
    item's question as its reference does, 0.0 when it says not. A judge call that fails or a
    reply with no verdict raises, so the item is counted as a failure of kind ``metric`` (never
    scored as a silent 0); ``cache_path`` keeps the judge's replies (re-scoring costs no calls).

    Example:
        >>> metric, name = make_metric({"name": "llm_judge", "model_client": {
        ...     "component_name": "ScriptedClient", "component_config": {"responses": ["True"]}}})
        >>> name, metric("Paris", {"question": "Capital of France?", "answer": "Paris"})
        ('llm_judge', 1.0)
    """
    from lightrag.eval.llm_as_judge import DEFAULT_JUDGEMENT_QUERY, DefaultLLMJudge
    from lightrag.utils.config import new_component

    unknown = sorted(set(spec) - JUDGE_KEYS)
    if unknown:
        raise ValueError(f"metric llm_judge: unknown keys {unknown} (allowed: {sorted(JUDGE_KEYS)})")
    if not isinstance(spec.get("model_client"), dict):
        raise ValueError("metric llm_judge needs model_client: {component_name: ..., "
                         "component_config: {...}} (the judge model)")
    judge = DefaultLLMJudge(new_component(spec["model_client"]), spec.get("model_kwargs"),
                            cache_path=spec.get("cache_path"))
    query = str(spec.get("judgement_query") or DEFAULT_JUDGEMENT_QUERY)
    question_key, answer_key = spec.get("question_key", "question"), spec.get("answer_key", "answer")
    aliases_key = spec.get("aliases_key")

    def llm_judge(prediction: Any, item: Dict[str, Any]) -> float:
        refs = [item[answer_key], *((item.get(aliases_key) or []) if aliases_key else [])]
        return 1.0 if judge(str(item.get(question_key, "")), refs, prediction, query) else 0.0

    return llm_judge, "llm_judge"


def load_dataset(path: Path, file: Optional[str] = None) -> List[Dict[str, Any]]:
    """Items from a ``.json`` list or a ``.jsonl`` file (``path / file`` for a folder)."""
    if path.is_dir():
        if not file:
            raise ValueError(f"dataset path {path} is a folder: name the file with 'file:'")
        path = path / file
    if not path.is_file():
        raise FileNotFoundError(f"dataset not found: {path}")
    text = path.read_text(encoding="utf-8")
    items = ([json.loads(line) for line in text.splitlines() if line.strip()]
             if path.suffix == ".jsonl" else json.loads(text))
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ValueError(f"{path}: expected a list of JSON objects")
    return items


def import_file(path: Path, config_path: Optional[Path] = None) -> None:
    """Run the Python file ``path`` (an ``imports`` entry) once per process.

    Raises:
        ImportError: the file is missing, is not a ``.py`` file, or raised while running (the
            message names ``config_path`` and the file; the original error is chained).
    """
    where = f"{config_path}: imports: " if config_path is not None else ""
    if not path.is_file():
        raise ImportError(f"{where}{path} not found (paths are relative to the config file)")
    if path.suffix != ".py":
        raise ImportError(f"{where}{path} is not a Python (.py) file")
    digest = hashlib.sha1(str(path.resolve()).encode("utf-8")).hexdigest()[:12]
    name = f"lightrag_bench_{path.stem}_{digest}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{where}cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise ImportError(f"{where}running {path} failed: {type(e).__name__}: {e}") from e
    log.info("imported %s (from the bench config's 'imports')", path)


def runner_from_config(
    config_path: str | Path,
    data: Optional[str | Path] = None,
    pipeline_overrides: Optional[Dict[str, Any]] = None,
    cache_path: Optional[str | Path] = None,
) -> Tuple[BenchmarkRunner, Optional[int]]:
    """A :class:`BenchmarkRunner` and the config's item limit, from a bench YAML file.

    The files under the config's ``imports`` are executed first (see the module doc: run only
    configs you trust).

    Args:
        data: replaces ``dataset.path``.
        pipeline_overrides: dotted overrides of the pipeline config (e.g.
            ``{"model_client": {...}, "model_kwargs.model": "gpt-4o-mini"}``).
        cache_path: the SQLite response cache.

    Raises:
        ValueError: an unknown or missing config key, or a bad metric or variant.
        ImportError: an ``imports`` file is missing or fails to run.
        FileNotFoundError: the dataset file is missing.
    """
    path = Path(config_path)
    config = load_config(path)
    unknown = sorted(set(config) - CONFIG_KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown} (allowed: {sorted(CONFIG_KEYS)})")
    for key in ("pipeline", "variants", "dataset"):
        if key not in config:
            raise ValueError(f"{path}: missing '{key}'")
    base = path.parent
    imports = config.get("imports") or []
    if isinstance(imports, str):
        imports = [imports]
    if not isinstance(imports, list) or not all(isinstance(f, str) for f in imports):
        raise ValueError(f"{path}: 'imports' must be a list of Python file paths")
    for file in imports:
        import_file((base / file).resolve(), path)
    dataset_spec = dict(config["dataset"])
    data_path = Path(data) if data is not None else base / dataset_spec["path"]
    items = load_dataset(data_path, dataset_spec.get("file"))
    pipeline = config["pipeline"]
    for key, value in (pipeline_overrides or {}).items():
        override_config(pipeline, key, value)
    metric, metric_name = make_metric(config.get("metric"))
    inputs = config.get("inputs")
    run_info = {"config_file": str(path.resolve()),
                "config_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "dataset": str(data_path.resolve()), "metric_spec": config.get("metric") or "f1",
                "pipeline_overrides": redact(dict(pipeline_overrides or {}))}
    runner = BenchmarkRunner(
        pipeline=pipeline, dataset=items, metric=metric, variants=config["variants"],
        baseline=config.get("baseline"), inputs=inputs if isinstance(inputs, str) or inputs is None
        else list(inputs), concurrency=int(config.get("concurrency", 2)), cache_path=cache_path,
        n_resamples=int(config.get("n_resamples", 10_000)), seed=int(config.get("seed", 0)),
        id_key=config.get("id_key", "id"), metric_name=metric_name,
        on_error=str(config.get("on_error", "zero")), prices=config.get("prices"),
        run_info=run_info, samples=int(config.get("samples", 1)),
        requests_per_minute=config.get("requests_per_minute"),
    )
    return runner, dataset_spec.get("limit")


class ProgressBar:
    """A one-line progress bar per variant on a stream (stderr by default)."""

    def __init__(self, stream: Any = None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.started: Dict[str, float] = {}

    def __call__(self, variant: str, done: int, total: int) -> None:
        start = self.started.setdefault(variant, time.perf_counter())
        filled = int(self.width * done / max(total, 1))
        elapsed = time.perf_counter() - start
        self.stream.write(f"\r{variant:>16} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{done}/{total} {elapsed:6.1f}s")
        if done == total and total:
            self.stream.write("\n")
        self.stream.flush()
