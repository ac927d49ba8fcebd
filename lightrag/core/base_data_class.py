"""``DataClass``: a dataclass mixin that describes itself to an LLM and parses its answer back.

Subclass it with ``@dataclass`` and describe each field with ``field(metadata={"desc": ...})``
(``"description"`` is accepted too). A class then renders a *schema* or a token-efficient
*signature* for prompts (JSON or YAML), an instance renders an *example*, and
``from_dict``/``from_json``/``from_yaml`` rebuild typed instances, recursing through nested
DataClasses, ``Optional``, ``Union``, ``List``, ``Set``, ``Tuple``, ``Dict`` and Enums.

``exclude``/``include`` take either a list (fields of this class) or a dict
``{ClassName: [fields]}`` that also reaches nested classes.

Example:
    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Answer(DataClass):
    ...     reasoning: str = field(metadata={"desc": "Step by step"})
    ...     answer: int = field(metadata={"desc": "The final number"})
    >>> print(Answer.to_yaml_signature())
    reasoning: Step by step (str) (required)
    answer: The final number (int) (required)
    >>> Answer.from_json('{"reasoning": "2+2", "answer": 4}')
    Answer(reasoning='2+2', answer=4)
"""

from __future__ import annotations

import collections
import copy
import json
import logging
import weakref
from collections.abc import Callable, Mapping
from dataclasses import Field, field, fields, is_dataclass, make_dataclass
from datetime import date, datetime, time
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

import yaml

from lightrag.core.type_schema import (
    FilterType,
    dataclass_obj_from_dict,
    get_dataclass_schema,
    is_field_kept,
    normalize_filter,
    schema_to_signature,
)
from lightrag.utils.safe_yaml import safe_load as bounded_yaml_load

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "DataClass", "DataClassFormatType", "DynamicDataClassFactory", "ExcludeType", "IncludeType",
    "check_adal_dataclass", "custom_asdict", "required_field", "to_jsonable"
]  # fmt: skip

log = logging.getLogger(__name__)

ExcludeType = list[str] | dict[str, list[str]] | None
"""Fields to leave out: a list for this class, or ``{ClassName: [fields]}`` for nested ones too."""
IncludeType = list[str] | dict[str, list[str]] | None
"""Fields to keep: a list for this class, or ``{ClassName: [fields]}``; unnamed classes keep all."""

_DESC_CHECKED: weakref.WeakSet[type] = weakref.WeakSet()


def _asdict_inner(obj: Any, exclude: FilterType, include: FilterType) -> Any:
    def rec(o: Any) -> Any:
        return _asdict_inner(o, exclude, include)

    if is_dataclass(obj) and not isinstance(obj, type):
        name = type(obj).__name__
        return {
            f.name: rec(getattr(obj, f.name))
            for f in fields(obj)
            if is_field_kept(name, f.name, exclude, include)
        }
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[rec(v) for v in obj])
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = [rec(v) for v in obj]
        try:
            return type(obj)(items)
        except TypeError:  # a subclass with another constructor
            return items
    if isinstance(obj, dict):
        pairs = [(rec(k), rec(v)) for k, v in obj.items()]
        if isinstance(obj, collections.defaultdict):
            out = collections.defaultdict(obj.default_factory)
            out.update(pairs)
            return out
        try:
            return type(obj)(pairs)
        except TypeError:
            return dict(pairs)
    if isinstance(obj, Enum):
        return obj
    try:
        return copy.deepcopy(obj)
    except (TypeError, AttributeError, RecursionError, copy.Error):  # locks, streams: shared
        return obj


def custom_asdict(
    obj: Any,
    exclude: FilterType = None,
    include: FilterType = None,
    *,
    dict_factory: Callable[[list], dict] = dict,
) -> dict:
    """``dataclasses.asdict`` with per-class ``exclude``/``include``, keeping container types.

    Nested dataclasses become dicts; tuples, lists, sets, dicts and OrderedDicts keep their type;
    Enum members stay Enum members; other leaves are deep-copied. ``dict_factory`` (0.1's
    argument) builds the top-level mapping from its ``(key, value)`` pairs.
    """
    if not is_dataclass(obj) or isinstance(obj, type):
        raise ValueError(f"custom_asdict() needs a dataclass instance, got {obj!r}")
    result = _asdict_inner(obj, exclude, include)
    return result if dict_factory is dict else dict_factory(list(result.items()))


