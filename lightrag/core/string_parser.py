"""String parsers: turn a model's text into a Python value.

Each parser is a small :class:`~lightrag.core.component.Component`, so it can be a Generator's
``output_processors`` or a step of a :class:`~lightrag.core.container.Sequential`. They tolerate
the ways models wrap their answers (code fences, prose, ``<think>`` blocks, trailing commas,
Python literals, truncation; see :mod:`lightrag.core.text_extract`) and raise ``ValueError`` with
the reason and an excerpt of the text when there is nothing to recover.

Example:
    >>> JsonParser()('Here you go:\\n```json\\n{"city": "Paris", "rank": 1,}\\n```')
    {'city': 'Paris', 'rank': 1}
    >>> IntParser()("I count 42 apples.")
    42
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Callable

import lightrag.core.text_extract as tx
from lightrag.core.component import Component
from lightrag.core.json_gaps import missing_json_value, scan_string, truncated_source

log = logging.getLogger(__name__)

__all__ = [
    "BooleanParser",
    "FloatParser",
    "IntParser",
    "JsonParser",
    "ListParser",
    "Parser",
    "YamlParser",
]

BOOLEAN_PARSER_OUTPUT_TYPE = bool
INT_PARSER_OUTPUT_TYPE = int
FLOAT_PARSER_OUTPUT_TYPE = float
LIST_PARSER_OUTPUT_TYPE = list[object]
JSON_PARSER_OUTPUT_TYPE = dict[str, object] | list[object]
YAML_PARSER_OUTPUT_TYPE = JSON_PARSER_OUTPUT_TYPE

_MAX_CANDIDATES = 5
_YAML_KEY_LINE = re.compile(r"^\s*(?:-\s+\S|[\"']?[\w][\w .-]*[\"']?\s*:(?:\s|$))")


def extract_first_boolean(text: str) -> bool:
    """The first ``true``/``false`` word (any case) in ``text``.

    Example:
        >>> extract_first_boolean("Answer: FALSE, because ...")
        False
    """
    match = re.search(r"\b(true|false)\b", text, re.IGNORECASE)
    if match is None:
        raise ValueError(f"No boolean (true/false) found in the text: {tx.excerpt(text)!r}")
    return match.group(1).lower() == "true"


_INT = re.compile(r"(?<![\w.])-?\d+")
_FLOAT = re.compile(r"(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# lightrag 0.1's patterns: digits between word boundaries, found inside text such as "abc3.14"
_INT_01 = re.compile(r"\b\d+\b")
_FLOAT_01 = re.compile(r"\b\d+(\.\d+)?\b")


def _first_number(
    text: str, patterns: tuple[re.Pattern[str], ...], what: str, convert: Callable[[str], Any]
) -> Any:
    """``convert`` of the first match of the first pattern that matches; ValueError if none."""
    match = next((m for m in (p.search(text) for p in patterns) if m is not None), None)
    if match is None:
        raise ValueError(f"No {what} found in the text: {tx.excerpt(text)!r}")
    return convert(match.group())


def extract_first_int(text: str) -> int:
    """The first integer in ``text`` (a leading minus sign is kept; ``3.5`` gives 3); where no
    number stands on its own, the first one lightrag 0.1 finds (``"abc3.14"`` gives 14).

    Example:
        >>> extract_first_int("There are -12 items")
        -12
    """
    return _first_number(text, (_INT, _INT_01), "integer", int)


def extract_first_float(text: str) -> float:
    """The first number in ``text`` as a float (sign, decimals and exponent kept); where no
    number stands on its own, the first one lightrag 0.1 finds (``"v1.5"`` gives 5.0).

    Example:
        >>> extract_first_float("score = -0.75 (out of 1)")
        -0.75
    """
    return _first_number(text, (_FLOAT, _FLOAT_01), "float", float)


class Parser(Component):
    """Base class of the string parsers: ``call(input: str)`` returns the parsed value.

    Subclasses implement :meth:`call`; they raise ``ValueError`` when the text holds nothing
    they can parse.

    Example:
        >>> class Upper(Parser):
        ...     def call(self, input: str) -> str:
        ...         return self._check_str(input).upper()
        >>> Upper()("abc")
        'ABC'
    """

    def call(self, input: str) -> Any:
        """Parse ``input``; subclasses implement this."""
        raise NotImplementedError(f"{type(self).__name__} must implement call(input: str)")

    def _check_str(self, input: Any) -> str:
        if not isinstance(input, str):
            raise TypeError(f"{type(self).__name__} expects a str, got {type(input).__name__}")
        return input

    def _first(self, input: Any, extract: Callable[[str], Any]) -> Any:
        """``extract(input)``; its ``ValueError`` names this parser."""
        try:
            return extract(self._check_str(input))
        except ValueError as e:
            raise ValueError(f"{type(self).__name__}: {e}") from None


class BooleanParser(Parser):
    """The first ``true``/``false`` word (any case) in the text.

    Raises:
        ValueError: the text has neither word.

    Example:
        >>> BooleanParser()("The statement is TRUE.")
        True
    """

    def call(self, input: str) -> bool:
        return self._first(input, extract_first_boolean)


class IntParser(Parser):
    """The first integer in the text (a minus sign is kept).

    Raises:
        ValueError: the text has no integer.

    Example:
        >>> IntParser()("Answer: -7 degrees")
        -7
    """

    def call(self, input: str) -> int:
        return self._first(input, extract_first_int)


class FloatParser(Parser):
    """The first number in the text, as a float.

    Raises:
        ValueError: the text has no number.

    Example:
        >>> FloatParser()("confidence: 0.85")
        0.85
    """

    def call(self, input: str) -> float:
        return self._first(input, extract_first_float)


_PAIRS = {"}": "{", "]": "["}


def ambiguous_json(text: str) -> str | None:
    """Why ``text`` is JSON that only a guess could repair, or None.

    lightrag 0.1 refused two shapes that :func:`~lightrag.core.text_extract.fix_json_formatting`
    would guess at: a closing bracket that does not match the open one, and an unescaped double
    quote inside a string. :class:`JsonParser` raises on them unless ``lenient=True``.

    Example:
        >>> ambiguous_json('{"a": [1, 2}]}'), ambiguous_json('{"a": "f("x")"}')
        ('a closing bracket does not match its opening one', 'an unescaped double quote inside a string')
        >>> ambiguous_json("{'a': 'it's', 'b': [1, 2,],}") is None
        True
    """
    stack: list[str] = []
    prev = "{"
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"' or (ch == "'" and prev in "{[,:"):
            i, inner_quote = scan_string(text, i)
            if inner_quote:
                return "an unescaped double quote inside a string"
            prev = ch
            continue
        if ch in "{[":
            stack.append(ch)
        elif ch in _PAIRS:
            if not stack or stack.pop() != _PAIRS[ch]:
                return "a closing bracket does not match its opening one"
        if not ch.isspace():
            prev = ch
        i += 1
    return None


def _parse_candidate(candidate: str, lenient: bool, text: str) -> Any:
    """Parse one candidate; a key left without a value (a reply cut off after it, or ``{"a": }``)
    is an error, not None (lightrag 0.1 gave ``{'a': None}``)."""
    source = truncated_source(candidate, text)
    cut = None if source is None else missing_json_value(source)
    if cut is not None:
        raise ValueError(
            f"Got invalid JSON object: the reply was cut off before {cut}. "
            f"Got JSON string: {tx.excerpt(source)!r}"
        )
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError) as e:
        missing = missing_json_value(candidate)
        if missing is not None:
            raise ValueError(
                f"Got invalid JSON object: {missing} is missing. Got JSON string: {tx.excerpt(candidate)!r}"
            ) from None
        problem = None if lenient else ambiguous_json(candidate)
        if problem is not None:
            raise ValueError(
                f"Got invalid JSON object. Error: {e}; {problem}. "
                f"Got JSON string: {tx.excerpt(candidate)!r}"
            ) from None
    return tx.parse_json_str_to_obj(candidate)


def _parse_candidates(name: str, candidates: list[str], text: str, lenient: bool = True) -> Any:
    """Parse the first of ``text``'s candidates that parses; the error names the best one's problem."""
    first_error: ValueError | None = None
    text = tx.strip_think_blocks(text)
    for candidate in candidates[:_MAX_CANDIDATES]:
        try:
            return _parse_candidate(candidate, lenient, text)
        except ValueError as e:
            first_error = first_error or e
    raise ValueError(f"{name}: {first_error}")


class ListParser(Parser):
    """Extract the first list ``[...]`` from the text and parse it (JSON or Python literal).

    Args:
        add_missing_right_bracket: close a list left open by a truncated output.

    Raises:
        ValueError: no list in the text, or it cannot be parsed.

    Example:
        >>> ListParser()("Top picks: ['apple', 'pear', 'fig',] - enjoy")
        ['apple', 'pear', 'fig']
    """

    def __init__(self, add_missing_right_bracket: bool = True) -> None:
        super().__init__()
        self.add_missing_right_bracket = add_missing_right_bracket

    def call(self, input: str) -> list[object]:
        if isinstance(input, list):
            return input
        text = self._check_str(input)
        try:
            candidates = tx.find_json_candidates(text, self.add_missing_right_bracket, "[")
        except ValueError as e:
            raise ValueError(f"ListParser: {e}") from None
        return _parse_candidates("ListParser", candidates, text)

    def _extra_repr(self) -> str:
        return f"add_missing_right_bracket={self.add_missing_right_bracket}"


class JsonParser(Parser):
    """Extract the first JSON object or array from the text and parse it.

    Finds the payload inside code fences or prose, skips ``<think>`` blocks, closes a truncated
    payload when ``add_missing_right_brace`` is set, and repairs near-JSON (single quotes,
    trailing commas, ``True``/``None``, comments, missing commas, ``\\'``) before giving up.
    A key without a value is an error, not None: ``{"a":}``, or a reply cut off after a key
    (``{"a": 1, "b": ``; see :mod:`lightrag.core.json_gaps`).

    Args:
        add_missing_right_brace: close brackets left open by a truncated output.
        lenient: also guess at what lightrag 0.1 refused: an unescaped double quote inside a
            string (``"f("x")"``) and a closing bracket that does not match (see
            :func:`ambiguous_json`). Off by default, so such replies raise as in 0.1.

    Raises:
        ValueError: no ``{``/``[`` payload, or one that cannot be parsed or lacks a value ("Got
            invalid JSON object ..." with the reason and an excerpt).

    Example:
        >>> JsonParser()("<think>easy</think> {'answer': 'yes', 'confident': True}")
        {'answer': 'yes', 'confident': True}
        >>> JsonParser(lenient=True)('{"quote": "She said "hi" to me"}')
        {'quote': 'She said "hi" to me'}
    """

    def __init__(self, add_missing_right_brace: bool = True, lenient: bool = False) -> None:
        super().__init__()
        self.add_missing_right_brace = add_missing_right_brace
        self.lenient = lenient

    def call(self, input: str) -> JSON_PARSER_OUTPUT_TYPE:
        if isinstance(input, (dict, list)):
            return input
        text = self._check_str(input)
        try:
            candidates = tx.find_json_candidates(text, self.add_missing_right_brace)
        except ValueError as e:
            raise ValueError(f"JsonParser: {e}") from None
        result = _parse_candidates("JsonParser", candidates, text, self.lenient)
        log.debug("JsonParser parsed %s", type(result).__name__)
        return result

    def _extra_repr(self) -> str:
        text = f"add_missing_right_brace={self.add_missing_right_brace}"
        return text + (", lenient=True" if self.lenient else "")


def _is_prose_line(lines: list[str], k: int) -> bool:
    """A leading line like "Sure, here it is:" that YAML would misread as a key."""
    line = lines[k].rstrip()
    if not _YAML_KEY_LINE.match(line):
        return True
    if not line.endswith(":") or " " not in line.strip():
        return False
    indent = len(line) - len(line.lstrip())
    for nxt in lines[k + 1 :]:
        if nxt.strip():
            nxt_indent = len(nxt) - len(nxt.lstrip())
            return nxt_indent <= indent and not nxt.lstrip().startswith("- ")
    return True


def _strip_prose_lines(text: str) -> str:
    """Drop leading lines that are prose rather than YAML."""
    lines = text.splitlines()
    for k in range(len(lines)):
        if lines[k].strip() and not _is_prose_line(lines, k):
            return "\n".join(lines[k:])
    return text


class YamlParser(Parser):
    """Extract YAML from the text (```yaml / ```yml / ``` fences, else the whole text) and parse
    it with ``yaml.safe_load``.

    Recovers from a prose line before unfenced YAML, tabs used for indentation, and a model that
    answered with JSON instead.

    Raises:
        ValueError: the text cannot be parsed ("Got invalid YAML object ..." with an excerpt).

    Example:
        >>> YamlParser()("```yaml\\nname: Ada\\nskills:\\n  - math\\n```")
        {'name': 'Ada', 'skills': ['math']}
    """

    def call(self, input: str) -> YAML_PARSER_OUTPUT_TYPE:
        if isinstance(input, (dict, list)):
            return input
        text = self._check_str(input)
        yaml_str = tx.extract_yaml_str(text)
        error: ValueError | None = None
        try:
            result = tx.parse_yaml_str_to_obj(yaml_str)
        except ValueError as e:
            error, result = e, None
        else:
            if isinstance(result, (dict, list)) and not _starts_with_prose_key(result):
                return result
        recovered = _yaml_without_prose(yaml_str)
        if recovered is None:
            recovered = _json_instead(text)
        if recovered is not None:
            return recovered
        if error is not None:
            raise ValueError(f"YamlParser: {error}")
        return result


def _starts_with_prose_key(result: Any) -> bool:
    """``{"Here is the output": None, ...}``: a prose line YAML took for an empty key."""
    if not isinstance(result, dict) or not result:
        return False
    first_key, first_value = next(iter(result.items()))
    return first_value is None and isinstance(first_key, str) and " " in first_key.strip()


def _yaml_without_prose(yaml_str: str) -> Any:
    body = _strip_prose_lines(yaml_str)
    if body == yaml_str:
        return None
    try:
        result = tx.parse_yaml_str_to_obj(body)
    except ValueError:
        return None
    return result if isinstance(result, (dict, list)) else None


def _json_instead(text: str) -> Any:
    """The reply parsed as JSON, when it is JSON: it starts with a bracket or holds a ```json
    block, and the payload is closed (a bracket inside YAML, or in prose, is not a JSON reply:
    ``garbage: [`` is an error, not ``[]``)."""
    body = text.strip()
    if not body.startswith(("{", "[")) and "```json" not in body.lower():
        return None
    try:
        return _parse_candidates(
            "YamlParser", tx.find_json_candidates(text, add_missing_right_brace=False), text)
    except ValueError:
        return None
