"""``FunctionTool``: a function (sync or async) wrapped as a Component an agent can call.

The tool describes itself to an LLM through a :class:`FunctionDefinition` (name, description and
a JSON-schema-like parameter list derived from the signature and docstring), and running it never
raises: the result or the error is returned as a :class:`FunctionOutput`.

Example:
    >>> def add(a: int, b: int = 0) -> int:
    ...     '''Add two numbers.'''
    ...     return a + b
    >>> tool = FunctionTool(add)
    >>> tool.definition.func_parameters["properties"]["b"]
    {'type': 'int', 'default': 0}
    >>> tool.call(1, b=2).output
    3
    >>> tool.call("1", 2).error
    'Error at calling add: TypeError: can only concatenate str (not "int") to str'
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
from collections.abc import Callable
from typing import Any, get_type_hints

from lightrag.core.component import Component
from lightrag.core.type_schema import get_type_schema
from lightrag.core.types import Function, FunctionDefinition, FunctionOutput

log = logging.getLogger(__name__)

__all__ = ["FunctionTool", "get_fun_schema"]

def _fn_name(fn: Callable[..., Any]) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", None) or type(fn).__name__


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    if isinstance(fn, Component):  # component(x) runs its call method, looked up at call time
        return inspect.iscoroutinefunction(getattr(fn, "call", None))
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)


def _json_default(value: Any) -> Any:
    """Keep defaults that JSON can hold; describe any other default by its ``repr``."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def get_fun_schema(name: str, func: Callable[..., Any]) -> dict[str, Any]:
    """The parameter schema of ``func``: ``{"type": "object", "properties": ..., "required": ...}``.

    Each property has a ``type`` string (``int``, ``List[str]``, ``Optional[int]``; ``Any`` when
    unannotated) and, for optional parameters, the ``default``. As in lightrag 0.1, ``*args``
    and ``**kwargs`` are listed like the others, required, with their annotated type (so the
    model learns that ``total(*prices: float)`` takes prices).

    Example:
        >>> from typing import List, Optional
        >>> def search(query: str, tags: List[str], top_k: Optional[int] = None): ...
        >>> get_fun_schema("search", search)["required"]
        ['query', 'tags']
        >>> get_fun_schema("search", search)["properties"]["top_k"]
        {'type': 'Optional[int]', 'default': None}
        >>> def total(*prices: float) -> float: ...
        >>> get_fun_schema("total", total)
        {'type': 'object', 'properties': {'prices': {'type': 'float'}}, 'required': ['prices']}
    """
    schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        log.debug("no signature for %s; its schema has no parameters", name)
        return schema
    try:
        hints = get_type_hints(func)
    except (NameError, TypeError, AttributeError):  # unresolvable: use the raw annotations
        hints = {}
    for param_name, param in signature.parameters.items():
        annotation = hints.get(param_name, param.annotation)
        type_str = "Any" if annotation is inspect.Parameter.empty else get_type_schema(annotation)
        prop: dict[str, Any] = {"type": type_str}
        if param.default is inspect.Parameter.empty:
            schema["required"].append(param_name)
        else:
            prop["default"] = _json_default(param.default)
        schema["properties"][param_name] = prop
    return schema


