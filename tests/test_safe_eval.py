"""The safe evaluator accepts the allowed subset and refuses everything else with ValueError."""

import ast
import os

import pytest

from lightrag.core.safe_eval import (
    UnsafeExpressionError,
    evaluate_ast_node,
    parse_function_call_expr,
)


def add(a, b=0):
    return a + b


def mul(a, b):
    return a * b


class Box:
    def __init__(self, value):
        self.value = value
        self._secret = "hidden"

    def double(self):
        return self.value * 2


CONTEXT = {"add": add, "mul": mul, "box": Box(21), "n": 5}


def ev(text, context=None):
    return evaluate_ast_node(ast.parse(text, mode="eval").body, context or CONTEXT)


# ---------------------------------------------------------------- allowed subset
@pytest.mark.parametrize(
    "text, expected",
    [
        ("1", 1),
        ("'a'", "a"),
        ("None", None),
        ("True", True),
        ("-3", -3),
        ("+3", 3),
        ("[1, 2, [3]]", [1, 2, [3]]),
        ("(1, 'x')", (1, "x")),
        ("{'a': 1, 'b': [2]}", {"a": 1, "b": [2]}),
        ("{1, 2, 2}", {1, 2}),
        ("1 + 2 * 3 - 4", 3),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("2 ** 10", 1024),
        ("2.0 ** -1", 0.5),
        ("'ab' * 3", "ababab"),
        ("[0] * 3", [0, 0, 0]),
        ("n * 2", 10),
        ("box.value", 21),
        ("box.double()", 42),
        ("add(1, b=mul(2, 3))", 7),
    ],
)
def test_allowed_expressions(text, expected):
    assert ev(text) == expected


def test_bounded_powers_are_allowed():
    assert ev("(10 ** 100) ** 100") == 10**10000
    assert ev("-2 ** 100") == -(2**100)


def test_parse_returns_name_args_kwargs_with_nested_calls():
    name, args, kwargs = parse_function_call_expr(
        "add(add(1, 2), b=[mul(n, 2), {'k': -1}])", CONTEXT
    )
    assert name == "add"
    assert args == [3]
    assert kwargs == {"b": [10, {"k": -1}]}


def test_parse_without_context_checks_syntax_only():
    assert parse_function_call_expr("search('q', top_k=3)") == ("search", ["q"], {"top_k": 3})
    with pytest.raises(ValueError, match="Unknown name 'x'"):
        parse_function_call_expr("search(x)")


@pytest.mark.parametrize(
    "text",
    [
        "add(1, 2",
        "add(1, mul(1, 2)",
        "add(1, 2)",
        "  add(1, 2)  ",
        "```python\nadd(1, 2)\n```",
        "```\nadd(1, 2)\n```",
        "`add(1, 2)`",
        '"add(1, 2)"',
        "'add(1, 2)'",
    ],
)
def test_wrappers_and_missing_parenthesis(text):
    name, args, _ = parse_function_call_expr(text, CONTEXT)
    assert name == "add"
    assert args[0] == 1


# ------------------------------------------------------------------- attacks
ATTACKS = [
    "add(__import__('os').system('echo pwned'))",
    "__import__('os').system('echo pwned')",
    "__import__('os')",
    "add(().__class__.__bases__)",
    "add(().__class__.__bases__[0].__subclasses__())",
    "add(box.__class__)",
    "add(box.__dict__)",
    "add(box._secret)",
    "add(add.__globals__)",
    "add(add.__code__)",
    "add(box.double.__globals__)",
    "add(open('/etc/passwd'))",
    "open('/etc/passwd')",
    "add(eval('1'))",
    "add(exec('x=1'))",
    "add(getattr(box, '_secret'))",
    "add(__builtins__)",
    "add(lambda: 1)",
    "add([x for x in range(3)])",
    "add({x: 1 for x in 'ab'})",
    "add({x for x in 'ab'})",
    "add(list(x for x in 'ab'))",
    "add(9 ** 9 ** 9)",
    "add(10 ** 101)",
    "add(((10 ** 100) ** 100) ** 100)",
    "add('a' * 10 ** 9)",
    "add([1] * 10 ** 8)",
    "add('%999999999s' % 'a')",
    "add([1, 2][0])",
    "add(f'{n}')",
    "add(1 if n else 2)",
    "add(n == 5)",
    "add(n and 1)",
    "add(not n)",
    "add(~n)",
    "add(1 << 10000000)",
    "add(*[1, 2])",
    "add(**{'a': 1})",
    "add({**{'a': 1}})",
    "add((y := 1))",
    "add(n)(1)",
    "box.double()",
    "x = 1",
    "import os",
    "add(1); add(2)",
    "1 + 1",
    "add(" + "[" * 500 + "]" * 500 + ")",
    "add(" + "-" * 100_000 + "1)",
]


@pytest.mark.parametrize("text", ATTACKS)
def test_attacks_are_rejected(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):
        parse_function_call_expr(text, CONTEXT)
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("add(lambda: 1)", "Lambda"),
        ("add([x for x in y])", "ListComp"),
        ("add([1][0])", "Subscript"),
        ("add(open('/etc/passwd'))", "'open'"),
        ("add(box.__class__)", "__class__"),
        ("add(().__class__)", "Tuple"),
        ("add(2 ** 1000)", "Exponent"),
        ("add(*a)", "Starred"),
    ],
)
def test_errors_name_the_refused_node(text, fragment):
    with pytest.raises(UnsafeExpressionError) as info:
        parse_function_call_expr(text, CONTEXT)
    assert fragment in str(info.value)


def test_unknown_top_level_function_with_context():
    with pytest.raises(ValueError, match="Unknown function 'remove'"):
        parse_function_call_expr("remove(1)", CONTEXT)


def test_arithmetic_errors_become_value_errors():
    with pytest.raises(ValueError, match="division by zero"):
        parse_function_call_expr("add(1 / 0)", CONTEXT)
    with pytest.raises(ValueError):
        parse_function_call_expr("add(1e308 ** 100)", CONTEXT)


def test_non_string_and_invalid_syntax():
    with pytest.raises(ValueError):
        parse_function_call_expr(123, CONTEXT)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Invalid function call"):
        parse_function_call_expr("add(1,,2)", CONTEXT)


def test_context_functions_are_the_only_callables():
    calls = []
    context = {"record": lambda x: calls.append(x) or x}
    assert parse_function_call_expr("record(record(1))", context) == ("record", [1], {})
    assert calls == [1]
    with pytest.raises(ValueError):
        parse_function_call_expr("record(print(1))", context)
    with pytest.raises(ValueError, match="GeneratorExp"):
        parse_function_call_expr("record(list(x for x in 'ab'))", {**context, "list": list})
