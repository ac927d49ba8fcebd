"""``VariantResult`` and ``BenchmarkReport``: the numbers of a benchmark, as tables and files.

``BenchmarkReport.save(out_dir)`` writes:

* ``results.json``: settings (the exact config), the verdict, every variant's summary and every
  item's outcome;
* ``summary.csv``: one row per variant;
* ``items.csv``: one row per (variant, item) with score, prediction, error and its kind;
* ``table.md``: the table and the verdict;
* ``scores.png``: each variant's mean with its 95% CI, and its paired difference from the
  baseline with its CI and Holm p-value (needs matplotlib, imported only here).

Example:
    >>> r = VariantResult(name="plain", n=2, mean=0.5, ci_low=0.0, ci_high=1.0)
    >>> print(BenchmarkReport(variants=[r], baseline="plain").to_markdown().splitlines()[2])
    | plain (baseline) | 2 | 0.500 [0.000, 1.000] | – | – | 0 | 0 (0) | 0 | 0.00 | 0 / 0 |
"""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from lightrag.optim.evaluation import ItemResult
from lightrag.utils.file_io import atomic_write_text, save_json

log = logging.getLogger(__name__)

SUMMARY_FIELDS = [
    "name", "n", "mean", "ci_low", "ci_high", "delta", "delta_ci_low", "delta_ci_high", "p_value",
    "p_value_holm", "wins", "losses", "ties", "failures", "errors", "retries", "rate_limited",
    "model_calls", "cached_calls", "prompt_tokens", "completion_tokens", "tokens_per_item",
    "new_prompt_tokens", "new_completion_tokens", "cost_usd", "spent_usd", "latency_mean_s",
    "latency_p95_s", "wall_s", "samples", "run_sd", "description",
]
ITEM_FIELDS = ["variant", "index", "id", "score", "prediction", "error", "error_kind",
               "latency_s", "model_calls", "cached_calls", "retries", "rate_limited",
               "prompt_tokens", "completion_tokens"]


@dataclass
class VariantResult:
    """One variant's summary; ``delta`` and ``p_value`` compare it with the baseline, item by item.

    ``wins``/``losses``/``ties`` count items scoring higher/lower/equal than the baseline.
    ``failures`` counts items scored 0 for an error of any kind, ``errors`` those among them the
    model never answered (a provider error left after the retries); ``retries`` counts the
    transient errors retried and ``rate_limited`` the 429 answers. ``prompt_tokens`` and
    ``completion_tokens`` count every reply (cached ones too: what the run costs from scratch),
    ``new_*_tokens`` the calls made by this run; ``cost_usd``/``spent_usd`` price them when the
    runner has ``prices``. ``latency_*`` is model time per item (a cached reply counts its
    originally measured time); ``wall_s`` is this run's wall time for the variant. With several
    ``samples`` per item, an item's score is the mean of its samples and ``run_sd`` the standard
    deviation of the variant's mean across samples (:mod:`lightrag.optim.samples`).
    """

    name: str
    n: int = 0
    mean: float = 0.0
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    failures: int = 0
    errors: int = 0
    retries: int = 0
    rate_limited: int = 0
    delta: Optional[float] = None
    delta_ci_low: Optional[float] = None
    delta_ci_high: Optional[float] = None
    p_value: Optional[float] = None
    p_value_holm: Optional[float] = None
    wins: int = 0
    losses: int = 0
    ties: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_per_item: float = 0.0
    new_prompt_tokens: int = 0
    new_completion_tokens: int = 0
    cost_usd: Optional[float] = None
    spent_usd: Optional[float] = None
    latency_mean_s: float = 0.0
    latency_p95_s: float = 0.0
    wall_s: float = 0.0
    samples: int = 1
    run_sd: Optional[float] = None
    description: str = ""
    items: List[ItemResult] = field(default_factory=list, repr=False)

    def summary(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in SUMMARY_FIELDS}


