"""lightrag 0.1's optimizer API: samplers, the sampler-driven few-shot optimizer and the OPRO-style
LLMOptimizer (by hand and under the Trainer)."""

from dataclasses import dataclass, field
from typing import List

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component, fun_to_component
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter
from lightrag.optim import LLMOptimizer, Optimizer, Trainer
from lightrag.optim.few_shot_optimizer import BootstrapFewShot, SamplerFewShot
from lightrag.optim.sampler import ClassSampler, RandomSampler, Sample

DATA = [{"text": f"Sample text {i}", "label": i % 10} for i in range(100)]


# ---------------------------------------------------------------------------------- samplers
def test_random_sampler_draws_and_replaces():
    sampler = RandomSampler(DATA, default_num_shots=10, seed=3)
    shots = sampler()
    assert len({s.index for s in shots}) == 10 and all(s.data is DATA[s.index] for s in shots)
    assert [s.index for s in RandomSampler(DATA, seed=3)(10)] == [s.index for s in shots]
    swapped = sampler.random_replace(4, shots)
    assert len(swapped) == 10 and len({s.index for s in swapped}) == 10
    assert sum(a.index != b.index for a, b in zip(shots, swapped)) == 4
    assert Sample(1, "x").to_dict() == {"index": 1, "data": "x"}
    with pytest.raises(ValueError, match="num_shots is not set"):
        RandomSampler(DATA)()
    with pytest.raises(ValueError, match="cannot replace 11"):
        sampler.random_replace(11, shots)
    with pytest.raises(ValueError, match="no dataset"):
        RandomSampler()(2)


def test_class_sampler_balances_and_keeps_classes():
    sampler = ClassSampler(DATA, num_classes=10, get_data_key_fun=lambda x: x["label"], seed=0)
    shots = sampler(20)
    assert sorted(s.data["label"] for s in shots) == sorted(list(range(10)) * 2)
    assert sampler.class_indexces[3] == list(range(3, 100, 10))  # 0.1's attribute name
    swapped = sampler.random_replace(5, shots)
    assert [s.data["label"] for s in swapped] == [s.data["label"] for s in shots]
    assert len({s.index for s in swapped}) == 20
    assert sum(a.index != b.index for a, b in zip(shots, swapped)) == 5
    only_label_1 = [0.0] * 10
    only_label_1[1] = 1.0
    first = sampler(10)
    weighted = sampler.random_replace(1, first, weights_per_class=only_label_1)
    changed = [a for a, b in zip(first, weighted) if a.index != b.index]
    assert len(changed) == 1 and changed[0].data["label"] == 1
    assert len(sampler(3)) == 3  # fewer shots than classes: trimmed
    with pytest.raises(ValueError, match="more than num_classes"):
        ClassSampler(DATA, num_classes=2, get_data_key_fun=lambda x: x["label"])


# ------------------------------------------------------------- sampler-driven few-shot (0.1)
def make_optimizer(**kw):
    sampler = RandomSampler(dataset=DATA, default_num_shots=10, seed=1)
    return BootstrapFewShot(parameter=Parameter[List](["test_example_str"]), sampler=sampler,
                            num_shots=10, **kw)


def test_few_shot_init_propose_update_and_reset():
    optimizer = make_optimizer()
    assert BootstrapFewShot is SamplerFewShot and optimizer.num_shots == 10
    import lightrag.optim

    assert lightrag.optim.BootstrapFewShot is SamplerFewShot  # 0.1's class at 0.1's path
    with pytest.raises(AssertionError):
        optimizer.random_replace(2)
    optimizer.init()
    assert len(optimizer.current) == len(optimizer.proposed) == 10
    examples = optimizer.propose(shots=5)
    current = [s.index for s in optimizer.current]
    proposed = [s.index for s in optimizer.proposed]
    assert len(examples) == 10 and len(set(current) & set(proposed)) == 5
    assert [s.index for s in optimizer.example_parameter.data] == proposed
    optimizer.reset_parameter()
    assert optimizer.proposed == [] and [s.index for s in optimizer.example_parameter.data] == current
    optimizer.propose(shots=2)
    proposed = [s.index for s in optimizer.proposed]
    optimizer.update_parameter()
    assert [s.index for s in optimizer.current] == proposed
    assert [s.index for s in optimizer.example_parameter.data] == proposed
    with pytest.raises(TypeError, match="driven by hand"):
        optimizer.propose([])  # a Trainer-style call gets a clear error
    optimizer.reset()
    assert optimizer.current == [] and optimizer.state_dict()["current"] == []


