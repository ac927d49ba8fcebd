"""Output parsers: tell the model what shape to answer in, and parse its answer back.

An output parser does two jobs for a :class:`~lightrag.core.generator.Generator`:

1. ``format_instructions()`` renders the part of the prompt that describes the output format
   (pass it as ``output_format_str``);
2. ``call(text)`` parses the model's reply (pass the parser as ``output_processors``). On failure
   it raises ``ValueError`` naming what was wrong; the Generator records that message in
   ``GeneratorOutput.error``.

Example:
    >>> from dataclasses import dataclass, field
    >>> from lightrag.core.base_data_class import DataClass
    >>> @dataclass
    ... class Joke(DataClass):
    ...     setup: str = field(metadata={"desc": "The question"})
    ...     punchline: str = field(metadata={"desc": "The answer"})
    >>> parser = JsonOutputParser(Joke, return_data_class=True)
    >>> "punchline" in parser.format_instructions()
    True
    >>> parser('```json\\n{"setup": "Why?", "punchline": "Because.",}\\n```')
    Joke(setup='Why?', punchline='Because.')
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any, Callable

from lightrag.core.base_data_class import DataClass, DataClassFormatType
from lightrag.core.component import Component
from lightrag.core.prompt_builder import Prompt
from lightrag.core.string_parser import JsonParser, ListParser, YamlParser
from lightrag.core.text_extract import (
    excerpt,
    extract_code_blocks,
    extract_yaml_str,
    find_json_candidates,
    strip_think_blocks,
)
from lightrag.utils.safe_yaml import check_yaml_bounds
from lightrag.utils.sandbox import CompiledTemplate, UnsafeTemplateError, compile_template

log = logging.getLogger(__name__)

__all__ = [
    "JSON_OUTPUT_FORMAT",
    "LIST_OUTPUT_FORMAT",
    "YAML_OUTPUT_FORMAT",
    "BooleanOutputParser",
    "JsonOutputParser",
    "ListOutputParser",
    "OutputParser",
    "YamlOutputParser",
]

# The schema block, then the examples when there are some: shared by the JSON and YAML formats.
_SCHEMA_AND_EXAMPLES = r"""
```
{{schema}}
```
{% if example %}
Examples:
```
{{example}}
```
{% endif %}
"""
_NO_SCHEMA_COPY = (
    '- The schema describes each field; do not copy "type", "properties" or the descriptions into '
    "your output."
)

JSON_OUTPUT_FORMAT = (
    "Your output must be a single JSON object that follows this schema:" + _SCHEMA_AND_EXAMPLES
    + "- Reply with the JSON object only, inside triple backticks (```json ... ```), with no text "
    "before or after it.\n"
    "- Use double quotes for keys and string values. No comments, no trailing commas.\n"
    + _NO_SCHEMA_COPY
)

YAML_OUTPUT_FORMAT = (
    "Your output must be a single YAML document that follows this schema:" + _SCHEMA_AND_EXAMPLES
    + "- Reply with the YAML only, inside triple backticks (```yaml ... ```), with no text before "
    "or after it.\n"
    '- Indent nested items with 2 spaces. Quote strings that contain ": ", " #" or start with a '
    "special character.\n"
    + _NO_SCHEMA_COPY
)

LIST_OUTPUT_FORMAT = r"""Your output must be a list written in JSON syntax, such as ["first", "second"].
- Items may be strings, numbers, booleans, lists or objects, and may be nested.
- Reply with the list only, with no text before or after it."""

_EXAMPLE_SEPARATOR = "\n________\n"


def _compile(template: str) -> CompiledTemplate:
    try:
        return compile_template(template)
    except UnsafeTemplateError:
        raise
    except ValueError as e:
        raise ValueError(f"Invalid output format template: {e}") from None


def render_template(template: str, **variables: Any) -> str:
    """Render a Jinja2 format template in the library's sandbox
    (:mod:`lightrag.utils.sandbox`); variables it uses but that are not given render as None.

    Raises:
        ValueError: a syntax error, or :class:`~lightrag.utils.sandbox.UnsafeTemplateError`
            when the template tries what the sandbox forbids.

    Example:
        >>> render_template("Schema: {{schema}}{% if example %} e.g. {{example}}{% endif %}", schema="x")
        'Schema: x'
    """
    compiled = _compile(template)
    values: dict[str, Any] = dict.fromkeys(compiled.variables)
    values.update(variables)
    return compiled.render(**values)


def check_reply_bounds(text: Any, max_aliases: int = 100) -> None:
    """Refuse a model reply whose YAML/JSON-looking parts use aliases that would expand past the
    bounds of :func:`lightrag.utils.safe_yaml.safe_load` (an alias bomb in model output).

    Raises:
        ValueError: (:class:`~lightrag.utils.safe_yaml.YamlLimitError`) naming the bound.

    Example:
        >>> check_reply_bounds("```yaml\\nname: Ada\\n```")  # fine: returns None
    """
    if not isinstance(text, str) or "*" not in text or "&" not in text:
        return
    pieces = [text, extract_yaml_str(text)] + [body for _, body in extract_code_blocks(text)]
    try:
        pieces += find_json_candidates(text)
    except ValueError:
        pass
    for piece in dict.fromkeys(pieces):
        check_yaml_bounds(piece, max_aliases=max_aliases)


def _excerpt(value: Any) -> str:
    return excerpt(repr(value))


def _check_data_class(owner: str, data_class: Any, examples: Any) -> list[DataClass] | None:
    """Validate the constructor arguments shared by the JSON and YAML parsers."""
    if not (isinstance(data_class, type) and is_dataclass(data_class)):
        raise TypeError(
            f"{owner}: data_class must be a @dataclass class, got {_excerpt(data_class)}"
        )
    if not issubclass(data_class, DataClass):
        raise TypeError(f"{owner}: data_class {data_class.__name__} must subclass DataClass")
    if examples is None:
        return None
    if isinstance(examples, DataClass):
        examples = [examples]
    if not isinstance(examples, Sequence) or isinstance(examples, str):
        raise TypeError(f"{owner}: examples must be a list of {data_class.__name__} instances")
    for k, example in enumerate(examples):
        if not isinstance(example, data_class):
            raise TypeError(
                f"{owner}: examples[{k}] must be an instance of {data_class.__name__}, "
                f"got {type(example).__name__}"
            )
    return list(examples) or None


def _filters(include: Any, exclude: Any) -> dict[str, Any]:
    return {k: v for k, v in (("include", include), ("exclude", exclude)) if v is not None}


def parsed_to_data_class(owner: str, data_class: type[DataClass], obj: Any) -> DataClass:
    """Build ``data_class`` from a parsed reply, tolerating the usual small-model slips.

    A one-item list is unwrapped, so is a single key wrapping the fields (``{"Answer": {...}}``);
    keys the class lacks are dropped (logged at INFO).

    Raises:
        ValueError: the reply is not an object, or ``from_dict`` rejects it; the message names
            ``owner``, the class and an excerpt of the data.

    Example:
        >>> from dataclasses import dataclass, field
        >>> @dataclass
        ... class Pt(DataClass):
        ...     x: int = field(metadata={"desc": "x"})
        >>> parsed_to_data_class("demo", Pt, {"Pt": {"x": 1, "note": "extra"}})
        Pt(x=1)
    """
    name = data_class.__name__
    if isinstance(obj, list) and len(obj) == 1:
        obj = obj[0]
    if not isinstance(obj, dict):  # bad model output, not a bad argument
        raise ValueError(  # noqa: TRY004
            f"{owner}: expected an object with the fields of {name}, "
            f"got {type(obj).__name__}: {_excerpt(obj)}"
        )
    known = {f.name for f in fields(data_class) if f.init}
    if len(obj) == 1 and not known & obj.keys():
        inner = next(iter(obj.values()))
        if isinstance(inner, dict) and known & inner.keys():
            obj = inner
    unknown = [key for key in obj if key not in known]
    if unknown:
        log.info("%s: ignoring fields %s that %s does not have", owner, unknown, name)
        obj = {key: value for key, value in obj.items() if key in known}
    try:
        return data_class.from_dict(obj)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{owner}: could not build {name} from {_excerpt(obj)}: {e}") from None


class OutputParser(Component):
    """Base class of output parsers: ``format_instructions()`` for the prompt, ``call(input)``
    for the reply.

    Example:
        >>> class Upper(OutputParser):
        ...     def format_instructions(self) -> str:
        ...         return "Answer in one word."
        ...     def call(self, input: str) -> str:
        ...         return input.strip().upper()
        >>> Upper()("yes")
        'YES'
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def format_instructions(self) -> str:
        """The output-format text to put in the prompt."""
        raise NotImplementedError(f"{type(self).__name__} must implement format_instructions()")

    def call(self, input: str) -> Any:
        """Parse the model's reply."""
        raise NotImplementedError(f"{type(self).__name__} must implement call(input: str)")


