"""Several samples per item: how much of a difference between prompt variants is the model's
own run-to-run noise.

With ``samples = k`` a :class:`~lightrag.optim.BenchmarkRunner` runs every variant ``k``
times over the dataset. Each sample has its own cache scope (:func:`sample_scope`; the first
sample shares the plain variant's, so adding samples to a finished run pays only for the new
ones), so a model sampling at ``temperature > 0`` answers each sample afresh and a re-run
replays all of them. An item's score is the mean of its samples' scores
(:func:`combine_samples`; the paired tests then compare these means item by item), and the
variant's ``run_sd`` is the standard deviation of its mean score across the samples
(:func:`run_to_run_sd`): a difference between two variants smaller than a few ``run_sd`` is
within what re-running one prompt gives.

Example:
    >>> from lightrag.optim.evaluation import ItemResult
    >>> first = [ItemResult(index=0, score=1.0), ItemResult(index=1, score=0.0)]
    >>> second = [ItemResult(index=0, score=0.0), ItemResult(index=1, score=0.0)]
    >>> [(i.score, i.sample_scores) for i in combine_samples([first, second])]
    [(0.5, [1.0, 0.0]), (0.0, [0.0, 0.0])]
    >>> round(run_to_run_sd([first, second]), 3)
    0.354
"""

from __future__ import annotations

import statistics
from typing import List, Optional, Sequence, Set

from lightrag.optim.evaluation import ItemResult

_SUMMED = ("model_calls", "cached_calls", "prompt_tokens", "completion_tokens", "retries",
           "rate_limited", "new_prompt_tokens", "new_completion_tokens", "wall_s")


def sample_scope(variant: str, sample: int) -> str:
    """The response-cache scope of ``sample`` (0-based) of ``variant``."""
    return variant if sample == 0 else f"{variant}#sample{sample + 1}"


def combine_samples(runs: Sequence[Sequence[ItemResult]]) -> List[ItemResult]:
    """One result per item from its ``runs`` (one list per sample, in dataset order): the mean
    score, every sample's score in ``sample_scores``, the first sample's prediction, calls,
    tokens, retries and wall time summed, the mean latency. An item that got no reply in any
    sample keeps that error (``error_kind == "call"``: ``on_error: exclude`` drops it); otherwise
    the first sample's error, if any, is the item's."""
    if not runs:
        return []
    combined = []
    for samples in zip(*runs):
        first = samples[0]
        no_reply = next((s for s in samples if s.error_kind == "call"), None)
        failed = no_reply or next((s for s in samples if s.error is not None), None)
        item = ItemResult(
            index=first.index, score=statistics.fmean(s.score for s in samples),
            prediction=first.prediction, raw_response=first.raw_response,
            error=failed.error if failed else None, error_kind=failed.error_kind if failed else None,
            latency_s=statistics.fmean(s.latency_s for s in samples),
            sample_scores=[s.score for s in samples])
        for name in _SUMMED:
            setattr(item, name, sum(getattr(s, name) for s in samples))
        combined.append(item)
    return combined


def run_to_run_sd(runs: Sequence[Sequence[ItemResult]], keep: Optional[Set[int]] = None) -> float:
    """The sample standard deviation, across samples, of the mean score over the items (those
    in ``keep`` when given); 0.0 with fewer than two samples."""
    means = []
    for run in runs:
        scores = [r.score for r in run if keep is None or r.index in keep]
        means.append(statistics.fmean(scores) if scores else 0.0)
    return statistics.stdev(means) if len(means) > 1 else 0.0
