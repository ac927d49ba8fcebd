"""Chat messages: split a rendered prompt into system and user messages, and turn a conversation
(``DialogTurn`` s, a ``Conversation``, or ``{"role", "content"}`` dicts) into chat history.

Example:
    >>> split_prompt("<SYS>Be brief.</SYS>What is 2+2?")
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'What is 2+2?'}]
    >>> history = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    >>> messages = build_chat_messages("<SYS>Be brief.</SYS>And 3+3?", history)
    >>> messages[1:3] == history
    True
    >>> [m["role"] for m in messages], messages[-1]["content"]
    (['system', 'user', 'assistant', 'user'], 'And 3+3?')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Dict, List

Message = Dict[str, Any]

#: the system block: 0.1's ``<SYS>...</SYS>``, or AdalFlow's ``<START_OF_SYSTEM_PROMPT>`` ...
#: ``<END_OF_SYSTEM_PROMPT>`` (a template written for AdalFlow keeps its roles)
_SYS_BLOCK = re.compile(r"<SYS>(.*?)</SYS>|<START_OF_SYSTEM_PROMPT>(.*?)<END_OF_SYSTEM_PROMPT>", re.DOTALL)
_USER_BLOCK = re.compile(r"^\s*(?:<USER>(.*?)</USER>|<START_OF_USER_PROMPT>(.*?)<END_OF_USER_PROMPT>)\s*$",
                         re.DOTALL | re.IGNORECASE)
ROLES = ("system", "user", "assistant", "tool")


def split_prompt(prompt: str) -> List[Message]:
    """A system message (the prompt's ``<SYS>`` block, or AdalFlow's
    ``<START_OF_SYSTEM_PROMPT>`` block) and a user message (the rest).

    Without a system block the whole prompt is one user message. A remainder that is only a
    ``<USER>…</USER>`` block (0.1's messages format) or ``<START_OF_USER_PROMPT>`` block
    (AdalFlow's) is unwrapped.
    """
    match = _SYS_BLOCK.search(prompt)
    if match is None:
        return [{"role": "user", "content": prompt.strip()}]
    system = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
    rest = (prompt[: match.start()] + prompt[match.end() :]).strip()
    user_only = _USER_BLOCK.match(rest)
    if user_only is not None:
        rest = next(g for g in user_only.groups() if g is not None).strip()
    messages: List[Message] = []
    if system:
        messages.append({"role": "system", "content": system})
    if rest or not messages:
        messages.append({"role": "user", "content": rest})
    return messages


def conversation_to_messages(conversation: Any) -> List[Message]:
    """Chat history from a ``Conversation``, a list of ``DialogTurn`` s or of message dicts, or
    an object with a ``to_messages()`` method (the memory components)."""
    to_messages = getattr(conversation, "to_messages", None)
    if callable(to_messages):
        return conversation_to_messages(to_messages())
    turns = getattr(conversation, "dialog_turns", conversation)
    if hasattr(turns, "user_query") or hasattr(turns, "assistant_response"):
        turns = [turns]  # one DialogTurn
    if isinstance(turns, Mapping):
        turns = list(turns.values())
    messages: List[Message] = []
    for i, turn in enumerate(turns or []):
        if isinstance(turn, Mapping):
            role = turn.get("role")
            if role not in ROLES:
                raise ValueError(f"message {i} has role {role!r}; use one of {ROLES}")
            messages.append({"role": role, "content": turn.get("content", "")})
        elif hasattr(turn, "user_query") or hasattr(turn, "assistant_response"):
            if getattr(turn, "user_query", None) is not None:
                messages.append({"role": "user", "content": turn.user_query.query_str})
            if getattr(turn, "assistant_response", None) is not None:
                messages.append({"role": "assistant", "content": turn.assistant_response.response_str})
        else:
            raise TypeError(f"conversation item {i} is a {type(turn).__name__}, not a DialogTurn or dict")
    return messages


def build_chat_messages(prompt: str, conversation: Any) -> List[Message]:
    """System message from the prompt, then the conversation, then the prompt's user part."""
    parts = split_prompt(prompt)
    system = [m for m in parts if m["role"] == "system"]
    user = [m for m in parts if m["role"] == "user" and m["content"]]
    return system + conversation_to_messages(conversation) + user
