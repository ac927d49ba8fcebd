"""Trainer with TextGradOptimizer and BootstrapFewShot: keep improving proposals, revert worse
ones, checkpoint and log; few-shot demo selection."""

import json

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter, ParameterType
from lightrag.optim import (
    ItemResult,
    Optimizer,
    Sample,
    TextGradOptimizer,
    Trainer,
    parse_new_value,
)
from lightrag.optim import (
    TraceFewShot as BootstrapFewShot,
)

DATA = [{"id": i, "question": f"q{i}", "answer": f"a{i}"} for i in range(8)]


def task_model(prompt: str) -> str:
    """GOOD instruction: all right; OK: even items right; anything else: all wrong.
    With demos in the prompt ("Question:"), all right."""
    i = int(prompt.rsplit("q", 1)[1].split()[0])
    if "GOOD" in prompt or "Question:" in prompt or ("OK" in prompt and i % 2 == 0):
        return f"a{i}"
    return "wrong"


class Task(Component):
    def __init__(self, instruction="OK", model=task_model):
        super().__init__()
        self.generator = Generator(
            model_client=ScriptedClient(response_fn=model),
            template="{{instruction}}\n{{demos}}\n{{question}}",
            prompt_kwargs={
                "instruction": Parameter(data=instruction, role_desc="task instruction"),
                "demos": Parameter(data="", param_type=ParameterType.DEMOS),
            },
        )

    def call(self, question):
        return self.generator(prompt_kwargs={"question": question})


def exact(pred, item):
    return float(pred == item["answer"])


def trainer(task, optimizer, tmp_path=None, **kw):
    return Trainer(task, optimizer, exact, train_set=DATA, val_set=DATA[:6], test_set=DATA[6:],
                   inputs="question", batch_size=4, ckpt_dir=tmp_path, **kw)


def optimizer_client():
    return ScriptedClient(responses=[
        "The instruction is vague.", "<NEW_VALUE>Say BAD things</NEW_VALUE>",
        "Still failing on odd items.", "Here you go:\n<NEW_VALUE>\nBe GOOD.\n</NEW_VALUE>",
    ])


def test_trainer_reverts_worse_and_accepts_better_proposal(tmp_path):
    task = Task()
    client = optimizer_client()
    opt = TextGradOptimizer(task, model_client=client, input_fields=["question"])
    assert [n for n, _ in opt.params] == ["generator.instruction"]  # PROMPT params only
    result = trainer(task, opt, tmp_path, max_steps=2).fit()
    assert result.initial_val_score == 0.5 and result.best_val_score == 1.0
    assert [s.decision for s in result.steps] == ["reverted", "accepted"]
    assert result.steps[0].val_score == 0.0 and result.steps[0].changes[0]["new"] == "Say BAD things"
    assert task.generator.instruction.data == "Be GOOD." and not task.generator.instruction.proposing
    assert (result.test_score_before, result.test_score_after) == (0.5, 1.0)
    # the feedback call saw the failures (odd items) with input, output and expected answer
    feedback_prompt = client.requests[0]["prompt"]
    assert "question: q1" in feedback_prompt and "expected: a1" in feedback_prompt
    assert "system output: wrong" in feedback_prompt
    # the second rewrite was told about the rejected one
    assert "Say BAD things" in client.requests[3]["prompt"]
    saved = json.loads((tmp_path / "checkpoint.json").read_text())
    assert saved["best_state"]["generator.instruction"] == "Be GOOD."
    log = (tmp_path / "train_log.md").read_text()
    assert "Step 1: TextGradOptimizer: REVERTED (validation 0.5000 -> 0.0000)" in log
    assert "Step 2: TextGradOptimizer: ACCEPTED (validation 0.5000 -> 1.0000)" in log
    assert "The instruction is vague." in log and "Be GOOD." in log


class Fixed(Optimizer):
    """Proposes the given values in turn."""

    def __init__(self, params, values):
        super().__init__(params)
        self.values = list(values)

    def propose(self, samples):
        name, param = self.params[0]
        return self.propose_value(name, param, self.values.pop(0), reason="scripted")


def test_ties_are_reverted_and_resume_continues(tmp_path):
    task = Task()
    first = trainer(task, Fixed(task, ["OK again"]), tmp_path, max_steps=1).fit()
    assert first.steps[0].decision == "reverted"  # 0.5 -> 0.5 is no improvement
    assert task.generator.instruction.data == "OK"
    again = Task()
    resumed = trainer(again, Fixed(again, ["GOOD"]), tmp_path, max_steps=2).fit(resume=True)
    assert [s.step for s in resumed.steps] == [1, 2]
    assert resumed.steps[1].decision == "accepted" and again.generator.instruction.data == "GOOD"


