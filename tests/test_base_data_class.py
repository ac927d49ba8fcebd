"""DataClass: schemas, signatures, examples, to_dict/from_dict and JSON/YAML round trips."""

# ruff: noqa: UP006, UP007, UP035, UP045  (the typing generics are what these tests exercise)

import json
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Dict, Generic, List, Literal, Optional, Sequence, Set, Tuple, TypeVar, Union

import pytest

from lightrag.core.base_data_class import (
    DataClass,
    DataClassFormatType,
    DynamicDataClassFactory,
    check_adal_dataclass,
    required_field,
)
from lightrag.core.functional import get_type_schema


class Label(Enum):
    SPAM = "spam"
    NOT_SPAM = "not_spam"


@dataclass
class Address(DataClass):
    street: str = field(metadata={"desc": "The street"})
    city: str = field(metadata={"desc": "The city"})
    zip: Optional[str] = field(default=None, metadata={"desc": "Postal code"})


@dataclass
class Person(DataClass):
    name: str = field(metadata={"desc": "The name"})
    age: int = field(metadata={"desc": "The age"})
    address: Address = field(metadata={"desc": "Home address"})
    emails: List[str] = field(default_factory=list, metadata={"desc": "Emails"})
    scores: Dict[str, int] = field(default_factory=dict, metadata={"desc": "Scores"})
    tags: Set[int] = field(default_factory=set, metadata={"desc": "Tags"})
    label: Label = field(default=Label.NOT_SPAM, metadata={"desc": "Spam label"})
    point: Tuple[int, str] = field(default=(0, "origin"), metadata={"desc": "A point"})
    previous: List[Address] = field(default_factory=list, metadata={"desc": "Past addresses"})
    offices: Dict[str, Address] = field(default_factory=dict, metadata={"desc": "Offices"})
    backup: Optional[Address] = field(default=None, metadata={"desc": "Backup address"})


def make_person() -> Person:
    return Person(
        name="Ann",
        age=41,
        address=Address("1 Main St", "Oslo", "0150"),
        emails=["ann@example.com"],
        scores={"math": 9},
        tags={3, 1, 2},
        label=Label.SPAM,
        point=(1, "a"),
        previous=[Address("2 Side St", "Bergen")],
        offices={"hq": Address("3 Dock", "Trondheim")},
        backup=Address("4 Hill", "Tromso"),
    )


@dataclass
class Point(DataClass):
    x: int = field(metadata={"desc": "X coordinate"})
    y: Optional[int] = field(default=None, metadata={"description": "Y coordinate"})
    label: Label = field(default=Label.SPAM, metadata={"desc": "Label"})


ADDRESS_SCHEMA = {
    "type": "Address",
    "properties": {
        "street": {"type": "str", "desc": "The street"},
        "city": {"type": "str", "desc": "The city"},
        "zip": {"type": "Optional[str]", "desc": "Postal code"},
    },
    "required": ["street", "city"],
}


# ---- format type and required_field -------------------------------------------------------


def test_format_type_values():
    assert [f.value for f in DataClassFormatType] == [
        "schema",
        "signature_yaml",
        "signature_json",
        "example_yaml",
        "example_json",
    ]


def test_required_field_after_optional_field():
    @dataclass
    class Step(DataClass):
        thought: Optional[str] = field(default=None, metadata={"desc": "Why"})
        action: str = field(default_factory=required_field(), metadata={"desc": "What"})

    assert required_field().__name__ == "required_field"
    assert Step(action="go").action == "go"
    assert Step.to_schema()["required"] == ["action"]
    with pytest.raises(TypeError, match="required"):
        Step()
    with pytest.raises(ValueError, match="missing required field 'action' for Step"):
        Step.from_dict({"thought": "t"})


# ---- schema and type strings --------------------------------------------------------------


def test_schema_of_simple_class():
    assert Address.to_schema() == ADDRESS_SCHEMA
    assert Address.to_dict_class() == ADDRESS_SCHEMA
    assert json.loads(Address.to_schema_str()) == ADDRESS_SCHEMA
    assert Address.to_schema_str() == json.dumps(ADDRESS_SCHEMA, indent=4)


def test_schema_nests_dataclasses_as_schema_strings():
    props = Person.to_schema()["properties"]
    nested = str(ADDRESS_SCHEMA)
    assert nested.startswith("{'type': 'Address', 'properties': {'street': {'type': 'str'")
    assert props["address"] == {"type": nested, "desc": "Home address"}
    assert props["previous"]["type"] == f"List[{nested}]"
    assert props["offices"]["type"] == f"Dict[str, {nested}]"
    assert props["backup"]["type"] == f"Optional[{nested}]"
    assert props["tags"]["type"] == "Set[int]"
    assert props["point"]["type"] == "Tuple[int, str]"
    assert props["label"]["type"] == "Enum[Label(SPAM=spam, NOT_SPAM=not_spam)]"
    assert Person.to_schema()["required"] == ["name", "age", "address"]


