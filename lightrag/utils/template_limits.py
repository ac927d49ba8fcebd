"""What one template render may spend, and the checks that hold it to that.

The size bounds (strings, lists, widths, exponents, integers, output) and the per-render budget
(macro depth, calls, characters built, wall-clock time) of the template sandbox
(:mod:`lightrag.utils.sandbox`), kept apart from the Jinja2 environment that applies them. The
checks raise :class:`jinja2.sandbox.SecurityError`; the sandbox turns it into its
``UnsafeTemplateError``.
"""

from __future__ import annotations

import contextvars
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Tuple

from jinja2.sandbox import SecurityError

MAX_LOOP_ITERATIONS = 1_000_000
MAX_STRING_LENGTH = 10_000_000
MAX_LIST_ITEMS = 1_000_000
MAX_OUTPUT_CHARS = 20_000_000
MAX_WIDTH = 100_000
MAX_EXPONENT = 100
MAX_INT_BITS = 100_000
MAX_MACRO_DEPTH = 50
MAX_CALLS = 1_000_000
MAX_BUILT = 200_000_000
MAX_RENDER_SECONDS = 1.0

_LOOP_GUARD = "_lightrag_loop_guard"
_PRINTF_WIDTH = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_WIDTH_FILTERS = {"center": "width", "indent": "width", "wordwrap": "width", "truncate": "length",
                  "batch": "linecount", "slice": "slices"}
# Filters that walk their input item by item (in Python): their input is bounded before they run.
_ITERATING_FILTERS = frozenset({
    "sort", "unique", "list", "batch", "slice", "groupby", "dictsort", "map", "select", "reject",
    "selectattr", "rejectattr", "sum", "min", "max", "join", "items", "random", "pprint", "tojson",
    "xmlattr", "urlize", "wordwrap", "wordcount", "striptags",
})  # fmt: skip
_SLOW_FILTERS = frozenset({"pprint", "urlize", "wordwrap", "groupby", "dictsort"})
_SLOW_FILTER_ITEMS = 100_000
_BLOCKED_METHODS = frozenset({"translate", "maketrans"})
_SAFE_GLOBALS = ("range", "dict", "namespace")


@dataclass
class _Budget:
    """What one render has spent: time, calls, macro depth and the size of what it built."""

    deadline: float
    calls: int = 0
    depth: int = 0
    built: int = 0
    ticks: int = field(default=0, repr=False)

    def tick(self) -> None:
        """Count one step; every 256 steps, compare the clock with the deadline."""
        self.ticks += 1
        if not self.ticks & 255 and time.monotonic() > self.deadline:
            raise SecurityError(f"the render took longer than {MAX_RENDER_SECONDS} seconds")

    def charge(self, value: Any) -> None:
        """Count a built string or list toward the render's :data:`MAX_BUILT` (list items count
        eight, a pointer each)."""
        size = len(value) if isinstance(value, (str, bytes)) else 8 * _size(value)
        if size >= 4096:
            self.built += size
            if self.built > MAX_BUILT:
                raise SecurityError(f"the render built more than {MAX_BUILT} characters (or list "
                                    "items x 8) in all")
            self.check_clock()

    def check_clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise SecurityError(f"the render took longer than {MAX_RENDER_SECONDS} seconds")


_BUDGET: contextvars.ContextVar[Any] = contextvars.ContextVar("lightrag_template_budget",
                                                             default=None)


def _tick() -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.tick()


def _charge(value: Any) -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.charge(value)


def _check_built(value: Any, what: str) -> None:
    """Refuse a string over :data:`MAX_STRING_LENGTH` or a list over :data:`MAX_LIST_ITEMS`."""
    if isinstance(value, (str, bytes)) and len(value) > MAX_STRING_LENGTH:
        raise SecurityError(f"{what} built a string over {MAX_STRING_LENGTH} characters")
    if isinstance(value, (list, tuple)) and len(value) > MAX_LIST_ITEMS:
        raise SecurityError(f"{what} built a list over {MAX_LIST_ITEMS} items")
    _charge(value)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple)) else 0


