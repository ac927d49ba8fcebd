"""String parsers and the text-extraction helpers, on the kinds of replies real small models give."""

import pytest

from lightrag.core import text_extract as tx
from lightrag.core.component import Component
from lightrag.core.container import Sequential
from lightrag.core.string_parser import (
    BooleanParser,
    FloatParser,
    IntParser,
    JsonParser,
    ListParser,
    Parser,
    YamlParser,
)

# ---------------------------------------------------------------------------------- JSON replies

JSON_REPLIES = [
    ("bare", '{"name": "Ada", "age": 36}', {"name": "Ada", "age": 36}),
    (
        "json fence with prose around",
        'Sure! Here is the answer:\n```json\n{"name": "Ada", "age": 36}\n```\nHope this helps!',
        {"name": "Ada", "age": 36},
    ),
    (
        "plain fence",
        '```\n{"answer": "Paris"}\n```',
        {"answer": "Paris"},
    ),
    (
        "uppercase fence tag",
        'Result:\n```JSON\n{"ok": true}\n```',
        {"ok": True},
    ),
    (
        "think block with a decoy object",
        '<think>\nMaybe {"answer": "Lyon"}? No.\n</think>\n{"answer": "Paris"}',
        {"answer": "Paris"},
    ),
    (
        "orphan closing think tag",
        'the user wants the capital... </think>\n\n{"answer": "Paris"}',
        {"answer": "Paris"},
    ),
    (
        "trailing commas",
        '{\n  "items": ["a", "b",],\n  "count": 2,\n}',
        {"items": ["a", "b"], "count": 2},
    ),
    (
        "python literals and single quotes",
        "{'done': True, 'error': None, 'score': 0.5, 'tags': ['x']}",
        {"done": True, "error": None, "score": 0.5, "tags": ["x"]},
    ),
    (
        "missing commas between fields",
        '{\n  "a": 1\n  "b": "two"\n  "c": [1, 2]\n}',
        {"a": 1, "b": "two", "c": [1, 2]},
    ),
    (
        "comments",
        '{\n  "a": 1, // the first\n  /* block */ "b": 2 # hash\n}',
        {"a": 1, "b": 2},
    ),
    (
        "raw newline inside a string",
        '{"summary": "line one\nline two", "n": 1}',
        {"summary": "line one\nline two", "n": 1},
    ),
    (
        "unquoted keys",
        '{name: "Ada", lang: "en"}',
        {"name": "Ada", "lang": "en"},
    ),
    (
        "escaped single quote",
        '{"text": "it\\\'s fine"}',
        {"text": "it's fine"},
    ),
    (
        "apostrophe inside single-quoted string",
        "{'text': 'it's fine', 'n': 2}",
        {"text": "it's fine", "n": 2},
    ),
    (
        "braces inside strings",
        'Output: {"template": "use {name} and [x]", "close": "}"} -- end',
        {"template": "use {name} and [x]", "close": "}"},
    ),
    (
        "nested objects and arrays",
        (
            'Answer:\n{"entities": [{"name": "A", "type": "person"}, {"name": "B", "type": "org"}],'
            ' "relations": [{"src": "A", "dst": "B", "weight": 0.9}]}'
        ),
        {
            "entities": [{"name": "A", "type": "person"}, {"name": "B", "type": "org"}],
            "relations": [{"src": "A", "dst": "B", "weight": 0.9}],
        },
    ),
    (
        "top-level array",
        'The entities are: [{"name": "A"}, {"name": "B"}]',
        [{"name": "A"}, {"name": "B"}],
    ),
    (
        "citation before the object",
        'According to [1], the result is {"score": 0.75}.',
        {"score": 0.75},
    ),
    (
        "prose brackets before the object",
        'Based on [the context above], my answer: {"answer": "yes"}',
        {"answer": "yes"},
    ),
    (
        "doubled braces copied from a template",
        '{{"answer": "42"}}',
        {"answer": "42"},
    ),
    (
        "chat special tokens",
        '<|im_start|>assistant\n{"x": 1}<|im_end|>',
        {"x": 1},
    ),
    (
        "windows path and latex escapes",
        '{"path": "C:\\Users\\ada", "math": "\\alpha + 1"}',
        {"path": "C:\\Users\\ada", "math": "\\alpha + 1"},
    ),
    (
        "unicode escapes kept",
        '{"city": "Z\\u00fcrich"}',
        {"city": "Zürich"},
    ),
]

