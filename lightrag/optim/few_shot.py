"""``BootstrapFewShot``: choose few-shot demos for a DEMOS Parameter from the training set.

Two kinds of shots, as in DSPy and lightrag 0.1:

* *raw* shots: training items shown with their gold answer;
* *bootstrapped* shots: training items the *teacher* (a stronger pipeline, or the task itself)
  answered correctly, shown with the teacher's full output (its reasoning included). Items the
  student got wrong in the current batch are tried first, and among the correct traces those
  the student failed are preferred (weight = teacher score - student score, plus a little).

Each proposal is a new random draw (seeded: the same seed gives the same demos); the trainer
keeps it only when the validation score improves. The Parameter holds the demos as text, ready
to render in a template with ``{{few_shot_demos}}``.

Example:
    >>> from lightrag.core.parameter import Parameter, ParameterType
    >>> demos = Parameter(data="", param_type=ParameterType.DEMOS, name="demos")
    >>> train = [{"question": f"{i}+1?", "answer": str(i + 1)} for i in range(5)]
    >>> opt = BootstrapFewShot(demos, raw_shots=2, bootstrap_shots=0, dataset=train,
    ...                        input_fields=["question"], seed=0)
    >>> print(opt.propose([]).changes[0].new)
    Question: 3+1?
    Answer: 4
    <BLANKLINE>
    Question: 4+1?
    Answer: 5
"""

from __future__ import annotations

import logging
import random
from typing import Any, Callable, Dict, List, Optional, Sequence

from lightrag.core.component import Component
from lightrag.core.parameter import ParameterType
from lightrag.optim.evaluation import ItemResult
from lightrag.optim.optimizer import Optimizer, ParamsArg, Proposal, Sample

log = logging.getLogger(__name__)

Demo = Dict[str, Any]


def format_demos(demos: List[Demo]) -> str:
    """``Key: value`` lines per demo (keys capitalised, ``_`` as spaces), demos blank-separated."""
    blocks = ["\n".join(f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in demo.items())
              for demo in demos]
    return "\n\n".join(blocks)


