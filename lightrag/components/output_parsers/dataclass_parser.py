"""``DataClassParser``: one DataClass describes a task's input, its output and its examples.

Mark the fields the model receives with ``__input_fields__`` and those it must produce with
``__output_fields__`` (when the class sets no ``__output_fields__``, every field that is not an
input is an output). The parser then renders each prompt part from the class and parses the
reply back, in JSON or YAML.

Example:
    >>> from dataclasses import dataclass, field
    >>> from lightrag.core.base_data_class import DataClass
    >>> @dataclass
    ... class QA(DataClass):
    ...     '''Answer the question in one word.'''
    ...     question: str = field(default="", metadata={"desc": "The question"})
    ...     answer: str = field(default="", metadata={"desc": "One word"})
    ...     __input_fields__ = ["question"]
    ...     __output_fields__ = ["answer"]
    >>> parser = DataClassParser(QA, return_data_class=True)
    >>> print(parser.get_input_str(QA(question="Capital of France?")))
    {
        "question": "Capital of France?"
    }
    >>> parser('```json\\n{"answer": "Paris"}\\n```')
    QA(question='', answer='Paris')
"""

from __future__ import annotations

import json
import logging
from dataclasses import fields, is_dataclass
from typing import Any, Literal

import yaml

from lightrag.components.output_parsers.outputs import (
    JSON_OUTPUT_FORMAT,
    YAML_OUTPUT_FORMAT,
    _filters,
    check_reply_bounds,
    parsed_to_data_class,
    render_template,
)
from lightrag.core.base_data_class import DataClass, DataClassFormatType
from lightrag.core.component import Component
from lightrag.core.string_parser import JsonParser, YamlParser

log = logging.getLogger(__name__)

__all__ = ["DataClassParser"]

_EXAMPLE_SEPARATOR = "__________"


def _field_names(data_class: type, attr: str, method: str) -> list[str]:
    getter = getattr(data_class, method, None)
    names = getter() if callable(getter) else getattr(data_class, attr, None)
    return list(names or [])


def _task_desc(data_class: type) -> str:
    getter = getattr(data_class, "get_task_desc", None)
    if callable(getter):
        return getter() or ""
    doc = (data_class.__doc__ or "").strip()
    if doc.startswith(f"{data_class.__name__}("):
        return ""
    return doc


