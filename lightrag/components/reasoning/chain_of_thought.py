"""Chain of thought: ask the model to reason step by step before it answers.

lightrag 0.1 shipped the two task descriptions below for use as a Generator's ``task_desc_str``.
:class:`ChainOfThought` packages the JSON variant: a Generator whose reply is parsed into
``{"thought", "answer"}``, with the answer as ``output.data`` and the reasoning kept in
``output.metadata["thought"]``. Chain of thought helps some tasks and models and not others:
benchmark it (``lightrag bench-prompts``) with and without.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> client = ScriptedClient(responses=['{"thought": "5 + 2 * 3 = 11", "answer": "11"}'])
    >>> cot = ChainOfThought(model_client=client)
    >>> out = cot("Roger has 5 balls and buys 2 cans of 3. How many balls?")
    >>> out.data, out.metadata["thought"]
    ('11', '5 + 2 * 3 = 11')
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.string_parser import JsonParser
from lightrag.core.types import GeneratorOutput

__all__ = ["COT_TASK_DESC_STR_BASIC", "COT_TASK_DESC_STR_WITH_JSON_OUTPUT", "ChainOfThought"]

COT_TASK_DESC_STR_BASIC = (
    "You are a helpful assistant. Let's think step-by-step to answer user's query."
)

COT_TASK_DESC_STR_WITH_JSON_OUTPUT = (
    f"\n{COT_TASK_DESC_STR_BASIC} Output JSON format: "
    '{"thought": "<The thought process to answer the query>", "answer": "<The answer to the query>"}\n'
)


class ChainOfThought(Component):
    """A Generator prompted to think step by step and answer in ``{"thought", "answer"}`` JSON.

    Args:
        model_client: the model client.
        model_kwargs: request arguments (``model``, ``temperature``...).
        template: a prompt template (the default lightrag template when None).
        task_desc_str: the instruction (:data:`COT_TASK_DESC_STR_WITH_JSON_OUTPUT`).
    """

    def __init__(
        self,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        template: Optional[str] = None,
        task_desc_str: str = COT_TASK_DESC_STR_WITH_JSON_OUTPUT,
    ) -> None:
        super().__init__()
        self.generator = Generator(
            model_client=model_client,
            model_kwargs=model_kwargs or {},
            template=template,
            prompt_kwargs={"task_desc_str": task_desc_str},
            output_processors=JsonParser(),
        )

    def _finish(self, output: GeneratorOutput) -> GeneratorOutput:
        if output.error is None and isinstance(output.data, dict):
            metadata = dict(output.metadata or {})
            metadata["thought"] = output.data.get("thought")
            output.metadata = metadata
            output.data = output.data.get("answer")
        elif output.error is None:
            output.error = f"the reply is not a {{thought, answer}} object: {output.data!r}"[:300]
            output.data = None
        return output

    def call(self, input_str: str, **prompt_kwargs: Any) -> GeneratorOutput:
        """Answer ``input_str``; ``data`` is the answer, ``metadata["thought"]`` the reasoning."""
        return self._finish(self.generator({"input_str": input_str, **prompt_kwargs}))

    async def acall(self, input_str: str, **prompt_kwargs: Any) -> GeneratorOutput:
        return self._finish(await self.generator.acall({"input_str": input_str, **prompt_kwargs}))
