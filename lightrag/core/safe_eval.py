"""Evaluate function-call expressions written by an LLM, safely, without ``eval`` or ``exec``.

An agent's LLM answers with an action such as ``search("paris", top_k=2 * 3)``. This module
parses it with :mod:`ast` and walks the tree itself, allowing only a small, side-effect-free
subset of Python:

- constants, and list / tuple / dict / set literals;
- unary ``-`` / ``+`` and the arithmetic operators ``+ - * / // % **`` (with bounds, so
  ``9 ** 9 ** 9`` or ``"a" * 10 ** 9`` is refused instead of exhausting memory);
- names found in the context map (never a dunder name), and attribute access on those objects
  (never an attribute starting with ``_``);
- calls of functions reached that way, nested to any depth.

Anything else (lambdas, comprehensions, subscripts, f-strings, ``*``/``**`` unpacking, unknown
names, ...) raises :class:`UnsafeExpressionError`, a ``ValueError``, naming what was refused.

Example:
    >>> def add(a, b=0):
    ...     return a + b
    >>> parse_function_call_expr("add(add(1, 2), b=-3 * 2)", {"add": add})
    ('add', [3], {'b': -6})
"""

from __future__ import annotations

import ast
import logging
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

__all__ = [
    "MAX_INT_BITS",
    "MAX_POWER_EXPONENT",
    "MAX_SEQUENCE_LENGTH",
    "UnsafeExpressionError",
    "evaluate_ast_node",
    "parse_function_call_expr",
]

#: Largest exponent ``**`` accepts.
MAX_POWER_EXPONENT = 100
#: Longest string, bytes, list or tuple that ``*`` may build.
MAX_SEQUENCE_LENGTH = 1_000_000
#: Largest integer (in bits) an operator may produce.
MAX_INT_BITS = 100_000

_BINARY_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY_OPS: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_SEQUENCES = (str, bytes, list, tuple)


class UnsafeExpressionError(ValueError):
    """An expression that is malformed or uses something outside the allowed subset."""


_FENCE = re.compile(r"^```[\w+-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)
_QUOTES = ('"""', "'''", '"', "'", "`")


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _node_name(node: ast.AST) -> str:
    return type(node).__name__


def _check_name(name: str, kind: str) -> None:
    if name.startswith("__"):
        raise UnsafeExpressionError(f"Access to dunder {kind} {name!r} is not allowed")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, complex))


def _check_power(base: Any, exponent: Any) -> None:
    if not (_is_number(base) and _is_number(exponent)):
        return
    if isinstance(exponent, complex) or abs(exponent) > MAX_POWER_EXPONENT:
        raise UnsafeExpressionError(
            f"Exponent {exponent!r} is too large (at most {MAX_POWER_EXPONENT})"
        )
    both_int = isinstance(base, int) and isinstance(exponent, int)
    if both_int and exponent > 0 and base.bit_length() * exponent > MAX_INT_BITS:
        raise UnsafeExpressionError(f"Power result would exceed {MAX_INT_BITS} bits")


def _check_repeat(left: Any, right: Any) -> None:
    for seq, count in ((left, right), (right, left)):
        repeated = isinstance(seq, _SEQUENCES) and isinstance(count, int)
        if repeated and len(seq) * max(count, 0) > MAX_SEQUENCE_LENGTH:
            raise UnsafeExpressionError(
                f"Sequence repetition would exceed {MAX_SEQUENCE_LENGTH} elements"
            )


def _binary_op(node: ast.BinOp, context_map: Mapping[str, Any]) -> Any:
    op = _BINARY_OPS.get(type(node.op))
    if op is None:
        raise UnsafeExpressionError(f"Unsupported operator: {_node_name(node.op)}")
    left = evaluate_ast_node(node.left, context_map)
    right = evaluate_ast_node(node.right, context_map)
    if isinstance(node.op, ast.Pow):
        _check_power(left, right)
    elif isinstance(node.op, ast.Mult):
        _check_repeat(left, right)
    elif isinstance(node.op, ast.Mod) and isinstance(left, (str, bytes)):
        raise UnsafeExpressionError("String formatting with % is not allowed")
    try:
        result = op(left, right)
    except (ArithmeticError, TypeError) as e:
        raise UnsafeExpressionError(f"Cannot evaluate {_node_name(node.op)}: {e}") from e
    if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
        raise UnsafeExpressionError(f"Integer result exceeds {MAX_INT_BITS} bits")
    return result


