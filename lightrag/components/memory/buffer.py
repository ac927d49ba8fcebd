"""``ConversationMemory``: the recent turns of a chat, as messages a Generator or agent can use.

The memory keeps :class:`~lightrag.core.types.DialogTurn` s in a
:class:`~lightrag.core.types.Conversation`, bounded by a number of turns, a token budget, or
both; the oldest turns are dropped first (the newest turn is always kept). Calling it returns
the history as chat messages, ready for ``Generator(..., conversation=memory())``.

Example:
    >>> memory = ConversationMemory(max_turns=2)
    >>> _ = memory.add("Hi, I am Ada.", "Hello Ada!")
    >>> _ = memory.add("What is 2+2?", "4.")
    >>> _ = memory.add("And 3+3?", "6.")
    >>> [m["content"] for m in memory()]
    ['What is 2+2?', '4.', 'And 3+3?', '6.']
    >>> print(memory.as_text())
    User: What is 2+2?
    Assistant: 4.
    User: And 3+3?
    Assistant: 6.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Dict, List, Optional, Union

from lightrag.core.component import Component
from lightrag.core.db import LocalDB
from lightrag.core.messages import conversation_to_messages
from lightrag.core.tokenizer import count_tokens
from lightrag.core.types import AssistantResponse, Conversation, DialogTurn, UserQuery
from lightrag.utils.file_io import PathLike, load_json, save_json

log = logging.getLogger(__name__)

__all__ = ["ConversationMemory", "Message"]

Message = Dict[str, Any]
_TIMESTAMPS = ("user_query_timestamp", "assistant_response_timestamp")


def _check_limit(name: str, value: Optional[int]) -> Optional[int]:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    return value


def turn_tokens(turn: DialogTurn) -> int:
    """Tokens of a turn's user query and assistant response (``cl100k_base``)."""
    query = turn.user_query.query_str if turn.user_query is not None else ""
    response = turn.assistant_response.response_str if turn.assistant_response is not None else ""
    return count_tokens(query) + count_tokens(response)


def turn_to_json(turn: DialogTurn) -> Dict[str, Any]:
    """A turn as a JSON-ready dict (timestamps as ISO strings)."""
    data = turn.to_dict()
    for key in _TIMESTAMPS:
        if isinstance(data.get(key), datetime):
            data[key] = data[key].isoformat()
    return data


def turn_from_json(data: Dict[str, Any]) -> DialogTurn:
    """Inverse of :func:`turn_to_json`."""
    data = dict(data)
    for key in _TIMESTAMPS:
        if isinstance(data.get(key), str):
            data[key] = datetime.fromisoformat(data[key])
    return DialogTurn.from_dict(data)