def _fmt(value: Optional[float], digits: int = 3, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _p(value: Optional[float]) -> str:
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _interval(v: VariantResult) -> str:
    return (f"{_fmt(v.delta, signed=True)} [{_fmt(v.delta_ci_low, signed=True)}, "
            f"{_fmt(v.delta_ci_high, signed=True)}]")


@dataclass
class BenchmarkReport:
    """All variants' results, the baseline's name and the run's settings."""

    variants: List[VariantResult]
    baseline: str
    metric: str = "score"
    settings: Dict[str, Any] = field(default_factory=dict)
    item_ids: List[Any] = field(default_factory=list)

    def __getitem__(self, name: str) -> VariantResult:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(name)

    def rows(self) -> List[List[str]]:
        """Table rows: header first (a "Run-to-run SD" column when items were sampled
        several times)."""
        sampled = any(v.samples > 1 for v in self.variants)
        header = ["Variant", "n", f"Mean {self.metric} [95% CI]", "Δ vs baseline [95% CI]",
                  "p (Holm)", "Failures", "Retries (429)", "Tokens/item", "Latency s/item",
                  "Calls new / cached"]
        if sampled:
            header.insert(3, "Run-to-run SD (samples)")
        rows = [header]
        for v in self.variants:
            is_base = v.name == self.baseline
            delta = "–" if is_base or v.delta is None else _interval(v)
            p = "–" if is_base else f"{_p(v.p_value)} ({_p(v.p_value_holm)})"
            row = [
                f"{v.name} (baseline)" if is_base else v.name, str(v.n),
                f"{_fmt(v.mean)} [{_fmt(v.ci_low)}, {_fmt(v.ci_high)}]", delta, p,
                f"{v.failures} ({v.errors} no reply)" if v.errors else str(v.failures),
                f"{v.retries} ({v.rate_limited})", f"{v.tokens_per_item:.0f}",
                f"{v.latency_mean_s:.2f}", f"{v.model_calls} / {v.cached_calls}",
            ]
            if sampled:
                row.insert(3, f"{_fmt(v.run_sd)} ({v.samples})")
            rows.append(row)
        return rows

    def verdict(self) -> List[str]:
        """Plain sentences: each variant against the baseline (significant when its Holm p-value
        is below ``1 - confidence``), then what makes the run incomplete.

        Example:
            >>> base = VariantResult(name="a", n=40, mean=0.65)
            >>> b = VariantResult(name="b", n=40, mean=0.95, delta=0.3, delta_ci_low=0.15,
            ...                   delta_ci_high=0.475, p_value=0.0018, p_value_holm=0.0037)
            >>> BenchmarkReport(variants=[base, b], baseline="a").verdict()[0]
            'b beats a (baseline) on score: 0.950 vs 0.650, Δ +0.300 [+0.150, +0.475], Holm p 0.004 < 0.05.'
        """
        alpha = round(1.0 - float(self.settings.get("confidence", 0.95)), 6)
        base = self[self.baseline] if self.variants else None
        lines = []
        for v in self.variants:
            if base is None or v.name == self.baseline or v.delta is None:
                continue
            p = v.p_value_holm if v.p_value_holm is not None else v.p_value
            significant = p is not None and p < alpha
            how = ("beats" if v.delta > 0 else "is worse than") if significant else \
                "is not distinguishable from"
            lines.append(f"{v.name} {how} {base.name} (baseline) on {self.metric}: "
                         f"{_fmt(v.mean)} vs {_fmt(base.mean)}, Δ {_interval(v)}, Holm p "
                         f"{_p(p)} {'<' if significant else '>='} {alpha:g}.")
        for v in self.variants:
            if v.errors:
                lines.append(f"INCOMPLETE: {v.name}: {v.errors} item(s) got no reply from the "
                             f"model ({self.settings.get('on_error', 'zero')}: "
                             + ("scored 0" if self.settings.get("on_error", "zero") == "zero"
                                else "left out of every variant's statistics")
                             + "); re-run the same command to retry only those (replies are "
                             "cached).")
        excluded = self.settings.get("excluded_items")
        if excluded:
            lines.append(f"{len(excluded)} item(s) without a reply in some variant are left out "
                         f"of all statistics: {excluded}.")
        return lines

    def to_markdown(self) -> str:
        """A GitHub markdown table."""
        rows = self.rows()
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)

    def to_markdown_with_verdict(self) -> str:
        """:meth:`to_markdown`, then the :meth:`verdict` as a list."""
        return self.to_markdown() + "".join(f"\n\n- {line}" if i == 0 else f"\n- {line}"
                                            for i, line in enumerate(self.verdict()))

    def to_text(self) -> str:
        """A plain-text table with aligned columns."""
        rows = self.rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "metric": self.metric,
            "baseline": self.baseline,
            "settings": self.settings,
            "verdict": self.verdict(),
            "variants": [
                {**v.summary(), "items": [i.to_dict() for i in v.items]} for v in self.variants
            ],
        }

    def summary_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=SUMMARY_FIELDS, lineterminator="\n")
        writer.writeheader()
        for v in self.variants:
            writer.writerow(v.summary())
        return buffer.getvalue()

    def items_csv(self) -> str:
        """One CSV row per variant and item (columns: :meth:`_item_columns`)."""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self._item_columns(), lineterminator="\n",
                                extrasaction="ignore")
        writer.writeheader()
        for v in self.variants:
            for item in v.items:
                writer.writerow(self._item_row(v, item))
        return buffer.getvalue()

    def _item_columns(self) -> List[str]:
        return list(ITEM_FIELDS)

    def _item_row(self, variant: VariantResult, item: ItemResult) -> Dict[str, Any]:
        row = item.to_dict()
        row.update(variant=variant.name, id=self._item_id(item.index))
        return row

    def _item_id(self, index: int) -> Any:
        return self.item_ids[index] if index < len(self.item_ids) else index

    def save(self, out_dir: Union[str, Path], plot: bool = True) -> Dict[str, Path]:
        """Write JSON, CSVs and (with ``plot``) the PNG into ``out_dir``; returns their paths.

        Without matplotlib (the ``bench`` extra) the PNG is skipped with a warning; the other
        files are still written.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "results.json", "summary_csv": out / "summary.csv",
                 "items_csv": out / "items.csv", "markdown": out / "table.md"}
        save_json(self.to_dict(), paths["json"])
        atomic_write_text(paths["summary_csv"], self.summary_csv())
        atomic_write_text(paths["items_csv"], self.items_csv())
        atomic_write_text(paths["markdown"], self.to_markdown_with_verdict() + "\n")
        if plot:
            try:
                paths["png"] = self.plot(out / "scores.png")
            except ImportError as e:
                log.warning("not drawing scores.png: %s (pip install -e '.[bench]')", e)
        return paths

    def plot(self, path: Union[str, Path]) -> Path:
        """Two panels, saved as PNG: each variant's mean with its 95% CI (left), and each
        variant's paired difference from the baseline with its 95% CI and Holm p-value (right;
        green or red where the interval excludes 0, grey where it does not)."""
        from matplotlib.figure import Figure  # no pyplot: leaves the user's backend alone

        variants = list(reversed(self.variants))  # first variant on top
        names = [v.name + (" (baseline)" if v.name == self.baseline else "") for v in variants]
        rows = list(range(len(variants)))
        fig = Figure(figsize=(10.0, 1.2 + 0.55 * len(variants)))
        left, right = fig.subplots(1, 2, sharey=True)
        self._plot_means(left, variants, rows)
        self._plot_deltas(right, variants, rows)
        left.set_yticks(rows)
        left.set_yticklabels(names)
        n = len(self.item_ids) or (self.variants[0].n if self.variants else 0)
        fig.suptitle(f"{self.metric} on {n} items (bars: 95% bootstrap CI)")
        fig.tight_layout()
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(target, dpi=120)
        return target

    def _plot_means(self, ax: Any, variants: List[VariantResult], rows: List[int]) -> None:
        for row, v in zip(rows, variants):
            low = v.ci_low if v.ci_low is not None else v.mean
            high = v.ci_high if v.ci_high is not None else v.mean
            color = "#7f7f7f" if v.name == self.baseline else "#1f77b4"
            ax.errorbar(v.mean, row, xerr=[[v.mean - low], [high - v.mean]], fmt="o",
                        color=color, capsize=5)
            ax.annotate(f"{v.mean:.3f}", (v.mean, row), textcoords="offset points",
                        xytext=(0, 7), ha="center", fontsize=8)
        ax.set_xlim(0, max(1.0, max((v.ci_high or v.mean for v in variants), default=1.0)))
        ax.set_xlabel(f"mean {self.metric}")
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.grid(axis="x", alpha=0.3)

    def _plot_deltas(self, ax: Any, variants: List[VariantResult], rows: List[int]) -> None:
        ax.axvline(0.0, color="black", linewidth=0.8)
        reach = 0.05
        for row, v in zip(rows, variants):
            if v.name == self.baseline or v.delta is None:
                ax.annotate("baseline", (0.0, row), ha="center", va="center", fontsize=8,
                            color="#7f7f7f", backgroundcolor="white")
                continue
            low = v.delta_ci_low if v.delta_ci_low is not None else v.delta
            high = v.delta_ci_high if v.delta_ci_high is not None else v.delta
            reach = max(reach, abs(low), abs(high))
            color = "#2ca02c" if low > 0 else "#d62728" if high < 0 else "#7f7f7f"
            ax.errorbar(v.delta, row, xerr=[[v.delta - low], [high - v.delta]], fmt="s",
                        color=color, capsize=5)
            ax.annotate(f"{v.delta:+.3f}  p={_p(v.p_value_holm)}", (v.delta, row),
                        textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        ax.set_xlim(-1.15 * reach, 1.15 * reach)  # 0 in the middle
        ax.set_xlabel(f"paired difference vs {self.baseline} (green/red: CI excludes 0)")
        ax.grid(axis="x", alpha=0.3)