class _DataClassOutput:
    """Shared body of :class:`JsonOutputParser` and :class:`YamlOutputParser`; the class
    attributes pick the template, the default signature, the example format and the parser."""

    _template: str
    _signature: DataClassFormatType
    _example_format: DataClassFormatType
    _parser_cls: Callable[[], Component]

    def __init__(
        self,
        data_class: type[DataClass],
        examples: list[DataClass] | None = None,
        exclude_fields: Any = None,
        return_data_class: bool = False,
        include_fields: Any = None,
    ) -> None:
        # The first four parameters are in 0.1's order, so its positional calls mean the same.
        super().__init__()
        self.examples = _check_data_class(type(self).__name__, data_class, examples)
        self.data_class = data_class
        self._include_fields = include_fields
        self._exclude_fields = exclude_fields
        self._return_data_class = return_data_class
        self.output_format_prompt = Prompt(template=self._template)
        self.output_processors = self._parser_cls()

    def format_instructions(self, format_type: DataClassFormatType | str | None = None) -> str:
        """Render the format template with ``data_class.format_class_str(format_type)`` as
        ``schema`` (``SIGNATURE_JSON``/``SIGNATURE_YAML``, ``SCHEMA``; by default the signature
        of the parser's own format) and the examples, separated by ``________`` lines."""
        filters = _filters(self._include_fields, self._exclude_fields)
        schema = self.data_class.format_class_str(format_type or self._signature, **filters)
        example = None
        if self.examples:
            examples = (
                ex.format_example_str(self._example_format, **filters) for ex in self.examples
            )
            example = _EXAMPLE_SEPARATOR.join(examples)
        return self.output_format_prompt(schema=schema, example=example)

    def call(self, input: str) -> Any:
        """Parse the reply; a dict, or a ``data_class`` instance with ``return_data_class``.

        Raises:
            ValueError: nothing parseable in the reply, or it does not fit ``data_class``; the
                message starts with the parser and class names.
        """
        owner = f"{type(self).__name__}({self.data_class.__name__})"
        try:
            check_reply_bounds(input)
            obj = self.output_processors(input)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{owner}: {e}") from None
        if self._return_data_class:
            return parsed_to_data_class(owner, self.data_class, obj)
        if not isinstance(obj, (dict, list)):
            raise ValueError(
                f"{owner}: expected an object, got {type(obj).__name__}: {_excerpt(obj)}"
            )
        return obj

    def _extra_repr(self) -> str:
        """0.1's text (``data_class=..., examples=..., exclude_fields=..., return_data_class=...``),
        then ``include_fields`` when set."""
        text = (
            f"data_class={self.data_class.__name__}, examples={self.examples}, "
            f"exclude_fields={self._exclude_fields}, return_data_class={self._return_data_class}"
        )
        if self._include_fields is not None:
            text += f", include_fields={self._include_fields}"
        return text