def _bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_width(value: Any, what: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_WIDTH:
        raise SecurityError(f"{what} {value} is over the limit of {MAX_WIDTH}")


def _check_printf(fmt: Any) -> None:
    if isinstance(fmt, str):
        for width, precision in _PRINTF_WIDTH.findall(fmt):
            for number in (width, precision):
                if number == "*":
                    raise SecurityError("'*' widths in % formats are not allowed")
                if number and int(number) > MAX_WIDTH:
                    raise SecurityError(f"% format width {number} is over the limit of {MAX_WIDTH}")


def _check_replace(value: Any, old: Any = "", new: Any = "", count: Any = None) -> None:
    if not (isinstance(value, str) and isinstance(old, str) and isinstance(new, str)):
        return
    hits = len(value) + 1 if old == "" else value.count(old)
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    if len(value) + hits * (len(new) - len(old)) > MAX_STRING_LENGTH:
        raise SecurityError(f"replace() would build a string over {MAX_STRING_LENGTH} characters")


def _limit(value: Any) -> int:
    return MAX_LIST_ITEMS if isinstance(value, (list, tuple)) else MAX_STRING_LENGTH


def _check_method(owner: Any, name: str, args: Tuple[Any, ...]) -> None:
    """Bound, before it runs, what a ``str`` method would build from a big input."""
    if not isinstance(owner, str):
        return
    if name == "join" and args and hasattr(args[0], "__len__"):
        if len(owner) * len(args[0]) > MAX_STRING_LENGTH:
            raise SecurityError(f"join() would build a string over {MAX_STRING_LENGTH} characters")
    elif name == "expandtabs":
        size = args[0] if args and isinstance(args[0], int) else 8
        if len(owner) + owner.count("\t") * size > MAX_STRING_LENGTH:
            raise SecurityError(f"expandtabs() would build a string over {MAX_STRING_LENGTH} "
                                "characters")
    elif name in ("split", "rsplit", "splitlines"):
        sep = args[0] if args and isinstance(args[0], str) and args[0] else None
        pieces = owner.count(sep) if sep else len(owner) // 2
        if pieces > MAX_LIST_ITEMS:
            raise SecurityError(f"{name}() would build a list over {MAX_LIST_ITEMS} items")


def _check_filter_input(name: str, value: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
    """Refuse, before the filter runs, an input it would spend unbounded time or memory on."""
    size = _size(value)
    if name in _ITERATING_FILTERS:
        limit = _SLOW_FILTER_ITEMS if name in _SLOW_FILTERS else MAX_LIST_ITEMS
        if size > limit:
            raise SecurityError(f"filter {name} of {size} items (the limit is {limit})")
    if name == "join":
        sep = args[0] if args else kwargs.get("d", "")
        if isinstance(sep, str) and size * len(sep) > MAX_STRING_LENGTH:
            raise SecurityError(f"join would build a string over {MAX_STRING_LENGTH} characters")
    elif name == "indent" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 4)
        pad = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        if len(value) + (value.count("\n") + 1) * max(pad, 0) > MAX_STRING_LENGTH:
            raise SecurityError(f"indent would build a string over {MAX_STRING_LENGTH} characters")
    elif name == "wordwrap" and isinstance(value, str):
        wrap = args[3] if len(args) > 3 else kwargs.get("wrapstring")
        if isinstance(wrap, str) and len(value) * max(len(wrap), 1) > MAX_STRING_LENGTH:
            raise SecurityError(f"wordwrap would build a string over {MAX_STRING_LENGTH} characters")
    elif name == "batch":
        fill = args[1] if len(args) > 1 else kwargs.get("fill_with")
        count = args[0] if args else kwargs.get("linecount", 0)
        if fill is not None and isinstance(count, int) and count > MAX_LIST_ITEMS:
            raise SecurityError(f"batch of {count} items is over the limit of {MAX_LIST_ITEMS}")
