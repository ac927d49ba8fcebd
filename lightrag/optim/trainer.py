"""``Trainer``: optimise a task's Parameters, keeping a change only when validation improves.

Each step:

1. run the task on a seeded random batch of training items and score it;
2. the optimizer proposes new Parameter values from that batch (``propose_data``);
3. the task is scored on the whole validation set with the proposal in place;
4. the proposal is kept (``step_data``) only if the validation score beats the best so far by
   more than ``min_improvement``; otherwise it is reverted (``revert_data``). Ties are reverted.

After every step a JSON checkpoint (atomic) and a readable log (``train_log.md``: what changed,
the optimizer's reason, the scores, the decision) are written to ``ckpt_dir``; ``fit(resume=True)``
continues from the checkpoint. Replies are cached, so re-validating a prompt seen before is free.

The best validation score is optimistic (it was selected on that set); give a ``test_set`` to
get an unbiased before/after estimate on items no decision looked at: the result then has the
paired difference on the test set with its bootstrap 95% interval and sign-flip p-value. Items
shared between the training, validation and test sets (same ``id``, else same content) are
counted in ``result.overlap`` and logged as a warning: a shared test item makes the test score
optimistic too. Every evaluation counts its failures; an item the model never answered (a
provider error) scores 0 and is named in the step's record and the log, so a proposal reverted
for errors shows as such.

Example:
    >>> from lightrag.core import Component, Parameter
    >>> from lightrag.optim.optimizer import Optimizer
    >>> class Task(Component):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.suffix = Parameter(data="?", name="suffix")
    ...     def call(self, x):
    ...         return x + self.suffix.data
    >>> class Bang(Optimizer):
    ...     def propose(self, samples):
    ...         name, p = self.params[0]
    ...         return self.propose_value(name, p, "!", reason="items end with '!'")
    >>> task = Task()
    >>> data = [{"x": "hi", "y": "hi!"}] * 3
    >>> result = Trainer(task, Bang(task), metric=lambda pred, item: float(pred == item["y"]),
    ...                  train_set=data, val_set=data, inputs="x", max_steps=1).fit()
    >>> result.initial_val_score, result.best_val_score, task.suffix.data
    (0.0, 1.0, '!')
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from lightrag.core.cache import ResponseCache
from lightrag.core.component import Component
from lightrag.optim.evaluation import Inputs, ItemResult, Metric, attach_cache, evaluate_pipeline
from lightrag.optim.optimizer import Optimizer, Sample
from lightrag.optim.stats import bootstrap_ci, paired_permutation_test, safe_mean
from lightrag.utils.file_io import atomic_write_text, load_json, save_json

log = logging.getLogger(__name__)


@dataclass
class StepRecord:
    """One training step: the proposal, the scores and the decision."""

    step: int
    optimizer: str
    decision: str
    batch: List[int] = field(default_factory=list)
    batch_score: Optional[float] = None
    val_score: Optional[float] = None
    best_before: Optional[float] = None
    changes: List[Dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    val_failures: int = 0
    val_errors: int = 0


@dataclass
class TrainerResult:
    """Scores before and after training, every step, and the best Parameter values."""

    initial_val_score: float
    best_val_score: float
    steps: List[StepRecord] = field(default_factory=list)
    state_dict: Dict[str, Any] = field(default_factory=dict)
    test_score_before: Optional[float] = None
    test_score_after: Optional[float] = None
    ckpt_path: Optional[str] = None
    log_path: Optional[str] = None
    test_scores_before: List[float] = field(default_factory=list)
    test_scores_after: List[float] = field(default_factory=list)
    test_delta_ci: Optional[List[Optional[float]]] = None
    test_p_value: Optional[float] = None
    overlap: Dict[str, int] = field(default_factory=dict)
    initial_val_errors: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _quote(value: Any) -> str:
    return "\n".join("    " + line for line in str(value).splitlines() or [""])


def render_log(result: TrainerResult, val_size: int) -> str:
    """The readable training log (markdown)."""
    lines = ["# Training log", "",
             f"Initial validation score: {result.initial_val_score:.4f} ({val_size} items). "
             f"Best: {result.best_val_score:.4f}.", ""]
    if result.test_score_before is not None:
        after = "–" if result.test_score_after is None else f"{result.test_score_after:.4f}"
        lines += [f"Test score ({len(result.test_scores_before)} items): "
                  f"{result.test_score_before:.4f} before, {after} after."]
        if result.test_delta_ci is not None and result.test_p_value is not None:
            lo, hi = result.test_delta_ci
            lines.append(f"Paired difference on the test set: 95% CI [{lo:+.4f}, {hi:+.4f}], "
                         f"sign-flip p {result.test_p_value:.4f}.")
        lines.append("")
    shared = {k: v for k, v in result.overlap.items() if v}
    if shared:
        lines += ["WARNING: items shared between sets: " + ", ".join(
            f"{k} {v}" for k, v in shared.items()) + " (scores on shared items are optimistic).", ""]
    if result.initial_val_errors:
        lines += [f"Initial validation: {result.initial_val_errors} item(s) without a reply "
                  "from the model (scored 0).", ""]
    for s in result.steps:
        scores = "" if s.val_score is None else (
            f" (validation {s.best_before:.4f} -> {s.val_score:.4f})")
        lines += [f"## Step {s.step}: {s.optimizer}: {s.decision.upper()}{scores}", ""]
        if s.val_failures:
            lines.append(f"Validation failures: {s.val_failures} item(s) scored 0, {s.val_errors} "
                         "of them without a reply from the model.")
        if s.batch_score is not None:
            lines.append(f"Training batch {s.batch}: score {s.batch_score:.4f}.")
        if s.reason:
            lines += ["", "Why:", "", _quote(s.reason)]
        for change in s.changes:
            lines += ["", f"`{change['name']}` before:", "", _quote(change["old"]), "",
                      f"`{change['name']}` after:", "", _quote(change["new"])]
        lines.append("")
    return "\n".join(lines)


def set_overlap(train: Sequence[Any], val: Sequence[Any],
                test: Optional[Sequence[Any]] = None) -> Dict[str, int]:
    """How many items two of the sets share (by ``id``, else by content), per pair of sets.

    Example:
        >>> set_overlap([{"id": "a"}, {"id": "b"}], [{"id": "b"}], [{"q": 1}])
        {'train_val': 1, 'train_test': 0, 'val_test': 0}
    """
    def keys(items: Optional[Sequence[Any]]) -> set:
        return {("id", str(i["id"])) if isinstance(i, dict) and "id" in i else
                ("item", json.dumps(i, sort_keys=True, default=repr)) for i in items or []}

    a, b, c = keys(train), keys(val), keys(test)
    return {"train_val": len(a & b), "train_test": len(a & c), "val_test": len(b & c)}


class Trainer:
    """Drive optimizers over a task with validation gating, checkpoints and a readable log.

    Args:
        task: the Component whose Parameters are optimised (changed in place).
        optimizers: one optimizer or several (used in turn, one per step).
        metric: ``metric(prediction, item) -> float``.
        train_set, val_set, test_set: lists of item dicts.
        inputs: how an item becomes the task call (see :func:`~lightrag.optim.evaluation.call_pipeline`).
        max_steps: proposals to try.
        batch_size: training items per step.
        min_improvement: a proposal must beat the best validation score by more than this.
        concurrency: items evaluated at once.
        seed: seeds the batches.
        ckpt_dir: where ``checkpoint.json`` and ``train_log.md`` go (nothing written when None).
        cache_path: SQLite response cache (in memory when None).

    See the module doc for an example; ``fit()`` returns a :class:`TrainerResult`.
    """

    def __init__(
        self,
        task: Component,
        optimizers: Union[Optimizer, Sequence[Optimizer]],
        metric: Metric,
        train_set: Sequence[Dict[str, Any]],
        val_set: Sequence[Dict[str, Any]],
        test_set: Optional[Sequence[Dict[str, Any]]] = None,
        inputs: Inputs = None,
        max_steps: int = 4,
        batch_size: int = 4,
        min_improvement: float = 0.0,
        concurrency: int = 2,
        seed: int = 0,
        ckpt_dir: Optional[Union[str, Path]] = None,
        cache_path: Optional[Union[str, Path]] = None,
    ) -> None:
        self.task = task
        self.optimizers = [optimizers] if isinstance(optimizers, Optimizer) else list(optimizers)
        if not self.optimizers:
            raise ValueError("Trainer needs at least one optimizer")
        if not train_set or not val_set:
            raise ValueError("Trainer needs a non-empty train_set and val_set")
        self.metric, self.inputs = metric, inputs
        self.train_set, self.val_set = list(train_set), list(val_set)
        self.test_set = list(test_set) if test_set else None
        self.max_steps, self.batch_size = max_steps, batch_size
        self.min_improvement, self.concurrency, self.seed = min_improvement, concurrency, seed
        self.ckpt_dir = Path(ckpt_dir) if ckpt_dir is not None else None
        self.cache = ResponseCache(cache_path)

    def evaluate(self, component: Component, items: Sequence[Dict[str, Any]]) -> List[ItemResult]:
        """Run and score ``component`` on ``items`` (through the trainer's cache)."""
        attach_cache(component, self.cache)
        return evaluate_pipeline(component, list(items), self.metric, self.inputs, self.concurrency)

    def score(self, items: Sequence[Dict[str, Any]]) -> float:
        """The task's mean score on ``items``."""
        return safe_mean([r.score for r in self.evaluate(self.task, items)])

    def overlap(self) -> Dict[str, int]:
        """Items shared by two of the sets (see :func:`set_overlap`)."""
        return set_overlap(self.train_set, self.val_set, self.test_set)

    def _test_scores(self) -> List[float]:
        return [r.score for r in self.evaluate(self.task, self.test_set or [])]

    @property
    def ckpt_path(self) -> Optional[Path]:
        return self.ckpt_dir / "checkpoint.json" if self.ckpt_dir else None

    def _save(self, result: TrainerResult, best_state: Dict[str, Any]) -> None:
        if self.ckpt_dir is None:
            return
        result.ckpt_path = str(self.ckpt_path)
        result.log_path = str(self.ckpt_dir / "train_log.md")
        save_json({"version": 1, "seed": self.seed, "result": result.to_dict(),
                   "best_state": best_state,
                   "optimizers": [o.state_dict() for o in self.optimizers]}, self.ckpt_path)
        atomic_write_text(result.log_path, render_log(result, len(self.val_set)))

    def _resume(self) -> Optional[TrainerResult]:
        if self.ckpt_path is None or not self.ckpt_path.is_file():
            return None
        saved = load_json(self.ckpt_path, missing_ok=False)
        data = saved["result"]
        data["steps"] = [StepRecord(**s) for s in data["steps"]]
        self.task.load_state_dict(saved["best_state"], strict=False)
        for optimizer, state in zip(self.optimizers, saved.get("optimizers", [])):
            if state.get("type") == type(optimizer).__name__:
                optimizer.load_state(state)
        log.info("resumed from %s at step %d", self.ckpt_path, len(data["steps"]))
        return TrainerResult(**data)

    def fit(self, resume: bool = False) -> TrainerResult:
        """Train for ``max_steps`` proposals (fewer left after a resume) and return the result."""
        for optimizer in self.optimizers:
            optimizer.bind(self)
        result = self._resume() if resume else None
        if result is None:
            outcomes = self.evaluate(self.task, self.val_set)
            initial = safe_mean([r.score for r in outcomes])
            result = TrainerResult(initial_val_score=initial, best_val_score=initial,
                                   overlap=self.overlap(),
                                   initial_val_errors=sum(r.error_kind == "call" for r in outcomes))
            shared = {k: v for k, v in result.overlap.items() if v}
            if shared:
                log.warning("items shared between sets %s: their scores are optimistic", shared)
            if self.test_set:
                result.test_scores_before = self._test_scores()
                result.test_score_before = safe_mean(result.test_scores_before)
            log.info("initial validation score %.4f", initial)
        best_state = dict(self.task.state_values())
        for step in range(len(result.steps) + 1, self.max_steps + 1):
            optimizer = self.optimizers[(step - 1) % len(self.optimizers)]
            result.steps.append(self._step(step, optimizer, result))
            best_state = dict(self.task.state_values())
            result.state_dict = best_state
            self._save(result, best_state)
        if self.test_set:
            result.test_scores_after = self._test_scores()
            result.test_score_after = safe_mean(result.test_scores_after)
            before, after = result.test_scores_before, result.test_scores_after
            if len(before) == len(after):
                diffs = [a - b for a, b in zip(after, before)]
                result.test_delta_ci = list(bootstrap_ci(diffs, seed=self.seed))
                result.test_p_value = paired_permutation_test(after, before, seed=self.seed)
        result.state_dict = best_state
        self._save(result, best_state)
        return result

    def _step(self, step: int, optimizer: Optimizer, result: TrainerResult) -> StepRecord:
        rng = random.Random(f"{self.seed}-{step}")
        batch = sorted(rng.sample(range(len(self.train_set)),
                                  min(self.batch_size, len(self.train_set))))
        outcomes = self.evaluate(self.task, [self.train_set[i] for i in batch])
        samples = [Sample(i, self.train_set[i], r) for i, r in zip(batch, outcomes)]
        record = StepRecord(step=step, optimizer=type(optimizer).__name__, decision="skipped",
                            batch=batch, batch_score=safe_mean([r.score for r in outcomes]),
                            best_before=result.best_val_score)
        try:
            proposal = optimizer.propose(samples)
        except Exception as e:
            optimizer.revert()
            log.warning("step %d: %s failed to propose: %s", step, record.optimizer, e)
            record.reason = f"proposal failed: {type(e).__name__}: {e}"
            return record
        if proposal is None:
            record.reason = "the optimizer had nothing to propose"
            log.info("step %d: nothing proposed", step)
            return record
        record.changes = [asdict(c) for c in proposal.changes]
        record.reason = proposal.reason
        validated = self.evaluate(self.task, self.val_set)
        val_score = safe_mean([r.score for r in validated])
        record.val_score = val_score
        record.val_failures = sum(r.error is not None for r in validated)
        record.val_errors = sum(r.error_kind == "call" for r in validated)
        accepted = val_score > result.best_val_score + self.min_improvement
        if accepted:
            optimizer.step()
            result.best_val_score = val_score
        else:
            optimizer.revert()
        optimizer.record(proposal, val_score, accepted)
        record.decision = "accepted" if accepted else "reverted"
        log.info("step %d: %s %s (validation %.4f, best before %.4f)", step, record.optimizer,
                 record.decision, val_score, record.best_before)
        return record
