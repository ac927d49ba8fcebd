"""Prompt-variant benchmarking: run every variant of a pipeline over a dataset and compare them.

A *variant* is a set of changes applied to a fresh copy of the pipeline:

* ``params``: Parameter values by dotted name (``generator.instruction``), loaded with
  ``load_state_dict(strict=False)``; an unknown name is an error, never silently ignored;
* ``template`` / ``prompt_kwargs``: a new prompt template or preset prompt variables;
* ``model_client`` (a ModelClient or its config) and ``model_kwargs`` (merged);
* ``config``: overrides of the pipeline's constructor config (when the pipeline is a config),
  dotted keys descending into nested components.

``template``, ``prompt_kwargs``, ``model_client`` and ``model_kwargs`` apply to the Generator named
by ``generator`` (its dotted path), or to every Generator when there is no name (a template needs
exactly one).

The runner answers what a researcher has to report: each variant's mean with a seeded bootstrap
95% interval, its paired difference to the baseline (same items) with a bootstrap interval and a
sign-flip permutation p-value (Holm-adjusted across variants), failures (counted, never
aborting the run; an item the model never answered is an *error*: scored 0 with
``on_error="zero"``, or left out of every variant's statistics with ``on_error="exclude"``),
retries and 429s, tokens (and their cost with ``prices``) and latency, and a verdict in plain
words. The report's settings hold the exact config: variants, pipeline, dataset hash, versions.
Replies are cached by full request (SQLite with ``cache_path``), so re-running costs no model
calls and reproduces the same numbers; an interrupted run resumes where it stopped.

Example:
    >>> from lightrag.core import Component, Generator
    >>> from lightrag.components.model_client import ScriptedClient
    >>> class QA(Component):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.generator = Generator(model_client=ScriptedClient(response_fn=str.strip),
    ...                                    template="{{question}}")
    ...     def call(self, question):
    ...         return self.generator({"question": question})
    >>> data = [{"question": "4", "answer": "4"}, {"question": "5", "answer": "5"}]
    >>> runner = BenchmarkRunner(QA, data, metric=lambda pred, item: float(pred == item["answer"]),
    ...                          variants=[{"name": "plain"}, {"name": "shout", "template": "{{question}}!"}],
    ...                          inputs="question")
    >>> report = runner.run()
    >>> report["plain"].mean, report["shout"].mean, report["shout"].delta
    (1.0, 0.0, -1.0)
"""

from __future__ import annotations

import copy
import json
import logging
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Union

from lightrag.core.cache import ResponseCache
from lightrag.core.component import Component
from lightrag.core.model_client import ModelClient
from lightrag.core.prompt_builder import Prompt
from lightrag.optim.evaluation import (
    Inputs,
    ItemResult,
    Metric,
    attach_cache,
    evaluate_pipeline,
    generators_of,
)
from lightrag.optim.report import BenchmarkReport, VariantResult
from lightrag.optim.run_info import config_of, dataset_sha256, describe_inputs, describe_pipeline, versions
from lightrag.optim.samples import combine_samples, run_to_run_sd, sample_scope
from lightrag.optim.stats import (
    DEFAULT_RESAMPLES,
    bootstrap_ci,
    holm_adjust,
    paired_permutation_test,
    percentile,
    safe_mean,
)
from lightrag.utils.config import build, load_config
from lightrag.utils.rate_limit import RequestRateLimit
from lightrag.utils.safe_yaml import safe_load as bounded_yaml_load
from lightrag.utils.secrets import redact

log = logging.getLogger(__name__)

PipelineSource = Union[Component, Callable[[], Component], Dict[str, Any]]


@dataclass
class Variant:
    """Changes that turn the base pipeline into one variant (see the module doc).

    Example:
        >>> Variant.from_dict({"name": "cot", "model_kwargs": {"max_tokens": 256}}).model_kwargs
        {'max_tokens': 256}
    """

    name: str
    description: str = ""
    params: Dict[str, Any] = field(default_factory=dict)
    template: Optional[str] = None
    prompt_kwargs: Dict[str, Any] = field(default_factory=dict)
    model_client: Any = None
    model_kwargs: Dict[str, Any] = field(default_factory=dict)
    generator: Optional[str] = None
    config: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> Variant:
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ValueError(f"variant {data.get('name')!r}: unknown keys {unknown} "
                             f"(allowed: {sorted(allowed)})")
        if not data.get("name"):
            raise ValueError(f"every variant needs a name: {data}")
        return cls(**{k: v for k, v in data.items() if v is not None})

    def to_dict(self) -> Dict[str, Any]:
        """The variant's non-default fields as plain data (a client as its config), for reports.

        Example:
            >>> Variant("cot", model_kwargs={"max_tokens": 256}).to_dict()
            {'name': 'cot', 'model_kwargs': {'max_tokens': 256}}
        """
        out: Dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value in (None, "", {}):
                continue
            if isinstance(value, ModelClient):
                value = config_of(value)
            out[f.name] = value
        return redact(out)


