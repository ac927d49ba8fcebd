"""Reading an agent's action out of a model reply, and constraining the reply to valid actions.

* :func:`expression_from_reply` turns a planner reply into a
  :class:`~lightrag.core.types.FunctionExpression`, tolerating the usual slips: an action given
  as ``{"name", "kwargs"}``, a call written in prose, a fenced or slightly broken JSON object.
* :func:`action_json_schema` builds a JSON schema whose ``action`` pattern only admits calls of
  the given tools with well-formed arguments, for constrained decoding (``LocalLLMClient``'s
  ``json_schema``): even a 135M model then writes actions that parse.

Example:
    >>> import re
    >>> from lightrag.core.func_tool import FunctionTool
    >>> def search(query: str, top_k: int = 3) -> str: ...
    >>> schema = action_json_schema([FunctionTool(search).definition, "finish"])
    >>> pattern = re.compile(schema["properties"]["action"]["pattern"])
    >>> bool(pattern.match("search(query='Titan', top_k=2)")), bool(pattern.match("search(Titan)"))
    (True, False)
    >>> find_call("I will call search(query='a (b)') now.", ["search"])
    "search(query='a (b)')"
"""

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from lightrag.core.types import FunctionDefinition, FunctionExpression, GeneratorOutput

__all__ = ["action_json_schema", "call_from_parts", "expression_from_reply", "find_call"]

_STR = r"'[^'\\\n]{0,120}'"
_INT = r"-?[0-9]{1,12}"
_NUM = r"-?[0-9]{1,12}(\.[0-9]{1,6})?"
_BOOL = r"(True|False|None)"
_LIST = r"\[(" + r"'[^'\\\n]{0,40}'" + r"(, '[^'\\\n]{0,40}'){0,5})?\]"
_ANY = f"({_STR}|{_NUM}|{_BOOL}|{_LIST})"
_GENERIC_ARGS = r'[^"\\\n]{0,200}'
_OPTIONAL = re.compile(r"^Optional\[(.*)\]$")


def _value_pattern(type_str: str) -> str:
    inner = type_str.strip()
    match = _OPTIONAL.match(inner)
    if match:
        inner = match.group(1)
    if inner == "str":
        return _STR
    if inner == "int":
        return _INT
    if inner == "float":
        return _NUM
    if inner == "bool":
        return _BOOL
    if inner.lower().startswith(("list", "sequence", "tuple", "set")):
        return _LIST
    return _ANY


def _call_pattern(definition: Union[FunctionDefinition, str]) -> str:
    if isinstance(definition, str):
        return re.escape(definition) + r"\(" + _GENERIC_ARGS + r"\)"
    params: Dict[str, Any] = definition.func_parameters or {}
    required = set(params.get("required") or [])
    head: List[str] = []
    tail: List[str] = []
    for name, prop in (params.get("properties") or {}).items():
        item = f"{name}={_value_pattern(str((prop or {}).get('type', 'Any')))}"
        (head if name in required else tail).append(item)
    if head:
        args = ", ".join(head) + "".join(f"(, {item})?" for item in tail)
    elif tail:
        args = f"({tail[0]}" + "".join(f"(, {item})?" for item in tail[1:]) + ")?"
    else:
        args = ""
    return re.escape(definition.func_name) + r"\(" + args + r"\)"


def action_json_schema(tools: Sequence[Union[FunctionDefinition, str]]) -> Dict[str, Any]:
    """A JSON schema for ``{"thought", "action"}`` replies calling one of ``tools``.

    A :class:`FunctionDefinition` admits calls with its parameters as keyword arguments, in
    order (required ones present, optional ones optional), each a single-quoted string, a
    number, a bool or a list of strings as its type says; a bare name admits any arguments
    without double quotes. No pattern admits a double quote or a backslash, so the JSON around
    the action always stays valid.
    """
    alternatives = "|".join(f"({_call_pattern(tool)})" for tool in tools)
    return {
        "type": "object",
        "properties": {
            "thought": {"type": "string", "pattern": r'^[^"\\\n]{1,150}$'},
            "action": {"type": "string", "pattern": f"^({alternatives})$"},
        },
        "required": ["thought", "action"],
    }


def find_call(text: str, names: Sequence[str]) -> Optional[str]:
    """The first ``name(...)`` call of one of ``names`` written anywhere in ``text``."""
    if not names:
        return None
    pattern = "|".join(re.escape(name) for name in names)
    match = re.search(rf"\b({pattern})\s*\(", text)
    if match is None:
        return None
    depth, quote, i = 0, None, match.end() - 1
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                break
        i += 1
    return text[match.start() : i + 1].replace('\\"', '"')


def call_from_parts(parts: Dict[str, Any]) -> Optional[str]:
    """``{"name": "f", "kwargs"|"arguments": {...}, "args": [...]}`` as ``"f(...)"``."""
    name = parts.get("name")
    if not isinstance(name, str):
        return None
    kwargs = parts.get("kwargs", parts.get("arguments", {}))
    args = parts.get("args", [])
    if not isinstance(kwargs, dict) or not isinstance(args, list):
        return None
    rendered = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(rendered)})"


def expression_from_reply(
    output: GeneratorOutput, names: Sequence[str]
) -> Tuple[Optional[FunctionExpression], str]:
    """The action in a planner reply (parsed JSON in ``data``, text in ``raw_response``), or
    None and the reason it could not be read."""
    data = output.data
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if output.error is None and isinstance(data, dict):
        thought = data.get("thought")
        thought = None if thought is None else str(thought)
        action = data.get("action", data.get("function"))
        if isinstance(action, dict):
            action = call_from_parts(action)
        elif action is None and "name" in data:
            action = call_from_parts(data)
        if isinstance(action, str) and action.strip():
            return FunctionExpression(thought=thought, action=action.strip()), ""
    raw = output.raw_response if isinstance(output.raw_response, str) else ""
    found = find_call(raw, names)
    if found is not None:
        return FunctionExpression(action=found), ""
    return None, output.error or 'the reply has no "action" with a tool call'