TRUNCATED_REPLIES = [
    ('{"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}),
    ('```json\n{"a": 1, "b": {"c": "unfinished str', {"a": 1, "b": {"c": "unfinished str"}}),
    ('{"a": 1,', {"a": 1}),
]
#: replies cut off after a key: the value is missing, not null (0.1 filled in None)
CUT_BEFORE_A_VALUE = ['{"a": 1, "b":', '{"items": [{"n": 1}, {"n": 2}, {"n"']


@pytest.mark.parametrize("name,text,expected", JSON_REPLIES, ids=[c[0] for c in JSON_REPLIES])
def test_json_parser_handles_real_model_output(name, text, expected):
    assert JsonParser()(text) == expected
    assert JsonParser(lenient=True)(text) == expected


AMBIGUOUS_REPLIES = [
    ('{"quote": "She said "hi" to me", "n": 1}', {"quote": 'She said "hi" to me', "n": 1}),
    ('{"action": "finish("done")"}', {"action": 'finish("done")'}),
    ('{"a": {"b": 1}], "c": 2}', {"a": {"b": 1}, "c": 2}),
]


@pytest.mark.parametrize("text,expected", AMBIGUOUS_REPLIES)
def test_json_parser_refuses_guesses_as_01_unless_lenient(text, expected):
    with pytest.raises(ValueError, match="Got invalid JSON object"):
        JsonParser()(text)
    assert JsonParser(lenient=True)(text) == expected
    assert tx.parse_json_str_to_obj(text) == expected


@pytest.mark.parametrize("text,expected", TRUNCATED_REPLIES)
def test_json_parser_closes_truncated_output(text, expected):
    assert JsonParser()(text) == expected


@pytest.mark.parametrize("text", CUT_BEFORE_A_VALUE)
def test_json_parser_refuses_a_reply_cut_before_a_value(text):
    with pytest.raises(ValueError, match="cut off before the value of key"):
        JsonParser()(text)


def test_json_parser_without_brace_repair_rejects_truncated_output():
    with pytest.raises(ValueError, match="Incomplete JSON object"):
        JsonParser(add_missing_right_brace=False)('{"a": 1, "b": [1, 2')


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("I don't know the answer.", "No JSON object or array found"),
        ("", "No JSON object or array found"),
        ('{"a": 1, "b": @@@ ### !!!}', "Got invalid JSON object"),
    ],
)
def test_json_parser_errors_are_clear(text, fragment):
    with pytest.raises(ValueError) as info:
        JsonParser()(text)
    message = str(info.value)
    assert message.startswith("JsonParser:") and fragment in message


def test_invalid_json_error_contains_a_short_excerpt():
    text = '{"a": 1, "b": @@@' + " filler" * 200 + "}"
    with pytest.raises(ValueError, match="Got invalid JSON object") as info:
        JsonParser()(text)
    assert "Got JSON string" in str(info.value) and len(str(info.value)) < 600


def test_json_parser_passes_already_parsed_data_through():
    assert JsonParser()({"a": 1}) == {"a": 1}
    with pytest.raises(TypeError, match="expects a str"):
        JsonParser()(42)


def test_pathological_inputs_stay_fast_and_raise_value_error():
    assert JsonParser()("[see " * 5000 + '{"a": 1}') == {"a": 1}
    assert JsonParser()("[1] " * 5000 + '{"a": 1}') == {"a": 1}
    with pytest.raises(ValueError, match="Got invalid JSON object"):
        JsonParser()("[" * 3000 + "]" * 3000)


# ---------------------------------------------------------------------------------- lists


@pytest.mark.parametrize(
    "text,expected",
    [
        ('["a", "b", "c"]', ["a", "b", "c"]),
        ("Here are the keywords: ['rag', 'graph', 'llm',] - done", ["rag", "graph", "llm"]),
        ("```json\n[1, 2, 3]\n```", [1, 2, 3]),
        ('<think>list [x]?</think>["final", "answer"]', ["final", "answer"]),
        ('Keywords: ["alpha", "beta"', ["alpha", "beta"]),
        ('[["a", 1], ["b", 2]]', [["a", 1], ["b", 2]]),
        ('{"ignored": 1} then ["x"]', ["x"]),
        ("[True, False, None]", [True, False, None]),
    ],
)
def test_list_parser(text, expected):
    assert ListParser()(text) == expected


def test_list_parser_errors():
    with pytest.raises(ValueError, match="ListParser: No list found"):
        ListParser()("no list here")
    with pytest.raises(ValueError, match="Incomplete list"):
        ListParser(add_missing_right_bracket=False)('["a", "b"')


# ---------------------------------------------------------------------------------- YAML


