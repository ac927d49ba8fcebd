"""The one Jinja2 sandbox every template of the library renders in.

Templates come from configs, prompt files and users, so they are untrusted input: a template may
read the variables it is given and nothing else. :func:`get_template_sandbox` returns the shared
environment, a :class:`jinja2.sandbox.ImmutableSandboxedEnvironment` made stricter:

* no attribute or item starting with ``_`` (``__class__``, ``__globals__``, ``__subclasses__``),
  no mutation of lists and dicts, no ``str.format``/``format_map`` (format-string attribute
  tricks); only ``range``, ``dict`` and ``namespace`` as globals (no ``cycler``, ``joiner``,
  ``lipsum``);
* bounded work: at most :data:`MAX_LOOP_ITERATIONS` loop iterations per render (no recursive
  loops), strings and lists built by ``~``, ``+``, ``*``, ``%``, ``replace`` and any filter at
  most :data:`MAX_STRING_LENGTH` long, numeric widths
  (``center``, ``indent``, ``zfill``, ``%09999d``) at most :data:`MAX_WIDTH`, exponents at most
  :data:`MAX_EXPONENT`, integers at most :data:`MAX_INT_BITS` bits, and the rendered text at
  most :data:`MAX_OUTPUT_CHARS`;
  lists at most :data:`MAX_LIST_ITEMS` items; filters that walk their input (``sort``, ``join``,
  ``unique``, ...) and ``indent``/``join``/``expandtabs``/``split`` checked *before* they run;
* a budget per render (:class:`BudgetedTemplate`): macros nested at most :data:`MAX_MACRO_DEPTH`
  deep, at most :data:`MAX_CALLS` calls, at most :data:`MAX_BUILT` characters built in all (list
  items count 8), and at most :data:`MAX_RENDER_SECONDS` of wall-clock time (checked at every
  loop step, call, attribute access and output piece; no single step can run long because of the
  size bounds).

Whatever the sandbox blocks raises :class:`UnsafeTemplateError` (a ``ValueError``) saying what was
refused.

Example:
    >>> compile_template("Hi {{ name }}!").render(name="Ada")
    'Hi Ada!'
    >>> try:
    ...     compile_template("{{ ''.__class__.__mro__ }}").render()
    ... except UnsafeTemplateError as e:
    ...     print(str(e).split(":")[0])
    template blocked by the sandbox
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, Tuple

import jinja2
import jinja2.meta
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from lightrag.utils.template_limits import (  # noqa: F401 - the limits are part of this API
    _BLOCKED_METHODS,
    _BUDGET,
    _LOOP_GUARD,
    _SAFE_GLOBALS,
    _WIDTH_FILTERS,
    MAX_BUILT,
    MAX_CALLS,
    MAX_EXPONENT,
    MAX_INT_BITS,
    MAX_LIST_ITEMS,
    MAX_LOOP_ITERATIONS,
    MAX_MACRO_DEPTH,
    MAX_OUTPUT_CHARS,
    MAX_RENDER_SECONDS,
    MAX_STRING_LENGTH,
    MAX_WIDTH,
    _bits,
    _Budget,
    _charge,
    _check_built,
    _check_filter_input,
    _check_method,
    _check_printf,
    _check_replace,
    _check_width,
    _limit,
    _size,
    _tick,
)

__all__ = [
    "MAX_EXPONENT",
    "MAX_BUILT",
    "MAX_CALLS",
    "MAX_INT_BITS",
    "MAX_LIST_ITEMS",
    "MAX_LOOP_ITERATIONS",
    "MAX_MACRO_DEPTH",
    "MAX_OUTPUT_CHARS",
    "MAX_RENDER_SECONDS",
    "MAX_STRING_LENGTH",
    "MAX_WIDTH",
    "CompiledTemplate",
    "TemplateSandbox",
    "UnsafeTemplateError",
    "compile_template",
    "get_template_sandbox",
]

class UnsafeTemplateError(ValueError):
    """A template tried something the sandbox forbids (private attributes, ``str.format``,
    unbounded work); the message says what."""


def _blocked(what: str) -> UnsafeTemplateError:
    return UnsafeTemplateError(
        f"template blocked by the sandbox: {what}. Templates may only read the variables "
        "they are given (see docs/security.md)"
    )


class _GuardedCodeGenerator(CodeGenerator):
    """Routes ``~`` (string concatenation) through :meth:`TemplateSandbox.checked_concat`."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BudgetedTemplate(jinja2.Template):
    """A template whose :meth:`render` runs under one render's budget: at most
    :data:`MAX_RENDER_SECONDS` of wall-clock time, :data:`MAX_CALLS` calls, macros nested at most
    :data:`MAX_MACRO_DEPTH` deep and :data:`MAX_BUILT` characters built in all."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        if _BUDGET.get() is not None:  # a render inside a render shares the outer budget
            return super().render(*args, **kwargs)
        token = _BUDGET.set(_Budget(deadline=time.monotonic() + MAX_RENDER_SECONDS))
        try:
            return super().render(*args, **kwargs)
        finally:
            _BUDGET.reset(token)


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """The stricter sandboxed environment (see the module docstring); use the shared
    :func:`get_template_sandbox` rather than building one.

    Example:
        >>> env = get_template_sandbox()
        >>> env.from_string("{{ items | join(', ') }}").render(items=["a", "b"])
        'a, b'
    """

    code_generator_class = _GuardedCodeGenerator
    template_class = BudgetedTemplate
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self) -> None:
        super().__init__(
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self.globals = {name: self.globals[name] for name in _SAFE_GLOBALS}
        for name, arg in _WIDTH_FILTERS.items():
            self.filters[name] = self._bounded_filter(self.filters[name], arg)
        self.filters["format"] = self._bounded_format(self.filters["format"])
        self.filters["replace"] = self._bounded_replace(self.filters["replace"])
        self.filters = {name: self._size_checked(name, fn) for name, fn in self.filters.items()}
        self.filters[_LOOP_GUARD] = self._loop_guard
        self.concat = self._bounded_output  # type: ignore[method-assign]

    # ------------------------------------------------------------- access rules
    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return not attr.startswith("_") and super().is_safe_attribute(obj, attr, value)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        if isinstance(obj, jinja2.Undefined):
            obj._fail_with_undefined_error()  # "'cycler' is undefined" says more than "unsafe"
        raise SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe"
        )

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        if super().wrap_str_format(value) is None:
            return None

        def refuse(*args: Any, **kwargs: Any) -> str:
            raise SecurityError("str.format and str.format_map are not allowed; use ~ or |format")

        return refuse

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        budget = _BUDGET.get()
        if budget is not None:
            budget.calls += 1
            if budget.calls > MAX_CALLS:
                raise SecurityError(f"more than {MAX_CALLS} calls in one render")
            budget.tick()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, (str, bytes, list, tuple)):
            name = getattr(__obj, "__name__", "method")
            if name in _BLOCKED_METHODS:
                raise SecurityError(f"str.{name}() is not allowed; use replace")
            for value in (*args, *kwargs.values()):
                _check_width(value, f"argument of {type(owner).__name__}.{name}()")
            if name == "replace":
                _check_replace(owner, *args[:3])
            _check_method(owner, name, args)
        if isinstance(__obj, jinja2.runtime.Macro) and budget is not None:
            if budget.depth >= MAX_MACRO_DEPTH:
                raise SecurityError(f"macros nested more than {MAX_MACRO_DEPTH} deep (recursion)")
            budget.depth += 1
            try:
                result = super().call(__context, __obj, *args, **kwargs)
            finally:
                budget.depth -= 1
        else:
            result = super().call(__context, __obj, *args, **kwargs)
        _check_built(result, "a call")
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        _tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _tick()
        return super().getitem(obj, argument)

    # ----------------------------------------------------------- bounded work
    def call_binop(self, context: jinja2.runtime.Context, op: str, left: Any, right: Any) -> Any:
        if op == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
                raise SecurityError(f"exponent {right} is over the limit of {MAX_EXPONENT}")
            if _bits(right) and _bits(left) * abs(right) > MAX_INT_BITS:
                raise SecurityError(f"a number over {MAX_INT_BITS} bits")
        elif op == "*" and _bits(left) + _bits(right) > MAX_INT_BITS:
            raise SecurityError(f"a number over {MAX_INT_BITS} bits")
        elif op == "*":
            for seq, times in ((left, right), (right, left)):
                if _size(seq) and isinstance(times, int) and _size(seq) * times > _limit(seq):
                    raise SecurityError(f"repetition longer than {_limit(seq)} items")
        elif op == "+" and _size(left) + _size(right) > _limit(left):
            raise SecurityError(f"a value longer than {_limit(left)} items")
        elif op == "%":
            _check_printf(left)
        _tick()
        result = super().call_binop(context, op, left, right)
        _check_built(result, f"'{op}'")
        return result

    def checked_concat(self, values: Iterable[Any]) -> str:
        parts = [str(value) for value in values]
        if sum(map(len, parts)) > MAX_STRING_LENGTH:
            raise SecurityError(f"'~' built a string over {MAX_STRING_LENGTH} characters")
        joined = "".join(parts)
        _charge(joined)
        return joined

    @staticmethod
    def _bounded_output(pieces: Iterable[str]) -> str:
        out = []
        total = 0
        budget = _BUDGET.get()
        for piece in pieces:
            if budget is not None:
                budget.tick()
            total += len(piece)
            if total > MAX_OUTPUT_CHARS:
                raise SecurityError(f"the rendered text is over {MAX_OUTPUT_CHARS} characters")
            out.append(piece)
        return "".join(out)

    @staticmethod
    def _bounded_filter(fn: Callable[..., Any], arg: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def bounded(*args: Any, **kwargs: Any) -> Any:
            for value in (*args[1:], kwargs.get(arg)):
                _check_width(value, f"{fn.__name__} {arg}")
            return fn(*args, **kwargs)

        return bounded

    @staticmethod
    def _bounded_replace(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def bounded(eval_ctx: Any, value: Any, old: Any, new: Any, count: Any = None) -> Any:
            _check_replace(value, old, new, count)
            return fn(eval_ctx, value, old, new, count)

        return bounded

    @staticmethod
    def _size_checked(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` with its input bounded before it runs (filters that walk it item by item,
        ``join``, ``indent``) and its result bounded after."""
        skip = 1 if getattr(fn, "jinja_pass_arg", None) is not None else 0

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            _tick()
            if len(args) > skip:
                _check_filter_input(name, args[skip], args[skip + 1:], kwargs)
            result = fn(*args, **kwargs)
            _check_built(result, f"filter {name}")
            return result

        return checked

    @staticmethod
    def _bounded_format(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def bounded(value: Any, *args: Any, **kwargs: Any) -> Any:
            _check_printf(value)
            return fn(value, *args, **kwargs)

        return bounded

    @staticmethod
    @jinja2.pass_context
    def _loop_guard(context: jinja2.runtime.Context, iterable: Any) -> Iterator[Any]:
        ctx = context.eval_ctx
        for item in iterable:
            count = getattr(ctx, "_lightrag_iterations", 0) + 1
            if count > MAX_LOOP_ITERATIONS:
                raise SecurityError(f"more than {MAX_LOOP_ITERATIONS} loop iterations")
            ctx._lightrag_iterations = count  # type: ignore[attr-defined]
            _tick()
            yield item

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, _LOOP_GUARD, [], [], None, None, lineno=loop.lineno)
        return tree


