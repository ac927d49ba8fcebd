"""lightrag 0.1's module path of ``Memory``: the conversation memory of ``buffer``.

``Memory(turn_db)`` (0.1's form) keeps every turn in ``turn_db`` too, and exposes
``current_conversation`` and ``conver_db`` as 0.1 did.

Example:
    >>> from lightrag.core.db import LocalDB
    >>> memory = Memory(LocalDB())
    >>> _ = memory.add_dialog_turn("Hi", "Hello!")
    >>> memory.turn_db.length, memory.current_conversation.get_chat_history_str()
    (1, 'User: Hi\\nAssistant: Hello!\\n')
"""

from lightrag.components.memory.buffer import ConversationMemory

Memory = ConversationMemory

__all__ = ["Memory"]