def to_jsonable(obj: Any) -> Any:
    """Plain JSON/YAML values: Enum -> value, set/tuple -> list, datetime -> ISO string, UUID -> str.

    Sets are sorted when their items allow it, so the output is stable across runs.
    """
    if isinstance(obj, Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, (datetime, date, time)):
        return obj.isoformat()
    if isinstance(obj, UUID):
        return str(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(custom_asdict(obj))
    if isinstance(obj, Mapping):
        return {to_jsonable(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (set, frozenset)):
        items = [to_jsonable(v) for v in obj]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return obj.tolist()
    return obj


class DataClassFormatType(Enum):
    """How a DataClass renders itself: class-level schema/signatures or instance-level examples."""

    SCHEMA = "schema"
    SIGNATURE_YAML = "signature_yaml"
    SIGNATURE_JSON = "signature_json"
    EXAMPLE_YAML = "example_yaml"
    EXAMPLE_JSON = "example_json"


def required_field() -> Callable[[], Any]:
    """A ``default_factory`` marking a field required, so it may follow fields with defaults.

    Example:
        >>> from dataclasses import dataclass, field
        >>> @dataclass
        ... class Step(DataClass):
        ...     thought: str | None = field(default=None, metadata={"desc": "Why"})
        ...     action: str = field(default_factory=required_field(), metadata={"desc": "What"})
        >>> Step.to_schema()["required"]
        ['action']
        >>> Step()
        Traceback (most recent call last):
        ...
        TypeError: A required field (declared with required_field()) was not given a value
    """

    def factory() -> Any:
        raise TypeError("A required field (declared with required_field()) was not given a value")

    factory.__name__ = "required_field"
    factory.__qualname__ = "required_field"
    return factory


def _format_type(format_type: DataClassFormatType | str) -> DataClassFormatType:
    try:
        return DataClassFormatType(format_type)
    except ValueError:
        raise ValueError(f"Unsupported format type: {format_type}") from None


class DataClass:
    """Mixin for ``@dataclass`` classes whose fields carry a ``desc`` in their metadata.

    Class attributes a subclass may set:

    * ``__input_fields__`` / ``__output_fields__``: field names returned by
      :meth:`get_input_fields` / :meth:`get_output_fields` (e.g. the question and the answer of a
      training example);
    * ``__type_var_map__``: ``{TypeVar: type}`` resolving generic fields in schemas and in
      :meth:`from_dict` (see ``StepOutput.with_action_type``).

    Example:
        >>> from dataclasses import dataclass, field
        >>> @dataclass
        ... class QA(DataClass):
        ...     question: str = field(metadata={"desc": "The question"})
        ...     answer: str | None = field(default=None, metadata={"desc": "The answer"})
        ...     __input_fields__ = ["question"]
        >>> QA("2+2?", "4").to_dict(exclude=["answer"])
        {'question': '2+2?'}
        >>> print(QA.to_json_signature())
        {
            "question": "The question (str) (required)",
            "answer": "The answer (Optional[str]) (optional)"
        }
    """

    __type_var_map__: ClassVar[dict[Any, Any]] = {}
    __input_fields__: ClassVar[list[str]] = []
    __output_fields__: ClassVar[list[str]] = []

    def __post_init__(self) -> None:
        cls = type(self)
        if cls in _DESC_CHECKED:
            return
        _DESC_CHECKED.add(cls)
        for f in fields(self):
            if "desc" not in f.metadata and "description" not in f.metadata:
                log.debug("%s.%s has no 'desc' in its field metadata", cls.__name__, f.name)

    # ---- instance: data out ----------------------------------------------------------------

    def to_dict(self, exclude: ExcludeType = None, include: IncludeType = None) -> dict[str, Any]:
        """The fields as a dict, recursing into nested dataclasses and containers.

        Container types (list, tuple, set, dict, OrderedDict) are kept; Enum members stay Enum
        members; other values are deep copies.
        """
        if not is_dataclass(self) or isinstance(self, type):
            raise ValueError(
                "to_dict() needs a dataclass instance (decorate the class with @dataclass)"
            )
        name = type(self).__name__
        return custom_asdict(self, normalize_filter(name, exclude), normalize_filter(name, include))

    def to_json_obj(self, exclude: ExcludeType = None, include: IncludeType = None) -> Any:
        """JSON-compatible containers (what :meth:`to_json` dumps): Enums as values, sets as lists."""
        return to_jsonable(self.to_dict(exclude, include))

    def to_yaml_obj(self, exclude: ExcludeType = None, include: IncludeType = None) -> Any:
        """The data :meth:`to_yaml` dumps, parsed back."""
        return yaml.safe_load(self.to_yaml(exclude, include))

    def to_json(self, exclude: ExcludeType = None, include: IncludeType = None) -> str:
        """``json.dumps`` of the fields, indent 4, in field order."""
        return json.dumps(self.to_json_obj(exclude, include), indent=4, sort_keys=False)

    def to_yaml(self, exclude: ExcludeType = None, include: IncludeType = None) -> str:
        """``yaml.dump`` of the fields (block style, in field order)."""
        data = self.to_json_obj(exclude, include)
        return yaml.dump(data, default_flow_style=False, sort_keys=False)

    def format_example_str(
        self,
        format_type: DataClassFormatType | str,
        exclude: ExcludeType = None,
        include: IncludeType = None,
    ) -> str:
        """This instance as a prompt example: ``EXAMPLE_JSON`` or ``EXAMPLE_YAML``."""
        fmt = _format_type(format_type)
        if fmt == DataClassFormatType.EXAMPLE_JSON:
            return self.to_json(exclude, include)
        if fmt == DataClassFormatType.EXAMPLE_YAML:
            return self.to_yaml(exclude, include)
        raise ValueError(f"Unsupported format type: {format_type}")

    # ---- class: data in --------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Build an instance from a dict such as :meth:`to_dict` or a parsed LLM answer returns.

        Raises:
            ValueError: on an unknown key, a missing required field or a value of the wrong
                shape (message starts with ``"Failed to load data:"``).
        """
        return dataclass_obj_from_dict(cls, data)

    @classmethod
    def from_json(cls, json_str: str) -> Self:
        """Parse a JSON object string and :meth:`from_dict` it."""
        try:
            data = json.loads(json_str)
        except json.JSONDecodeError as e:
            raise ValueError(f"Failed to load JSON for {cls.__name__}: {e}") from e
        return cls.from_dict(data)

    @classmethod
    def from_yaml(cls, yaml_str: str) -> Self:
        """Parse a YAML mapping string and :meth:`from_dict` it."""
        try:
            data = bounded_yaml_load(yaml_str)
        except yaml.YAMLError as e:
            raise ValueError(f"Failed to load YAML for {cls.__name__}: {e}") from e
        return cls.from_dict(data)

    # ---- class: descriptions for prompts ---------------------------------------------------

    @classmethod
    def to_schema(cls, exclude: ExcludeType = None, include: IncludeType = None) -> dict[str, Any]:
        """``{"type": ClassName, "properties": {field: {"type": ..., **metadata}}, "required": [...]}``.

        Example:
            >>> from dataclasses import dataclass, field
            >>> @dataclass
            ... class Point(DataClass):
            ...     x: int = field(metadata={"desc": "x"})
            ...     y: int = field(default=0, metadata={"desc": "y"})
            >>> Point.to_schema(exclude=["y"])
            {'type': 'Point', 'properties': {'x': {'type': 'int', 'desc': 'x'}}, 'required': ['x']}
        """
        name = cls.__name__
        return get_dataclass_schema(
            cls, normalize_filter(name, exclude), None, normalize_filter(name, include)
        )

    @classmethod
    def to_schema_str(cls, exclude: ExcludeType = None, include: IncludeType = None) -> str:
        """:meth:`to_schema` as JSON, indent 4."""
        return json.dumps(cls.to_schema(exclude, include), indent=4)

    @classmethod
    def to_dict_class(cls, exclude: ExcludeType = None, include: IncludeType = None) -> dict:
        """Alias of :meth:`to_schema`."""
        return cls.to_schema(exclude, include)

    @classmethod
    def to_json_signature(cls, exclude: ExcludeType = None, include: IncludeType = None) -> str:
        """``{field: "<desc> (<type>) (required|optional)"}`` as JSON, indent 4."""
        return json.dumps(schema_to_signature(cls.to_schema(exclude, include)), indent=4)

    @classmethod
    def to_yaml_signature(cls, exclude: ExcludeType = None, include: IncludeType = None) -> str:
        """One ``field: <desc> (<type>) (required|optional)`` line per field, in field order."""
        signature = schema_to_signature(cls.to_schema(exclude, include))
        return "\n".join(f"{name}: {text}" for name, text in signature.items())

    @classmethod
    def format_class_str(
        cls,
        format_type: DataClassFormatType | str,
        exclude: ExcludeType = None,
        include: IncludeType = None,
    ) -> str:
        """The class for a prompt: ``SIGNATURE_JSON``, ``SIGNATURE_YAML`` or ``SCHEMA``."""
        fmt = _format_type(format_type)
        if fmt == DataClassFormatType.SIGNATURE_JSON:
            return cls.to_json_signature(exclude, include)
        if fmt == DataClassFormatType.SIGNATURE_YAML:
            return cls.to_yaml_signature(exclude, include)
        if fmt == DataClassFormatType.SCHEMA:
            return cls.to_schema_str(exclude, include)
        raise ValueError(f"Unsupported format type: {format_type}")

    @classmethod
    def get_input_fields(cls) -> list[str]:
        """Names listed in the class attribute ``__input_fields__`` (empty by default)."""
        return list(getattr(cls, "__input_fields__", []))

    @classmethod
    def get_output_fields(cls) -> list[str]:
        """Names listed in the class attribute ``__output_fields__`` (empty by default)."""
        return list(getattr(cls, "__output_fields__", []))


def check_adal_dataclass(data_class: type) -> None:
    """Raise ``TypeError`` unless ``data_class`` is a ``@dataclass`` subclass of DataClass."""
    if not (isinstance(data_class, type) and is_dataclass(data_class)):
        raise TypeError(f"Provided class is not a dataclass: {data_class!r}")
    if not issubclass(data_class, DataClass):
        raise TypeError(f"Provided class is not a subclass of DataClass: {data_class!r}")


def _default_field(value: Any, metadata: dict[str, Any]) -> Field:
    if isinstance(value, (list, dict, set)) or is_dataclass(value):
        return field(default_factory=lambda: copy.deepcopy(value), metadata=metadata)
    return field(default=value, metadata=metadata)


class DynamicDataClassFactory:
    """Build DataClass types at run time from a dict.

    Example:
        >>> Outputs = DynamicDataClassFactory.create_from_dict(
        ...     {"age": {"value": 30, "desc": "The age"}, "name": {"value": "Ann", "desc": "Name"}}
        ... )
        >>> Outputs()
        DynamicOutputs(age=30, name='Ann')
        >>> person = DynamicDataClassFactory.from_dict({"name": "Ann", "address": {"city": "Oslo"}})
        >>> person.address.city, type(person.address).__name__
        ('Oslo', 'DynamicDataClass_Address')
    """

    @staticmethod
    def create_from_dict(
        data: dict[str, dict[str, Any]],
        base_class: type = DataClass,
        class_name: str = "DynamicOutputs",
    ) -> type:
        """A class from ``{field: {"value": default, "desc": ..., **more metadata}}`` (0.1 API)."""
        specs: list[tuple[str, Any, Field]] = []
        for key, spec in data.items():
            if not isinstance(spec, dict) or "value" not in spec:
                raise ValueError(f"Field {key!r} needs a dict with a 'value' key, got {spec!r}")
            metadata = {k: v for k, v in spec.items() if k != "value"}
            metadata.setdefault("desc", "No description provided")  # 0.1's default
            value = spec["value"]
            specs.append((key, type(value), _default_field(value, metadata)))
        return make_dataclass(class_name, specs, bases=(base_class,))

    @staticmethod
    def from_dict(
        data: dict[str, Any],
        base_class: type = DataClass,
        class_name: str = "DynamicDataClass",
    ) -> DataClass:
        """An instance of a class made from plain ``{field: value}``; nested dicts whose keys are
        identifiers become nested classes named ``<class_name>_<Key>``."""
        specs: list[tuple[str, Any, Field]] = []
        values: dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"Field name {key!r} is not a valid identifier")
            if (
                isinstance(value, dict)
                and value
                and all(isinstance(k, str) and k.isidentifier() for k in value)
            ):
                value = DynamicDataClassFactory.from_dict(
                    value, base_class, f"{class_name}_{key[0].upper()}{key[1:]}"
                )
            field_type = Any if value is None else type(value)
            specs.append((key, field_type, _default_field(value, {"desc": ""})))
            values[key] = value
        cls = make_dataclass(class_name, specs, bases=(base_class,))
        return cls(**values)
