"""Output parsers for the Generator: format instructions for the prompt, parsing of the reply.

Example:
    >>> from lightrag.components.output_parsers import BooleanOutputParser
    >>> BooleanOutputParser()("Yes, it is.")
    True
"""

from lightrag.components.output_parsers.dataclass_parser import DataClassParser
from lightrag.components.output_parsers.outputs import (
    JSON_OUTPUT_FORMAT,
    LIST_OUTPUT_FORMAT,
    YAML_OUTPUT_FORMAT,
    BooleanOutputParser,
    JsonOutputParser,
    ListOutputParser,
    OutputParser,
    YamlOutputParser,
)

__all__ = [
    "JSON_OUTPUT_FORMAT",
    "LIST_OUTPUT_FORMAT",
    "YAML_OUTPUT_FORMAT",
    "BooleanOutputParser",
    "DataClassParser",
    "JsonOutputParser",
    "ListOutputParser",
    "OutputParser",
    "YamlOutputParser",
]
