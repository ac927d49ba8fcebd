"""Memory components: chat history for Generators and agents.

* :class:`ConversationMemory`: the last N turns and/or a token budget of them;
* :class:`SummaryMemory`: recent turns verbatim, older ones summarised by an LLM.

Both return the history as chat messages (``memory()``), for
``generator(..., conversation=memory)`` (or ``memory()``) or ``ReActAgent(..., memory=memory)``,
and save to and load from JSON. ``Memory`` is the lightrag 0.1 name of :class:`ConversationMemory`.

Example:
    >>> memory = ConversationMemory(max_turns=10)
    >>> _ = memory.add("Hi", "Hello!")
    >>> memory()
    [{'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello!'}]
"""

from lightrag.components.memory.buffer import ConversationMemory
from lightrag.components.memory.summary import SummaryMemory

Memory = ConversationMemory

__all__ = ["ConversationMemory", "Memory", "SummaryMemory"]