@functools.lru_cache(maxsize=1)
def get_template_sandbox() -> TemplateSandbox:
    """The shared sandboxed environment (built once).

    Example:
        >>> get_template_sandbox() is get_template_sandbox()
        True
    """
    return TemplateSandbox()


@dataclass(frozen=True)
class CompiledTemplate:
    """A template compiled in the sandbox, with its variables in order of first appearance.

    Example:
        >>> compiled = compile_template("{{ b }} and {{ a }}")
        >>> compiled.variables, compiled.render(a=1, b=2)
        (('b', 'a'), '2 and 1')
    """

    source: str
    template: jinja2.Template
    variables: Tuple[str, ...]

    def render(self, **variables: Any) -> str:
        """Render; what the sandbox refuses raises :class:`UnsafeTemplateError`."""
        return render_sandboxed(self.template, variables)


def render_sandboxed(template: jinja2.Template, variables: Dict[str, Any]) -> str:
    """Render a template compiled by :func:`compile_template`, turning sandbox refusals (and
    runaway recursion) into :class:`UnsafeTemplateError`."""
    try:
        return template.render(**variables)
    except SecurityError as e:
        raise _blocked(str(e)) from None
    except OverflowError as e:  # range() over the sandbox's MAX_RANGE, a float too large
        raise _blocked(str(e)) from None
    except (RecursionError, MemoryError) as e:
        raise _blocked(f"{type(e).__name__} while rendering") from None