@pytest.mark.parametrize(
    "text,expected",
    [
        ("```yaml\nname: Ada\nage: 36\n```", {"name": "Ada", "age": 36}),
        ("Here you go:\n```yml\nitems:\n  - a\n  - b\n```\nThanks", {"items": ["a", "b"]}),
        ("```\nkey: value\n```", {"key": "value"}),
        ("answer: yes\nconfidence: 0.8", {"answer": True, "confidence": 0.8}),
        ("<think>hmm</think>\n```yaml\nok: true\n```", {"ok": True}),
        ("Sure, here is the output:\nname: Ada\nrole: admin", {"name": "Ada", "role": "admin"}),
        ("Here is the YAML:\nname: Ada", {"name": "Ada"}),
        ("```yaml\nname: Ada\nskills:\n  - math\n", {"name": "Ada", "skills": ["math"]}),
        ('I used JSON instead:\n```json\n{"name": "Ada"}\n```', {"name": "Ada"}),
        ("full name:\n  first: Ada\n", {"full name": {"first": "Ada"}}),
    ],
)
def test_yaml_parser(text, expected):
    assert YamlParser()(text) == expected


def test_yaml_parser_error_is_clear():
    with pytest.raises(ValueError, match="YamlParser: Got invalid YAML object"):
        YamlParser()("```yaml\nkey: [unclosed\n  other: : :\n```")


# ---------------------------------------------------------------------------------- scalars


@pytest.mark.parametrize(
    "text,expected",
    [("True", True), ("the claim is FALSE.", False), ("true or false? true", True)],
)
def test_boolean_parser(text, expected):
    assert BooleanParser()(text) is expected


@pytest.mark.parametrize(
    "parser,text,expected",
    [
        (IntParser(), "There are 42 apples", 42),
        (IntParser(), "Temperature: -7 degrees", -7),
        (IntParser(), "3.9", 3),
        (FloatParser(), "confidence: 0.85", 0.85),
        (FloatParser(), "score -1.5e2 points", -150.0),
        (FloatParser(), "7 items", 7.0),
    ],
)
def test_number_parsers(parser, text, expected):
    assert parser(text) == expected


@pytest.mark.parametrize(
    "parser,name",
    [
        (BooleanParser(), "BooleanParser"),
        (IntParser(), "IntParser"),
        (FloatParser(), "FloatParser"),
    ],
)
def test_scalar_parsers_raise_value_error_naming_the_parser(parser, name):
    with pytest.raises(ValueError, match=f"^{name}: No "):
        parser("nothing useful here")


# ---------------------------------------------------------------------------------- helpers


def test_extract_json_str_picks_first_payload_and_respects_strings():
    assert tx.extract_json_str('x {"a": "}"} y {"b": 2}') == '{"a": "}"}'
    assert tx.extract_json_str("```json\n[1, 2]\n```") == "[1, 2]"


def test_find_json_candidates_orders_by_plausibility():
    assert tx.find_json_candidates('See [1] and [notes] then {"a": 1}') == [
        '{"a": 1}',
        "[1]",
        "[notes]",
    ]


def test_extract_yaml_str_prefers_yaml_fence():
    text = "```python\nx = 1\n```\n```yaml\nk: v\n```"
    assert tx.extract_yaml_str(text) == "k: v"
    assert tx.extract_yaml_str("  plain: text  ") == "plain: text"


def test_strip_think_blocks():
    assert tx.strip_think_blocks("<think>a</think>B<thinking>c</thinking>D") == "BD"
    assert tx.strip_think_blocks("<think>cut off mid thought {") == "cut off mid thought {"


def test_fix_json_formatting_output_is_strict_json():
    import json

    repaired = tx.fix_json_formatting("{'a': True, 'b': [1, 2,], c: None,}")
    assert json.loads(repaired) == {"a": True, "b": [1, 2], "c": None}


def test_parse_json_str_to_obj_falls_back_to_yaml():
    assert tx.parse_json_str_to_obj("{a: 1, b: two words}") == {"a": 1, "b": "two words"}


# ---------------------------------------------------------------------------------- components


def test_parsers_are_components_and_compose():
    assert all(
        isinstance(p, Component)
        for p in (JsonParser(), ListParser(), YamlParser(), IntParser(), BooleanParser())
    )
    assert isinstance(JsonParser(), Parser)
    pipeline = Sequential(JsonParser())
    assert pipeline('```json\n{"a": 1}\n```') == {"a": 1}


def test_parser_repr():
    assert repr(JsonParser()) == "JsonParser(add_missing_right_brace=True)"
    assert repr(ListParser(False)) == "ListParser(add_missing_right_bracket=False)"
    assert repr(YamlParser()) == "YamlParser()"


async def test_acall():
    assert await JsonParser().acall('{"a": 1}') == {"a": 1}