class DataClassParser(Component):
    """Render a DataClass as the input format, output format, task description and examples of
    a prompt, and parse the model's reply (JSON or YAML) back into a dict or an instance.

    Args:
        data_class: a ``@dataclass`` subclass of :class:`DataClass`.
        return_data_class: ``call`` returns ``data_class`` instances instead of dicts. Fields the
            reply leaves out must have defaults; keys the class lacks are dropped.
        format_type: ``"json"`` (default) or ``"yaml"``.

    Raises:
        TypeError: ``data_class`` is not a DataClass dataclass.
        ValueError: ``format_type`` is not ``"json"`` or ``"yaml"``, or a field named in
            ``__input_fields__``/``__output_fields__`` does not exist.

    Example:
        >>> from dataclasses import dataclass, field
        >>> @dataclass
        ... class Sentiment(DataClass):
        ...     label: str = field(metadata={"desc": "positive or negative"})
        >>> DataClassParser(Sentiment, format_type="yaml")("```yaml\\nlabel: positive\\n```")
        {'label': 'positive'}
    """

    def __init__(
        self,
        data_class: type[DataClass],
        return_data_class: bool = False,
        format_type: Literal["json", "yaml"] = "json",
    ) -> None:
        super().__init__()
        if not (isinstance(data_class, type) and is_dataclass(data_class)):
            raise TypeError(
                f"DataClassParser: data_class must be a @dataclass class, got {data_class!r}"
            )
        if not issubclass(data_class, DataClass):
            raise TypeError(f"DataClassParser: {data_class.__name__} must subclass DataClass")
        if format_type not in ("json", "yaml"):
            raise ValueError(
                f"DataClassParser: format_type must be 'json' or 'yaml', got {format_type!r}"
            )
        names = [f.name for f in fields(data_class)]
        self._input_fields = _field_names(data_class, "__input_fields__", "get_input_fields")
        self._output_fields = _field_names(data_class, "__output_fields__", "get_output_fields")
        if not self._output_fields:
            self._output_fields = [n for n in names if n not in self._input_fields]
        unknown = [n for n in self._input_fields + self._output_fields if n not in names]
        if unknown:
            raise ValueError(f"DataClassParser: {data_class.__name__} has no fields {unknown}")
        self._data_class = data_class
        self._return_data_class = return_data_class
        self._format_type = format_type
        self._output_processor = YamlParser() if format_type == "yaml" else JsonParser()

    @property
    def data_class(self) -> type[DataClass]:
        return self._data_class

    def get_input_format_str(self) -> str:
        """The signature of the input fields (empty when the class declares none)."""
        if not self._input_fields:
            return ""
        if self._format_type == "yaml":
            return self._data_class.to_yaml_signature(include=self._input_fields)
        return self._data_class.to_json_signature(include=self._input_fields)

    def get_output_format_str(self) -> str:
        """Output-format instructions with the signature of the output fields."""
        if self._format_type == "yaml":
            schema = self._data_class.to_yaml_signature(include=self._output_fields)
            return render_template(YAML_OUTPUT_FORMAT, schema=schema)
        schema = self._data_class.to_json_signature(include=self._output_fields)
        return render_template(JSON_OUTPUT_FORMAT, schema=schema)

    format_instructions = get_output_format_str

    def get_input_str(self, input: DataClass) -> str:
        """``input``'s input fields as JSON or YAML, to show the model.

        Raises:
            TypeError: ``input`` is not an instance of ``data_class``.
        """
        if not isinstance(input, self._data_class):
            raise TypeError(
                f"DataClassParser: input must be a {self._data_class.__name__} instance, "
                f"got {type(input).__name__}"
            )
        data = input.to_json_obj(include=self._input_fields) if self._input_fields else {}
        if self._format_type == "yaml":
            return yaml.dump(data, default_flow_style=False, sort_keys=False).strip()
        return json.dumps(data, indent=4)

    def get_task_desc_str(self) -> str:
        """The task description: ``data_class.get_task_desc()`` if defined, else its docstring."""
        return _task_desc(self._data_class)

    def get_examples_str(
        self,
        examples: list[DataClass] | None,
        include: Any = None,
        exclude: Any = None,
    ) -> str:
        """Examples in the parser's format, each followed by a ``__________`` separator line.

        ``include``/``exclude`` filter the fields shown; the default shows them all.
        """
        if not examples:
            return ""
        fmt = (
            DataClassFormatType.EXAMPLE_YAML
            if self._format_type == "yaml"
            else DataClassFormatType.EXAMPLE_JSON
        )
        filters = _filters(include, exclude)
        parts = []
        for example in examples:
            if not isinstance(example, DataClass):
                raise TypeError(
                    f"DataClassParser: examples must be DataClass instances, "
                    f"got {type(example).__name__}"
                )
            parts.append(
                f"{example.format_example_str(fmt, **filters).strip()}\n{_EXAMPLE_SEPARATOR}"
            )
        return "\n".join(parts)

    def call(self, input: str) -> Any:
        """Parse the reply; a dict, or a ``data_class`` instance with ``return_data_class``.

        Raises:
            ValueError: the reply holds no parseable JSON/YAML object, or it does not fit
                ``data_class``.
        """
        name = self._data_class.__name__
        try:
            check_reply_bounds(input)
            obj = self._output_processor(input)
        except (TypeError, ValueError) as e:
            raise ValueError(f"DataClassParser({name}): {e}") from None
        if not self._return_data_class:
            return obj
        return parsed_to_data_class(f"DataClassParser({name})", self._data_class, obj)

    def _extra_repr(self) -> str:
        return (
            f"data_class={self._data_class.__name__}, format_type={self._format_type}, "
            f"return_data_class={self._return_data_class}, input_fields={self._input_fields}, "
            f"output_fields={self._output_fields}"
        )