def _resolve_attribute(node: ast.Attribute, context_map: Mapping[str, Any]) -> Any:
    chain: list[str] = []
    current: ast.AST = node
    while isinstance(current, ast.Attribute):
        chain.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        raise UnsafeExpressionError(
            f"Attribute access is only allowed on names from the context, not on "
            f"{_node_name(current)}"
        )
    value = _lookup_name(current.id, context_map)
    for attr in reversed(chain):
        if attr.startswith("_"):
            raise UnsafeExpressionError(
                f"Access to private or dunder attribute {attr!r} is not allowed"
            )
        try:
            value = getattr(value, attr)
        except AttributeError as e:
            raise UnsafeExpressionError(f"Unknown attribute {attr!r}: {e}") from e
    return value


def _lookup_name(name: str, context_map: Mapping[str, Any]) -> Any:
    _check_name(name, "name")
    if name not in context_map:
        raise UnsafeExpressionError(
            f"Unknown name {name!r}: only names from the context map are allowed"
        )
    return context_map[name]


def _call(node: ast.Call, context_map: Mapping[str, Any]) -> Any:
    if isinstance(node.func, ast.Name):
        func = _lookup_name(node.func.id, context_map)
    elif isinstance(node.func, ast.Attribute):
        func = _resolve_attribute(node.func, context_map)
    else:
        raise UnsafeExpressionError(f"Unsupported callee: {_node_name(node.func)}")
    if not callable(func):
        raise UnsafeExpressionError(f"{ast.unparse(node.func)!r} is not callable")
    args, kwargs = _call_arguments(node, context_map)
    return func(*args, **kwargs)


