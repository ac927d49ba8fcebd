"""Statistics for comparing prompt variants: bootstrap intervals and paired significance tests.

All resampling is seeded, so the same scores always give the same interval and p-value.

* :func:`bootstrap_ci`: percentile bootstrap interval of a mean.
* :func:`paired_permutation_test`: two-sided sign-flip (paired permutation) test of a mean
  paired difference; exact (all ``2^n`` sign patterns) when at most ``exact_max`` items differ,
  Monte Carlo with the ``(1 + hits) / (1 + resamples)`` correction otherwise.
* :func:`holm_adjust`: Holm-Bonferroni adjusted p-values for several variants against a baseline.

Example:
    >>> bootstrap_ci([1.0, 1.0, 1.0])
    (1.0, 1.0)
    >>> paired_permutation_test([1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0])  # 2 of 64 patterns
    0.03125
    >>> holm_adjust([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
"""

from __future__ import annotations

import itertools
import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

DEFAULT_RESAMPLES = 10_000


def bootstrap_ci(
    scores: Sequence[float],
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Tuple[Optional[float], Optional[float]]:
    """The percentile bootstrap ``confidence`` interval of the mean of ``scores``.

    Returns ``(None, None)`` for no scores. Resamples are drawn in chunks, so memory stays small
    for large datasets.

    Example:
        >>> lo, hi = bootstrap_ci([0, 1] * 50, seed=1)
        >>> 0.39 < lo < 0.41 and 0.59 < hi < 0.61
        True
    """
    values = np.asarray(scores, dtype=np.float64)
    n = values.size
    if n == 0:
        return None, None
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    chunk = max(1, 1_000_000 // n)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        means[start : start + rows] = values[rng.integers(0, n, size=(rows, n))].mean(axis=1)
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(round(lo, 12)), float(round(hi, 12))


def paired_permutation_test(
    scores: Sequence[float],
    baseline: Sequence[float],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    exact_max: int = 16,
) -> float:
    """Two-sided p-value that ``scores`` and ``baseline`` (paired per item) have equal means.

    Under the null hypothesis each paired difference is as likely to have either sign; the
    p-value is the fraction of sign patterns whose mean difference is at least as far from zero
    as the observed one. Items with equal scores do not change it. 1.0 when nothing differs.
    """
    a = np.asarray(scores, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need equal lengths, got {a.size} and {b.size}")
    diffs = a - b
    diffs = diffs[diffs != 0.0]
    n = diffs.size
    if n == 0:
        return 1.0
    observed = abs(diffs.sum()) - 1e-9
    if n <= exact_max:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        return float(np.mean(np.abs(signs @ diffs) >= observed))
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, 1_000_000 // n)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(rows, n))
        hits += int(np.sum(np.abs(signs @ diffs) >= observed))
    return (1 + hits) / (1 + n_resamples)


def holm_adjust(p_values: Sequence[float]) -> List[float]:
    """Holm-Bonferroni adjusted p-values (same order as given), capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = round(running, 12)
    return adjusted


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``; 0.0 when empty."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else 0.0


def safe_mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if len(values) else 0.0
