"""Output parsers: format instructions, parsing replies into dicts and DataClasses, clear errors."""

# ruff: noqa: UP006, UP035, UP045  (the 0.1-style typing generics are what users write)

from dataclasses import dataclass, field
from typing import ClassVar, Dict, List, Optional

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.components.output_parsers import (
    JSON_OUTPUT_FORMAT,
    LIST_OUTPUT_FORMAT,
    YAML_OUTPUT_FORMAT,
    BooleanOutputParser,
    DataClassParser,
    JsonOutputParser,
    ListOutputParser,
    OutputParser,
    YamlOutputParser,
)
from lightrag.core.base_data_class import DataClass, DataClassFormatType
from lightrag.core.generator import Generator


@dataclass
class Answer(DataClass):
    reasoning: str = field(metadata={"desc": "Step-by-step reasoning"})
    answer: int = field(metadata={"desc": "The final number"})
    confidence: Optional[float] = field(default=None, metadata={"desc": "0 to 1"})


@dataclass
class Entity(DataClass):
    name: str = field(metadata={"desc": "Entity name"})
    type: str = field(metadata={"desc": "Entity type"})


@dataclass
class Extraction(DataClass):
    entities: List[Entity] = field(metadata={"desc": "Entities found"})
    scores: Dict[str, float] = field(default_factory=dict, metadata={"desc": "Scores"})


@dataclass
class QA(DataClass):
    """Answer the question in one word."""

    question: str = field(default="", metadata={"desc": "The question"})
    answer: str = field(default="", metadata={"desc": "One-word answer"})
    __input_fields__: ClassVar[List[str]] = ["question"]
    __output_fields__: ClassVar[List[str]] = ["answer"]


@dataclass
class Plain:
    x: int = 0


# ---------------------------------------------------------------------------------- construction


@pytest.mark.parametrize("parser_cls", [JsonOutputParser, YamlOutputParser])
def test_constructor_type_checks(parser_cls):
    with pytest.raises(TypeError, match="must be a @dataclass class"):
        parser_cls(dict)
    with pytest.raises(TypeError, match="must be a @dataclass class"):
        parser_cls(Answer(reasoning="r", answer=1))
    with pytest.raises(TypeError, match="must subclass DataClass"):
        parser_cls(Plain)
    with pytest.raises(TypeError, match=r"examples\[0\] must be an instance of Answer"):
        parser_cls(Answer, examples=[Entity(name="a", type="b")])


def test_single_example_is_accepted_as_a_list():
    parser = JsonOutputParser(Answer, examples=Answer(reasoning="r", answer=1))
    assert parser.examples == [Answer(reasoning="r", answer=1)]


def test_output_parser_is_abstract():
    with pytest.raises(NotImplementedError):
        OutputParser().format_instructions()
    with pytest.raises(NotImplementedError):
        OutputParser()("x")


# ---------------------------------------------------------------------------------- instructions


def test_json_format_instructions_contain_the_signature_and_examples():
    examples = [Answer(reasoning="2+2", answer=4), Answer(reasoning="3*3", answer=9)]
    text = JsonOutputParser(Answer, examples=examples).format_instructions()
    assert Answer.to_json_signature() in text
    assert examples[0].to_json() in text and examples[1].to_json() in text
    assert "\n________\n" in text and "Examples:" in text
    assert "{{" not in text and "None" not in text


def test_json_format_instructions_other_formats_and_filters():
    parser = JsonOutputParser(Answer, exclude_fields=["confidence"])
    schema_text = parser.format_instructions(DataClassFormatType.SCHEMA)
    assert Answer.to_schema_str(exclude=["confidence"]) in schema_text
    assert "confidence" not in parser.format_instructions()
    assert "reasoning: Step-by-step" in parser.format_instructions("signature_yaml")
    included = JsonOutputParser(Answer, include_fields=["answer"]).format_instructions()
    assert "answer" in included and "reasoning" not in included
    assert "Examples:" not in included
    with pytest.raises(ValueError):
        parser.format_instructions(DataClassFormatType.EXAMPLE_JSON)


def test_yaml_format_instructions_contain_the_signature_and_yaml_example():
    example = Answer(reasoning="2+2", answer=4)
    text = YamlOutputParser(Answer, examples=[example]).format_instructions()
    assert Answer.to_yaml_signature() in text
    assert example.to_yaml().strip() in text
    assert "```yaml" in text


def test_templates_are_jinja_with_schema_and_example():
    for template in (JSON_OUTPUT_FORMAT, YAML_OUTPUT_FORMAT):
        assert "{{schema}}" in template and "{% if example %}" in template
    assert "list" in LIST_OUTPUT_FORMAT