class JsonOutputParser(_DataClassOutput, OutputParser):
    """Ask for a JSON object shaped like ``data_class`` and parse the reply into a dict (or into
    a ``data_class`` instance with ``return_data_class=True``).

    Args:
        data_class: a ``@dataclass`` subclass of :class:`DataClass` describing the answer.
        examples: instances of ``data_class`` shown in the prompt.
        include_fields: only these fields in the schema and examples.
        exclude_fields: leave these fields out of the schema and examples.
        return_data_class: return ``data_class.from_dict(...)`` instead of the dict. Keys the
            class does not have are dropped, and a single wrapping key is unwrapped.

    Raises:
        TypeError: ``data_class`` is not a DataClass dataclass, or an example is not an instance.

    Example:
        >>> from dataclasses import dataclass, field
        >>> @dataclass
        ... class City(DataClass):
        ...     name: str = field(metadata={"desc": "City name"})
        >>> parser = JsonOutputParser(City)
        >>> print(parser.format_instructions().splitlines()[3])
            "name": "City name (str) (required)"
        >>> parser("The city is: {'name': 'Paris'}")
        {'name': 'Paris'}
    """

    _template = JSON_OUTPUT_FORMAT
    _signature = DataClassFormatType.SIGNATURE_JSON
    _example_format = DataClassFormatType.EXAMPLE_JSON
    # Lenient: a model's action such as "finish("Paris")" keeps its unescaped inner quotes
    # rather than failing the step (a bare JsonParser refuses it, as 0.1 did).
    _parser_cls = functools.partial(JsonParser, lenient=True)


