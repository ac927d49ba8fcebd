"""Prompt templates of graph RAG (Jinja2), the JSON schemas for constrained decoding, and the
helper that feeds a two-part prompt (instructions + request) to any :class:`Generator`.

Extraction, gleaning and keyword prompts come in two parts: a *system* template (instructions,
format, examples) and a *user* template (the text or query). :func:`fill_generator_prompt` puts
them into the generator's template variables (``task_desc_str`` and ``input_str`` of the library
default template), so an extractor works with a plain ``Generator(model_client=...)``. The
summary and answer prompts are whole templates (a ``<SYS>`` block, then the user part) meant to be
a Generator's own ``template``.

Example:
    >>> system = render_prompt(ENTITY_EXTRACTION_SYSTEM_PROMPT, entity_types=["person"])
    >>> "person" in system and TUPLE_DELIMITER in system
    True
    >>> sorted(KEYWORDS_JSON_SCHEMA["properties"])
    ['high_level_keywords', 'low_level_keywords']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from lightrag.core.prompt_builder import Prompt

if TYPE_CHECKING:
    from lightrag.core.generator import Generator

TUPLE_DELIMITER = "<|#|>"
COMPLETION_MARKER = "<|DONE|>"

DEFAULT_ENTITY_TYPES: List[str] = [
    "person", "organization", "location", "event", "concept",
    "method", "artifact", "creature", "data",
]  # fmt: skip

NO_CONTEXT_RESPONSE = (
    "I could not find enough information in the knowledge base to answer this question. "
    "[no-context]"
)

_ENTITY_TYPE_LIST = (
    "{{ ((entity_types or " + repr(DEFAULT_ENTITY_TYPES) + ") + ['other']) | join(', ') }}"
)
_LINE_FORMAT_VARS = """{% set d = tuple_delimiter or "<|#|>" %}
{% set done = completion_marker or "<|DONE|>" %}
"""

ENTITY_EXTRACTION_SYSTEM_PROMPT = (
    _LINE_FORMAT_VARS
    + """You build a knowledge graph from text. Read the input text and list the entities it \
mentions and the relationships between them.

## Entities
Keep only clearly identifiable things (people, groups, places, happenings, ideas, techniques, \
objects, ...). For each one give:
- name: the name as used in the text; use the same spelling every time; title case for \
common nouns.
- type: exactly one of: """
    + _ENTITY_TYPE_LIST
    + """
- description: one or two sentences saying what the text states about it, using only the text.

## Relationships
Link two entities from your list when the text says how they are connected. A statement about \
three or more entities becomes several two-entity relationships. For each one give:
- source and target: entity names exactly as listed above.
- keywords: a few comma-separated words naming the kind of link (e.g. "employment, research").
- description: one sentence explaining the link.
Relationships have no direction; list each pair once. Never link an entity to itself.

## Output format
One record per line, fields separated by {{d}}, no numbering, no extra text:
entity{{d}}name{{d}}type{{d}}description
relation{{d}}source{{d}}target{{d}}keywords{{d}}description
Write all entity lines first, then the relation lines, most important first.
{% if max_records %}Write at most {{max_records}} lines.
{% endif %}
The separator {{d}} is a fixed marker: copy it exactly, never put text \
inside it and never use it inside a field (separate keywords with commas).
Write descriptions in the third person; do not refer to "the text" or "this article".
Write names and descriptions in {{language or "English"}}; keep proper nouns in their original \
language.
After the last record write {{done}} on its own line. If the text \
holds nothing to extract, write only {{done}}.

## Example
{% if examples %}
{{examples}}
{% else %}
Input text:
```
In 2019 the marine biologist Noor Haddad joined the Tidewater Institute in Halifax, where she \
tracked grey seal colonies with thermal drones.
```
Output:
entity{{d}}Noor Haddad{{d}}person{{d}}Noor Haddad is a marine biologist who joined the \
Tidewater Institute in 2019 and tracks grey seal colonies.
entity{{d}}Tidewater Institute{{d}}organization{{d}}The Tidewater Institute is a research \
institute in Halifax.
entity{{d}}Halifax{{d}}location{{d}}Halifax is the city where the Tidewater Institute is based.
entity{{d}}Grey Seal{{d}}creature{{d}}Grey seals live in colonies that Noor Haddad tracks.
entity{{d}}Thermal Drone{{d}}method{{d}}Thermal drones are used to track grey seal colonies.
relation{{d}}Noor Haddad{{d}}Tidewater Institute{{d}}employment, research{{d}}Noor Haddad \
joined the Tidewater Institute in 2019.
relation{{d}}Tidewater Institute{{d}}Halifax{{d}}location{{d}}The Tidewater Institute is \
located in Halifax.
relation{{d}}Noor Haddad{{d}}Grey Seal{{d}}field study{{d}}Noor Haddad tracks grey seal \
colonies.
relation{{d}}Noor Haddad{{d}}Thermal Drone{{d}}tool use{{d}}Noor Haddad uses thermal drones \
for her seal surveys.
{{done}}
{% endif %}"""
)

ENTITY_EXTRACTION_JSON_SYSTEM_PROMPT = (
    """You build a knowledge graph from text. Read the input text and list the entities it \