class FunctionTool(Component):
    """Wrap a sync or async function as a tool with a definition an LLM can read.

    Args:
        fn: the function, bound method, ``functools.partial`` or callable object to wrap.
        definition: how the tool is described; by default built from ``fn``'s name, signature,
            docstring and parameter schema (see :func:`get_fun_schema`).

    ``call`` runs a sync function, ``acall`` either kind (a sync one in a worker thread), and
    ``execute`` (also ``tool(...)``) picks for you. None of them raises when the function fails:
    the exception is recorded in ``FunctionOutput.error``.

    Example:
        >>> async def fetch(url: str) -> str:
        ...     return f"<html>{url}</html>"
        >>> tool = FunctionTool(fetch)
        >>> tool.is_async
        True
        >>> tool("a.com").output
        '<html>a.com</html>'
        >>> tool
        FunctionTool(fn=fetch, async=True)
    """

    def __init__(
        self, fn: Callable[..., Any], definition: FunctionDefinition | None = None
    ) -> None:
        super().__init__()
        if not callable(fn):
            raise TypeError(f"FunctionTool needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self._is_async = _is_async_callable(fn)
        self.definition = definition or self._create_fn_definition()

    @property
    def is_async(self) -> bool:
        """Whether the wrapped function is a coroutine function."""
        return self._is_async

    @property
    def fn_name(self) -> str:
        return self.definition.func_name

    def _create_fn_definition(self) -> FunctionDefinition:
        name = _fn_name(self.fn)
        try:
            signature = str(inspect.signature(self.fn))
        except (TypeError, ValueError):
            signature = "(...)"
        doc = inspect.getdoc(self.fn)
        if isinstance(self.fn, Component) and doc == inspect.getdoc(Component):
            doc = None
        description = f"{name}{signature}\n{doc}" if doc else f"{name}{signature}"
        return FunctionDefinition(
            func_name=name,
            func_desc=description,
            func_parameters=get_fun_schema(name, self.fn),
        )

    def _output(
        self, args: tuple, kwargs: dict[str, Any], output: Any = None, error: str | None = None
    ) -> FunctionOutput:
        name = self.definition.func_name
        return FunctionOutput(
            name=name,
            input=Function(name=name, args=args, kwargs=kwargs),  # as 0.1: args stay a tuple
            output=output,
            error=error,
        )

    def _error(self, e: BaseException) -> str:
        message = f"Error at calling {self.definition.func_name}: {type(e).__name__}: {e}"
        log.warning(message)
        return message

    def call(self, *args: Any, **kwargs: Any) -> FunctionOutput:
        """Run a sync function; exceptions it raises are returned in ``.error``.

        Raises:
            ValueError: when the wrapped function is async (use ``acall`` or ``execute``).
        """
        if self._is_async:
            raise ValueError(
                f"{self.definition.func_name} is an async function: use acall or execute"
            )
        try:
            return self._output(args, kwargs, output=self.fn(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - a failing tool is reported, not raised
            return self._output(args, kwargs, error=self._error(e))

    async def acall(self, *args: Any, **kwargs: Any) -> FunctionOutput:
        """Run the function from async code: awaited if async, else in a worker thread."""
        if not self._is_async:
            if isinstance(self.fn, Component):
                try:
                    output = await self.fn.acall(*args, **kwargs)
                except Exception as e:  # noqa: BLE001 - reported in the output  # noqa: BLE001 - a failing tool is reported, not raised
                    return self._output(args, kwargs, error=self._error(e))
                return self._output(args, kwargs, output=output)
            return await asyncio.to_thread(self.call, *args, **kwargs)
        try:
            return self._output(args, kwargs, output=await self.fn(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - a failing tool is reported, not raised
            return self._output(args, kwargs, error=self._error(e))

    def execute(self, *args: Any, **kwargs: Any) -> FunctionOutput | asyncio.Task[FunctionOutput]:
        """Run sync or async functions alike.

        Outside an event loop this returns the :class:`FunctionOutput`. Inside a running loop
        (where blocking would stall it) it returns an ``asyncio.Task`` to await, as lightrag 0.1
        does: ``output = await tool.execute(...)``.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self._is_async:
                return asyncio.run(self.acall(*args, **kwargs))
            return self.call(*args, **kwargs)
        return asyncio.ensure_future(self.acall(*args, **kwargs))

    def __call__(self, *args: Any, **kwargs: Any) -> FunctionOutput | asyncio.Task[FunctionOutput]:
        return self.execute(*args, **kwargs)

    def _extra_repr(self) -> str:
        return f"fn={_fn_name(self.fn)}, async={self._is_async}"


def is_running_in_event_loop() -> bool:
    """Whether the caller runs inside a running asyncio event loop."""
    try:
        return asyncio.get_running_loop().is_running()
    except RuntimeError:
        return False


def generate_readable_key_for_function(fn: Callable[..., Any]) -> str:
    """``"module.function"``, a stable key for a function."""
    return f"{fn.__module__}.{fn.__name__}"


def generate_function_call_expression_from_callable(
    func: Callable[..., Any], *args: Any, **kwargs: Any
) -> str:
    """The call expression text ``name(arg, key=value)`` for ``func`` and its arguments.

    Example:
        >>> def add(a, b=0): return a + b
        >>> generate_function_call_expression_from_callable(add, 1, b=2)
        'add(1, b=2)'
    """
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{func.__name__}({', '.join(parts)})"