class YamlOutputParser(_DataClassOutput, OutputParser):
    """Ask for a YAML document shaped like ``data_class`` and parse the reply into a dict (or
    into a ``data_class`` instance with ``return_data_class=True``). Prefer JSON for deeply
    nested classes; YAML costs fewer tokens for flat ones. Arguments as :class:`JsonOutputParser`.

    Example:
        >>> from dataclasses import dataclass, field
        >>> @dataclass
        ... class City(DataClass):
        ...     name: str = field(metadata={"desc": "City name"})
        >>> parser = YamlOutputParser(City)
        >>> "name: City name (str) (required)" in parser.format_instructions()
        True
        >>> parser("```yaml\\nname: Paris\\n```")
        {'name': 'Paris'}
    """

    _template = YAML_OUTPUT_FORMAT
    _signature = DataClassFormatType.SIGNATURE_YAML
    _example_format = DataClassFormatType.EXAMPLE_YAML
    _parser_cls = YamlParser


class ListOutputParser(OutputParser):
    """Ask for a list and parse the reply into a Python list.

    Args:
        list_output_format_template: the Jinja2 text :meth:`format_instructions` renders.

    Example:
        >>> ListOutputParser()("Here are three: ['red', 'green', 'blue']")
        ['red', 'green', 'blue']
    """

    def __init__(self, list_output_format_template: str = LIST_OUTPUT_FORMAT) -> None:
        super().__init__()
        _compile(list_output_format_template)
        self.list_output_format_template = list_output_format_template
        self.list_output_format_prompt = Prompt(template=list_output_format_template)
        self.output_processors = ListParser()

    def format_instructions(self, **variables: Any) -> str:
        """Render the list format template (extra ``variables`` are passed to it)."""
        return self.list_output_format_prompt(**variables)

    def call(self, input: str) -> list:
        try:
            check_reply_bounds(input)
            return self.output_processors(input)
        except (TypeError, ValueError) as e:
            raise ValueError(f"ListOutputParser: {e}") from None


_TRUE_FALSE = re.compile(r"\b(true|false)\b", re.IGNORECASE)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


class BooleanOutputParser(OutputParser):
    """Read a yes/no answer: the first ``true``/``false`` word, else the first ``yes``/``no``
    word (any case); ``None`` when there is neither. The text is never evaluated as code.

    Example:
        >>> parser = BooleanOutputParser()
        >>> parser("True."), parser("No, it is not."), parser("__import__('os')")
        (True, False, None)
    """

    def format_instructions(self) -> str:
        return "The output should be a boolean value. True or False."  # 0.1's text

    def call(self, input: str) -> bool | None:
        if isinstance(input, bool):
            return input
        if not isinstance(input, str):
            return None
        text = strip_think_blocks(input)
        for pattern, truthy in ((_TRUE_FALSE, "true"), (_YES_NO, "yes")):
            match = pattern.search(text)
            if match:
                return match.group(1).lower() == truthy
        return None