mentions and the relationships between them.

Entities: clearly identifiable things only. "name" as used in the text (same spelling every \
time, title case for common nouns); "type" exactly one of: """
    + _ENTITY_TYPE_LIST
    + """; "description": one or two sentences of what the text states about it.
Relationships: two listed entities that the text connects. "source" and "target" are entity \
names exactly as listed; "keywords" a few comma-separated words naming the kind of link; \
"description" one sentence explaining it. No direction, each pair once, no self-links; split \
statements about three or more entities into pairs.
{% if max_records %}List at most {{max_records}} items in total.
{% endif %}
Write in the third person, in {{language or "English"}}, keeping proper nouns in their \
original language.

Answer with one JSON object and nothing else:
{"entities": [{"name": "...", "type": "...", "description": "..."}],
 "relationships": [{"source": "...", "target": "...", "keywords": "...", "description": "..."}]}
If the text holds nothing to extract, answer {"entities": [], "relationships": []}.

## Example
{% if examples %}
{{examples}}
{% else %}
Input text:
```
The Larkspur Bridge, designed by engineer Tomas Brandt, opened over the Vesle River in 1931.
```
Output:
{"entities": [
 {"name": "Larkspur Bridge", "type": "artifact", "description": "The Larkspur Bridge opened \
over the Vesle River in 1931."},
 {"name": "Tomas Brandt", "type": "person", "description": "Tomas Brandt is the engineer who \
designed the Larkspur Bridge."},
 {"name": "Vesle River", "type": "location", "description": "The Vesle River is crossed by the \
Larkspur Bridge."}],
 "relationships": [
 {"source": "Tomas Brandt", "target": "Larkspur Bridge", "keywords": "design, engineering", \
"description": "Tomas Brandt designed the Larkspur Bridge."},
 {"source": "Larkspur Bridge", "target": "Vesle River", "keywords": "crossing", \
"description": "The Larkspur Bridge spans the Vesle River."}]}
{% endif %}"""
)

ENTITY_EXTRACTION_USER_PROMPT = """Extract the entities and relationships of the text between \
the fences, following the instructions and the output format above.
Input text:
```
{{input_text}}
```
Output:"""

ENTITY_GLEANING_USER_PROMPT = (
    _LINE_FORMAT_VARS
    + """{{first_prompt}}
{% for answer in previous_answers %}

---Your earlier answer---
{{answer}}
{% endfor %}

---Follow-up---
Read the input text again. Some entities or relationships may have been missed, or written in \
the wrong format. List only those: do not repeat records you already gave.
{% if json_mode %}
Answer with one JSON object of the same structure; if nothing was missed, answer \
{"entities": [], "relationships": []}.
{% else %}
Use exactly the same line format and end with {{done}}; if nothing \
was missed, write only {{done}}.
{% endif %}"""
)

EXTRACTION_JSON_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "description": {"type": "string"},
                },
                "required": ["name", "type", "description"],
            },
        },
        "relationships": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "keywords": {"type": "string"},
                    "description": {"type": "string"},
                },
                "required": ["source", "target", "keywords", "description"],
            },
        },
    },
    "required": ["entities", "relationships"],
}

SUMMARIZE_DESCRIPTIONS_PROMPT = """<SYS>
You merge the notes a knowledge graph collected about one {{description_type or "entity"}} \
into a single description.
Rules:
- Keep every distinct fact from the notes; drop repetitions.
- When notes disagree, keep both versions and say that the sources differ.
- Use only the notes; add nothing of your own.
- Write plain prose in the third person, naming the {{description_type or "entity"}} at the \
start.
- Write in {{language or "English"}}, at most about {{summary_length or 200}} words.
- Answer with the description only.
</SYS>
Name: {{description_name or name}}
Notes:
{% if description_list %}
{% for note in description_list %}
- {{note}}
{% endfor %}
{% else %}
{{descriptions}}
{% endif %}
Merged description:"""

KEYWORDS_SYSTEM_PROMPT = """You pick search keywords for a retrieval system that looks things \
up in a knowledge graph. From the user's query make two lists:
- "high_level_keywords": the broad themes, the subject area, the kind of question and what the \
user wants to know.
- "low_level_keywords": the concrete things named or meant: people, organisations, places, \
products, technical terms, specific objects or events.
Rules: use only what the query says or clearly implies; do not invent names. Prefer a short \
phrase that names one thing ("quarterly sales report") over its single words. No duplicates. \
For a greeting or a meaningless query, give two empty lists. Write the keywords in \
{{language or "English"}}.
Answer with one JSON object and nothing else, no code fence:
{"high_level_keywords": ["..."], "low_level_keywords": ["..."]}

