"""The default prompt template of :class:`~lightrag.core.prompt_builder.Prompt` and Generators.

Every section is optional: a variable that is not given leaves its section out. The variables are
``task_desc_str, output_format_str, tools_str, examples_str, chat_history_str, context_str,
steps_str, input_str``. The text is 0.1's, its ``{# ... #}`` comments included.
"""

LIGHTRAG_DEFAULT_PROMPT_ARGS = [
    "task_desc_str",
    "output_format_str",
    "tools_str",
    "examples_str",
    "chat_history_str",
    "context_str",
    "steps_str",
    "input_str",
]

LIGHTRAG_DEFAULT_PROMPT_TRAINABLE_PARAMS = ["task_desc_str", "output_format_str", "examples_str"]

DEFAULT_LIGHTRAG_SYSTEM_PROMPT = r"""<SYS>
{# task desc #}
{% if task_desc_str %}
{{task_desc_str}}
{% else %}
You are a helpful assistant.
{% endif %}
{# output format #}
{% if output_format_str %}
<OUTPUT_FORMAT>
{{output_format_str}}
</OUTPUT_FORMAT>
{% endif %}
{# tools #}
{% if tools_str %}
<TOOLS>
{{tools_str}}
</TOOLS>
{% endif %}
{# example #}
{% if examples_str %}
<EXAMPLES>
{{examples_str}}
</EXAMPLES>
{% endif %}
{# chat history #}
{% if chat_history_str %}
<CHAT_HISTORY>
{{chat_history_str}}
</CHAT_HISTORY>
{% endif %}
{#contex#}
{% if context_str %}
<CONTEXT>
{{context_str}}
</CONTEXT>
{% endif %}
{# steps #}
{% if steps_str %}
<STEPS>
{{steps_str}}
</STEPS>
{% endif %}
</SYS>
{% if input_str %}
<User>
{{input_str}}
</User>
{% endif %}
You:
"""

#: lightrag 0.1's short template: the task in a ``<SYS>`` block, then the user's input.
SIMPLE_DEFAULT_LIGHTRAG_SYSTEM_PROMPT = r"""<SYS>{{task_desc_str}}</SYS>
User: {{input_str}}
You:"""
