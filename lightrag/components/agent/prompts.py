"""The ReAct agent's prompt (task, output format, template) and its built-in tools.

The template receives ``task_desc_str``, ``tools`` (one description per tool),
``output_format_str``, ``examples_str``, ``context_str``, ``input_str`` and ``steps_str``. The
``<SYS>`` block becomes the system message when the agent is given a memory (chat messages).
"""

from typing import Callable

from lightrag.core.generator import Generator

__all__ = [
    "DEFAULT_REACT_AGENT_SYSTEM_PROMPT", "DEFAULT_REACT_TEMPLATE", "REACT_OUTPUT_FORMAT",
    "REACT_TASK", "finish", "make_llm_tool",
]  # fmt: skip

REACT_TASK = (
    "You are an agent that answers the user's question step by step with the tools below. At "
    "each step, think about what you still need to know, then call exactly one tool; its result "
    "comes back as the observation of that step. Do not answer from memory: look the facts up, "
    "and call another tool if something is still missing. When the observations contain the "
    "answer, call finish with the complete answer."
)

REACT_OUTPUT_FORMAT = (
    "Reply with one JSON object and nothing else:\n"
    '{"thought": "<one short sentence>", "action": "<tool_name>(<arguments>)"}\n'
    '- "action" is a Python call of one tool, with keyword arguments and strings in single '
    "quotes, e.g. finish(answer='Paris').\n"
    "- Do not repeat an action that already has an observation."
)

DEFAULT_REACT_TEMPLATE = r"""<SYS>
{{task_desc_str}}

Tools:
{% for tool in tools %}
{{loop.index}}. {{tool}}
{% endfor %}

{{output_format_str}}
{% if examples_str %}

Examples:
{{examples_str}}
{% endif %}
{% if context_str %}

Context:
{{context_str}}
{% endif %}
</SYS>
Question: {{input_str}}
{% if steps_str %}

Steps so far:
{{steps_str}}
{% endif %}

Next step (JSON):"""

#: lightrag 0.1's name of the agent's prompt template
DEFAULT_REACT_AGENT_SYSTEM_PROMPT = DEFAULT_REACT_TEMPLATE


def finish(answer: str) -> str:
    """Finish the task: give the complete final answer to the user's question."""
    return answer


def make_llm_tool(generator: Generator) -> Callable[[str], str]:
    """The ``llm_tool(input)`` fallback: ask ``generator`` directly (raises on its error). The
    argument is named ``input`` as in 0.1, so a 0.1 prompt's ``llm_tool(input=...)`` runs."""

    def llm_tool(input: str) -> str:
        """Answer a general question from your own knowledge, when no other tool fits."""
        output = generator(prompt_kwargs={"input_str": input})
        if output.error is not None:
            raise RuntimeError(output.error)
        return str(output.data).strip()

    return llm_tool
