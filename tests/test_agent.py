"""ReActAgent with a scripted planner: tool runs, recovery from errors, async tools, max_steps,
serialisation, memory as chat messages, the component tree; one real-model run (slow)."""

import asyncio
import doctest
import json
import re
from typing import List, Optional

import pytest

import lightrag.components.agent as agent_package
from lightrag.components.agent import (
    AgentRun,
    ReActAgent,
    action_json_schema,
    actions,
    prompts,
    rag_tools,
    react,
    records,
)
from lightrag.components.memory import ConversationMemory, SummaryMemory
from lightrag.components.model_client import (
    GroqAPIClient,
    LocalLLMClient,
    OpenAIClient,
    ScriptedClient,
)
from lightrag.core.func_tool import FunctionTool
from lightrag.core.generator import Generator
from lightrag.core.types import FunctionExpression, StepOutput

POPULATION = {"paris": 2_100_000, "lyon": 520_000}


def population(city: str) -> int:
    """The population of a French city."""
    return POPULATION[city.lower()]


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


def act(action, thought="..."):
    return json.dumps({"thought": thought, "action": action})


def make_agent(responses, tools=(population, divide), **kwargs):
    client = ScriptedClient(responses=responses)
    kwargs.setdefault("add_llm_as_fallback", False)
    return ReActAgent(tools=list(tools), model_client=client, **kwargs), client


def test_two_tool_run_reaches_finish_with_the_right_answer():
    agent, client = make_agent([
        act("population(city='Paris')", "Paris first."),
        act("population(city='Lyon')"),
        act("divide(a=2100000, b=520000)"),
        act("finish(answer='Paris is about 4.04 times larger.')"),
    ])
    run = agent.run("How many times larger is Paris than Lyon?")
    assert run.stopped_reason == "finish"
    assert run.answer == "Paris is about 4.04 times larger."
    assert [s.function.name for s in run.steps] == ["population", "population", "divide", "finish"]
    assert run.steps[0].action == FunctionExpression(thought="Paris first.",
                                                     action="population(city='Paris')")
    assert run.steps[1].function.kwargs == {"city": "Lyon"}
    assert run.steps[2].observation.startswith("4.038")
    third_prompt = client.requests[2]["prompt"]
    assert "Observation: 2100000" in third_prompt and "Observation: 520000" in third_prompt
    assert "population(city: str) -> int" in third_prompt and "Divide a by b." in third_prompt


def test_call_returns_answer_and_keeps_step_history():
    agent, _ = make_agent([act("population(city='Lyon')"), act("finish(answer='520000')")])
    assert agent("Population of Lyon?") == "520000"
    assert len(agent.step_history) == 2 and agent.last_run.stopped_reason == "finish"
    assert all(isinstance(step, StepOutput) for step in agent.step_history)
    text = str(agent.step_history[0])
    assert text.startswith("StepOutput(step=1, action=FunctionExpression(")
    assert StepOutput.from_dict(agent.step_history[0].to_dict()).observation == "520000"
    agent.reset()  # lightrag 0.1
    assert agent.step_history == [] and agent.last_run is None


def test_failing_tool_and_malformed_actions_are_observed_and_recovered_from():
    agent, client = make_agent([
        act("population(city='Atlantis')"),   # the tool raises KeyError
        "I think I should look it up somewhere.",  # no JSON, no call
        act("teleport(to='Lyon')"),           # unknown tool
        act("divide(a=1, b=0)"),              # ZeroDivisionError
        act("population(city='Lyon'"),        # missing ')' is repaired
        act("finish(answer='520000')"),
    ])
    run = agent.run("Population of Lyon?")
    assert run.stopped_reason == "finish" and run.answer == "520000"
    observations = [s.observation for s in run.steps]
    assert observations[0].startswith("Error") and "KeyError: 'atlantis'" in observations[0]
    assert observations[1].startswith("Error: could not read an action")
    assert run.steps[1].action is None
    assert "Unknown function 'teleport'" in observations[2]
    assert "ZeroDivisionError" in observations[3]
    assert observations[4] == "520000"
    assert "Observation: Error at calling population" in client.requests[1]["prompt"]
    assert "could not read an action" in client.requests[2]["prompt"]


