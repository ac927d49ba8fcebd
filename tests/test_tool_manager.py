"""ToolManager: definitions, parsing, sync/async execution, and errors returned as data."""

import asyncio
import json
import os

import pytest
import yaml

from lightrag.core.func_tool import FunctionTool
from lightrag.core.tool_manager import ToolManager
from lightrag.core.types import Function, FunctionExpression, FunctionOutput


def add(a: int, b: int = 0) -> int:
    """Add two numbers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


async def async_square(x: int) -> int:
    """Square a number, asynchronously."""
    await asyncio.sleep(0)
    return x * x


def divide(a: float, b: float) -> float:
    return a / b


class Account:
    def __init__(self, balance: int) -> None:
        self.balance = balance


@pytest.fixture
def manager():
    return ToolManager(
        tools=[add, FunctionTool(multiply), async_square, divide],
        additional_context={"account": Account(100), "bonus": 5},
    )


# ---------------------------------------------------------------- definitions
def test_tools_are_wrapped_and_listed(manager):
    assert [t.definition.func_name for t in manager.tools] == [
        "add",
        "multiply",
        "async_square",
        "divide",
    ]
    assert all(isinstance(t, FunctionTool) for t in manager.tools)
    assert set(manager.context) >= {"add", "multiply", "account", "bonus"}


def test_definitions(manager):
    assert [d.func_name for d in manager.function_definitions][:2] == ["add", "multiply"]
    assert json.loads(manager.json_definitions[0])["func_name"] == "add"
    assert yaml.safe_load(manager.yaml_definitions[1])["func_name"] == "multiply"


def test_printed_tree(manager):
    text = repr(manager)
    assert text.startswith("ToolManager(\n  additional_context=['account', 'bonus']")
    assert "(add): FunctionTool(fn=add, async=False)" in text
    assert "(async_square): FunctionTool(fn=async_square, async=True)" in text
    assert [name for name, _ in manager.named_children()] == [
        "add",
        "multiply",
        "async_square",
        "divide",
    ]


def test_tool_names_that_clash_with_attributes():
    def call(x: int) -> int:
        return x

    def tools(x: int) -> int:
        return -x

    manager = ToolManager([call, tools])
    assert manager("call(3)").output == 3
    assert manager("tools(3)").output == -3
    assert len(manager.tools) == 2


def test_replacing_a_tool_with_the_same_name():
    manager = ToolManager([add])

    def subtract(a: int, b: int = 0) -> int:
        return a - b

    subtract.__name__ = "add"
    manager.add_tool(subtract)
    assert len(manager.tools) == 1
    assert manager("add(5, 2)").output == 3


# ------------------------------------------------------------------- parsing
def test_parse_func_expr(manager):
    func = manager.parse_func_expr(FunctionExpression(thought="t", action="add(1, b=bonus)"))
    assert func == Function(thought="t", name="add", args=[1], kwargs={"b": 5})
    assert manager.parse_func_expr("multiply(account.balance, 2)").args == [100, 2]


def test_parse_nested_calls_use_plain_values(manager):
    func = manager.parse_func_expr("add(multiply(2, 3), b=async_square(3))")
    assert func.args == [6] and func.kwargs == {"b": 9}


def test_parse_errors_raise_value_error(manager):
    with pytest.raises(ValueError, match="Unknown function 'remove'"):
        manager.parse_func_expr("remove(1)")
    with pytest.raises(ValueError, match="division by zero"):
        manager.parse_func_expr("add(divide(1, 0))")
    with pytest.raises(ValueError):
        manager.parse_func_expr("add(__import__('os'))")


# ----------------------------------------------------------------- execution
def test_execute_func(manager):
    out = manager.execute_func(Function(name="multiply", args=[3], kwargs={"b": 4}))
    assert isinstance(out, FunctionOutput)
    assert out.output == 12 and out.error is None
    assert out.input == Function(name="multiply", args=[3], kwargs={"b": 4})


def test_execute_async_tool_from_sync_code(manager):
    assert manager.execute_func(Function(name="async_square", args=[4])).output == 16
    assert manager.execute_func_expr("async_square(5)").output == 25


def test_execute_func_expr(manager):
    expr = FunctionExpression(thought="sum", action="add(add(1, 2), b=bonus * 2)")
    out = manager.execute_func_expr(expr)
    assert out.output == 13
    assert out.input == out.parsed_input == Function(thought="sum", name="add", args=[3], kwargs={"b": 10})
    assert out.input.args == [3]  # 0.1 code reads the call's arguments there
    via_eval = manager.execute_func_expr_via_eval("add(1, 1)")  # 0.1: the tool output, wrapped
    assert via_eval.name == "add(1, 1)" and via_eval.output.output == 2
    with pytest.raises(ValueError, match="ZeroDivisionError"):
        manager.execute_func_expr_via_eval("divide(1, 0)")
    sandboxed = manager.execute_func_expr_via_sandbox("add(2, 2)")  # 0.1: wrapped as via_eval
    assert sandboxed.name == "add(2, 2)" and sandboxed.output.output == 4 and sandboxed.error is None
    failed = manager.execute_func_expr_via_sandbox("divide(1, 0)")
    assert failed.error is None and "ZeroDivisionError" in failed.output.error
    unknown = manager.execute_func_expr_via_sandbox("remove(1)")
    assert unknown.output is None and "Unknown function" in unknown.error


def test_unknown_tool_is_an_error_output_not_a_crash(manager):
    out = manager.execute_func(Function(name="remove", args=[1]))
    assert out.output is None
    assert "Unknown tool 'remove'" in out.error and "add" in out.error
    expr_out = manager.execute_func_expr("remove(1)")
    assert expr_out.name == "remove" and "Unknown function" in expr_out.error
    context_out = manager.execute_func(Function(name="account"))
    assert "Unknown tool 'account'" in context_out.error


def test_errors_are_returned(manager, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "ZeroDivisionError" in manager("divide(1, 0)").error
    assert "division by zero" in manager("add(divide(1, 0))").error
    assert manager("add(1, 2").output == 3
    for attack in [
        "add(__import__('os').system('touch pwned'))",
        "__import__('os').system('touch pwned')",
        "add(open('pwned', 'w'))",
        "add(account.__class__)",
        "add((lambda: 1)())",
        "add(10 ** 1000)",
        "not a call at all",
    ]:
        out = manager(attack)
        assert out.output is None and out.error, attack
    assert not os.listdir(tmp_path)
    bad_args = manager.execute_func(Function(name="add", args=None, kwargs={"zzz": 1}))
    assert "TypeError" in bad_args.error


def test_call_dispatch(manager):
    assert manager(Function(name="add", args=[1, 2])).output == 3
    assert manager(FunctionExpression(action="add(1, 2)")).output == 3
    assert manager("add(1, 2)").output == 3
    assert manager.call("add(1, 2)", step="parse") == Function(name="add", args=[1, 2])
    with pytest.raises(ValueError):
        manager.call(42)  # type: ignore[arg-type]


def test_sandbox_timeout():
    import time

    def slow() -> str:
        time.sleep(0.5)
        return "done"

    out = ToolManager([slow]).execute_func_expr_via_sandbox("slow()", timeout=0.05)
    assert out.output is None and "Timed out" in out.error


# --------------------------------------------------------------------- async
async def test_async_execution(manager):
    out = await manager.execute_func_async(Function(name="async_square", args=[6]))
    assert out.output == 36
    assert (await manager.execute_func_async(Function(name="add", args=[1, 1]))).output == 2
    assert (await manager.execute_func_expr_async("add(async_square(2), b=1)")).output == 5
    assert "Unknown tool" in (await manager.execute_func_async(Function(name="nope"))).error
    assert "Unknown function" in (await manager.execute_func_expr_async("nope()")).error
    assert (await manager.acall("multiply(2, 21)")).output == 42
    assert (await manager.acall(Function(name="async_square", args=[3]))).output == 9
    assert (await manager.acall("add(1)", step="parse")).name == "add"


async def test_sync_execute_inside_running_loop(manager):
    assert manager.execute_func(Function(name="async_square", args=[7])).output == 49
