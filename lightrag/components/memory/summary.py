"""``SummaryMemory``: recent turns verbatim, older turns folded by an LLM into a running summary.

When the history grows past ``keep_last`` turns (and, if ``max_tokens`` is set, past that many
tokens), the older turns and the current summary are sent to the summariser Generator, and its
reply becomes the new summary. If the summariser fails or answers nothing, the turns are kept
as they are and folding is tried again on the next ``add``: history is never lost.

Example:
    >>> from lightrag.core.generator import Generator
    >>> from lightrag.components.model_client import ScriptedClient
    >>> summariser = Generator(model_client=ScriptedClient(responses=["Ada likes tea."]))
    >>> memory = SummaryMemory(summariser, keep_last=1)
    >>> _ = memory.add("I am Ada and I like tea.", "Noted, Ada.")
    >>> _ = memory.add("What do I like?", "Tea.")
    >>> memory.summary
    'Ada likes tea.'
    >>> [m["role"] for m in memory()]
    ['system', 'user', 'assistant']
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, List, Optional

from lightrag.components.memory.buffer import ConversationMemory, Message, _check_limit
from lightrag.core.generator import Generator
from lightrag.core.types import DialogTurn, GeneratorOutput
from lightrag.utils.secrets import redact_text

log = logging.getLogger(__name__)

__all__ = ["SUMMARY_TASK", "SummaryMemory"]

SUMMARY_TASK = (
    "You keep a running summary of a conversation between a user and an assistant. Merge the "
    "new turns into the current summary. Keep names, numbers, facts, decisions and the user's "
    "preferences; drop greetings and filler. Reply with the updated summary only, in at most "
    "{{max_words}} words."
)


def _error_output(e: Exception) -> GeneratorOutput:
    return GeneratorOutput(error=redact_text(f"{type(e).__name__}: {e}"))


def _guarded(send: Callable[[], GeneratorOutput]) -> GeneratorOutput:
    """``send()``; an exception (a custom summariser may raise) becomes an error output."""
    try:
        return send()
    except Exception as e:  # noqa: BLE001 - history is kept, the failure is logged by _fold
        return _error_output(e)


class SummaryMemory(ConversationMemory):
    """Keep the last ``keep_last`` turns verbatim and an LLM-written summary of the older ones.

    Args:
        generator: the summariser. It is called with ``prompt_kwargs={"task_desc_str": ...,
            "input_str": ...}``, which the default lightrag template renders; a custom template
            must use ``input_str`` (the current summary and the turns to fold).
        keep_last: turns always kept verbatim (0 folds every turn into the summary).
        max_tokens: fold only once the verbatim turns exceed this many tokens (None: fold as
            soon as there are more than ``keep_last`` turns).
        max_words: the summary length asked of the summariser.

    ``call()`` returns a system message holding the summary (once there is one), then the
    verbatim turns as user / assistant messages.

    Example:
        >>> from lightrag.core.generator import Generator
        >>> from lightrag.components.model_client import ScriptedClient
        >>> broken = Generator(model_client=ScriptedClient(responses=[RuntimeError("down")]))
        >>> memory = SummaryMemory(broken, keep_last=0)
        >>> _ = memory.add("Remember 42.", "Sure.")
        >>> len(memory), memory.summary
        (1, '')
    """

    def __init__(
        self,
        generator: Generator,
        keep_last: int = 2,
        max_tokens: Optional[int] = None,
        max_words: int = 120,
    ) -> None:
        super().__init__()
        if not isinstance(keep_last, int) or keep_last < 0:
            raise ValueError(f"keep_last must be an int >= 0, got {keep_last!r}")
        self.generator = generator
        self.keep_last = keep_last
        self.max_tokens = _check_limit("max_tokens", max_tokens)
        self.max_words = _check_limit("max_words", max_words)
        self.summary = ""

    # ----------------------------------------------------------------- folding
    def _due(self) -> List[DialogTurn]:
        """The turns to fold into the summary now (oldest first), possibly none."""
        turns = self.turns
        if len(turns) <= self.keep_last:
            return []
        if self.max_tokens is not None and self.token_count() <= self.max_tokens:
            return []
        return turns[: len(turns) - self.keep_last]

    def _request(self, turns: List[DialogTurn]) -> Dict[str, Any]:
        lines = []
        for turn in turns:
            if turn.user_query is not None:
                lines.append(f"User: {turn.user_query.query_str}")
            if turn.assistant_response is not None:
                lines.append(f"Assistant: {turn.assistant_response.response_str}")
        text = (
            f"Current summary:\n{self.summary or '(none yet)'}\n\n"
            "New turns:\n" + "\n".join(lines) + "\n\nUpdated summary:"
        )
        task = SUMMARY_TASK.replace("{{max_words}}", str(self.max_words))
        return {"task_desc_str": task, "input_str": text}

    def _fold(self, turns: List[DialogTurn], output: Optional[GeneratorOutput]) -> bool:
        """Adopt the summariser's reply and drop ``turns``; keep everything if it failed."""
        text = output.data if output is not None and output.error is None else None
        if not isinstance(text, str) or not text.strip():
            reason = output.error if output is not None and output.error else "no summary text"
            log.warning("SummaryMemory: summariser failed (%s); keeping %d turns", reason,
                        len(turns))
            return False
        self.summary = text.strip()
        for turn in turns:
            self.conversation.delete_dialog_turn(turn.order)
        return True

    def _after_add(self) -> None:
        """Fold older turns into the summary when due (a failed summariser keeps them)."""
        turns = self._due()
        if turns:
            self._fold(turns, _guarded(lambda: self.generator(prompt_kwargs=self._request(turns))))

    async def _aafter_add(self) -> None:
        """Async :meth:`_after_add` (the summariser is called with ``acall``)."""
        turns = self._due()
        if not turns:
            return
        try:
            output = await self.generator.acall(prompt_kwargs=self._request(turns))
        except Exception as e:  # noqa: BLE001 - a custom summariser may raise; history is kept
            output = _error_output(e)
        self._fold(turns, output)

    def _trim(self) -> List[DialogTurn]:
        """Nothing is dropped here: older turns leave only by being summarised."""
        return []

    def clear(self) -> None:
        """Forget the turns and the summary."""
        super().clear()
        self.summary = ""

    # ----------------------------------------------------------------- reading
    def call(self) -> List[Message]:
        """A system message with the summary (when there is one), then the verbatim turns."""
        messages: List[Message] = []
        if self.summary:
            messages.append(
                {"role": "system", "content": f"Summary of the earlier conversation:\n{self.summary}"}
            )
        return messages + super().call()

    def as_text(self) -> str:
        """``Summary: ...`` (when there is one), then ``User:`` / ``Assistant:`` lines."""
        recent = super().as_text()
        if not self.summary:
            return recent
        return f"Summary: {self.summary}" + (f"\n{recent}" if recent else "")

    # ----------------------------------------------------------- persistence
    def _state(self) -> Dict[str, Any]:
        state = super()._state()
        state.update(summary=self.summary, keep_last=self.keep_last)
        return state

    def _restore(self, state: Dict[str, Any]) -> None:
        super()._restore(state)
        self.summary = str(state.get("summary") or "")

    def _extra_repr(self) -> str:
        return (
            f"keep_last={self.keep_last}, max_tokens={self.max_tokens}, "
            f"turns={len(self)}, summary_chars={len(self.summary)}"
        )