def test_tolerant_parsing_of_replies():
    agent, _ = make_agent([
        '```json\n{"thought": "fenced", "action": "population(city=\\"Paris\\")",}\n```',
        'Sure! I will call population(city="Lyon") now.',
        json.dumps({"thought": "as parts", "action": {"name": "divide", "kwargs": {"a": 6, "b": 3}}}),
        json.dumps({"name": "finish", "arguments": {"answer": "done"}}),
    ])
    run = agent.run("q")
    assert [s.observation for s in run.steps] == ["2100000", "520000", "2.0", "done"]
    assert run.stopped_reason == "finish"


async def test_async_tools_with_acall_and_call():
    async def fetch_title(url: str) -> str:
        """Fetch the title of a web page."""
        await asyncio.sleep(0)
        return f"Title of {url}"

    script = [act("fetch_title(url='a.com')"), act("finish(answer='Title of a.com')")]
    agent, _ = make_agent(script, tools=[fetch_title, FunctionTool(population)])
    assert agent.tool_manager.get_tool("fetch_title").is_async
    assert await agent.acall("Title of a.com?") == "Title of a.com"
    assert agent.step_history[0].observation == "Title of a.com"
    again, client = make_agent(script, tools=[fetch_title])
    run = await again.arun("again", promt_kwargs={"context_str": "Use a.com."})
    assert run.stopped_reason == "finish" and "Use a.com." in client.requests[0]["prompt"]
    sync_agent, _ = make_agent(script, tools=[fetch_title])
    assert sync_agent("Title of a.com?") == "Title of a.com"
    mixed, _ = make_agent([act("population(city='Lyon')"), act("fetch_title(url='b.org')"),
                           act("finish(answer='done')")], tools=[fetch_title, population])
    run = await mixed.arun("Both kinds of tool, from async code")
    assert [s.observation for s in run.steps] == ["520000", "Title of b.org", "done"]


def test_max_steps_stops_a_loop_with_a_clear_result():
    client = ScriptedClient(responses=[act("population(city='Paris')")], cycle=True)
    agent = ReActAgent(tools=[population], max_steps=3, model_client=client)
    run = agent.run("Loop forever")
    assert run.stopped_reason == "max_steps" and len(run.steps) == 3
    assert run.answer == "2100000"  # the last observation
    bad = ScriptedClient(responses=["no action here"], cycle=True)
    run = ReActAgent(max_steps=2, model_client=bad, add_llm_as_fallback=False).run("q")
    assert run.stopped_reason == "max_steps" and "without calling finish" in run.answer


def test_model_failure_stops_with_model_error():
    client = ScriptedClient(responses=[ConnectionError("network down")])
    run = ReActAgent(model_client=client).run("q")
    assert run.stopped_reason == "model_error" and "network down" in run.answer
    assert len(run.steps) == 1


def test_step_records_serialise_print_and_save(tmp_path):
    agent, _ = make_agent([act("population(city='Paris')", "Look up."),
                           act("finish(answer='2.1 million')")])
    run = agent.run("Population of Paris?")
    restored = AgentRun.from_json(run.to_json())
    assert restored == run and isinstance(restored.steps[0].action, FunctionExpression)
    assert json.loads(run.to_json())["steps"][0]["function"]["kwargs"] == {"city": "Paris"}
    text = str(run)
    assert "Thought: Look up." in text and "Action: population(city='Paris')" in text
    assert "[stopped: finish]" in text
    path = tmp_path / "run.json"
    path.write_text(run.to_json())
    assert AgentRun.from_json(path.read_text()).answer == "2.1 million"


def test_llm_tool_fallback_and_prompt_kwargs_alias():
    client = ScriptedClient(responses=[
        act("llm_tool(input='What colour is the sky?')"),
        "Blue.",                                  # the llm_tool generator's reply
        act("finish(answer='Blue')"),
    ])
    agent = ReActAgent(tools=[], model_client=client)
    run = agent.run("Sky colour?", promt_kwargs={"context_str": "Daytime only."})
    assert run.answer == "Blue" and run.steps[0].observation == "Blue."
    assert "What colour is the sky?" in client.requests[1]["prompt"]
    assert "Daytime only." in client.requests[0]["prompt"]
    assert "Daytime only." in client.requests[2]["prompt"]