def _is_private(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, str) and node.value.startswith("_")


def _static_check(tree: nodes.Template) -> None:
    """Refuse, before any rendering, what can only be an escape attempt: ``_`` attributes or
    items (``x.__class__``, ``x['__globals__']``, ``x|attr('__init__')``), ``str.format``, and
    recursive loops (unbounded work)."""
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Call, nodes.For)):
        if isinstance(node, nodes.For) and node.recursive:
            what = "recursive loops (their inner iterations escape the loop budget)"
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            what = f"access to attribute {node.attr!r}"
        elif isinstance(node, nodes.Getitem) and _is_private(node.arg):
            what = f"access to item {node.arg.value!r}"  # type: ignore[attr-defined]
        elif isinstance(node, nodes.Filter) and node.name == "attr" and any(map(_is_private, node.args)):
            what = "attr() of a private attribute"
        elif (isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr)
              and node.node.attr in ("format", "format_map")):  # fmt: skip
            what = f"str.{node.node.attr}() in a template"
        else:
            continue
        raise _blocked(f"{what} (line {node.lineno})")


@functools.lru_cache(maxsize=512)
def compile_template(source: str) -> CompiledTemplate:
    """Compile ``source`` in the shared sandbox (cached by text).

    Raises:
        ValueError: the template has a syntax error (line and message given).
        UnsafeTemplateError: the template reads private attributes (``__class__``) or calls
            ``str.format``, which can only be escape attempts.
    """
    if not isinstance(source, str):
        raise TypeError(f"a template must be a string, got {type(source).__name__}")
    env = get_template_sandbox()
    try:
        tree = env.parse(source)
        compiled = env.from_string(source)
    except jinja2.TemplateSyntaxError as e:
        raise ValueError(f"Invalid Jinja2 template (line {e.lineno}): {e.message}") from None
    _static_check(tree)
    declared = jinja2.meta.find_undeclared_variables(tree)
    ordered = [n.name for n in tree.find_all(nodes.Name) if n.name in declared]
    return CompiledTemplate(source, compiled, tuple(dict.fromkeys(ordered)))