@dataclass
class TaskInput(DataClass):
    text: str = field(default="")


@dataclass
class TaskOutput(DataClass):
    label: int = field(default=0)
    rationale: str = field(default="")


def test_few_shot_output_processor_and_llm_augmenter():
    to_text = fun_to_component(lambda samples: "\n".join(s.data["text"] for s in samples))
    calls = []

    def augmenter(inp, out):
        calls.append(inp.text)
        return {"rationale": f"because {inp.text}", "not_a_field": 1}

    demos = Parameter(data="")
    optimizer = SamplerFewShot(demos, RandomSampler(DATA, seed=0), 3, llm_augmenter=augmenter,
                               task_input_dataclass=TaskInput, task_output_dataclass=TaskOutput,
                               output_processors=to_text)
    optimizer.init()
    assert demos.data.count("Sample text") == 3 and len(calls) == 3
    assert all(s.data["rationale"] == f"because {s.data['text']}" for s in optimizer.current)
    assert all("not_a_field" not in s.data for s in optimizer.current)
    optimizer.propose(shots=1)
    assert len(calls) == 4  # only the swapped-in demo is augmented
    with pytest.raises(ValueError, match="task_input_dataclass"):
        SamplerFewShot(demos, RandomSampler(DATA), 3, llm_augmenter=augmenter)


def test_optimizer_base_takes_no_params_like_01():
    class Custom(Optimizer):
        def propose(self, samples):
            return None

    assert Custom().params == []
    with pytest.raises(ValueError, match="no trainable Parameters"):
        Custom([Parameter(data="x", requires_opt=False)])


# ---------------------------------------------------------------------------- LLMOptimizer
def test_llm_optimizer_by_hand_like_01():
    instruction = Parameter(data="Classify the text.")
    client = ScriptedClient(responses=["New instruction: \"Pick one label.\"", "",
                                       "Classify the text.", "Pick the best label."])
    kwargs = {"model": "m", "temperature": 0.2}
    optimizer = LLMOptimizer(instruction, client, kwargs)
    assert kwargs["temperature"] == 0.2 and client.requests == []
    optimizer.propose()
    assert instruction.data == "Pick one label." and client.requests[0]["temperature"] == 1.0
    assert "<STARTER_INS>\nClassify the text.\n</STARTER_INS>" in client.requests[0]["prompt"]
    optimizer.reset_parameter()
    assert instruction.data == "Classify the text." and optimizer.proposed is None
    optimizer.propose()  # an empty and an unchanged reply are skipped
    assert instruction.data == "Pick the best label." and len(client.requests) == 4
    optimizer.update_parameter(score=0.75)
    assert optimizer.current == "Pick the best label." and not instruction.proposing
    client.responses.append("Label it.")
    optimizer.propose()
    assert "- score 0.750: Pick the best label." in client.requests[-1]["prompt"]
    failing = LLMOptimizer(Parameter(data="x"), ScriptedClient(responses=[""] * 3), max_tries=3)
    assert failing.propose() is None and failing.params[0][1].data == "x"


class Task(Component):
    def __init__(self):
        super().__init__()
        self.generator = Generator(
            model_client=ScriptedClient(
                response_fn=lambda p: p.split("Q:")[1].strip() if "GOOD" in p else "no"),
            template="{{instruction}}\nQ: {{question}}",
            prompt_kwargs={"instruction": Parameter(data="Answer.", role_desc="instruction")},
        )

    def call(self, question):
        return self.generator(prompt_kwargs={"question": question})


def test_llm_optimizer_under_the_trainer_keeps_only_improvements():
    task = Task()
    param = task.generator.instruction
    client = ScriptedClient(responses=["Say BAD things.", "Be GOOD."])
    data = [{"question": f"a{i}", "answer": f"a{i}"} for i in range(4)]
    result = Trainer(task, LLMOptimizer(param, client), lambda pred, item: float(pred == item["answer"]),
                     train_set=data, val_set=data, inputs="question", max_steps=2).fit()
    assert [s.decision for s in result.steps] == ["reverted", "accepted"]
    assert param.data == "Be GOOD." and result.best_val_score == 1.0
    assert "- score 0.000: Say BAD things." in client.requests[1]["prompt"]