def test_memory_sends_chat_messages_and_records_the_turn():
    memory = ConversationMemory(max_turns=5)
    memory.add("My city is Lyon.", "Noted.")
    agent, client = make_agent([act("finish(answer='Lyon')")], memory=memory)
    assert agent("Which city is mine?") == "Lyon"
    messages = client.requests[0]["prompt"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "Tools:" in messages[0]["content"] and "finish(answer: str)" in messages[0]["content"]
    assert messages[1]["content"] == "My city is Lyon."
    assert messages[3]["content"].startswith("Question: Which city is mine?")
    assert memory.turns[-1].assistant_response.response_str == "Lyon" and len(memory) == 2


async def test_summary_memory_with_an_agent_sync_and_async():
    summariser = Generator(model_client=ScriptedClient(responses=["The user lives in Lyon."]))
    memory = SummaryMemory(summariser, keep_last=0)
    agent, client = make_agent([act("finish(answer='Noted.')"), act("finish(answer='Lyon')")],
                               memory=memory)
    assert agent("I live in Lyon.") == "Noted."
    assert memory.summary == "The user lives in Lyon." and len(memory) == 0
    assert await agent.acall("Where do I live?") == "Lyon"
    messages = client.requests[1]["prompt"]
    assert [m["role"] for m in messages] == ["system", "system", "user"]
    assert messages[1]["content"].endswith("The user lives in Lyon.")
    assert memory.turns[0].assistant_response.response_str == "Lyon"


@pytest.mark.parametrize("client_cls", [OpenAIClient, GroqAPIClient, LocalLLMClient])
def test_memory_requests_are_native_chat_messages_for_each_client(client_cls, monkeypatch):
    client = client_cls()
    sent = []

    def offline_call(api_kwargs=None, model_type=None):
        sent.append(api_kwargs)
        raise ConnectionError("offline")

    monkeypatch.setattr(client, "call", offline_call)
    memory = ConversationMemory()
    memory.add("I live in Lyon.", "Noted.")
    model_kwargs = {} if client_cls is LocalLLMClient else {"model": "some-model"}
    agent = ReActAgent(tools=[population], model_client=client, model_kwargs=model_kwargs,
                       memory=memory)
    run = agent.run("Where do I live?")
    assert run.stopped_reason == "model_error" and "offline" in run.answer
    messages = sent[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"].startswith("You are an agent")
    assert messages[1:3] == memory()
    assert messages[3]["content"].startswith("Question: Where do I live?")
    assert len(memory) == 1  # a failed run is not remembered


def test_agent_and_tools_print_as_a_component_tree():
    agent = ReActAgent(tools=[population, divide], model_client=ScriptedClient())
    tree = repr(agent)
    assert tree.startswith("ReActAgent(\n  max_steps=10, add_llm_as_fallback=True")
    for child in ["(tool_manager): ToolManager(", "(population): FunctionTool(fn=population",
                  "(divide): FunctionTool(fn=divide", "(llm_tool): FunctionTool(fn=llm_tool",
                  "(finish): FunctionTool(fn=finish", "(planner): Generator(",
                  "(output_processors): JsonOutputParser(\n      data_class=FunctionExpression",
                  "(llm_tool_generator): Generator("]:
        assert child in tree, child
    names = [name for name, _ in agent.named_components()]
    assert "tool_manager.population" in names and "planner" in names


def test_constructor_is_compatible_with_0_1_and_validates():
    agent = ReActAgent([population], 4, True, [FunctionExpression(action="population(city='Paris')")],
                       model_client=ScriptedClient(), model_kwargs={}, template=None)
    assert agent.tool_names == ["population", "llm_tool", "finish"] and agent.max_steps == 4
    assert "population(city='Paris')" in agent.planner.get_prompt(input_str="q", tools=[])
    with pytest.raises(ValueError, match="max_steps"):
        ReActAgent(max_steps=0, model_client=ScriptedClient())


def test_a_0_1_style_template_sees_tools_format_and_step_history():
    template = (
        "<SYS>{% for tool in tools %}{{ loop.index }}. {{tool}}\n{% endfor %}"
        "<OUTPUT_FORMAT>{{output_format_str}}</OUTPUT_FORMAT></SYS>User query: {{ input_str }}\n"
        "{% for history in step_history %}Step {{ loop.index }}. "
        '"Thought": "{{history.action.thought}}", "Action": "{{history.action.action}}", '
        '"Observation": "{{history.observation}}"\n{% endfor %}You:'
    )
    agent, client = make_agent([act("population(city='Lyon')", "Look it up."),
                                act("finish(answer='520000')")], template=template)
    assert agent.call("Population of Lyon?", {"unused": 1}, {}) == "520000"
    first, second = client.requests[0]["prompt"], client.requests[1]["prompt"]
    assert "1. population(city: str) -> int" in first and "<OUTPUT_FORMAT>Reply with" in first
    assert "Step 1." not in first
    assert ('Step 1. "Thought": "Look it up.", "Action": "population(city=\'Lyon\')", '
            '"Observation": "520000"') in second


def test_local_client_gets_a_json_schema_constraining_the_action():
    def search(query: str, keywords: Optional[List[str]] = None, top_k: int = 3) -> str:
        """Search."""

    agent = ReActAgent(tools=[population, search], model_client=LocalLLMClient())
    schema = agent.planner.model_kwargs["json_schema"]
    assert schema["required"] == ["thought", "action"]
    assert "json_schema" not in agent.llm_tool_generator.model_kwargs
    pattern = re.compile(schema["properties"]["action"]["pattern"])
    for ok in ["population(city='Paris')", "finish(answer='x')", "search(query='a b')",
               "search(query='Titan', keywords=['Titan', 'Saturn'])",
               "search(query='q', keywords=[], top_k=-2)", "llm_tool(input='why?')"]:
        assert pattern.match(ok), ok
    for bad in ['population(city="Paris")', "rm(x)", "population('Paris')", "finish()",
                "search(top_k=2)", "search(query='a', top_k='2')", "population(city='Paris'"]:
        assert not pattern.match(bad), bad
    generic = re.compile(action_json_schema(["a"])["properties"]["action"]["pattern"])
    assert generic.match("a(1, b='x')") and not generic.match('a("x")')
    scripted = ReActAgent(tools=[population], model_client=ScriptedClient())
    assert "json_schema" not in scripted.planner.model_kwargs
    early = ReActAgent(tools=[population], model_client=LocalLLMClient(), require_observation=True)
    early_pattern = re.compile(early._early_schema["properties"]["action"]["pattern"])
    assert not early_pattern.match("finish(answer='x')")
    assert early_pattern.match("population(city='x')")
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    for candidate in [schema, early._early_schema]:
        assert llama_grammar.LlamaGrammar.from_json_schema(json.dumps(candidate), verbose=False)


def test_require_observation_refuses_an_early_finish():
    agent, client = make_agent([act("finish(answer='from memory')"),
                                act("population(city='Lyon')"),
                                act("finish(answer='520000')")], require_observation=True)
    run = agent.run("Population of Lyon?")
    assert run.answer == "520000" and len(run.steps) == 3
    assert run.steps[0].observation.startswith("Error: finish refused")
    assert "require_observation=True" in repr(agent)
    assert "json_schema" not in client.requests[0]
    with pytest.raises(ValueError, match="besides finish"):
        ReActAgent(model_client=ScriptedClient(), add_llm_as_fallback=False,
                   require_observation=True)


def test_require_observation_switches_the_local_schema(monkeypatch):
    client = LocalLLMClient()
    replies = iter([act("population(city='Lyon')"), act("finish(answer='520000')")])
    sent = []

    def fake_call(api_kwargs=None, model_type=None):
        sent.append(api_kwargs["response_format"]["schema"]["properties"]["action"]["pattern"])
        return {"choices": [{"message": {"content": next(replies)}}]}

    monkeypatch.setattr(client, "call", fake_call)
    agent = ReActAgent(tools=[population], model_client=client, require_observation=True,
                       add_llm_as_fallback=False)
    assert agent("Population of Lyon?") == "520000"
    assert "finish" not in sent[0] and "finish" in sent[1]


@pytest.mark.parametrize("module", [agent_package, actions, prompts, rag_tools, react, records])
def test_docstring_examples_run(module):
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.slow
def test_real_local_model_runs_the_loop_to_a_clear_end():
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    examples = [FunctionExpression(thought="I add 4 and 5.", action="add(a=4, b=5)"),
                FunctionExpression(thought="The observation is 9.", action="finish(answer='9')")]
    agent = ReActAgent(tools=[add], max_steps=2, add_llm_as_fallback=False, examples=examples,
                       model_client=LocalLLMClient(n_ctx=4096),
                       model_kwargs={"max_tokens": 64, "temperature": 0.0, "repeat_penalty": 1.3})
    run = agent.run("Use the add tool to compute 2 + 3.")
    assert run.stopped_reason in {"finish", "max_steps"}
    assert 1 <= len(run.steps) <= 2
    assert any(step.action is not None and step.function is not None for step in run.steps)
    assert AgentRun.from_json(run.to_json()) == run
