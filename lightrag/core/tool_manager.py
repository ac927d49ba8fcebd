"""``ToolManager``: the tools an agent may call, their definitions, and safe execution.

The manager turns an LLM's action (a :class:`FunctionExpression` such as ``"add(1, b=2)"``, or
an already parsed :class:`Function`) into a tool call. Expressions are evaluated with
:mod:`lightrag.core.safe_eval`, never with ``eval``: arguments may be literals, arithmetic, names
from ``additional_context`` and nested tool calls, and nothing else. Whatever goes wrong (an
unknown tool, a bad expression, a tool that raises) comes back as ``FunctionOutput.error``.

Example:
    >>> def add(a: int, b: int = 0) -> int:
    ...     return a + b
    >>> manager = ToolManager([add], additional_context={"ten": 10})
    >>> manager("add(add(1, 2), b=ten)").output
    13
    >>> manager("remove(1)").error
    "Error parsing 'remove(1)': Unknown function 'remove'"
    >>> manager
    ToolManager(
      additional_context=['ten']
      (add): FunctionTool(fn=add, async=False)
    )
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Literal

from lightrag.core.component import Component
from lightrag.core.func_tool import FunctionTool
from lightrag.core.safe_eval import parse_function_call_expr
from lightrag.core.types import Function, FunctionDefinition, FunctionExpression, FunctionOutput

log = logging.getLogger(__name__)

__all__ = ["ToolManager"]

ToolType = FunctionTool | Callable[..., Any]
ExprType = FunctionExpression | str
_NAME_PREFIX = re.compile(r"^\s*(?:`{3}\w*\s*)?[\"'`]*\s*([A-Za-z_]\w*)\s*\(")


def run_async_in_new_loop(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion in a new event loop (0.1's helper; not inside a running loop)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def _run_blocking(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from sync code, inside a running event loop or not."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


_OUTPUT_ASSIGNMENT = re.compile(r"^\s*output\s*=(?!=)\s*")


def _as_expression(expr: ExprType) -> FunctionExpression:
    if isinstance(expr, FunctionExpression):
        return expr
    if isinstance(expr, str):
        return FunctionExpression(action=expr)
    raise ValueError(f"Expected a FunctionExpression or str, got {type(expr).__name__}")


class ToolManager(Component):
    """Hold tools, describe them to an LLM and run the calls it asks for.

    Args:
        tools: functions (sync or async) or :class:`FunctionTool` objects. Functions are
            wrapped; tools are kept as given (not copied). Each one is registered as a
            sub-component under its function name, so printing the manager shows them.
        additional_context: extra names (values, objects, helper functions) that expressions
            may use as arguments, e.g. ``{"docs": retriever_output}``.

    Example:
        >>> from lightrag.core.types import Function
        >>> manager = ToolManager([str.upper])
        >>> manager.execute_func(Function(name="upper", args=["hi"])).output
        'HI'
        >>> manager.execute_func(Function(name="lower", args=["HI"])).error
        "Unknown tool 'lower'; available tools: ['upper']"
    """

    def __init__(
        self,
        tools: Sequence[ToolType] | None = None,
        additional_context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.tools: list[FunctionTool] = []
        self._additional_context: dict[str, Any] = dict(additional_context or {})
        self._tool_keys: dict[str, str] = {}
        self.context: dict[str, Any] = dict(self._additional_context)
        for tool in tools or []:
            self.add_tool(tool)

    def _after_from_dict(self) -> None:
        """One object per tool again: the list, the child and the context entry were saved
        (and rebuilt) as three copies."""
        self.tools = [getattr(self, key) for key in self._tool_keys.values()]
        self.context = {**self._additional_context,
                        **{name: getattr(self, key) for name, key in self._tool_keys.items()}}

    # ------------------------------------------------------------------ tools
    def add_tool(self, tool: ToolType) -> FunctionTool:
        """Add a function or tool (replacing one with the same name); returns the tool."""
        if not isinstance(tool, FunctionTool):
            tool = FunctionTool(tool)
        name = tool.definition.func_name
        old_key = self._tool_keys.pop(name, None)
        if old_key is not None:
            log.warning("ToolManager: tool %r replaced", name)
            self.tools = [t for t in self.tools if t.definition.func_name != name]
            delattr(self, old_key)
        if name in self._additional_context:
            log.warning("ToolManager: tool %r shadows the additional context entry", name)
        key = self._child_key(name)
        self.register_component(key, tool)
        self._tool_keys[name] = key
        self.tools.append(tool)
        self.context[name] = tool
        return tool

    def _child_key(self, name: str) -> str:
        key = name.replace(".", "_") or "tool"
        while hasattr(self, key) and key not in self._components:
            key = f"tool_{key}"
        return key

    def get_tool(self, name: str) -> FunctionTool | None:
        """The tool named ``name``, or None."""
        key = self._tool_keys.get(name)
        return None if key is None else self._components.get(key)  # type: ignore[return-value]

    @property
    def yaml_definitions(self) -> list[str]:
        """Each tool's definition as a YAML string."""
        return [tool.definition.fn_schema_str("yaml") for tool in self.tools]

    @property
    def json_definitions(self) -> list[str]:
        """Each tool's definition as a JSON string."""
        return [tool.definition.fn_schema_str("json") for tool in self.tools]

    @property
    def function_definitions(self) -> list[FunctionDefinition]:
        """Each tool's :class:`FunctionDefinition`."""
        return [tool.definition for tool in self.tools]

    # ---------------------------------------------------------------- parsing
    def _nested_callable(self, tool: FunctionTool) -> Callable[..., Any]:
        """What a nested call of ``tool`` inside an expression runs: its plain return value."""
        if tool.is_async:
            return lambda *args, **kwargs: _run_blocking(tool.fn(*args, **kwargs))
        return tool.fn

    def _parse_context(self) -> dict[str, Any]:
        context = dict(self._additional_context)
        context.update(
            {tool.definition.func_name: self._nested_callable(tool) for tool in self.tools}
        )
        return context

    def parse_func_expr(self, expr: ExprType) -> Function:
        """Parse an expression such as ``"add(1, b=mul(2, 3))"`` into a :class:`Function`.

        Arguments are evaluated safely; nested tool calls run and give their return values.

        Raises:
            ValueError: for an unknown function, a malformed expression, anything outside the
                safe subset, or a nested call that failed.
        """
        expression = _as_expression(expr)
        try:
            name, args, kwargs = parse_function_call_expr(expression.action, self._parse_context())
        except ValueError:
            raise
        except Exception as e:
            raise ValueError(f"Error evaluating the arguments: {type(e).__name__}: {e}") from e
        return Function(thought=expression.thought, name=name, args=args, kwargs=kwargs)

    # -------------------------------------------------------------- execution
    def _unknown_tool(self, func: Function) -> FunctionOutput:
        available = [tool.definition.func_name for tool in self.tools]
        error = f"Unknown tool {func.name!r}; available tools: {available}"
        log.warning(error)
        return FunctionOutput(name=func.name, input=func, error=error)

    def _failed(self, name: str | None, input: Any, error: str) -> FunctionOutput:
        log.warning(error)
        return FunctionOutput(name=name, input=input, error=error)

    def execute_func(self, func: Function) -> FunctionOutput:
        """Run a parsed :class:`Function`; never raises.

        An async tool runs to completion (in a helper thread when an event loop is running in
        this one, which it blocks meanwhile: from async code prefer :meth:`execute_func_async`).
        """
        tool = self.get_tool(func.name)
        if tool is None:
            return self._unknown_tool(func)
        try:
            args, kwargs = list(func.args or []), dict(func.kwargs or {})
            if tool.is_async:
                output = _run_blocking(tool.acall(*args, **kwargs))
            else:
                output = tool.call(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - errors are returned as data
            return self._failed(func.name, func, f"Error executing {func.name!r}: {e}")
        output.input = func
        return output

    async def execute_func_async(self, func: Function) -> FunctionOutput:
        """Async :meth:`execute_func`: an async tool is awaited, a sync one runs in a thread."""
        tool = self.get_tool(func.name)
        if tool is None:
            return self._unknown_tool(func)
        try:
            output = await tool.acall(*list(func.args or []), **dict(func.kwargs or {}))
        except Exception as e:  # noqa: BLE001 - errors are returned as data
            return self._failed(func.name, func, f"Error executing {func.name!r}: {e}")
        output.input = func
        return output

    def _parse_failed(self, expression: FunctionExpression, e: Exception) -> FunctionOutput:
        match = _NAME_PREFIX.match(expression.action or "")
        name = match.group(1) if match else None
        return self._failed(name, expression, f"Error parsing {expression.action!r}: {e}")

    def execute_func_expr(self, expr: ExprType) -> FunctionOutput:
        """Parse and run an expression; parse errors come back in ``.error`` too."""
        expression = _as_expression(expr)
        try:
            func = self.parse_func_expr(expression)
        except Exception as e:  # noqa: BLE001 - errors are returned as data
            return self._parse_failed(expression, e)
        output = self.execute_func(func)
        output.input = output.parsed_input = func  # 0.1: the tool's output names the Function
        return output

    async def execute_func_expr_async(self, expr: ExprType) -> FunctionOutput:
        """Async :meth:`execute_func_expr` (parsing, with any nested calls, runs in a thread)."""
        expression = _as_expression(expr)
        try:
            func = await asyncio.to_thread(self.parse_func_expr, expression)
        except Exception as e:  # noqa: BLE001 - errors are returned as data
            return self._parse_failed(expression, e)
        output = await self.execute_func_async(func)
        output.input = output.parsed_input = func
        return output

    def execute_func_expr_via_eval(self, expr: ExprType) -> FunctionOutput:
        """0.1's result shape, without ``eval``: the tool's own :class:`FunctionOutput` wrapped
        in ``FunctionOutput(name=<expression>, input=<FunctionExpression>, output=...)``, so
        ``result.output.output`` is the value, as in 0.1.

        Raises:
            ValueError: when the expression cannot be parsed or the tool fails (as 0.1 did).
        """
        expression = _as_expression(expr)
        inner = self.execute_func_expr(expression)
        if inner.error is not None:
            raise ValueError(f"Error {inner.error} executing function expression: {expression}")
        return FunctionOutput(name=expression.action, input=expression, output=inner)

    def execute_func_expr_via_sandbox(self, expr: ExprType, timeout: float = 5) -> FunctionOutput:
        """:meth:`execute_func_expr` in a worker thread, giving up after ``timeout`` seconds, in
        0.1's result shape: ``FunctionOutput(name=<expression>, input=<FunctionExpression>,
        output=<the tool's FunctionOutput>)``, so ``result.output.output`` is the value and
        ``result.output.error`` what the tool raised. An expression that cannot be parsed, or a
        call that times out, gives ``result.error`` and no output. A timed-out call cannot be
        killed: it finishes in the background, its result discarded.
        """
        expression = _as_expression(expr)
        # 0.1 ran the text as the program "output = <action>", and so accepted an action that
        # already assigns it ("output = add(1, 2)"); the call is what follows the "output ="
        action = _OUTPUT_ASSIGNMENT.sub("", expression.action, count=1)
        call = expression if action == expression.action else FunctionExpression(
            thought=expression.thought, action=action
        )
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        try:
            inner = pool.submit(self.execute_func_expr, call).result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            return self._failed(
                expression.action, expression, f"Timed out after {timeout}s: {expression.action!r}"
            )
        finally:
            pool.shutdown(wait=False)
        if inner.parsed_input is None:  # not a call of a known tool: nothing ran
            return FunctionOutput(name=expression.action, input=expression, error=inner.error)
        return FunctionOutput(name=expression.action, input=expression, output=inner)

    # ----------------------------------------------------------------- calling
    def call(
        self,
        expr_or_fun: FunctionExpression | Function | str,
        step: Literal["parse", "execute"] = "execute",
    ) -> FunctionOutput | Function:
        """Run a :class:`Function`, :class:`FunctionExpression` or expression string.

        With ``step="parse"`` only parse it and return the :class:`Function`.
        """
        if isinstance(expr_or_fun, Function):
            return expr_or_fun if step == "parse" else self.execute_func(expr_or_fun)
        if isinstance(expr_or_fun, (FunctionExpression, str)):
            if step == "parse":
                return self.parse_func_expr(expr_or_fun)
            return self.execute_func_expr(expr_or_fun)
        raise ValueError(
            "expr_or_fun should be a Function, FunctionExpression or str, "
            f"got {type(expr_or_fun).__name__}"
        )

    async def acall(
        self,
        expr_or_fun: FunctionExpression | Function | str,
        step: Literal["parse", "execute"] = "execute",
    ) -> FunctionOutput | Function:
        """Async :meth:`call`."""
        if step == "parse":
            return await asyncio.to_thread(self.call, expr_or_fun, "parse")
        if isinstance(expr_or_fun, Function):
            return await self.execute_func_async(expr_or_fun)
        if isinstance(expr_or_fun, (FunctionExpression, str)):
            return await self.execute_func_expr_async(expr_or_fun)
        raise ValueError(
            "expr_or_fun should be a Function, FunctionExpression or str, "
            f"got {type(expr_or_fun).__name__}"
        )

    def _extra_repr(self) -> str:
        if not self._additional_context:
            return ""
        return f"additional_context={list(self._additional_context)}"
