"""Pull JSON, list and YAML payloads out of free-form model output, and repair them.

Small models wrap their answer in code fences, put prose around it, open with a
``<think>...</think>`` block, leave trailing commas, write Python literals (``True``, ``None``,
single quotes) or stop mid-object at the token limit. :func:`extract_json_str` and
:func:`extract_list_str` find the payload and close what a truncated output left open,
:func:`fix_json_formatting` rewrites near-JSON into strict JSON, :func:`parse_json_str_to_obj`
tries ``json.loads``, the repair, then ``yaml.safe_load``; :func:`extract_yaml_str` and
:func:`parse_yaml_str_to_obj` do the same for YAML.

Example:
    >>> text = 'Sure! ```json\\n{"name": \\'Ada\\', "tags": ["x", "y",],}\\n``` Hope it helps.'
    >>> parse_json_str_to_obj(extract_json_str(text))
    {'name': 'Ada', 'tags': ['x', 'y']}
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import yaml

from lightrag.utils.safe_yaml import YamlLimitError
from lightrag.utils.safe_yaml import safe_load as bounded_yaml_load

log = logging.getLogger(__name__)

_EXCERPT_CHARS = 200
_MAX_CANDIDATES = 16
_MAX_PROSE_BRACKETS = 16
_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n`]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_JSON_LANGS = {"json", "jsonc", "json5", "javascript", "js"}
_YAML_LANGS = {"yaml", "yml"}
_CLOSER = {"{": "}", "[": "]"}
_VALUE_START = re.compile(r"""\s*(?:["'{\[\]\-\d]|true|false|null|True|False|None)""")
_KEY_START = re.compile(r"""\s*(?:["'}]|[A-Za-z_][\w-]*\s*:)""")
_CITATION = re.compile(r"\[\s*\d{1,3}\s*\]")
_BARE_TOKEN = re.compile(r"[A-Za-z0-9_.+\-]+")
_TOKEN = re.compile(r"\s+|//[^\n]*|#[^\n]*|/\*.*?(?:\*/|\Z)|[A-Za-z0-9_.+\-]+|.", re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"True": "true", "False": "false", "None": "null"}
_LITERALS.update((name, name) for name in ("true", "false", "null", "NaN", "Infinity", "-Infinity"))
_JSON_ESCAPES = set('"\\/bfnrt')
_SPACES = re.compile(r"\s*")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_NEXT_KEY = re.compile(r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*:""")


def excerpt(text: str, limit: int = _EXCERPT_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def strip_think_blocks(text: str) -> str:
    """Remove ``<think>...</think>`` (also ``thinking``/``reasoning``) blocks from model output.

    A lone closing tag (the chat template opened the block) drops everything before it; a lone
    opening tag (cut off while thinking) is removed and its text kept.

    Example:
        >>> strip_think_blocks("<think>maybe 3?</think>\\nThe answer is 4")
        'The answer is 4'
    """
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return _THINK_OPEN.sub("", text).strip()


def extract_code_blocks(text: str) -> list[tuple[str, str]]:
    """All fenced code blocks as ``(language, body)``; an unclosed last fence runs to the end.

    Example:
        >>> extract_code_blocks("Here:\\n```json\\n{}\\n```")
        [('json', '{}\\n')]
    """
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]


def _match_brackets(text: str, start: int) -> tuple[int, list[str], str]:
    """Scan from the bracket at ``start``; return (end index or -1, open stack, open quote)."""
    stack: list[str] = []
    quote = ""
    prev = "{"
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == '"' or (ch == "'" and prev in "{[,:"):
            quote = ch
        elif ch in _CLOSER:
            stack.append(ch)
        elif ch in "}]":
            opener = "{" if ch == "}" else "["
            if opener in stack:
                while stack and stack.pop() != opener:
                    pass
            if not stack:
                return i, stack, ""
        if not ch.isspace():
            prev = ch
        i += 1
    return -1, stack, quote


def _balanced_from(text: str, start: int, add_missing: bool) -> tuple[str, int]:
    """The bracketed payload starting at ``start`` and the index just past it in ``text``."""
    end, stack, quote = _match_brackets(text, start)
    if end != -1:
        return text[start : end + 1], end + 1
    if not add_missing:
        kind = "JSON object" if text[start] == "{" else "list"
        raise ValueError(
            f"Incomplete {kind}: no closing '{_CLOSER[text[start]]}' found and adding the "
            f"missing bracket is disabled. Got: {excerpt(text[start:])!r}"
        )
    log.debug("closing a truncated JSON payload that left %r open", "".join(stack))
    body = (text[start:].removesuffix("\\") + quote).rstrip().rstrip(",").rstrip()
    body += " null" if body.endswith(":") else ""  # a key whose value was cut off
    return body + "".join(_CLOSER[opener] for opener in reversed(stack)), len(text)


def find_json_candidates(
    text: str, add_missing_right_brace: bool = True, openers: str = "{["
) -> list[str]:
    """The JSON-looking payloads of ``text``, best first.

    Fenced ```json (then untagged) blocks come before the raw text. Within a region, only
    top-level brackets count (nothing nested inside an earlier payload); brackets that open
    something JSON-like (``{"key"``, ``["a"``, ``[1``) come before ones that open prose
    (``[see above]``), and a lone citation such as ``[1]`` comes after real payloads. Each
    candidate is bracket-matched and, if allowed, closed when truncated.

    Raises:
        ValueError: nothing found, or the only payload is unclosed and adding closers is off.

    Example:
        >>> find_json_candidates('As said in [2], {"a": [1, 2]}')
        ['{"a": [1, 2]}', '[2]']
    """
    found: list[str] = []
    error: ValueError | None = None
    text = strip_think_blocks(text)
    blocks = extract_code_blocks(text)
    tagged = [body for lang, body in blocks if lang in _JSON_LANGS]
    for region in tagged + [body for lang, body in blocks if not lang] + [text]:
        ranked: list[tuple[int, str]] = []
        pos, prose_budget = 0, _MAX_PROSE_BRACKETS
        while sum(rank == 0 for rank, _ in ranked) < _MAX_CANDIDATES:
            starts = [k for k in (region.find(o, pos) for o in openers) if k != -1]
            if not starts:
                break
            i = min(starts)
            pattern = _KEY_START if region[i] == "{" else _VALUE_START
            plausible = pattern.match(region, i + 1) is not None
            if not plausible:
                prose_budget -= 1
                if prose_budget < 0:  # prose full of brackets: stop scanning each one to the end
                    pos = i + 1
                    continue
            try:
                candidate, end = _balanced_from(region, i, add_missing_right_brace)
            except ValueError as e:
                if plausible:
                    error = error or e
                    break
                pos = i + 1
                continue
            pos = end if plausible else i + 1
            rank = 2 if not plausible else int(bool(_CITATION.fullmatch(candidate)))
            if rank == 0 or sum(r == rank for r, _ in ranked) < _MAX_CANDIDATES:
                ranked.append((rank, candidate))
        ranked.sort(key=lambda pair: pair[0])
        found.extend(c for _, c in ranked if c not in found)
    if found:
        return found
    if error is not None:
        raise error
    kind = "list" if openers == "[" else "JSON object or array"
    raise ValueError(f"No {kind} found in the text: {excerpt(text)!r}")


def extract_json_str(text: str, add_missing_right_brace: bool = True) -> str:
    """The first JSON object or array of model output (the best of :func:`find_json_candidates`:
    fences and ``<think>`` blocks handled, brackets inside strings ignored, truncation closed
    when ``add_missing_right_brace`` is set).

    Example:
        >>> extract_json_str('Result: {"a": {"b": "}"}} trailing words')
        '{"a": {"b": "}"}}'
        >>> extract_json_str('{"a": [1, 2')
        '{"a": [1, 2]}'
    """
    return find_json_candidates(text, add_missing_right_brace)[0]


def extract_list_str(text: str, add_missing_right_bracket: bool = True) -> str:
    """Extract the first list ``[...]`` from model output (fences, prose and truncation handled).

    Example:
        >>> extract_list_str('The items are ["a", "b"] as requested.')
        '["a", "b"]'
    """
    return find_json_candidates(text, add_missing_right_bracket, openers="[")[0]


def extract_yaml_str(text: str) -> str:
    """Extract YAML from model output: a ```yaml / ```yml fence, else a plain ``` fence, else the
    stripped text (``<think>`` blocks removed). An unclosed fence runs to the end.

    Example:
        >>> extract_yaml_str("Here you go:\\n```yaml\\nname: Ada\\n```")
        'name: Ada'
    """
    text = strip_think_blocks(text)
    blocks = extract_code_blocks(text)
    for wanted in (_YAML_LANGS, {""}):
        for lang, body in blocks:
            if lang in wanted and body.strip():
                return body.strip()
    return text.strip()


def _closes_string(s: str, i: int) -> bool:
    """Whether the quote at ``s[i]`` ends its string (JSON structure, a comment, the end, the
    next ``"key":`` or a new line's value follows) rather than being an unescaped inner quote."""
    k = _SPACES.match(s, i + 1).end()
    if k >= len(s) or s[k] in ",}]:#" or s.startswith(("//", "/*"), k) or _NEXT_KEY.match(s, k):
        return True
    return "\n" in s[i:k] and s[k] in "\"'{["


def _read_string(s: str, i: int) -> tuple[str, int]:
    """The quoted string starting at ``s[i]`` as a strict JSON string, and the index after it."""
    quote, i, chars = s[i], i + 1, ['"']
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            if nxt == "u" and _HEX4.fullmatch(s, i + 2, i + 6):
                chars.append(s[i : i + 6])
                i += 6
                continue
            if nxt == "'":
                chars.append("'")
            else:
                chars.append("\\" + nxt if nxt in _JSON_ESCAPES else json.dumps("\\" + nxt)[1:-1])
            i += 2
            continue
        if ch == quote and _closes_string(s, i):
            return "".join(chars) + '"', i + 1
        chars.append('\\"' if ch == '"' else json.dumps(ch)[1:-1] if ch < " " else ch)
        i += 1
    return "".join(chars).rstrip("\\") + '"', i


def _bare_token(token: str, stack: list[str], rest: str) -> str:
    if token in _LITERALS:
        return _LITERALS[token]
    if _NUMBER.fullmatch(token):
        return token
    if stack and stack[-1] == "{" and rest.lstrip().startswith(":"):
        return json.dumps(token)
    return token


def fix_json_formatting(json_str: str) -> str:
    """Rewrite near-JSON into strict JSON without changing its data.

    Repairs: ``//``, ``/* */`` and ``#`` comments; single-quoted strings; ``True``/``False``/
    ``None``; unquoted keys; trailing and doubled commas; missing commas between fields and
    items; raw newlines, unescaped inner quotes and invalid escapes inside strings; unclosed
    strings and brackets.

    Example:
        >>> fix_json_formatting("{'ok': True, 'n': None, 'xs': [1, 2,],} // done")
        '{"ok":true,"n":null,"xs":[1,2]}'
        >>> fix_json_formatting('{"a": 1\\n "b": "two\\nlines"}')
        '{"a":1,"b":"two\\\\nlines"}'
    """
    s = json_str.strip()
    repair = _JsonRepair()
    i = 0
    while i < len(s):
        if s[i] in "\"'":
            repair.value_start()
            piece, i = _read_string(s, i)
            repair.out.append(piece)
            repair.value_done = True
            continue
        token = _TOKEN.match(s, i).group()
        i += len(token)
        repair.token(token, s[i:])
    return repair.finish()


class _JsonRepair:
    """The output of :func:`fix_json_formatting` so far: the pieces, the open brackets and
    whether a value just ended (so the next one needs a comma)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.stack: list[str] = []
        self.value_done = False

    def value_start(self) -> None:
        if self.value_done and self.stack:
            self.out.append(",")

    def token(self, token: str, rest: str) -> None:
        if token.isspace() or token.startswith(("//", "/*", "#")):
            return
        if token in ",:":
            self._separator(token)
        elif token in "}]":
            self._close("{" if token == "}" else "[", token)
        elif token in _CLOSER:
            self.value_start()
            self.stack.append(token)
            self.out.append(token)
            self.value_done = False
        elif _BARE_TOKEN.fullmatch(token):
            self.value_start()
            self.out.append(_bare_token(token, self.stack, rest))
            self.value_done = True
        else:
            self.out.append(token)

    def _separator(self, token: str) -> None:
        if token == ":" or (self.out and self.out[-1][-1] not in ",{["):
            self.out.append(token)
        self.value_done = False

    def _close(self, opener: str, token: str) -> None:
        if opener not in self.stack:
            return  # a stray closer: dropped
        if self.out and self.out[-1] == ",":
            self.out.pop()
        while self.stack and (top := self.stack.pop()) != opener:
            self.out.append(_CLOSER[top])
        self.out.append(token)
        self.value_done = True

    def finish(self) -> str:
        if self.out and self.out[-1] == ",":
            self.out.pop()
        self.out.extend(_CLOSER[opener] for opener in reversed(self.stack))
        return "".join(self.out)


def parse_json_str_to_obj(json_str: str) -> Any:
    """Parse JSON text leniently: ``json.loads``, then the :func:`fix_json_formatting` repair,
    then ``yaml.safe_load`` (which must give a mapping or a list).

    Raises:
        ValueError: "Got invalid JSON object ..." with the first decoding error and an excerpt.

    Example:
        >>> parse_json_str_to_obj("{'a': 1, 'b': [True, None],}")
        {'a': 1, 'b': [True, None]}
    """
    json_str = json_str.strip()
    try:
        return json.loads(json_str)
    except (ValueError, RecursionError) as e:
        first_error = e
    attempts = [] if isinstance(first_error, RecursionError) else [json_str]
    if attempts and json_str.startswith("{{") and json_str.endswith("}}"):
        attempts.append(json_str[1:-1])  # a model copying an escaped template: {{"a": 1}}
    for attempt in attempts:
        try:
            repaired = fix_json_formatting(attempt)
            obj = json.loads(repaired)
            log.debug("parsed JSON after repair: %s", excerpt(repaired))
            return obj
        except (ValueError, RecursionError):
            continue
    try:
        obj = bounded_yaml_load(json_str) if attempts else None  # too deep for json: for yaml too
        if isinstance(obj, (dict, list)):
            log.debug("parsed JSON with the YAML fallback")
            return obj
    except (yaml.YAMLError, RecursionError):
        pass
    raise ValueError(
        f"Got invalid JSON object. Error: {first_error}. Got JSON string: {excerpt(json_str)!r}"
    )


def parse_yaml_str_to_obj(yaml_str: str) -> Any:
    """Parse YAML text with ``yaml.safe_load``; retry with tabs expanded, and as near-JSON when
    the text starts with ``{`` or ``[``.

    Raises:
        ValueError: "Got invalid YAML object ..." with the error and an excerpt.

    Example:
        >>> parse_yaml_str_to_obj("name: Ada\\nlangs:\\n  - python")
        {'name': 'Ada', 'langs': ['python']}
    """
    yaml_str = yaml_str.strip()
    first_error: Exception | None = None
    for attempt in (yaml_str, yaml_str.expandtabs(2)):
        try:
            return bounded_yaml_load(attempt)
        except (yaml.YAMLError, RecursionError, YamlLimitError) as e:
            first_error = first_error or e
    if yaml_str[:1] in "{[":
        try:
            return parse_json_str_to_obj(yaml_str)
        except ValueError:
            pass
    raise ValueError(
        f"Got invalid YAML object. Error: {first_error}. Got YAML string: {excerpt(yaml_str)!r}"
    )


_MISSING_COMMA = re.compile(r"""(?<=[}\]"'\d])(\s+)(?=[{"\[])""")


def fix_json_missing_commas(json_str: str) -> str:
    """Insert the commas an LLM left out between JSON values (``"a" "b"`` -> ``"a", "b"``)."""
    return _MISSING_COMMA.sub(r",\1", json_str)


def fix_json_escaped_single_quotes(json_str: str) -> str:
    r"""Turn ``\'`` (invalid in JSON) back into ``'``."""
    return json_str.replace("\\'", "'")


def extract_function_expression(text: str, add_missing_right_parenthesis: bool = True) -> str:
    """The first ``name(...)`` call in ``text``, closing a missing ``)`` when allowed.

    Example:
        >>> extract_function_expression("Action: search('paris', 2")
        "Action: search('paris', 2)"
    """
    text = text.strip()
    start = text.find("(")
    if start == -1:
        raise ValueError(f"No function expression found in the text: {excerpt(text)!r}")
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[: i + 1]
    if not add_missing_right_parenthesis:
        raise ValueError(
            "Incomplete function expression and add_missing_right_parenthesis is False"
        )
    return text + ")"