def _call_arguments(
    node: ast.Call, context_map: Mapping[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    args = [evaluate_ast_node(arg, context_map) for arg in node.args]
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise UnsafeExpressionError("Unsupported syntax: '**' keyword unpacking")
        kwargs[keyword.arg] = evaluate_ast_node(keyword.value, context_map)
    return args, kwargs


def evaluate_ast_node(node: ast.AST, context_map: Mapping[str, Any] | None = None) -> Any:
    """Evaluate one expression node of the allowed subset.

    Args:
        node: an :mod:`ast` expression node (``ast.parse(s, mode="eval").body``).
        context_map: the names the expression may use (functions, objects, values).

    Raises:
        UnsafeExpressionError: (a ``ValueError``) for any node, name, attribute or operation
            outside the allowed subset.

    Example:
        >>> import ast
        >>> evaluate_ast_node(ast.parse("[1, -2, x * 2]", mode="eval").body, {"x": 4})
        [1, -2, 8]
    """
    context_map = context_map or {}
    evaluate = _EVALUATORS.get(type(node))
    if evaluate is None:
        raise UnsafeExpressionError(f"Unsupported expression node: {_node_name(node)}")
    return evaluate(node, context_map)


def _dict(node: ast.Dict, context_map: Mapping[str, Any]) -> dict:
    if any(k is None for k in node.keys):
        raise UnsafeExpressionError("Unsupported syntax: '**' dict unpacking")
    return {
        evaluate_ast_node(k, context_map): evaluate_ast_node(v, context_map)
        for k, v in zip(node.keys, node.values)
        if k is not None
    }


def _unary_op(node: ast.UnaryOp, context_map: Mapping[str, Any]) -> Any:
    op = _UNARY_OPS.get(type(node.op))
    if op is None:
        raise UnsafeExpressionError(f"Unsupported unary operator: {_node_name(node.op)}")
    operand = evaluate_ast_node(node.operand, context_map)
    try:
        return op(operand)
    except TypeError as e:
        raise UnsafeExpressionError(f"Cannot evaluate {_node_name(node.op)}: {e}") from e


# One evaluator per allowed node type; any other node is refused.
_EVALUATORS: dict[type, Callable[[Any, Mapping[str, Any]], Any]] = {
    ast.Constant: lambda node, _: node.value,
    ast.List: lambda node, ctx: [evaluate_ast_node(e, ctx) for e in node.elts],
    ast.Tuple: lambda node, ctx: tuple(evaluate_ast_node(e, ctx) for e in node.elts),
    ast.Set: lambda node, ctx: {evaluate_ast_node(e, ctx) for e in node.elts},
    ast.Dict: _dict,
    ast.UnaryOp: _unary_op,
    ast.BinOp: lambda node, ctx: _binary_op(node, ctx),
    ast.Name: lambda node, ctx: _lookup_name(node.id, ctx),
    ast.Attribute: lambda node, ctx: _resolve_attribute(node, ctx),
    ast.Call: lambda node, ctx: _call(node, ctx),
}


def _clean_expression(expr: str) -> str:
    text = expr.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    for quote in _QUOTES:
        if len(text) >= 2 * len(quote) and text.startswith(quote) and text.endswith(quote):
            text = text[len(quote) : -len(quote)].strip()
            break
    return text


def _parse(text: str) -> ast.Expression:
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as first_error:
        missing = max(text.count("(") - text.count(")"), 0 if text.endswith(")") else 1)
        if missing:
            try:
                return ast.parse(text + ")" * missing, mode="eval")
            except SyntaxError:
                pass
        raise UnsafeExpressionError(
            f"Invalid function call expression {_short(text)!r}: {first_error.msg}"
        ) from None


def parse_function_call_expr(
    function_expr: str, context_map: Mapping[str, Any] | None = None
) -> tuple[str, list[Any], dict[str, Any]]:
    """Parse ``"fn(arg, key=value)"`` into ``(fn_name, args, kwargs)`` with evaluated arguments.

    The expression may be wrapped in a code fence or in quotes, and missing closing parentheses
    are added. Arguments are evaluated with :func:`evaluate_ast_node`, so nested calls of
    functions in ``context_map`` run. When ``context_map`` is given, the called function itself
    must be one of its names; without one only the syntax and the arguments are checked.

    Raises:
        UnsafeExpressionError: (a ``ValueError``) when the text is not a single call by plain
            name, or uses anything outside the allowed subset.

    Example:
        >>> parse_function_call_expr("```python\\nsearch('paris', top_k=2 * 3\\n```", {"search": len})
        ('search', ['paris'], {'top_k': 6})
    """
    if not isinstance(function_expr, str):
        raise UnsafeExpressionError(
            f"Expression must be a string, got {type(function_expr).__name__}"
        )
    text = _clean_expression(function_expr)
    try:
        tree = _parse(text)
        call = tree.body
        if not isinstance(call, ast.Call):
            raise UnsafeExpressionError(
                f"Not a function call: {_node_name(call)} in {_short(text)!r}"
            )
        if not isinstance(call.func, ast.Name):
            raise UnsafeExpressionError(
                f"The function must be called by a plain name, got {_node_name(call.func)}"
            )
        func_name = call.func.id
        _check_name(func_name, "function")
        if context_map is not None and func_name not in context_map:
            raise UnsafeExpressionError(f"Unknown function {func_name!r}")
        args, kwargs = _call_arguments(call, context_map or {})
    except (RecursionError, MemoryError) as e:
        raise UnsafeExpressionError(
            f"Expression is nested too deeply: {type(e).__name__}"
        ) from None
    log.debug("parsed %r into %s", _short(text), func_name)
    return func_name, args, kwargs


SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(__import__("builtins"), name)
    for name in (
        "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "int",
        "len", "list", "map", "max", "min", "range", "reversed", "round", "set", "sorted", "str",
        "sum", "tuple", "zip",
    )
}  # fmt: skip
"""Builtins a :func:`sandbox_exec` program may call (no ``getattr``/``type``/``object``)."""


def sandbox_exec(
    code: str, context: Mapping[str, Any] | None = None, timeout: float = 5
) -> dict[str, Any]:
    """Run assignments such as ``"output = add(1, 2)"`` with the safe expression evaluator.

    Unlike lightrag 0.1 (which ran ``exec`` on the text), only a sequence of plain assignments
    of allowed expressions (:func:`evaluate_ast_node`) runs; anything else is refused. Returns
    the assigned names plus ``"error"`` (None, or the exception) as 0.1 did.

    Example:
        >>> sandbox_exec("output = add(1, 2)", {"add": lambda a, b: a + b})["output"]
        3
    """
    import concurrent.futures

    names: dict[str, Any] = {**SAFE_BUILTINS, **(context or {})}
    result: dict[str, Any] = {"output": None, "error": None}

    def run() -> None:
        tree = ast.parse(code, mode="exec")
        for stmt in tree.body:
            if not (
                isinstance(stmt, ast.Assign)
                and all(isinstance(t, ast.Name) for t in stmt.targets)
            ):
                raise UnsafeExpressionError(
                    f"sandbox_exec runs only 'name = expression' lines, got {_node_name(stmt)}"
                )
            value = evaluate_ast_node(stmt.value, names)
            for target in stmt.targets:
                _check_name(target.id, "variable")  # type: ignore[attr-defined]
                names[target.id] = result[target.id] = value  # type: ignore[attr-defined]

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        pool.submit(run).result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        result["error"] = TimeoutError(f"Execution timed out after {timeout} s")
        raise result["error"] from None
    except Exception as e:  # errors are returned, as in 0.1
        result["error"] = e
    finally:
        pool.shutdown(wait=False)
    return result
