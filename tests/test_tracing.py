"""Tracing: prompt-state history, call logs and the decorators that attach them (0.1 API)."""

import asyncio
import doctest
import importlib
import json
import logging

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter
from lightrag.core.types import CompletionUsage, GeneratorOutput
from lightrag.tracing import (
    GeneratorCallLogger,
    GeneratorCallRecord,
    GeneratorStateLogger,
    GeneratorStatesRecord,
    trace_generator_call,
    trace_generator_states,
)


def make_generator(responses=None, template="Answer: {{question}}"):
    return Generator(model_client=ScriptedClient(responses=responses), template=template)


def read_state_file(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# ---------------------------------------------------------------------- state logger


def test_state_logged_once_and_changes_appended(tmp_path):
    logger = GeneratorStateLogger(save_dir=str(tmp_path), project_name="proj")
    path = tmp_path / "proj" / "generator_state_trace.json"
    assert logger.get_log_location() == str(path)
    gen = make_generator()

    assert logger.log_prompt(gen, "qa") is True
    assert logger.log_prompt(gen, "qa") is False  # unchanged: not re-logged
    assert [r["prompt_states"]["data"]["template"] for r in read_state_file(path)["qa"]] == [
        "Answer: {{question}}"
    ]

    gen.prompt.update_prompt_kwargs(question="preset")
    assert logger.log_prompt(gen, "qa") is True
    records = read_state_file(path)["qa"]
    assert len(records) == 2
    assert records[1]["prompt_states"]["data"]["prompt_kwargs"] == {"question": "preset"}
    assert all(r["time_stamp"] for r in records)


def test_unchanged_state_not_relogged_by_a_new_logger_on_the_same_file(tmp_path):
    first = GeneratorStateLogger(save_dir=str(tmp_path))
    first.log_prompt(make_generator(), "qa")
    second = GeneratorStateLogger(save_dir=str(tmp_path))  # loads the existing file
    assert second.generator_names == {"qa"}
    assert second.log_prompt(make_generator(), "qa") is False
    assert second.log_prompt(make_generator(template="New: {{question}}"), "qa") is True
    assert len(read_state_file(tmp_path / "generator_state_trace.json")["qa"]) == 2


def test_state_records_each_generator_name_separately(tmp_path):
    logger = GeneratorStateLogger(save_dir=str(tmp_path), filename="states.json")
    logger.log_prompt(make_generator(template="A {{x}}"), "a")
    logger.log_prompt(make_generator(template="B {{x}}"), "b")
    data = read_state_file(tmp_path / "states.json")
    assert {name: len(records) for name, records in data.items()} == {"a": 1, "b": 1}


def test_state_save_load_round_trip(tmp_path):
    logger = GeneratorStateLogger(save_dir=str(tmp_path))
    gen = make_generator()
    logger.log_prompt(gen, "qa")
    gen.prompt.template = "Changed {{question}}"
    logger.log_prompt(gen, "qa")
    copy_path = str(tmp_path / "copy.json")
    logger.save(copy_path)

    loaded = GeneratorStateLogger(save_dir=str(tmp_path / "other")).load(copy_path)
    original = logger.load()
    assert list(loaded) == ["qa"]
    assert [r.to_dict() for r in loaded["qa"]] == [r.to_dict() for r in original["qa"]]
    assert all(isinstance(r, GeneratorStatesRecord) for r in loaded["qa"])
    assert loaded["qa"][1].prompt_states["data"]["template"] == "Changed {{question}}"


def test_state_tracks_prompt_parameters_changed_by_an_optimizer(tmp_path):
    instructions = Parameter(data="Be brief.", role_desc="instructions")
    gen = Generator(
        model_client=ScriptedClient(),
        template="{{instructions}} {{question}}",
        prompt_kwargs={"instructions": instructions},
    )
    logger = GeneratorStateLogger(save_dir=str(tmp_path))
    logger.log_prompt(gen, "qa")
    instructions.update_value("Answer in one word.")
    assert logger.log_prompt(gen, "qa") is True
    values = [r.prompt_states["data"]["prompt_kwargs"]["instructions"] for r in logger.load()["qa"]]
    assert values == ["Be brief.", "Answer in one word."]


def test_state_logger_rejects_a_corrupt_file_and_non_generators(tmp_path):
    bad = tmp_path / "generator_state_trace.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="generator_state_trace.json"):
        GeneratorStateLogger(save_dir=str(tmp_path))
    bad.write_text("", encoding="utf-8")
    logger = GeneratorStateLogger(save_dir=str(tmp_path))
    assert logger.generator_names == set()
    with pytest.raises(TypeError, match="pass a Generator"):
        logger.log_prompt(object(), "x")


def test_state_records_compare_states_not_time_stamps():
    a = GeneratorStatesRecord(prompt_states={"t": "{{x}}", "k": (1, 2)}, time_stamp="1")
    assert a == GeneratorStatesRecord(prompt_states={"k": [1, 2], "t": "{{x}}"}, time_stamp="2")
    assert a != GeneratorStatesRecord(prompt_states={"t": "{{y}}"}, time_stamp="1")
    assert "prompt_states" in repr(a)


# ----------------------------------------------------------------------- call logger


def test_call_logger_writes_json_lines_and_loads_records(tmp_path):
    logger = GeneratorCallLogger(save_dir=str(tmp_path), project_name="proj")
    logger.register_generator("qa")
    path = tmp_path / "proj" / "qa_call.jsonl"
    assert logger.get_log_location("qa") == str(path)

    output = GeneratorOutput(
        data={"answer": "Zürich"},
        raw_response='{"answer": "Zürich"}',
        usage=CompletionUsage(completion_tokens=3, prompt_tokens=5, total_tokens=8),
    )
    logger.log_call("qa", {"model": "m"}, {"question": "Where?"}, output)
    logger.log_call("qa", {}, {"question": "Again?"}, GeneratorOutput(error="timeout"))

    lines = read_lines(path)
    assert [line["prompt_kwargs"] for line in lines] == [
        {"question": "Where?"},
        {"question": "Again?"},
    ]
    assert "Zürich" in path.read_text(encoding="utf-8")  # UTF-8, not \u escapes

    records = logger.load("qa")
    assert all(isinstance(r, GeneratorCallRecord) for r in records)
    assert records[0].model_kwargs == {"model": "m"}
    assert records[0].output == output
    assert records[1].output.error == "timeout" and records[1].time_stamp


def test_call_logger_unregistered_names_raise(tmp_path):
    logger = GeneratorCallLogger(save_dir=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="'ghost' is not registered"):
        logger.load("ghost")
    with pytest.raises(ValueError, match="register_generator"):
        logger.log_call("ghost", {}, {}, GeneratorOutput(data="x"))
    logger.register_generator("qa")
    assert logger.load("qa") == []  # registered, nothing logged yet


def test_call_logger_reregistering_warns_and_keeps_the_file(tmp_path, caplog):
    logger = GeneratorCallLogger(save_dir=str(tmp_path))
    logger.register_generator("qa", filename="first.jsonl")
    with caplog.at_level(logging.WARNING, logger="lightrag.tracing.call_logger"):
        logger.register_generator("qa", filename="second.jsonl")
    assert "already registered" in caplog.text
    assert logger.get_log_location("qa") == str(tmp_path / "first.jsonl")


def test_a_new_call_logger_finds_registered_generators(tmp_path):
    writer = GeneratorCallLogger(save_dir=str(tmp_path), project_name="proj")
    writer.register_generator("qa", filename="custom.jsonl")
    writer.log_call("qa", {}, {"question": "q"}, GeneratorOutput(data="a"))
    assert read_state_file(tmp_path / "proj" / "logger_metadata.json") == {"qa": "custom.jsonl"}

    reader = GeneratorCallLogger(save_dir=str(tmp_path), project_name="proj")
    assert [r.output.data for r in reader.get_calls("qa")] == ["a"]


def test_call_logger_reports_a_corrupt_line(tmp_path):
    logger = GeneratorCallLogger(save_dir=str(tmp_path))
    logger.register_generator("qa")
    (tmp_path / "qa_call.jsonl").write_text('{"prompt_kwargs": {}}\n{truncated', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        logger.load("qa")


# ------------------------------------------------------------------------ decorators


def build_traced(save_dir, error_only, responses):
    @trace_generator_call(save_dir=save_dir, error_only=error_only)
    class QA(Component):
        def __init__(self, style="short"):
            super().__init__()
            self.style = style
            self.llm = make_generator(responses)

        def call(self, question):
            return self.llm(prompt_kwargs={"question": question}, model_kwargs={"temperature": 0})

    return QA


def test_trace_generator_call_error_only_logs_failures(tmp_path):
    QA = build_traced(str(tmp_path), True, ["Paris", RuntimeError("provider down")])
    qa = QA()
    assert qa("Capital of France?").data == "Paris"
    assert "provider down" in qa("Capital of Peru?").error

    lines = read_lines(tmp_path / "QA" / "llm_call.jsonl")
    assert len(lines) == 1
    assert lines[0]["prompt_kwargs"] == {"question": "Capital of Peru?"}
    assert lines[0]["model_kwargs"] == {"temperature": 0}
    assert "provider down" in lines[0]["output"]["error"]


def test_trace_generator_call_logs_every_call_sync_and_async(tmp_path):
    QA = build_traced(str(tmp_path), False, ["Paris", RuntimeError("down"), "Lima"])
    qa = QA(style="long")
    qa("Capital of France?")
    qa("Capital of Spain?")
    asyncio.run(qa.llm.acall(prompt_kwargs={"question": "Capital of Peru?"}))

    records = qa.generator_call_logger.load("llm")
    assert [r.prompt_kwargs["question"] for r in records] == [
        "Capital of France?",
        "Capital of Spain?",
        "Capital of Peru?",
    ]
    assert [r.output.data for r in records] == ["Paris", None, "Lima"]
    assert records[1].output.error is not None
    assert qa.style == "long"  # the original __init__ ran with its arguments


def test_trace_generator_call_logs_streamed_calls_without_the_stream(tmp_path):
    QA = build_traced(str(tmp_path), False, ["streamed reply"])
    qa = QA()
    assert "".join(qa.llm.stream({"question": "q"})) == "streamed reply"
    (record,) = qa.generator_call_logger.load("llm")
    assert record.output.data is None and record.output.metadata["streamed"] is True


def test_trace_generator_call_named_attributes_only(tmp_path, caplog):
    @trace_generator_call(attributes=["judge", "missing"], save_dir=str(tmp_path), error_only=False)
    class Pipeline(Component):
        def __init__(self):
            super().__init__()
            self.answerer = make_generator(["a"])
            self.judge = make_generator(["good"])

    with caplog.at_level(logging.WARNING, logger="lightrag.tracing.decorators"):
        p = Pipeline()
    assert "no attribute 'missing'" in caplog.text
    p.answerer({"question": "q"})
    p.judge({"question": "q"})
    assert sorted(f.name for f in (tmp_path / "Pipeline").glob("*.jsonl")) == ["judge_call.jsonl"]


def test_decorated_subclass_logs_each_call_once(tmp_path):
    Base = build_traced(str(tmp_path), False, ["x"])

    @trace_generator_call(save_dir=str(tmp_path), error_only=False)
    class Child(Base):
        pass

    child = Child()
    child("q")
    assert len(child.generator_call_logger.load("llm")) == 1


def test_trace_generator_states_logs_prompts_at_init(tmp_path):
    def build(template):
        @trace_generator_states(save_dir=str(tmp_path), project_name="proj")
        class Summarizer(Component):
            def __init__(self):
                super().__init__()
                self.llm = make_generator(template=template)
                self.not_a_generator = "text"

        return Summarizer()

    first = build("Summarize {{question}}")
    path = tmp_path / "proj" / "generator_state_trace.json"
    assert first.generator_logger.get_log_location() == str(path)
    build("Summarize {{question}}")  # same prompt: nothing new
    build("Summarize briefly {{question}}")
    templates = [r["prompt_states"]["data"]["template"] for r in read_state_file(path)["llm"]]
    assert templates == ["Summarize {{question}}", "Summarize briefly {{question}}"]


def test_both_decorators_stack_with_default_project_names(tmp_path):
    @trace_generator_states(save_dir=str(tmp_path))
    @trace_generator_call(save_dir=str(tmp_path))
    class Agent(Component):
        def __init__(self):
            super().__init__()
            self.planner = make_generator([ValueError("bad plan")])

    agent = Agent()
    agent.planner({"question": "q"})
    assert list(read_state_file(tmp_path / "Agent" / "generator_state_trace.json")) == ["planner"]
    (record,) = agent.generator_call_logger.load("planner")
    assert "bad plan" in record.output.error


@pytest.mark.parametrize(
    "module",
    ["records", "state_logger", "call_logger", "decorators", "__init__"],
)
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "lightrag.tracing" if module == "__init__" else f"lightrag.tracing.{module}"
    assert doctest.testmod(importlib.import_module(name)).failed == 0
    assert not (tmp_path / "traces").exists()


@pytest.mark.parametrize("content", [None, "", "  \n"])
def test_call_logger_starts_fresh_on_missing_or_empty_metadata(tmp_path, content):
    """0.1 code that points a logger at a folder whose metadata file is missing or empty."""
    from lightrag.tracing.generator_call_logger import GeneratorCallLogger

    meta = tmp_path / "proj" / "logger_metadata.json"
    if content is not None:
        meta.parent.mkdir()
        meta.write_text(content)
    logger = GeneratorCallLogger(save_dir=str(tmp_path), project_name="proj")
    assert logger.generator_names_to_files == {}
    logger.load_meta_data(str(tmp_path / "nowhere.json"))
    logger.register_generator("qa")
    assert "qa" in GeneratorCallLogger(save_dir=str(tmp_path), project_name="proj").generator_names_to_files