## Examples
Query: How did the closing of the Harwell steel mill affect jobs in Sheffield?
{"high_level_keywords": ["industrial decline", "employment impact", "local economy"], \
"low_level_keywords": ["Harwell steel mill", "Sheffield", "mill closure", "jobs"]}

Query: Which enzymes break down starch during digestion?
{"high_level_keywords": ["digestion", "carbohydrate metabolism", "enzyme function"], \
"low_level_keywords": ["starch", "amylase", "enzymes"]}"""

KEYWORDS_USER_PROMPT = """Query: {{query}}
{% if history_str %}
Earlier conversation, for context only:
{{history_str}}
{% endif %}
JSON:"""

KEYWORDS_JSON_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "high_level_keywords": {"type": "array", "items": {"type": "string"}},
        "low_level_keywords": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["high_level_keywords", "low_level_keywords"],
}

_ANSWER_RULES = """## How to answer
1. Work out what the user is asking{% if history_str %}, using the earlier conversation to \
resolve references{% endif %}.
2. Find the facts in the context that answer it and combine them into one coherent answer. \
Use general knowledge only to connect the facts smoothly, never as a source of facts.
3. If the context does not contain the answer, say that there is not enough information; do \
not guess.
4. Each document chunk starts with its reference number [n]. After each sentence of your \
answer, write the [n] of the chunk it comes from.

## Form
- Answer in the language of the question, as: {{response_type or "Multiple Paragraphs"}}.
- Write only the answer: no headings, no reference list, no tags, no code blocks.
{% if user_prompt %}

## Additional instructions
{{user_prompt}}
{% endif %}
{% if history_str %}

## Earlier conversation
{{history_str}}
{% endif %}"""

GRAPH_ANSWER_PROMPT = (
    """<SYS>
You answer questions using only the context below: entities and relationships from a \
knowledge graph, and document chunks. Give a complete, well organised answer.

"""
    + _ANSWER_RULES
    + """

## Context
{{context_data}}
</SYS>
{% if query %}{{query}}{% endif %}"""
)

NAIVE_ANSWER_PROMPT = (
    """<SYS>
You answer questions using only the document chunks in the context below. Give a complete, \
well organised answer.

"""
    + _ANSWER_RULES
    + """

## Context
{{context_data}}
</SYS>
{% if query %}{{query}}{% endif %}"""
)


def render_prompt(template: str, **variables: Any) -> str:
    """Render a Jinja2 ``template`` (variables it declares default to None), stripped.

    Example:
        >>> render_prompt(KEYWORDS_USER_PROMPT, query="Who founded Acme?").splitlines()[0]
        'Query: Who founded Acme?'
    """
    prompt = Prompt(template=template)
    return prompt(**{k: v for k, v in variables.items() if k in prompt.prompt_variables}).strip()


def check_generator_template(generator: Generator) -> None:
    """Raise ``ValueError`` unless the generator's template renders an ``input_str``."""
    if "input_str" not in generator.prompt.prompt_variables:
        raise ValueError(
            "the generator's template must use the variable 'input_str' (and ideally "
            f"'task_desc_str'); it uses {generator.prompt.prompt_variables}. Leave the template "
            "unset to get the library default."
        )


def fill_generator_prompt(generator: Generator, system: str, user: str) -> Dict[str, str]:
    """``prompt_kwargs`` that make ``generator`` send ``system`` as instructions and ``user`` as
    the request: ``task_desc_str``/``input_str`` when its template has both, else one
    ``input_str`` holding a ``<SYS>`` block (which chat clients turn into a system message).

    Example:
        >>> from lightrag.core.generator import Generator
        >>> from lightrag.components.model_client.scripted_client import ScriptedClient
        >>> gen = Generator(model_client=ScriptedClient(), template="{{input_str}}")
        >>> fill_generator_prompt(gen, "Be brief.", "Hi")
        {'input_str': '<SYS>\\nBe brief.\\n</SYS>\\nHi'}
    """
    check_generator_template(generator)
    if "task_desc_str" in generator.prompt.prompt_variables:
        return {"task_desc_str": system, "input_str": user}
    return {"input_str": f"<SYS>\n{system}\n</SYS>\n{user}"}


def json_mode_model_kwargs(generator: Generator, schema: Dict[str, Any]) -> Dict[str, Any]:
    """Request arguments that ask ``generator``'s client for JSON output: a ``json_schema``
    (constrained decoding) for ``LocalLLMClient``, ``response_format={"type": "json_object"}``
    for every other client."""
    if type(generator.model_client).__name__ == "LocalLLMClient":
        return {"json_schema": schema}
    return {"response_format": {"type": "json_object"}}