@pytest.mark.parametrize(
    "annotation, expected",
    [
        (int, "int"),
        (str, "str"),
        (Optional[int], "Optional[int]"),
        (int | None, "Optional[int]"),
        (List[str], "List[str]"),
        (list[str], "List[str]"),
        (List, "List"),
        (Dict[str, int], "Dict[str, int]"),
        (dict[str, List[int]], "Dict[str, List[int]]"),
        (Set[int], "Set[int]"),
        (Tuple[int, str], "Tuple[int, str]"),
        (Tuple[int, ...], "Tuple[int, ...]"),
        (Sequence[str], "Sequence[str]"),
        (Union[int, bytes], "Union[int, bytes]"),
        (Optional[Union[int, bytes]], "Optional[Union[int, bytes]]"),
        (Any, "Any"),
        (Literal["a", "b"], "Literal['a', 'b']"),
        (Label, "Enum[Label(SPAM=spam, NOT_SPAM=not_spam)]"),
        (OrderedDict[int, str], "OrderedDict[int, str]"),
    ],
)
def test_type_strings(annotation, expected):
    assert get_type_schema(annotation) == expected


def test_json_signature_exact():
    expected = (
        "{\n"
        '    "x": "X coordinate (int) (required)",\n'
        '    "y": "Y coordinate (Optional[int]) (optional)",\n'
        '    "label": "Label (Enum[Label(SPAM=spam, NOT_SPAM=not_spam)]) (optional)"\n'
        "}"
    )
    assert Point.to_json_signature() == expected
    assert Point.format_class_str(DataClassFormatType.SIGNATURE_JSON) == expected


def test_yaml_signature_exact():
    expected = (
        "x: X coordinate (int) (required)\n"
        "y: Y coordinate (Optional[int]) (optional)\n"
        "label: Label (Enum[Label(SPAM=spam, NOT_SPAM=not_spam)]) (optional)"
    )
    assert Point.to_yaml_signature() == expected
    assert Point.format_class_str(DataClassFormatType.SIGNATURE_YAML) == expected
    assert Point.format_class_str("signature_yaml") == expected


def test_signature_without_desc_keeps_type_and_status():
    @dataclass
    class Bare(DataClass):
        n: int

    assert Bare.to_yaml_signature() == "n:  (int) (required)"


def test_format_class_str_schema_and_errors():
    assert Point.format_class_str(DataClassFormatType.SCHEMA) == Point.to_schema_str()
    with pytest.raises(ValueError, match="Unsupported format type"):
        Point.format_class_str(DataClassFormatType.EXAMPLE_JSON)
    with pytest.raises(ValueError, match="Unsupported format type"):
        Point.format_class_str("xml")


def test_schema_exclude_and_include():
    assert Address.to_json_signature(exclude=["zip"]) == (
        '{\n    "street": "The street (str) (required)",\n    "city": "The city (str) (required)"\n}'
    )
    assert Address.to_yaml_signature(include=["city"]) == "city: The city (str) (required)"
    schema = Person.to_schema(exclude={"Person": ["emails"], "Address": ["zip"]})
    assert "emails" not in schema["properties"]
    assert "zip" not in schema["properties"]["address"]["type"]
    schema = Person.to_schema(include={"Person": ["name", "address"], "Address": ["city"]})
    assert list(schema["properties"]) == ["name", "address"]
    assert schema["required"] == ["name", "address"]
    assert "'properties': {'city'" in schema["properties"]["address"]["type"]


def test_generic_field_resolved_through_type_var_map():
    T = TypeVar("T")

    @dataclass
    class Box(DataClass, Generic[T]):
        item: T = field(default=None, metadata={"desc": "The item"})

    assert Box.to_yaml_signature() == "item: The item (T) (optional)"

    class AddressBox(Box):
        __type_var_map__ = {T: Address}  # noqa: RUF012

    assert AddressBox.to_schema()["properties"]["item"]["type"] == str(ADDRESS_SCHEMA)
    box = AddressBox.from_dict({"item": {"street": "s", "city": "c"}})
    assert box.item == Address("s", "c")
    assert Box.from_dict({"item": {"street": "s"}}).item == {"street": "s"}