class BootstrapFewShot(Optimizer):
    """Propose few-shot demos: raw (gold) and bootstrapped (teacher-made) shots.

    Args:
        params: the DEMOS Parameter(s), or a Component holding them.
        raw_shots: training items shown with their gold ``output_field``.
        bootstrap_shots: correct teacher traces shown with the teacher's output.
        teacher: the pipeline that makes bootstrapped traces (the trainer's task when None).
        dataset: the items to draw from (the trainer's training set when None).
        input_fields: item fields shown in a demo (all but ``output_field`` when None).
        output_field: the item field with the gold answer.
        format_fn: renders the list of demo dicts as the Parameter's text.
        score_threshold: a teacher trace with at least this score is correct.
        max_teacher_runs: the most new items the teacher runs per proposal.
        use_raw_response: show the teacher's raw reply (reasoning included) instead of its
            parsed prediction.
        seed: random seed of the draws.
    """

    param_type = ParameterType.DEMOS

    def __init__(
        self,
        params: ParamsArg,
        raw_shots: int = 2,
        bootstrap_shots: int = 2,
        teacher: Optional[Component] = None,
        dataset: Optional[Sequence[Dict[str, Any]]] = None,
        input_fields: Optional[Sequence[str]] = None,
        output_field: str = "answer",
        format_fn: Callable[[List[Demo]], str] = format_demos,
        score_threshold: float = 1.0,
        max_teacher_runs: int = 8,
        use_raw_response: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__(params)
        if raw_shots < 0 or bootstrap_shots < 0 or raw_shots + bootstrap_shots == 0:
            raise ValueError("raw_shots and bootstrap_shots must be >= 0, and not both 0")
        self.raw_shots, self.bootstrap_shots = raw_shots, bootstrap_shots
        self.teacher = teacher
        self.dataset = list(dataset) if dataset is not None else None
        self.input_fields = list(input_fields) if input_fields is not None else None
        self.output_field = output_field
        self.format_fn = format_fn
        self.score_threshold = score_threshold
        self.max_teacher_runs = max_teacher_runs
        self.use_raw_response = use_raw_response
        self.rng = random.Random(seed)
        self.traces: Dict[int, ItemResult] = {}
        self.student_scores: Dict[int, float] = {}

    def _pool(self) -> List[Dict[str, Any]]:
        if self.dataset is not None:
            return self.dataset
        if self.trainer is not None:
            return list(self.trainer.train_set)
        raise ValueError("BootstrapFewShot needs a dataset (or a Trainer to take it from)")

    def _demo(self, item: Dict[str, Any], output: Any) -> Demo:
        fields = self.input_fields or [k for k in item if k != self.output_field]
        demo = {k: item[k] for k in fields if k in item}
        demo[self.output_field] = output
        return demo

    def _run_teacher(self, pool: List[Dict[str, Any]], order: List[int]) -> None:
        todo = [i for i in order if i not in self.traces][: self.max_teacher_runs]
        if not todo:
            return
        if self.trainer is None:
            raise ValueError("bootstrapped shots need a Trainer to run the teacher; "
                             "use bootstrap_shots=0 without one")
        teacher = self.teacher if self.teacher is not None else self.trainer.task
        for index, result in zip(todo, self.trainer.evaluate(teacher, [pool[i] for i in todo])):
            self.traces[index] = result

    def _bootstrapped(self, pool: List[Dict[str, Any]], samples: List[Sample]) -> List[int]:
        failed_first = [s.index for s in sorted(samples, key=lambda s: s.result.score)]
        others = [i for i in range(len(pool)) if i not in failed_first]
        self.rng.shuffle(others)
        self._run_teacher(pool, failed_first + others)
        correct = [i for i, r in self.traces.items()
                   if r.error is None and r.score >= self.score_threshold]
        chosen: List[int] = []
        while correct and len(chosen) < self.bootstrap_shots:
            weights = [max(0.0, self.traces[i].score - self.student_scores.get(i, 0.0)) + 0.1
                       for i in correct]
            pick = self.rng.choices(correct, weights=weights)[0]
            chosen.append(pick)
            correct.remove(pick)
        return chosen

    def propose(self, samples: List[Sample]) -> Optional[Proposal]:
        """Draw a new set of demos and propose it for every DEMOS Parameter."""
        pool = self._pool()
        for s in samples:
            self.student_scores[s.index] = s.result.score
        boot = self._bootstrapped(pool, samples) if self.bootstrap_shots else []
        rest = [i for i in range(len(pool)) if i not in boot]
        raw = self.rng.sample(rest, min(self.raw_shots, len(rest)))
        demos = []
        for i in boot:
            trace = self.traces[i]
            output = trace.raw_response if self.use_raw_response and trace.raw_response else \
                trace.prediction
            demos.append(self._demo(pool[i], str(output).strip()))
        demos += [self._demo(pool[i], pool[i].get(self.output_field)) for i in raw]
        if not demos:
            return None
        text = self.format_fn(demos)
        if all(param.data == text for _, param in self.params):
            return None
        reason = (f"{len(boot)} bootstrapped demos (teacher correct) from training items {boot}, "
                  f"{len(raw)} raw demos from items {raw}")
        proposal: Optional[Proposal] = None
        for name, param in self.params:
            step = self.propose_value(name, param, text, reason, bootstrapped=boot, raw=raw)
            proposal = step if proposal is None else Proposal(
                proposal.changes + step.changes, reason, proposal.details)
        return proposal


    def state_dict(self) -> Dict[str, Any]:
        return {**super().state_dict(), "rng": _json_rng_state(self.rng.getstate())}

    def load_state(self, state: Dict[str, Any]) -> None:
        saved = state.get("rng")
        if saved is not None:
            self.rng.setstate(_rng_state(saved))


def _json_rng_state(state: Any) -> Any:
    """``random.Random.getstate()`` as JSON can hold it (lists for tuples)."""
    return [_json_rng_state(x) for x in state] if isinstance(state, tuple) else state


def _rng_state(saved: Any) -> Any:
    """The state :func:`_json_rng_state` wrote, as ``setstate`` takes it (tuples)."""
    return tuple(_rng_state(x) for x in saved) if isinstance(saved, list) else saved
