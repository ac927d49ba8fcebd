"""``LLMAugmenter``: let an LLM fill the missing output fields of a training example.

Given an example's input and its partly filled output (``None`` or ``''`` fields, typically the
reasoning), the augmenter asks a (preferably strong) model for the missing values and returns
them as a dict. 0.1's few-shot optimizer used it to complete demonstrations; so does ours
(:class:`lightrag.optim.BootstrapFewShot` with ``llm_augmenter=``).

Example:
    >>> from dataclasses import dataclass, field
    >>> from lightrag.core import DataClass
    >>> from lightrag.components.model_client import ScriptedClient
    >>> @dataclass
    ... class QA(DataClass):
    ...     question: str = field(default="", metadata={"desc": "the question"})
    >>> @dataclass
    ... class Answer(DataClass):
    ...     thought: str = field(default=None, metadata={"desc": "the reasoning"})
    ...     answer: str = field(default="", metadata={"desc": "the answer"})
    >>> augmenter = LLMAugmenter(ScriptedClient(responses=["thought: Paris is the capital."]),
    ...                          model_kwargs={})
    >>> augmenter(QA("Capital of France?"), Answer(answer="Paris"))
    {'thought': 'Paris is the capital.'}
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Optional

from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.string_parser import YamlParser

__all__ = ["LLMAugmenter", "LLM_AUGMENTER_TEMPLATE", "YAML_OUTPUT_FORMAT"]

log = logging.getLogger(__name__)

YAML_OUTPUT_FORMAT = (
    "Answer with a YAML mapping of the missing field names to their values, and nothing else."
)

LLM_AUGMENTER_TEMPLATE = r"""<SYS>
Given inputs and outputs, you fill in every output field whose value is missing.
- null or '' means the field is missing.
- Understand how the outputs follow from the inputs. If a 'thought' or 'reasoning' field is
  missing, explain the reasoning from the inputs to the existing outputs.
- Your answer includes only the missing fields with their values.
- {{yaml_format_str}}
{% if task_context_str %}
<CONTEXT>
{{task_context_str}}
</CONTEXT>
{% endif %}
<EXAMPLES>
Inputs:
question: Where is the capital of France?
Outputs:
thought: null
answer: Paris
Your answer:
thought: I know the capital of France is Paris.
</EXAMPLES>
</SYS>
<Inputs>
{{input_str}}
</Inputs>
<Outputs>
{{output_str}}
</Outputs>
Your answer:"""


class LLMAugmenter(Component):
    """Fill missing output fields with an LLM (temperature 1 by default, as in 0.1).

    Args:
        model_client: the client of the (strong) model.
        model_kwargs: request arguments; ``temperature`` defaults to 1.
        task_context_str: a description of the task, shown to the model.
    """

    def __init__(
        self,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        task_context_str: Optional[str] = None,
    ) -> None:
        super().__init__()
        kwargs = {"temperature": 1, **(model_kwargs or {})}
        self.generator = Generator(
            model_client=model_client,
            model_kwargs=kwargs,
            output_processors=YamlParser(),
            template=LLM_AUGMENTER_TEMPLATE,
            prompt_kwargs={"task_context_str": task_context_str,
                           "yaml_format_str": YAML_OUTPUT_FORMAT},
        )

    def call(self, input_data_obj: DataClass, output_data_obj: DataClass) -> Dict[str, Any]:
        """The missing fields of ``output_data_obj`` as ``{field: value}``.

        Raises:
            ValueError: when the model call or the parsing fails (naming the error).
        """
        output = self.generator(prompt_kwargs={"input_str": input_data_obj.to_yaml(),
                                               "output_str": output_data_obj.to_yaml()})
        if output.error:
            raise ValueError(f"LLMAugmenter: the model reply could not be used: {output.error}")
        if not isinstance(output.data, dict):
            raise ValueError(f"LLMAugmenter: expected a YAML mapping, got {output.data!r}"[:300])
        return output.data