# ---- instance output ----------------------------------------------------------------------


def test_to_dict_recurses_and_keeps_types():
    p = make_person()
    d = p.to_dict()
    assert d["address"] == {"street": "1 Main St", "city": "Oslo", "zip": "0150"}
    assert d["previous"] == [{"street": "2 Side St", "city": "Bergen", "zip": None}]
    assert d["offices"]["hq"]["city"] == "Trondheim"
    assert d["label"] is Label.SPAM
    assert d["tags"] == {1, 2, 3} and isinstance(d["tags"], set)
    assert d["point"] == (1, "a") and isinstance(d["point"], tuple)
    d["emails"].append("x")
    assert p.emails == ["ann@example.com"]


def test_to_dict_keeps_ordered_dict():
    @dataclass
    class Ordered(DataClass):
        items: OrderedDict = field(default_factory=OrderedDict, metadata={"desc": "Items"})

    d = Ordered(OrderedDict([("b", 1), ("a", 2)])).to_dict()
    assert isinstance(d["items"], OrderedDict)
    assert list(d["items"]) == ["b", "a"]


def test_to_dict_exclude_and_include():
    p = make_person()
    assert list(p.to_dict(include=["name", "age"])) == ["name", "age"]
    assert "emails" not in p.to_dict(exclude=["emails"])
    d = p.to_dict(exclude={"Person": ["tags"], "Address": ["zip"]})
    assert "tags" not in d
    assert d["address"] == {"street": "1 Main St", "city": "Oslo"}
    assert d["previous"] == [{"street": "2 Side St", "city": "Bergen"}]
    d = p.to_dict(include={"Address": ["city"]})
    assert d["address"] == {"city": "Oslo"}
    assert "emails" in d


def test_to_json_exact_with_enum_by_value():
    expected = '{\n    "x": 1,\n    "y": null,\n    "label": "spam"\n}'
    assert Point(1).to_json() == expected
    assert Point(1).format_example_str(DataClassFormatType.EXAMPLE_JSON) == expected
    assert Point(1).to_json_obj() == {"x": 1, "y": None, "label": "spam"}


def test_to_yaml_exact_keeps_field_order():
    expected = "x: 1\ny: 2\nlabel: not_spam\n"
    point = Point(1, 2, Label.NOT_SPAM)
    assert point.to_yaml() == expected
    assert point.format_example_str("example_yaml") == expected
    assert point.to_yaml_obj() == {"x": 1, "y": 2, "label": "not_spam"}
    assert point.to_yaml(exclude=["y"]) == "x: 1\nlabel: not_spam\n"


def test_format_example_str_rejects_class_formats():
    with pytest.raises(ValueError, match="Unsupported format type"):
        Point(1).format_example_str(DataClassFormatType.SIGNATURE_JSON)


def test_json_sets_are_sorted_lists():
    assert make_person().to_json_obj()["tags"] == [1, 2, 3]


# ---- from_dict and round trips ------------------------------------------------------------


def test_round_trip_dict_json_yaml():
    p = make_person()
    assert Person.from_dict(p.to_dict()) == p
    assert Person.from_json(p.to_json()) == p
    assert Person.from_yaml(p.to_yaml()) == p
    loaded = Person.from_json(p.to_json())
    assert isinstance(loaded.previous[0], Address)
    assert isinstance(loaded.offices["hq"], Address)
    assert isinstance(loaded.tags, set) and isinstance(loaded.point, tuple)
    assert loaded.label is Label.SPAM


def test_from_dict_defaults_and_optional_none():
    p = Person.from_dict({"name": "Bo", "age": 3, "address": {"street": "s", "city": "c"}})
    assert p.backup is None and p.emails == [] and p.label is Label.NOT_SPAM


def test_from_dict_enum_by_value_or_name():
    assert Point.from_dict({"x": 1, "label": "not_spam"}).label is Label.NOT_SPAM
    assert Point.from_dict({"x": 1, "label": "NOT_SPAM"}).label is Label.NOT_SPAM
    with pytest.raises(ValueError, match="Failed to load data: .*'maybe' is not a valid Label"):
        Point.from_dict({"x": 1, "label": "maybe"})


def test_from_dict_list_of_builtin_type():
    @dataclass
    class Numbers(DataClass):
        values: list[int] = field(default_factory=list, metadata={"desc": "Numbers"})

    assert Numbers.from_dict({"values": [1, 2]}).values == [1, 2]


