"""Conversation types: user queries, assistant responses, dialog turns and conversations.

Importable from ``lightrag.core.types`` too (the lightrag 0.1 path).

Example:
    >>> conv = Conversation()
    >>> conv.append_dialog_turn(DialogTurn(user_query=UserQuery("Hi"),
    ...                                    assistant_response=AssistantResponse("Hello!")))
    >>> conv.get_chat_history_str().splitlines()
    ['User: Hi', 'Assistant: Hello!']
"""

import uuid
from collections import OrderedDict
from dataclasses import InitVar, dataclass, field
from datetime import datetime
from typing import Any

from lightrag.core.base_data_class import DataClass


def _desc(text: str) -> dict[str, str]:
    return {"desc": text}


# ---- conversation ---------------------------------------------------------------------------


class DialogTurnOrderError(ValueError, AssertionError):
    """A turn appended with an ``order`` other than the next one (0.1 raised AssertionError)."""


@dataclass
class UserQuery(DataClass):
    """What the user said."""

    query_str: str = field(metadata=_desc("The user's query"))
    metadata: dict[str, Any] | None = field(default=None, metadata=_desc("Extra information"))


@dataclass
class AssistantResponse(DataClass):
    """What the assistant answered."""

    response_str: str = field(metadata=_desc("The assistant's response"))
    metadata: dict[str, Any] | None = field(default=None, metadata=_desc("Extra information"))


@dataclass
class DialogTurn(DataClass):
    """One exchange: a user query and the assistant's response.

    ``session_id`` is an alias of ``conversation_id``.
    """

    id: str = field(default_factory=lambda: str(uuid.uuid4()), metadata=_desc("Turn id"))
    user_id: str | None = field(default=None, metadata=_desc("The user's id"))
    conversation_id: str | None = field(default=None, metadata=_desc("The conversation's id"))
    order: int | None = field(default=None, metadata=_desc("Position in the conversation"))
    user_query: UserQuery | None = field(default=None, metadata=_desc("The user's query"))
    assistant_response: AssistantResponse | None = field(
        default=None, metadata=_desc("The assistant's response")
    )
    user_query_timestamp: datetime | None = field(
        default_factory=datetime.now, metadata=_desc("When the user asked")
    )
    assistant_response_timestamp: datetime | None = field(
        default_factory=datetime.now, metadata=_desc("When the assistant answered")
    )
    metadata: dict[str, Any] | None = field(default=None, metadata=_desc("Extra information"))
    vector: list[float] | None = field(default=None, metadata=_desc("Embedding of the turn"))

    def set_user_query(
        self, user_query: UserQuery, user_query_timestamp: datetime | None = None
    ) -> None:
        """Set the query and its time (now when not given)."""
        self.user_query = user_query
        self.user_query_timestamp = user_query_timestamp or datetime.now()

    def set_assistant_response(
        self,
        assistant_response: AssistantResponse,
        assistant_response_timestamp: datetime | None = None,
    ) -> None:
        """Set the response and its time (now when not given)."""
        self.assistant_response = assistant_response
        self.assistant_response_timestamp = assistant_response_timestamp or datetime.now()

    @property
    def session_id(self) -> str | None:
        """Alias of ``conversation_id``."""
        return self.conversation_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self.conversation_id = value


@dataclass
class Conversation(DataClass):
    """An ordered record of dialog turns, keyed by their ``order``.

    Example:
        >>> conv = Conversation()
        >>> conv.append_dialog_turn(DialogTurn(
        ...     user_query=UserQuery("Hi"), assistant_response=AssistantResponse("Hello!")))
        >>> conv.get_chat_history_str()
        'User: Hi\\nAssistant: Hello!\\n'
    """

    id: str = field(default_factory=lambda: str(uuid.uuid4()), metadata=_desc("Conversation id"))
    name: str | None = field(default=None, metadata=_desc("The conversation's name"))
    user_id: str | None = field(default=None, metadata=_desc("The user's id"))
    dialog_turns: OrderedDict[int, DialogTurn] = field(
        default_factory=OrderedDict, metadata=_desc("The turns, keyed by order")
    )
    metadata: dict[str, Any] | None = field(default=None, metadata=_desc("Extra information"))
    created_at: datetime | None = field(
        default_factory=datetime.now, metadata=_desc("When the conversation started")
    )
    dialog_turns_input: InitVar[list[DialogTurn] | OrderedDict[int, DialogTurn] | None] = None

    def __post_init__(
        self, dialog_turns_input: list[DialogTurn] | OrderedDict[int, DialogTurn] | None = None
    ) -> None:
        super().__post_init__()
        if isinstance(dialog_turns_input, dict):
            self.dialog_turns = OrderedDict(dialog_turns_input)
        elif dialog_turns_input:
            for turn in dialog_turns_input:
                self.append_dialog_turn(turn)

    @property
    def next_order(self) -> int:
        """The order the next appended turn must have."""
        return max(self.dialog_turns) + 1 if self.dialog_turns else 0

    def get_next_order(self) -> int:
        """0.1's name of :attr:`next_order`."""
        return self.next_order

    def append_dialog_turn(self, dialog_turn: DialogTurn) -> None:
        """Add a turn at :attr:`next_order` (a turn with ``order=None`` is given it).

        Raises:
            DialogTurnOrderError: (a ``ValueError`` and, as in 0.1, an ``AssertionError``) when
                the turn's ``order`` is set to anything else.
        """
        expected = self.next_order
        if dialog_turn.order is None:
            dialog_turn.order = expected
        elif dialog_turn.order != expected:
            raise DialogTurnOrderError(
                f"Dialog turn order must be {expected} (the next index), got {dialog_turn.order}"
            )
        self.dialog_turns[expected] = dialog_turn

    def get_dialog_turns(self) -> OrderedDict[int, DialogTurn]:
        """The turns, keyed by order."""
        return self.dialog_turns

    def update_dialog_turn(self, order: int, dialog_turn: DialogTurn) -> None:
        """Replace (or set) the turn at ``order``."""
        self.dialog_turns[order] = dialog_turn

    def delete_dialog_turn(self, order: int) -> None:
        """Remove the turn at ``order``; ``KeyError`` if there is none."""
        del self.dialog_turns[order]

    def get_chat_history_str(self) -> str:
        """``User: ...`` / ``Assistant: ...`` lines for every turn, in order, each ending with a
        newline as in 0.1 (a template ``{{chat_history_str}}User: {{input}}`` stays readable)."""
        lines = []
        for turn in self.dialog_turns.values():
            if turn.user_query is not None:
                lines.append(f"User: {turn.user_query.query_str}")
            if turn.assistant_response is not None:
                lines.append(f"Assistant: {turn.assistant_response.response_str}")
        return "".join(line + "\n" for line in lines)