def load_variants(source: Union[str, Path, Sequence[Any], Dict[str, Any]]) -> List[Variant]:
    """Variants from a YAML file/text, a list of dicts or Variants, or ``{name: spec}``.

    A YAML document may be that list or mapping, or have it under ``variants:``.
    """
    if isinstance(source, (str, Path)):
        source = bounded_yaml_load(Path(source).read_text(encoding="utf-8")
                                if Path(str(source)).suffix in (".yaml", ".yml") else str(source))
    if isinstance(source, dict) and "variants" in source:
        source = source["variants"]
    if isinstance(source, dict):
        source = [{"name": name, **(spec or {})} for name, spec in source.items()]
    variants = [v if isinstance(v, Variant) else Variant.from_dict(dict(v)) for v in source or []]
    names = [v.name for v in variants]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate variant names: {duplicates}")
    if not variants:
        raise ValueError("no variants given")
    return variants


def override_config(config: Dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``dotted`` inside a component config, descending through ``component_config``."""
    node = config
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if isinstance(node, dict) and "component_name" in node:
            node = node.setdefault("component_config", {})
        if i == len(parts) - 1:
            node[part] = value
        else:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"config override {dotted!r}: {part!r} is not a nested config")
            node = node[part]


def fresh_pipeline(pipeline: PipelineSource, config_overrides: Optional[Dict[str, Any]] = None
                   ) -> Component:
    """A new, independent copy of ``pipeline`` (a config, a factory, or a configurable instance)."""
    if isinstance(pipeline, dict):
        config = copy.deepcopy(load_config(pipeline))
        for key, value in (config_overrides or {}).items():
            override_config(config, key, copy.deepcopy(value))
        return build(config)
    if config_overrides:
        raise ValueError("variant 'config' overrides need the pipeline given as a config dict")
    if isinstance(pipeline, Component):
        try:
            copied = build(pipeline.to_config())
        except Exception as e:
            raise TypeError(
                f"cannot copy {type(pipeline).__name__} through its config ({e}); pass a factory "
                "(a function or class returning a new pipeline) instead"
            ) from e
        copied.load_state_dict(pipeline.state_dict(), strict=False)
        return copied
    if callable(pipeline):
        built = pipeline()
        if not isinstance(built, Component):
            raise TypeError(f"the pipeline factory returned {type(built).__name__}, not a Component")
        return built
    raise TypeError(f"pipeline must be a Component, a factory or a config, not {type(pipeline)}")


def _check_variables(variant: Variant, old: Prompt, new: Prompt, parameters: Set[str]) -> None:
    """A variant's template may use the variables the pipeline's template used (those the
    pipeline passes), its presets and its Parameters; any other renders as ``None`` on every
    item ("Q: None" for ``{{query}}`` where the pipeline passes ``question``), so it is an error
    before any model call."""
    known = set(old.prompt_variables) | set(new.prompt_kwargs) | parameters
    unknown = sorted(set(new.prompt_variables) - known)
    if unknown:
        raise ValueError(
            f"variant {variant.name!r}: the template uses {unknown}, which the pipeline does not "
            f"pass (its template's variables: {sorted(old.prompt_variables)}); set them under "
            "'prompt_kwargs' or use the pipeline's names")


def build_variant(pipeline: PipelineSource, variant: Variant) -> Component:
    """A fresh pipeline with ``variant`` applied; raises ``ValueError`` on any unknown target."""
    component = fresh_pipeline(pipeline, variant.config)
    gens = generators_of(component)
    targets = [(n, g) for n, g in gens if variant.generator in (None, n)]
    if variant.generator is not None and not targets:
        raise ValueError(f"variant {variant.name!r}: no Generator named {variant.generator!r} "
                         f"(found {[n for n, _ in gens]})")
    changes_gen = (variant.template, variant.model_client, variant.model_kwargs or None,
                   variant.prompt_kwargs or None)
    if any(c is not None for c in changes_gen) and not targets:
        raise ValueError(f"variant {variant.name!r}: the pipeline has no Generator to change")
    if (variant.template is not None or variant.prompt_kwargs) and len(targets) != 1:
        raise ValueError(f"variant {variant.name!r}: the pipeline has {len(targets)} Generators; "
                         f"name one with 'generator' ({[n for n, _ in targets]})")
    for _, gen in targets:
        if variant.model_client is not None:
            client = variant.model_client
            gen.model_client = client if isinstance(client, ModelClient) else build(client)
        if variant.model_kwargs:
            gen.model_kwargs = {**gen.model_kwargs, **variant.model_kwargs}
        if variant.template is not None or variant.prompt_kwargs:
            params = dict(gen.named_parameters(recursive=False))
            clash = sorted(set(variant.prompt_kwargs) & set(params))
            if clash:
                raise ValueError(f"variant {variant.name!r}: {clash} are Parameters; set them "
                                 "under 'params' by dotted name")
            new = Prompt(template=variant.template or gen.prompt.template,
                         prompt_kwargs={**gen.prompt.prompt_kwargs, **variant.prompt_kwargs})
            _check_variables(variant, gen.prompt, new, set(params))
            gen.prompt = new
    if variant.params:
        result = component.load_state_dict(variant.params, strict=False)
        if result.unexpected_keys:
            raise ValueError(f"variant {variant.name!r}: unknown parameters "
                             f"{result.unexpected_keys} (known: {list(component.state_dict())})")
    return component


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass
class QABenchmarkReport(BenchmarkReport):
    """A :class:`BenchmarkReport` whose ``items.csv`` also shows each item's question and gold
    answer (``question`` and ``gold`` columns, after ``id``), so a row can be read on its own.

    Example:
        >>> from lightrag.optim.evaluation import ItemResult
        >>> r = VariantResult(name="plain", n=1, mean=1.0, items=[ItemResult(0, 1.0, "Paris")])
        >>> report = QABenchmarkReport(variants=[r], baseline="plain", item_ids=["q1"],
        ...                            questions=["Capital of France?"], golds=["Paris"])
        >>> print(report.items_csv().splitlines()[1][:40])
        plain,0,q1,Capital of France?,Paris,1.0,
    """

    questions: List[Any] = field(default_factory=list)
    golds: List[Any] = field(default_factory=list)

    def _item_columns(self) -> List[str]:
        columns = super()._item_columns()
        at = columns.index("id") + 1 if "id" in columns else len(columns)
        columns[at:at] = ["question", "gold"]
        return columns

    def _item_row(self, variant: VariantResult, item: ItemResult) -> Dict[str, Any]:
        row = super()._item_row(variant, item)
        i = item.index
        row.update(question=_cell(self.questions[i] if i < len(self.questions) else None),
                   gold=_cell(self.golds[i] if i < len(self.golds) else None))
        return row


class BenchmarkRunner:
    """Run prompt variants over a dataset and compare them with paired statistics.

    Args:
        pipeline: a config dict, a factory returning a new Component, or a Component whose
            ``to_config()`` rebuilds it. Every variant runs on its own fresh copy.
        dataset: a list of dicts (items).
        metric: ``metric(prediction, item) -> float`` (e.g. ``F1Score`` against the item's answer).
        variants: Variants, dicts, or a YAML path/text (see :func:`load_variants`).
        baseline: the variant others are compared with (default: the first).
        inputs: how an item becomes the pipeline call (None: the item; a key; a list of keys
            passed as keyword arguments; or ``item -> kwargs``).
        concurrency: items run at once per variant (threads).
        cache_path: SQLite response cache shared by all variants; in memory when None.
        n_resamples, confidence, seed: bootstrap / permutation settings.
        id_key: the item field that names items in the outputs.
        metric_name: the metric's name in tables.
        question_key, answer_key: the item fields shown as the ``question`` and ``gold``
            columns of ``items.csv`` (empty when an item lacks them).
        on_error: ``"zero"``: an item the model never answered (a provider error left after the
            retries) scores 0; ``"exclude"``: such an item is left out of every variant's mean,
            interval and paired test, so the comparison stays on the same items. Either way it
            is counted (``errors``) and not cached, so re-running retries only those items.
        prices: USD per million tokens, ``{"prompt": 0.15, "completion": 0.6}``: reports each
            variant's ``cost_usd`` (every reply) and ``spent_usd`` (this run's calls).
        run_info: more settings for the report (the CLI adds the config file and command).
        samples: runs of every variant over the dataset, each cached apart; an item scores the
            mean of its samples and each variant reports ``run_sd``, the spread of its mean
            across samples (:mod:`lightrag.optim.samples`; for models at ``temperature > 0``).
        requests_per_minute: at most this many model requests (retries included) begin per
            minute, shared by all variants' Generators (:mod:`lightrag.utils.rate_limit`):
            a provider's per-minute limit is kept instead of earning 429s.

    Example:
        >>> from lightrag.core import FunComponent
        >>> runner = BenchmarkRunner(lambda: FunComponent(str.upper), [{"q": "a"}, {"q": "b"}],
        ...                          metric=lambda pred, item: float(pred == "A"),
        ...                          variants=[{"name": "upper"}], inputs="q", n_resamples=100)
        >>> runner.run().variants[0].mean
        0.5
    """

    def __init__(
        self,
        pipeline: PipelineSource,
        dataset: Sequence[Dict[str, Any]],
        metric: Metric,
        variants: Union[str, Path, Sequence[Any], Dict[str, Any]],
        baseline: Optional[str] = None,
        inputs: Inputs = None,
        concurrency: int = 4,
        cache_path: Optional[Union[str, Path]] = None,
        n_resamples: int = DEFAULT_RESAMPLES,
        confidence: float = 0.95,
        seed: int = 0,
        id_key: str = "id",
        metric_name: Optional[str] = None,
        question_key: str = "question",
        answer_key: str = "answer",
        on_error: str = "zero",
        prices: Optional[Dict[str, float]] = None,
        run_info: Optional[Dict[str, Any]] = None,
        samples: int = 1,
        requests_per_minute: Optional[float] = None,
    ) -> None:
        self.rate_limit = RequestRateLimit(requests_per_minute) if requests_per_minute else None
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a positive whole number, got {samples!r}")
        self.samples = samples
        if on_error not in ("zero", "exclude"):
            raise ValueError(f"on_error must be 'zero' or 'exclude', got {on_error!r}")
        unknown_prices = sorted(set(prices or {}) - {"prompt", "completion"})
        if unknown_prices:
            raise ValueError(f"prices: unknown keys {unknown_prices} (use prompt, completion: "
                             "USD per million tokens)")
        self.on_error = on_error
        self.prices = dict(prices) if prices else None
        self.run_info = dict(run_info or {})
        self.pipeline = pipeline
        self.dataset = list(dataset)
        self.metric = metric
        self.variants = load_variants(variants)
        names = [v.name for v in self.variants]
        self.baseline = baseline or names[0]
        if self.baseline not in names:
            raise ValueError(f"baseline {self.baseline!r} is not a variant ({names})")
        self.inputs = inputs
        self.concurrency = concurrency
        self.cache_path = str(cache_path) if cache_path is not None else None
        self.cache = ResponseCache(cache_path)
        self.n_resamples, self.confidence, self.seed = n_resamples, confidence, seed
        self.id_key = id_key
        self.metric_name = metric_name or getattr(metric, "__name__", type(metric).__name__)
        self.question_key, self.answer_key = question_key, answer_key

    def run(self, limit: Optional[int] = None,
            progress: Optional[Callable[[str, int, int], None]] = None) -> BenchmarkReport:
        """Run every variant on the first ``limit`` items (all when None) and summarise.

        All variants are built before any model call, so a mistake in one fails at once.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"limit must be a positive number of items, got {limit!r}")
        items = self.dataset[:limit] if limit is not None else self.dataset
        if not items:
            raise ValueError("the dataset is empty")
        built = [(v, build_variant(self.pipeline, v)) for v in self.variants]
        runs: List[tuple] = []
        for variant, component in built:
            if self.rate_limit is not None:
                for _, generator in generators_of(component):
                    object.__setattr__(generator.model_client, "rate_limit", self.rate_limit)
            log.info("variant %s: %d items x %d samples", variant.name, len(items), self.samples)
            started = time.perf_counter()
            sampled = []
            for sample in range(self.samples):
                attach_cache(component, self.cache, scope=sample_scope(variant.name, sample))
                label = variant.name if self.samples == 1 else f"{variant.name} #{sample + 1}"
                sampled.append(evaluate_pipeline(
                    component, items, self.metric, self.inputs, self.concurrency,
                    progress=(lambda d, t, n=label: progress(n, d, t)) if progress else None))
            outcomes = sampled[0] if self.samples == 1 else combine_samples(sampled)
            runs.append((variant, outcomes, time.perf_counter() - started, sampled))
        ids = [it.get(self.id_key, i) if isinstance(it, dict) else i for i, it in enumerate(items)]
        no_reply = {o.index for _, outcomes, _, _ in runs for o in outcomes if o.error_kind == "call"}
        keep = (set(range(len(items))) - no_reply) if self.on_error == "exclude" else None
        results = {v.name: self._summarise(v, outcomes, wall, keep, sampled)
                   for v, outcomes, wall, sampled in runs}
        self._compare(results, keep)
        settings = {
            "items": len(items), "limit": limit, "concurrency": self.concurrency,
            "confidence": self.confidence, "n_resamples": self.n_resamples, "seed": self.seed,
            "ci": "percentile bootstrap of the mean",
            "test": "two-sided paired sign-flip permutation test; Holm-adjusted across variants",
            "failures": "scored 0", "on_error": self.on_error, "samples": self.samples,
            "requests_per_minute": self.rate_limit.requests_per_minute if self.rate_limit else None,
            "excluded_items": [ids[i] for i in sorted(no_reply)] if keep is not None else [],
            "cache_path": self.cache_path, "metric": self.metric_name, "baseline": self.baseline,
            "variants": [v.to_dict() for v in self.variants],
            "pipeline": describe_pipeline(self.pipeline), "inputs": describe_inputs(self.inputs),
            "dataset_sha256": dataset_sha256(items), "prices": self.prices,
            "versions": versions(), **self.run_info,
        }
        return QABenchmarkReport(
            variants=list(results.values()), baseline=self.baseline, metric=self.metric_name,
            settings=settings, item_ids=ids,
            questions=[it.get(self.question_key) if isinstance(it, dict) else None for it in items],
            golds=[it.get(self.answer_key) if isinstance(it, dict) else None for it in items],
        )

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> Optional[float]:
        if self.prices is None:
            return None
        return round((prompt_tokens * self.prices.get("prompt", 0.0)
                      + completion_tokens * self.prices.get("completion", 0.0)) / 1e6, 9)

    def _summarise(self, variant: Variant, outcomes: List[Any], wall_s: float,
                   keep: Optional[Set[int]] = None,
                   sampled: Optional[List[List[Any]]] = None) -> VariantResult:
        scores = [o.score for o in outcomes if keep is None or o.index in keep]
        lo, hi = bootstrap_ci(scores, self.confidence, self.n_resamples, self.seed)
        n = len(outcomes)
        prompt_tokens = sum(o.prompt_tokens for o in outcomes)
        completion_tokens = sum(o.completion_tokens for o in outcomes)
        new_prompt = sum(o.new_prompt_tokens for o in outcomes)
        new_completion = sum(o.new_completion_tokens for o in outcomes)
        latencies = [o.latency_s for o in outcomes]
        return VariantResult(
            name=variant.name, description=variant.description, n=len(scores),
            mean=safe_mean(scores), ci_low=lo, ci_high=hi,
            failures=sum(o.error is not None for o in outcomes),
            errors=sum(o.error_kind == "call" for o in outcomes),
            retries=sum(o.retries for o in outcomes),
            rate_limited=sum(o.rate_limited for o in outcomes),
            model_calls=sum(o.model_calls for o in outcomes),
            cached_calls=sum(o.cached_calls for o in outcomes),
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            tokens_per_item=(prompt_tokens + completion_tokens) / n if n else 0.0,
            new_prompt_tokens=new_prompt, new_completion_tokens=new_completion,
            cost_usd=self._cost(prompt_tokens, completion_tokens),
            spent_usd=self._cost(new_prompt, new_completion),
            latency_mean_s=round(safe_mean(latencies), 6),
            latency_p95_s=round(percentile(latencies, 95), 6), wall_s=round(wall_s, 3),
            samples=self.samples,
            run_sd=round(run_to_run_sd(sampled, keep), 6) if sampled and len(sampled) > 1 else None,
            items=outcomes,
        )

    def _compare(self, results: Dict[str, VariantResult], keep: Optional[Set[int]] = None) -> None:
        base = [o.score for o in results[self.baseline].items if keep is None or o.index in keep]
        others = [r for name, r in results.items() if name != self.baseline]
        for r in others:
            scores = [o.score for o in r.items if keep is None or o.index in keep]
            diffs = [s - b for s, b in zip(scores, base)]
            r.delta = round(r.mean - results[self.baseline].mean, 12)
            r.delta_ci_low, r.delta_ci_high = bootstrap_ci(
                diffs, self.confidence, self.n_resamples, self.seed)
            r.p_value = paired_permutation_test(scores, base, self.n_resamples, self.seed)
            r.wins = sum(d > 0 for d in diffs)
            r.losses = sum(d < 0 for d in diffs)
            r.ties = sum(d == 0 for d in diffs)
        for r, adjusted in zip(others, holm_adjust([r.p_value or 1.0 for r in others])):
            r.p_value_holm = adjusted