# ---------------------------------------------------------------------------------- parsing

REPLIES = [
    '{"reasoning": "2+2=4", "answer": 4}',
    'Sure!\n```json\n{\n  "reasoning": "2+2=4",\n  "answer": 4,\n}\n```',
    "<think>easy</think>{'reasoning': '2+2=4', 'answer': 4, 'confidence': None}",
    '{"reasoning": "2+2=4", "answer": 4, "note": "extra key the model added"}',
    '{"Answer": {"reasoning": "2+2=4", "answer": 4}}',
    '[{"reasoning": "2+2=4", "answer": 4}]',
    '{"reasoning": "2+2=4", "answer": 4',
]


@pytest.mark.parametrize("reply", REPLIES)
def test_json_output_parser_returns_data_class(reply):
    result = JsonOutputParser(Answer, return_data_class=True)(reply)
    assert result == Answer(reasoning="2+2=4", answer=4)


def test_json_output_parser_returns_dict_by_default():
    assert JsonOutputParser(Answer)('{"reasoning": "r", "answer": 1}') == {
        "reasoning": "r",
        "answer": 1,
    }


def test_nested_data_class_round_trip():
    original = Extraction(
        entities=[Entity(name="Ada", type="person"), Entity(name="ACME", type="org")],
        scores={"Ada": 0.9},
    )
    for parser_cls, text in (
        (JsonOutputParser, f"Here:\n```json\n{original.to_json()}\n```"),
        (YamlOutputParser, f"```yaml\n{original.to_yaml()}```"),
    ):
        parsed = parser_cls(Extraction, return_data_class=True)(text)
        assert parsed == original
        assert isinstance(parsed.entities[0], Entity)


@pytest.mark.parametrize(
    "reply",
    [
        "```yaml\nreasoning: 2+2=4\nanswer: 4\n```",
        "Here is my answer:\nreasoning: 2+2=4\nanswer: 4",
        '```json\n{"reasoning": "2+2=4", "answer": 4}\n```',
    ],
)
def test_yaml_output_parser(reply):
    assert YamlOutputParser(Answer, return_data_class=True)(reply) == Answer("2+2=4", 4)


def test_parse_failures_raise_value_error_naming_the_problem():
    parser = JsonOutputParser(Answer, return_data_class=True)
    with pytest.raises(ValueError, match=r"^JsonOutputParser\(Answer\): JsonParser: No JSON"):
        parser("I cannot answer that.")
    with pytest.raises(ValueError, match="Got invalid JSON object"):
        parser('{"reasoning": @@@}')
    with pytest.raises(ValueError, match=r"could not build Answer from .*answer"):
        parser('{"reasoning": "only this"}')
    with pytest.raises(ValueError, match="expected an object with the fields of Answer, got list"):
        parser("[1, 2]")
    with pytest.raises(ValueError, match=r"^YamlOutputParser\(Answer\): YamlParser"):
        YamlOutputParser(Answer)("key: [unclosed\n  x: : :")
    with pytest.raises(
        ValueError, match=r"^YamlOutputParser\(Answer\): expected an object, got str"
    ):
        YamlOutputParser(Answer)("I do not know.")


def test_generator_records_parser_error():
    parser = JsonOutputParser(Answer, return_data_class=True)
    gen = Generator(
        model_client=ScriptedClient(
            responses=["no json at all", '{"reasoning": "r", "answer": 2}']
        ),
        prompt_kwargs={"output_format_str": parser.format_instructions()},
        output_processors=parser,
    )
    failed = gen({"input_str": "1+1?"})
    assert failed.data is None and "JsonOutputParser(Answer)" in failed.error
    ok = gen({"input_str": "1+1?"})
    assert ok.error is None and ok.data == Answer(reasoning="r", answer=2)


# ---------------------------------------------------------------------------------- list / bool


def test_list_output_parser():
    parser = ListOutputParser()
    assert parser.format_instructions() == LIST_OUTPUT_FORMAT
    assert parser("Keywords: ['graph', 'rag',]") == ["graph", "rag"]
    with pytest.raises(ValueError, match="ListOutputParser: ListParser: No list found"):
        parser("none")
    custom = ListOutputParser("Give {{n}} items as a list.{% if note %} {{note}}{% endif %}")
    assert custom.format_instructions(n=3) == "Give 3 items as a list."
    with pytest.raises(ValueError, match="Invalid output format template"):
        ListOutputParser("{% if %}")


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("True", True),
        ("false", False),
        ("The answer is TRUE.", True),
        ("Yes, it is.", True),
        ("no", False),
        ("No doubt: this is true", True),
        ("<think>true?</think> False", False),
        ("I am not sure", None),
        ("", None),
        (True, True),
        (None, None),
    ],
)
def test_boolean_output_parser(reply, expected):
    assert BooleanOutputParser()(reply) is expected


