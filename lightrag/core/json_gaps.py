"""Finding a JSON key left without a value: ``{"a": }``, ``{"a"}``, or a reply cut off after a key.

:func:`~lightrag.core.text_extract.find_json_candidates` closes a truncated payload and gives a
key whose value was cut off the value ``null``, so ``{"a": 1, "b": `` would parse as
``{'a': 1, 'b': None}`` and hide the truncation. :class:`~lightrag.core.string_parser.JsonParser`
looks at what the reply held (:func:`truncated_source`) with :func:`missing_json_value` first,
and raises instead.

Example:
    >>> missing_json_value(truncated_source('{"a": 1, "b": null}', 'Sure: {"a": 1, "b": '))
    "the value of key 'b'"
    >>> missing_json_value(truncated_source('{"a": [1, 2]}', '{"a": [1, 2')) is None
    True
"""

from __future__ import annotations

__all__ = ["missing_json_value", "scan_string", "truncated_source"]

_AFTER_STRING = frozenset(",:}]\"'{[/#")


def scan_string(text: str, i: int) -> tuple[int, bool]:
    """From the quote at ``text[i]``: the index just past its string, and whether a double
    quote inside it is unescaped (the closing quote is followed by something that is not JSON
    structure, as in ``"f("x")"``). A single-quoted string ends at a quote followed by structure,
    so apostrophes (``'it's'``) stay inside it."""
    quote, i = text[i], i + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            k = i + 1
            while k < len(text) and text[k].isspace():
                k += 1
            if k >= len(text) or text[k] in _AFTER_STRING:
                return i + 1, False
            if quote == '"':
                return i + 1, True
        i += 1
    return i, False


def _next_solid(text: str, i: int) -> str:
    """The first non-space character of ``text`` from ``i`` on ("" at the end)."""
    while i < len(text) and text[i].isspace():
        i += 1
    return text[i] if i < len(text) else ""


def missing_json_value(text: str) -> str | None:
    """What is missing where an object's key has no value (``{"a": }``, ``{"a"}``, or text that
    ends after a key, as a cut-off reply does), or None.

    Example:
        >>> missing_json_value('{"a": 1, "b": '), missing_json_value('{"a"}')
        ("the value of key 'b'", "the value of key 'a'")
        >>> missing_json_value('{"a": "x:", "b": [1, 2,], "c": null}') is None
        True
    """
    stack: list[str] = []
    prev, key = "", None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"' or (ch == "'" and prev in "{[,:"):
            end, _ = scan_string(text, i)
            if stack[-1:] == ["{"] and prev in "{,":
                key = text[i + 1 : end - 1] if end <= len(text) and text[end - 1] == ch else text[i + 1 :]
                if _next_solid(text, end) in ("", "}", ","):
                    return f"the value of key {key!r}"
            i, prev = end, ch
            continue
        if ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
        elif ch == ":" and stack[-1:] == ["{"] and _next_solid(text, i + 1) in ("", "}", ","):
            return f"the value of key {key!r}" if key is not None else "a value after ':'"
        if not ch.isspace():
            prev = ch
        i += 1
    return None


def truncated_source(candidate: str, text: str) -> str | None:
    """The part of ``text`` that a payload closed after truncation was made from (the longest
    start of ``candidate`` found in ``text``), or None when ``candidate`` is in ``text`` as it is.

    Example:
        >>> truncated_source('{"a": 1, "b": null}', 'Sure: {"a": 1, "b": ')
        '{"a": 1, "b": '
    """
    if candidate in text:
        return None
    found, longer = 0, len(candidate)
    while found < longer:
        mid = (found + longer + 1) // 2
        if candidate[:mid] in text:
            found = mid
        else:
            longer = mid - 1
    return candidate[:found]