def test_nothing_to_propose_and_failing_optimizer_are_logged():
    task = Task(instruction="GOOD")
    opt = TextGradOptimizer(task, model_client=ScriptedClient(responses=[]))
    result = trainer(task, opt, max_steps=1).fit()
    assert result.steps[0].decision == "skipped" and "nothing to propose" in result.steps[0].reason

    class Broken(Optimizer):
        def propose(self, samples):
            self.params[0][1].propose_data("half-done")
            raise RuntimeError("optimizer model down")

    task = Task()
    result = trainer(task, Broken(task), max_steps=1).fit()
    assert "optimizer model down" in result.steps[0].reason
    assert task.generator.instruction.data == "OK" and not task.generator.instruction.proposing


def test_parse_new_value_is_tolerant():
    assert parse_new_value("x <new_value>A</new_value> y") == "A"
    assert parse_new_value("<NEW_VALUE>unclosed tag") == "unclosed tag"
    assert parse_new_value("just the prompt") == "just the prompt"


def _sample(index, score, prediction="wrong"):
    return Sample(index, DATA[index], ItemResult(index=index, score=score, prediction=prediction))


def test_bootstrap_few_shot_selects_teacher_correct_demos(tmp_path):
    student = Task(instruction="nothing")  # wrong on everything without demos

    def teacher_model(prompt):  # right on items 0-3 only, with reasoning
        i = int(prompt.rsplit("q", 1)[1].split()[0])
        return f"because... a{i}" if i < 4 else "dunno"

    teacher = Task(model=teacher_model)
    opt = BootstrapFewShot(student, raw_shots=1, bootstrap_shots=2, teacher=teacher,
                           input_fields=["question"], seed=1)
    assert [n for n, _ in opt.params] == ["generator.demos"]  # DEMOS params only
    t = Trainer(student, opt, lambda p, it: float(p.endswith(it["answer"])), train_set=DATA,
                val_set=DATA[:2], inputs="question")
    opt.bind(t)
    proposal = opt.propose([_sample(5, 0.0), _sample(2, 0.0), _sample(1, 0.0)])
    demos_text = student.generator.demos.data
    assert student.generator.demos.proposing and proposal.changes[0].new == demos_text
    boot, raw = proposal.details["bootstrapped"], proposal.details["raw"]
    assert len(boot) == 2 and set(boot) <= {0, 1, 2, 3}  # only teacher-correct traces
    assert len(raw) == 1 and raw[0] not in boot
    assert f"Answer: because... a{boot[0]}" in demos_text  # the teacher's full output
    assert f"Answer: a{raw[0]}" in demos_text  # gold answer for raw shots
    assert set(opt.traces) >= {5, 2, 1}  # the student's failures were tried first
    opt.revert()
    assert student.generator.demos.data == ""


def test_few_shot_is_seeded_and_trainer_keeps_helpful_demos():
    def draw(seed):
        p = Parameter(data="", param_type=ParameterType.DEMOS, name="demos")
        return BootstrapFewShot(p, raw_shots=3, bootstrap_shots=0, dataset=DATA, seed=seed).propose([])

    assert draw(7).changes[0].new == draw(7).changes[0].new
    assert draw(7).changes[0].new != draw(8).changes[0].new
    task = Task(instruction="nothing")
    opt = BootstrapFewShot(task, raw_shots=2, bootstrap_shots=0, input_fields=["question"])
    result = trainer(task, opt, max_steps=1).fit()
    assert result.steps[0].decision == "accepted" and result.best_val_score == 1.0
    assert task.generator.demos.data.startswith("Question: q")
    with pytest.raises(ValueError, match="no trainable Parameters of type demos"):
        BootstrapFewShot(Parameter(data="x"))


def test_a_resumed_run_proposes_what_the_uninterrupted_one_did(tmp_path):
    def never_right(prompt):
        return "wrong"

    def run(steps, resume, folder):
        task = Task(instruction="nothing", model=never_right)
        opt = BootstrapFewShot(task, raw_shots=2, bootstrap_shots=0, input_fields=["question"], seed=3)
        return trainer(task, opt, folder, max_steps=steps).fit(resume=resume)

    straight = run(4, False, tmp_path / "straight")
    run(2, False, tmp_path / "split")
    resumed = run(4, True, tmp_path / "split")
    assert [s.changes for s in resumed.steps] == [s.changes for s in straight.steps]


def test_a_failing_optimizer_model_is_a_failed_proposal_not_nothing_to_propose():
    task = Task()
    opt = TextGradOptimizer(task, model_client=ScriptedClient(responses=[RuntimeError("503 upstream")]))
    result = trainer(task, opt, max_steps=1).fit()
    assert "proposal failed" in result.steps[0].reason and "503 upstream" in result.steps[0].reason
