"""0.1 programs run unchanged (twenty-fifth session): each test is code written as for
``lightrag==0.1.0b6`` and what 0.1 gives, found by running the same program on 0.1 in its own
environment and on this package.
"""

from __future__ import annotations

import json
import logging

import pytest

from lightrag.components.agent import ReActAgent
from lightrag.components.model_client import ScriptedClient
from lightrag.core.generator import Generator
from lightrag.core.string_parser import YamlParser
from lightrag.core.tool_manager import ToolManager
from lightrag.core.types import (
    AssistantResponse,
    Conversation,
    DialogTurn,
    FunctionExpression,
    UserQuery,
)
from lightrag.utils.logger import get_logger


def act(action: str, thought: str = "...") -> str:
    return json.dumps({"thought": thought, "action": action})


def test_generator_keeps_its_preset_prompt_kwargs_attribute():
    gen = Generator(model_client=ScriptedClient(responses=["ok", "ok"]),
                    template="{{task_desc_str}} {{input_str}}",
                    prompt_kwargs={"task_desc_str": "Be brief."})
    assert gen.prompt_kwargs == {"task_desc_str": "Be brief."}
    gen.prompt_kwargs["task_desc_str"] = "Be kind."  # 0.1 code edits the preset in place
    gen({"input_str": "hi"})
    assert gen.model_client.requests[-1]["prompt"] == "Be kind. hi"
    gen.prompt_kwargs = {"task_desc_str": "Be short."}
    assert gen.get_prompt(input_str="x") == "Be short. x"


def test_react_fallback_tool_takes_01s_input_argument():
    client = ScriptedClient(responses=[
        act("llm_tool(input='capital of France')"),
        "Paris.",
        act("finish(answer='Paris')"),
    ])
    agent = ReActAgent(tools=[], model_client=client, add_llm_as_fallback=True)
    run = agent.run("What is the capital of France?")
    assert run.steps[0].observation == "Paris." and run.answer == "Paris"
    assert "llm_tool(input: str)" in client.requests[0]["prompt"]


def test_tool_output_input_is_the_called_function():
    def add(a: int, b: int = 0) -> int:
        return a + b

    result = ToolManager([add]).execute_func_expr(FunctionExpression(action="add(1, b=2)"))
    assert result.output == 3
    assert result.input.name == "add" and result.input.args == [1] and result.input.kwargs == {"b": 2}


def test_execute_func_expr_via_sandbox_returns_01s_nested_output():
    def add(a: int, b: int) -> int:
        return a + b

    result = ToolManager([add]).execute_func_expr_via_sandbox(FunctionExpression(action="add(2, 3)"))
    assert result.output.output == 5 and result.output.name == "add"


@pytest.mark.parametrize("text", ["garbage: [", "items: {a: 1"])
def test_yaml_parser_raises_on_broken_yaml_instead_of_guessing(text):
    with pytest.raises(ValueError, match="YAML"):
        YamlParser()(text)


def test_yaml_parser_keeps_prose_with_a_bracket_as_text():
    text = 'The list is ["x", "y"] and more text ["z"]'
    assert YamlParser()(text) == text
    assert YamlParser()('{"a":\t1}') == {"a": 1}  # a reply in JSON is still read


def test_get_logger_with_save_dir_writes_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    logger = get_logger(name="compat_app", save_dir=str(tmp_path / "logs_dir"), enable_console=False)
    logger.info("hello from 0.1 code")
    for handler in logger.handlers:
        handler.flush()
    assert "hello from 0.1 code" in (tmp_path / "logs_dir" / "compat_app.log").read_text()
    quiet = get_logger(name="compat_quiet", enable_console=False)
    quiet.info("nothing written")
    assert not (tmp_path / "logs").exists()
    for name in ("compat_app", "compat_quiet"):
        for handler in list(logging.getLogger(name).handlers):
            handler.close()
            logging.getLogger(name).removeHandler(handler)


def test_chat_history_lines_end_with_a_newline_as_in_01():
    conv = Conversation()
    conv.append_dialog_turn(DialogTurn(user_query=UserQuery("How are you?"),
                                       assistant_response=AssistantResponse("I'm fine.")))
    prompt = Generator(model_client=ScriptedClient(responses=[]),
                       template="{{chat_history_str}}User: {{input_str}}").get_prompt(
        chat_history_str=conv.get_chat_history_str(), input_str="Goodbye")
    assert prompt == "User: How are you?\nAssistant: I'm fine.\nUser: Goodbye"


def test_react_examples_reach_a_01_template_without_examples_str():
    template = ("<SYS>{% for tool in tools %}{{tool}}\n{% endfor %}"
                "{{output_format_str}}</SYS>\nUser query: {{input_str}}\nYou:")

    def search(query: str) -> str:
        """Look up a fact."""
        return "Paris"

    example = FunctionExpression.from_function(thought="Look it up.", func=search,
                                               query="capital of Spain")
    client = ScriptedClient(responses=[act("finish(answer='Paris')")])
    agent = ReActAgent(tools=[search], model_client=client, template=template,
                       examples=[example], add_llm_as_fallback=False)
    agent.run("What is the capital of France?")
    assert "capital of Spain" in client.requests[0]["prompt"]


def test_an_adalflow_template_keeps_its_system_and_user_roles():
    from lightrag.components.model_client import OpenAIClient
    from lightrag.core.types import ModelType

    prompt = ("<START_OF_SYSTEM_PROMPT>You count objects.<END_OF_SYSTEM_PROMPT>"
              "<START_OF_USER_PROMPT>I have two apples.<END_OF_USER_PROMPT>")
    api_kwargs = OpenAIClient(api_key="fake").convert_inputs_to_api_kwargs(
        input=prompt, model_kwargs={"model": "m"}, model_type=ModelType.LLM)
    assert api_kwargs["messages"] == [{"role": "system", "content": "You count objects."},
                                      {"role": "user", "content": "I have two apples."}]
