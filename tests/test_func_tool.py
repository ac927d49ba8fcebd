"""FunctionTool: definitions, schemas, sync/async execution and captured errors."""

import asyncio
import functools
import json
import typing

import pytest
import yaml

from lightrag.core.component import Component
from lightrag.core.func_tool import FunctionTool, get_fun_schema
from lightrag.core.types import Function, FunctionDefinition, FunctionOutput


def multiply(a: int, b: int = 2) -> int:
    """Multiply two numbers."""
    return a * b


async def async_add(a: int, b: int) -> int:
    """Add two numbers, asynchronously."""
    await asyncio.sleep(0)
    return a + b


def fails(x: str) -> str:
    raise RuntimeError(f"boom {x}")


async def async_fails() -> None:
    raise KeyError("missing")


def search(
    query: str,
    tags: list[str],
    filters: dict[str, int],
    top_k: int | None = None,
    mode: str = "fast",
    *args,
    **kwargs,
):
    return query


class Doubler(Component):
    """Double a number."""

    def call(self, x: int) -> int:
        return 2 * x


# -------------------------------------------------------------------- schemas
def test_get_fun_schema_types_defaults_and_required():
    schema = get_fun_schema("search", search)
    assert schema == {
        "type": "object",
        "properties": {
            "query": {"type": "str"},
            "tags": {"type": "List[str]"},
            "filters": {"type": "Dict[str, int]"},
            "top_k": {"type": "Optional[int]", "default": None},
            "mode": {"type": "str", "default": "fast"},
            "args": {"type": "Any"},  # *args and **kwargs are listed, required, as in 0.1
            "kwargs": {"type": "Any"},
        },
        "required": ["query", "tags", "filters", "args", "kwargs"],
    }


def test_typing_module_annotations_give_the_same_strings():
    def f(
        tags: typing.List[str],  # noqa: UP006 - the 0.1-era spelling
        top_k: typing.Optional[int] = None,  # noqa: UP045
    ) -> None: ...

    assert get_fun_schema("f", f)["properties"] == {
        "tags": {"type": "List[str]"},
        "top_k": {"type": "Optional[int]", "default": None},
    }


def test_get_fun_schema_unannotated_and_odd_defaults():
    def f(a, b=object, c=(1, 2)):
        return a

    schema = get_fun_schema("f", f)
    assert schema["properties"]["a"] == {"type": "Any"}
    assert schema["properties"]["b"]["default"] == repr(object)
    assert schema["properties"]["c"]["default"] == (1, 2)
    assert schema["required"] == ["a"]


def test_default_definition():
    tool = FunctionTool(multiply)
    definition = tool.definition
    assert isinstance(definition, FunctionDefinition)
    assert definition.func_name == "multiply"
    assert definition.func_desc == "multiply(a: int, b: int = 2) -> int\nMultiply two numbers."
    assert definition.func_parameters["required"] == ["a"]
    assert definition.func_parameters["properties"]["b"] == {"type": "int", "default": 2}


def test_definition_without_docstring_has_no_none():
    tool = FunctionTool(fails)
    assert tool.definition.func_desc == "fails(x: str) -> str"


def test_definition_strings_json_and_yaml():
    tool = FunctionTool(multiply)
    as_json = json.loads(tool.definition.fn_schema_str("json"))
    as_yaml = yaml.safe_load(tool.definition.fn_schema_str("yaml"))
    assert as_json["func_name"] == as_yaml["func_name"] == "multiply"
    assert as_json["func_parameters"] == as_yaml["func_parameters"]


def test_custom_definition_is_kept():
    definition = FunctionDefinition(func_name="times", func_desc="custom")
    tool = FunctionTool(multiply, definition=definition)
    assert tool.definition is definition
    assert tool.call(3).name == "times"


def test_partial_and_callable_objects():
    tool = FunctionTool(functools.partial(multiply, b=10))
    assert tool.definition.func_name == "multiply"
    assert tool.call(2).output == 20
    component_tool = FunctionTool(Doubler())
    assert component_tool.definition.func_name == "Doubler"
    assert component_tool.call(4).output == 8
    with pytest.raises(TypeError):
        FunctionTool(42)  # type: ignore[arg-type]


# ------------------------------------------------------------------ execution
def test_sync_call_output():
    out = FunctionTool(multiply).call(3, b=4)
    assert isinstance(out, FunctionOutput)
    assert out.output == 12
    assert out.error is None
    assert out.name == "multiply"
    assert out.input == Function(name="multiply", args=(3,), kwargs={"b": 4})  # a tuple, as 0.1


def test_exceptions_are_captured_not_raised():
    out = FunctionTool(fails).call("x")
    assert out.output is None
    assert "RuntimeError" in out.error and "boom x" in out.error
    bad_args = FunctionTool(multiply).call(1, 2, 3)
    assert "TypeError" in bad_args.error


def test_call_on_async_function_raises():
    tool = FunctionTool(async_add)
    assert tool.is_async
    with pytest.raises(ValueError, match="async"):
        tool.call(1, 2)


def test_execute_outside_event_loop():
    assert FunctionTool(multiply).execute(2).output == 4
    assert FunctionTool(async_add).execute(1, 2).output == 3
    assert FunctionTool(async_add)(1, b=5).output == 6
    assert "KeyError" in FunctionTool(async_fails)().error


async def test_acall_async_and_sync():
    assert (await FunctionTool(async_add).acall(2, 3)).output == 5
    assert (await FunctionTool(multiply).acall(2, 3)).output == 6
    assert (await FunctionTool(Doubler()).acall(5)).output == 10
    out = await FunctionTool(async_fails).acall()
    assert out.output is None and "missing" in out.error
    assert "boom" in (await FunctionTool(fails).acall("y")).error


async def test_execute_inside_event_loop_returns_awaitable():
    pending_async = FunctionTool(async_add).execute(1, 1)
    pending_sync = FunctionTool(multiply)(7)
    assert isinstance(pending_async, asyncio.Task)
    assert (await pending_async).output == 2
    assert (await pending_sync).output == 14


async def test_sync_tools_run_concurrently_in_threads():
    import time

    def slow(x: int) -> int:
        time.sleep(0.2)
        return x

    tool = FunctionTool(slow)
    start = time.perf_counter()
    outputs = await asyncio.gather(*(tool.acall(i) for i in range(5)))
    assert [o.output for o in outputs] == list(range(5))
    assert time.perf_counter() - start < 0.8


# ----------------------------------------------------------------------- repr
def test_repr_and_sub_component():
    assert repr(FunctionTool(multiply)) == "FunctionTool(fn=multiply, async=False)"
    assert repr(FunctionTool(async_add)) == "FunctionTool(fn=async_add, async=True)"
    tool = FunctionTool(Doubler())
    assert "(fn): Doubler()" in repr(tool)


def test_a_component_with_an_async_call_is_an_async_tool():
    from lightrag.core.component import Component

    class AsyncStep(Component):
        async def call(self, x: int) -> int:
            """Double x."""
            return 2 * x

    class SyncStep(Component):
        def call(self, x: int) -> int:
            """Double x."""
            return 2 * x

    assert FunctionTool(AsyncStep()).is_async and not FunctionTool(SyncStep()).is_async
    assert FunctionTool(SyncStep()).call(3).output == 6