def test_from_dict_union_tries_members_in_order():
    @dataclass
    class Either(DataClass):
        value: Union[str, Address] = field(metadata={"desc": "Text or address"})

    assert Either.from_dict({"value": "plain"}).value == "plain"
    assert Either.from_dict({"value": {"street": "s", "city": "c"}}).value == Address("s", "c")
    with pytest.raises(ValueError, match="Failed to load data"):
        Either.from_dict({"value": {"nope": 1}})


def test_from_dict_unknown_key_names_key_and_class():
    with pytest.raises(ValueError, match="unknown field 'height' for Point"):
        Point.from_dict({"x": 1, "height": 2})


def test_from_dict_missing_required_names_field():
    with pytest.raises(ValueError, match="missing required field 'age' for Person"):
        Person.from_dict({"name": "Bo", "address": {"street": "s", "city": "c"}})
    with pytest.raises(ValueError, match="'city' for Address at Person.address"):
        Person.from_dict({"name": "Bo", "age": 1, "address": {"street": "s"}})


def test_from_dict_wrong_shape():
    with pytest.raises(
        ValueError, match="Failed to load data: Address at Person.address expects a dict"
    ):
        Person.from_dict({"name": "Bo", "age": 1, "address": "Oslo"})
    with pytest.raises(ValueError, match="Failed to load data: Person.emails: expected a list"):
        Person.from_dict(
            {"name": "Bo", "age": 1, "address": {"street": "s", "city": "c"}, "emails": "a@b"}
        )
    with pytest.raises(ValueError, match="Failed to load data: Point expects a dict"):
        Point.from_dict([1, 2])


def test_from_json_and_yaml_errors():
    with pytest.raises(ValueError, match="Failed to load JSON for Point"):
        Point.from_json("{not json")
    with pytest.raises(ValueError, match="Failed to load YAML for Point"):
        Point.from_yaml("x: [1,")


def test_datetime_round_trip():
    @dataclass
    class Event(DataClass):
        at: datetime = field(metadata={"desc": "When"})

    event = Event(datetime(2024, 7, 1, 12, 30))
    assert event.to_json_obj() == {"at": "2024-07-01T12:30:00"}
    assert Event.from_json(event.to_json()) == event
    assert Event.from_yaml(event.to_yaml()) == event


# ---- misc ---------------------------------------------------------------------------------


def test_input_and_output_fields():
    @dataclass
    class QA(DataClass):
        question: str = field(metadata={"desc": "Question"})
        answer: str = field(metadata={"desc": "Answer"})
        __input_fields__ = ["question"]  # noqa: RUF012
        __output_fields__ = ["answer"]  # noqa: RUF012

    assert QA.get_input_fields() == ["question"]
    assert QA.get_output_fields() == ["answer"]
    assert Point.get_input_fields() == [] and Point.get_output_fields() == []
    assert list(QA.to_schema()["properties"]) == ["question", "answer"]


def test_missing_desc_is_logged_at_debug_not_warned(caplog, recwarn):
    @dataclass
    class NoDesc(DataClass):
        n: int = 0

    with caplog.at_level(logging.DEBUG, logger="lightrag.core.base_data_class"):
        NoDesc()
    assert len(recwarn) == 0
    assert any("NoDesc.n has no 'desc'" in r.getMessage() for r in caplog.records)
    assert all(r.levelno == logging.DEBUG for r in caplog.records)


def test_to_dict_requires_dataclass_instance():
    class NotDecorated(DataClass):
        pass

    with pytest.raises(ValueError, match="dataclass instance"):
        NotDecorated().to_dict()
    with pytest.raises(TypeError, match="not a dataclass"):
        check_adal_dataclass(NotDecorated)
    check_adal_dataclass(Point)


def test_dynamic_factory_create_from_dict_returns_class():
    cls = DynamicDataClassFactory.create_from_dict(
        {"age": {"value": 30, "desc": "The age"}, "tags": {"value": ["a"], "desc": "Tags"}}
    )
    first, second = cls(), cls()
    assert (first.age, first.tags) == (30, ["a"])
    first.tags.append("b")
    assert second.tags == ["a"]
    assert cls.__name__ == "DynamicOutputs"
    assert cls.to_yaml_signature() == "age: The age (int) (optional)\ntags: Tags (list) (optional)"


def test_dynamic_factory_from_dict_returns_instance():
    obj = DynamicDataClassFactory.from_dict({"name": "Ann", "address": {"city": "Oslo"}})
    assert isinstance(obj, DataClass)
    assert obj.name == "Ann" and obj.address.city == "Oslo"
    assert obj.to_dict() == {"name": "Ann", "address": {"city": "Oslo"}}