def test_boolean_output_parser_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    parser = BooleanOutputParser()
    assert parser("__import__('os')") is None
    parser(f"__import__('pathlib').Path({str(marker)!r}).touch() or 1 == 1")
    assert not marker.exists()
    assert parser("1 == 1") is None
    assert "True or False" in parser.format_instructions()


# ---------------------------------------------------------------------------------- repr


def test_repr_shows_data_class_prompt_and_child_parser():
    """0.1's tree: the parser's settings, its output_format_prompt and its output_processors."""
    parser = JsonOutputParser(Answer, examples=[Answer("r", 1)], exclude_fields=["confidence"])
    text = repr(parser)
    assert text.startswith(
        "JsonOutputParser(\n"
        "  data_class=Answer, examples=[Answer(reasoning='r', answer=1, confidence=None)], "
        "exclude_fields=['confidence'], return_data_class=False\n"
        "  (output_format_prompt): Prompt(\n"
    )
    assert "prompt_variables: ['schema', 'example']" in text
    assert text.endswith("  (output_processors): JsonParser(add_missing_right_brace=True, lenient=True)\n)")
    yaml_text = repr(YamlOutputParser(Answer, return_data_class=True))
    assert "examples=None, exclude_fields=None, return_data_class=True" in yaml_text
    assert "(output_format_prompt): Prompt(" in yaml_text
    assert "(list_output_format_prompt): Prompt(" in repr(ListOutputParser())
    assert "(output_processors): ListParser" in repr(ListOutputParser())
    assert repr(BooleanOutputParser()) == "BooleanOutputParser()"


# ---------------------------------------------------------------------------------- DataClassParser


def test_data_class_parser_prompt_parts_json():
    parser = DataClassParser(QA, return_data_class=True)
    assert parser.get_input_format_str() == QA.to_json_signature(include=["question"])
    output_format = parser.get_output_format_str()
    assert QA.to_json_signature(include=["answer"]) in output_format
    assert '"question"' not in output_format
    assert parser.get_input_str(QA(question="Capital of France?")) == (
        '{\n    "question": "Capital of France?"\n}'
    )
    assert parser.get_task_desc_str() == "Answer the question in one word."
    examples = parser.get_examples_str([QA("2+2?", "four"), QA("Sky color?", "blue")])
    assert examples.count("__________") == 2 and '"answer": "blue"' in examples
    only_answers = parser.get_examples_str([QA("q", "a")], include=["answer"])
    assert '"question"' not in only_answers
    assert parser.get_examples_str([]) == ""
    assert parser('```json\n{"answer": "Paris"}\n```') == QA(answer="Paris")


def test_data_class_parser_yaml():
    parser = DataClassParser(QA, format_type="yaml")
    assert parser.get_input_format_str() == "question: The question (str) (optional)"
    assert "answer: One-word answer" in parser.get_output_format_str()
    assert parser.get_input_str(QA(question="Why?")) == "question: Why?"
    assert "answer: a" in parser.get_examples_str([QA("q", "a")])
    assert parser("```yaml\nanswer: Paris\n```") == {"answer": "Paris"}


def test_data_class_parser_defaults_all_fields_to_outputs():
    parser = DataClassParser(Answer)
    assert parser._input_fields == [] and parser._output_fields == [
        "reasoning",
        "answer",
        "confidence",
    ]
    assert parser.get_input_format_str() == ""
    assert parser.get_task_desc_str() == ""
    assert Answer.to_json_signature() in parser.get_output_format_str()


def test_data_class_parser_errors_and_repr():
    with pytest.raises(TypeError, match="must be a @dataclass class"):
        DataClassParser(dict)
    with pytest.raises(TypeError, match="must subclass DataClass"):
        DataClassParser(Plain)
    with pytest.raises(ValueError, match="format_type must be 'json' or 'yaml'"):
        DataClassParser(QA, format_type="xml")
    parser = DataClassParser(Answer, return_data_class=True)
    with pytest.raises(TypeError, match="input must be a Answer instance"):
        parser.get_input_str(QA())
    with pytest.raises(ValueError, match=r"^DataClassParser\(Answer\): JsonParser: No JSON"):
        parser("nothing")
    with pytest.raises(ValueError, match=r"could not build Answer"):
        parser('{"answer": 3}')
    assert repr(DataClassParser(QA)).startswith(
        "DataClassParser(\n  data_class=QA, format_type=json, return_data_class=False, "
        "input_fields=['question'], output_fields=['answer']"
    )