class ConversationMemory(Component):
    """A chat history buffer: the last ``max_turns`` turns and/or the turns within ``max_tokens``.

    Args:
        max_turns: keep at most this many turns (None: no limit).
        max_tokens: keep the newest turns whose queries and responses fit in this many tokens
            (None: no limit). The newest turn is kept even when it alone is larger.

    ``call()`` (also ``memory()``) and ``acall()`` return ``[{"role", "content"}, ...]``;
    :meth:`as_text` gives ``User: ...`` / ``Assistant: ...`` lines for text prompts.

    Example:
        >>> from lightrag.core.generator import Generator
        >>> from lightrag.components.model_client import ScriptedClient
        >>> client = ScriptedClient(responses=["Your name is Ada."])
        >>> memory = ConversationMemory(max_tokens=500)
        >>> _ = memory.add("I am Ada.", "Nice to meet you, Ada.")
        >>> gen = Generator(model_client=client, template="<SYS>Be brief.</SYS>{{input_str}}")
        >>> gen({"input_str": "What is my name?"}, conversation=memory()).data
        'Your name is Ada.'
        >>> [m["role"] for m in client.requests[0]["prompt"]]
        ['system', 'user', 'assistant', 'user']
    """

    def __init__(
        self,
        max_turns: Optional[int] = None,
        max_tokens: Optional[int] = None,
        turn_db: Optional[LocalDB] = None,
    ) -> None:
        super().__init__()
        if isinstance(max_turns, LocalDB):  # 0.1's positional form: Memory(turn_db)
            max_turns, turn_db = None, max_turns
        self.max_turns = _check_limit("max_turns", max_turns)
        self.max_tokens = _check_limit("max_tokens", max_tokens)
        self.conversation = Conversation()
        # lightrag 0.1's stores: every turn ever added (never trimmed) and past conversations;
        # plain attributes (not children), so they stay out of the printed tree and of to_dict
        object.__setattr__(self, "turn_db", turn_db if turn_db is not None else LocalDB())
        object.__setattr__(self, "conver_db", LocalDB())

    @property
    def current_conversation(self) -> Conversation:
        """0.1's name of :attr:`conversation`."""
        return self.conversation

    current_convesation = current_conversation  # 0.1's spelling

    # ------------------------------------------------------------------ turns
    @property
    def turns(self) -> List[DialogTurn]:
        """The kept turns, oldest first."""
        return list(self.conversation.dialog_turns.values())

    def __len__(self) -> int:
        return len(self.conversation.dialog_turns)

    def token_count(self) -> int:
        """Tokens of the kept turns."""
        return sum(turn_tokens(turn) for turn in self.turns)

    def _append(
        self,
        user_query: Union[str, UserQuery],
        assistant_response: Union[str, AssistantResponse],
        metadata: Optional[Dict[str, Any]] = None,
    ) -> DialogTurn:
        if isinstance(user_query, str):
            user_query = UserQuery(query_str=user_query)
        if isinstance(assistant_response, str):
            assistant_response = AssistantResponse(response_str=assistant_response)
        if not isinstance(user_query, UserQuery) or not isinstance(
            assistant_response, AssistantResponse
        ):
            raise TypeError("add() takes str or UserQuery, and str or AssistantResponse")
        turn = DialogTurn(
            conversation_id=self.conversation.id,
            user_query=user_query,
            assistant_response=assistant_response,
            metadata=metadata,
        )
        self.conversation.append_dialog_turn(turn)
        self.turn_db.add(turn)
        return turn

    def add(
        self,
        user_query: Union[str, UserQuery],
        assistant_response: Union[str, AssistantResponse],
        metadata: Optional[Dict[str, Any]] = None,
    ) -> DialogTurn:
        """Record one exchange, then drop the oldest turns beyond the limits; returns the turn."""
        turn = self._append(user_query, assistant_response, metadata)
        self._after_add()
        return turn

    add_dialog_turn = add  # the lightrag 0.1 Memory name

    async def aadd(
        self,
        user_query: Union[str, UserQuery],
        assistant_response: Union[str, AssistantResponse],
        metadata: Optional[Dict[str, Any]] = None,
    ) -> DialogTurn:
        """Async :meth:`add`."""
        turn = self._append(user_query, assistant_response, metadata)
        await self._aafter_add()
        return turn

    def _after_add(self) -> None:
        """What follows a new turn: here, dropping the oldest turns beyond the limits."""
        self._trim()

    async def _aafter_add(self) -> None:
        """Async :meth:`_after_add`."""
        self._after_add()

    def _drop_oldest(self) -> DialogTurn:
        order = next(iter(self.conversation.dialog_turns))
        turn = self.conversation.dialog_turns[order]
        self.conversation.delete_dialog_turn(order)
        return turn

    def _trim(self) -> List[DialogTurn]:
        """Drop the oldest turns beyond ``max_turns`` / ``max_tokens``; returns them."""
        dropped: List[DialogTurn] = []
        if self.max_turns is not None:
            while len(self) > self.max_turns:
                dropped.append(self._drop_oldest())
        if self.max_tokens is not None:
            sizes = [turn_tokens(turn) for turn in self.turns]
            total = sum(sizes)
            for size in sizes[:-1]:
                if total <= self.max_tokens:
                    break
                dropped.append(self._drop_oldest())
                total -= size
        if dropped:
            log.debug("%s dropped %d old turns", type(self).__name__, len(dropped))
        return dropped

    def clear(self) -> None:
        """Forget the kept turns: the conversation goes to ``conver_db``, a new one starts."""
        if self.conversation.dialog_turns:
            self.conver_db.add(self.conversation)
        self.conversation = Conversation()

    # ----------------------------------------------------------------- reading
    def call(self) -> List[Message]:
        """The kept turns as chat messages (``user`` / ``assistant``)."""
        return conversation_to_messages(self.turns)

    async def acall(self) -> List[Message]:
        """Async :meth:`call`."""
        return self.call()

    def to_messages(self) -> List[Message]:
        """The same as :meth:`call`; lets a Generator take the memory itself as its
        ``conversation``: ``generator(prompt_kwargs, conversation=memory)``."""
        return self.call()

    def as_text(self) -> str:
        """The kept turns as ``User: ...`` / ``Assistant: ...`` lines (no newline after the last)."""
        return self.conversation.get_chat_history_str().rstrip("\n")

    # ----------------------------------------------------------- persistence
    def _state(self) -> Dict[str, Any]:
        return {
            "type": type(self).__name__,
            "conversation_id": self.conversation.id,
            "max_turns": self.max_turns,
            "max_tokens": self.max_tokens,
            "turns": [turn_to_json(turn) for turn in self.turns],
        }

    def _restore(self, state: Dict[str, Any]) -> None:
        conversation = Conversation(id=state.get("conversation_id") or Conversation().id)
        for data in state.get("turns", []):
            turn = turn_from_json(data)
            if isinstance(turn.order, int) and turn.order >= conversation.next_order:
                conversation.update_dialog_turn(turn.order, turn)
            else:
                turn.order = None
                conversation.append_dialog_turn(turn)
        self.conversation = conversation

    _to_dict_exclude = ("conversation", "turn_db", "conver_db")

    def to_dict(self, exclude: Optional[List[str]] = None) -> Dict[str, Any]:
        """The component dict (``{"type", "data"}``), with the turns stored as :meth:`save` does."""
        out = super().to_dict(exclude)
        out["data"]["_memory_state"] = self._state()
        return out

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> ConversationMemory:
        """Rebuild a memory, turns included, from :meth:`to_dict` output."""
        payload = dict(data.get("data", data))
        state = payload.pop("_memory_state", None) or {"turns": []}
        memory = super().from_dict({"type": cls.__name__, "data": payload})
        object.__setattr__(memory, "turn_db", LocalDB())
        object.__setattr__(memory, "conver_db", LocalDB())
        memory._restore(state)
        return memory

    def save(self, path: PathLike) -> None:
        """Write the turns (and settings) to a JSON file, atomically."""
        save_json(self._state(), path)

    def load(self, path: PathLike) -> ConversationMemory:
        """Replace the turns with those saved at ``path`` (trimmed to this memory's limits).

        Raises:
            ValueError: the file does not hold a saved memory.
        """
        state = load_json(path, missing_ok=False)
        if not isinstance(state, dict) or not isinstance(state.get("turns"), list):
            raise ValueError(f"{path}: not a saved conversation memory")
        self._restore(state)
        self._trim()
        return self

    def _extra_repr(self) -> str:
        return f"max_turns={self.max_turns}, max_tokens={self.max_tokens}, turns={len(self)}"
