"""Schema and conversion helpers behind :class:`~lightrag.core.base_data_class.DataClass`.

* :func:`get_type_schema` / :func:`get_dataclass_schema` describe a class for a prompt, with type
  strings such as ``Optional[int]``, ``List[str]`` or ``Enum[Label(SPAM=spam, NOT_SPAM=not_spam)]``;
* :func:`dataclass_obj_from_dict` builds an instance back from a dict, following the type hints.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Item:
    ...     name: str
    ...     tags: list[str]
    ...     price: float | None = None
    >>> get_dataclass_schema(Item)["properties"]["price"]
    {'type': 'Optional[float]'}
    >>> dataclass_obj_from_dict(Item, {"name": "pen", "tags": ["office"]})
    Item(name='pen', tags=['office'], price=None)
"""

from __future__ import annotations

import collections
import collections.abc as cabc
import functools
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields, is_dataclass
from datetime import date, datetime, time
from enum import Enum
from typing import Any, TypeVar, Union
from uuid import UUID

__all__ = [
    "FilterType", "dataclass_obj_from_dict", "field_types", "get_dataclass_schema",
    "get_enum_schema", "get_type_schema", "is_field_kept", "is_required_field", "normalize_filter",
    "schema_to_signature", "convert_schema_to_signature", "is_dataclass_instance",
    "is_potential_dataclass", "extract_dataclass_type", "check_data_class_field_args_zero",
    "check_data_class_field_args_one", "validate_data"
]  # fmt: skip

FilterType = dict[str, list[str]] | None
"""Per-class field names, ``{ClassName: [field, ...]}``, as used by exclude and include."""

_GENERIC_NAMES: dict[Any, str] = {
    list: "List", set: "Set", frozenset: "FrozenSet", dict: "Dict", tuple: "Tuple", type: "Type",
    collections.OrderedDict: "OrderedDict", collections.defaultdict: "DefaultDict",
    cabc.Sequence: "Sequence", cabc.MutableSequence: "MutableSequence", cabc.Set: "AbstractSet",
    cabc.Mapping: "Mapping", cabc.MutableMapping: "MutableMapping", cabc.Iterable: "Iterable"
}  # fmt: skip
_SET_ORIGINS = (set, frozenset, cabc.Set)
_DICT_ORIGINS = (dict, collections.OrderedDict, cabc.Mapping, cabc.MutableMapping)
_UNION_ORIGINS = (Union, types.UnionType)
_NONE_TYPE = type(None)
_PARSERS: dict[Any, Any] = {
    datetime: datetime.fromisoformat, date: date.fromisoformat, time: time.fromisoformat, UUID: UUID
}  # fmt: skip


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and is_dataclass(tp)


def _is_enum_type(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Enum)


def is_required_field(f: Field) -> bool:
    """True when ``f`` has no default, or its default factory is ``required_field()``."""
    if f.default is not MISSING:
        return False
    if f.default_factory is MISSING:
        return True
    return getattr(f.default_factory, "__name__", "") == "required_field"


@functools.lru_cache(maxsize=1024)
def field_types(cls: type) -> dict[str, Any]:
    """``{field name: resolved type}`` of a dataclass (string annotations resolved when possible)."""
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError, AttributeError):  # unresolvable: keep the raw annotations
        hints = {}
    return {f.name: hints.get(f.name, f.type) for f in fields(cls)}


def normalize_filter(class_name: str, spec: Any) -> FilterType:
    """Turn an exclude/include argument into ``{ClassName: [fields]}``.

    A list (or tuple/set) names fields of ``class_name``, a string names one field; a dict is
    used as it is.
    """
    if not spec:
        return None
    if isinstance(spec, str):
        return {class_name: [spec]}
    if isinstance(spec, Mapping):
        return {str(k): [v] if isinstance(v, str) else list(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple, set, frozenset)):
        return {class_name: list(spec)}
    raise TypeError(
        f"exclude/include must be a field name, a list of field names or a dict, got {spec!r}"
    )


def is_field_kept(class_name: str, name: str, exclude: FilterType, include: FilterType) -> bool:
    """Whether field ``name`` of ``class_name`` survives the (normalised) exclude and include."""
    if exclude and name in exclude.get(class_name, ()):
        return False
    return not (include and class_name in include and name not in include[class_name])


def get_enum_schema(enum_cls: type) -> str:
    """``Enum[Label(SPAM=spam, NOT_SPAM=not_spam)]`` for an Enum class."""
    members = ", ".join(f"{m.name}={m.value}" for m in enum_cls)
    return f"Enum[{enum_cls.__name__}({members})]"


def get_type_schema(
    type_obj: Any,
    exclude: FilterType = None,
    type_var_map: dict[Any, Any] | None = None,
    include: FilterType = None,
) -> str:
    """The type string used in schemas and signatures.

    Example:
        >>> get_type_schema(dict[str, int] | None)
        'Optional[Dict[str, int]]'
    """
    tvm = type_var_map or {}

    def sub(t: Any) -> str:
        return get_type_schema(t, exclude, tvm, include)

    if isinstance(type_obj, TypeVar):
        resolved = tvm.get(type_obj)
        return type_obj.__name__ if resolved is None else sub(resolved)
    if isinstance(type_obj, str):
        return type_obj
    if type_obj is None or type_obj is _NONE_TYPE:
        return "None"
    if type_obj is Any:
        return "Any"
    origin, args = typing.get_origin(type_obj), typing.get_args(type_obj)
    if origin is not None:
        generic = _generic_schema(origin, args, sub)
        if generic is not None:
            return generic
    if _is_dataclass_type(origin):
        params = getattr(origin, "__parameters__", ())
        return str(
            get_dataclass_schema(origin, exclude, {**tvm, **dict(zip(params, args))}, include)
        )
    if _is_enum_type(type_obj):
        return get_enum_schema(type_obj)
    if _is_dataclass_type(type_obj):
        return str(get_dataclass_schema(type_obj, exclude, tvm, include))
    return getattr(type_obj, "__name__", None) or str(type_obj)


def _generic_schema(origin: Any, args: tuple, sub: Callable[[Any], str]) -> str | None:
    """The type string of a union, ``Literal``, tuple or generic container (None for others)."""
    if origin in _UNION_ORIGINS:
        rest = [a for a in args if a is not _NONE_TYPE]
        if len(rest) < len(args):
            inner = sub(rest[0]) if len(rest) == 1 else f"Union[{', '.join(map(sub, rest))}]"
            return f"Optional[{inner}]"
        return f"Union[{', '.join(map(sub, args))}]"
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is tuple and args:
        return f"Tuple[{', '.join('...' if a is Ellipsis else sub(a) for a in args)}]"
    if origin in _GENERIC_NAMES:
        name = _GENERIC_NAMES[origin]
        return f"{name}[{', '.join(map(sub, args))}]" if args else name
    return None


def get_dataclass_schema(
    cls: type,
    exclude: FilterType = None,
    type_var_map: dict[Any, Any] | None = None,
    include: FilterType = None,
) -> dict[str, Any]:
    """``{"type": name, "properties": {field: {"type": ..., **metadata}}, "required": [...]}``."""
    if not _is_dataclass_type(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    schema: dict[str, Any] = {"type": cls.__name__, "properties": {}, "required": []}
    if issubclass(cls, Enum):
        schema["type"] = get_enum_schema(cls)
        return schema
    tvm = {**(type_var_map or {}), **getattr(cls, "__type_var_map__", {})}
    hints = field_types(cls)
    for f in fields(cls):
        if not is_field_kept(cls.__name__, f.name, exclude, include):
            continue
        prop = {"type": get_type_schema(hints[f.name], exclude, tvm, include)}
        prop.update(f.metadata)
        schema["properties"][f.name] = prop
        if is_required_field(f):
            schema["required"].append(f.name)
    return schema


def schema_to_signature(schema: dict[str, Any]) -> dict[str, str]:
    """``{field: "<desc> (<type>) (required|optional)"}`` from :func:`get_dataclass_schema`."""
    required = set(schema.get("required", []))
    signature = {}
    for name, prop in schema.get("properties", {}).items():
        desc = prop.get("desc", prop.get("description", ""))
        status = "required" if name in required else "optional"
        signature[name] = f"{desc} ({prop.get('type', '')}) ({status})"
    return signature


def _fail(msg: str) -> ValueError:
    return ValueError(f"Failed to load data: {msg}")


def _is_leaf(tp: Any) -> bool:
    return (
        isinstance(tp, type)
        and typing.get_origin(tp) is None
        and not _is_dataclass_type(tp)
        and not _is_enum_type(tp)
        and tp not in _PARSERS
    )


def _convert_union(args: tuple, value: Any, tvm: dict[Any, Any], where: str) -> Any:
    """Try the members in declaration order; a plain type matches by ``isinstance``."""
    errors = []
    for a in args:
        if _is_leaf(a):
            if isinstance(value, a):
                return value
            continue
        try:
            return _convert(a, value, tvm, where)
        except ValueError as e:
            errors.append(str(e))
    if not errors:  # only plain types: like other leaves, not checked
        return value
    raise _fail(f"{where}: {value!r} matches none of the types; " + "; ".join(errors))


def _convert_key(tp: Any, key: Any, tvm: dict[Any, Any], where: str) -> Any:
    if tp in (int, float) and isinstance(key, str):
        try:
            return tp(key)
        except ValueError as e:
            raise _fail(f"{where}: key {key!r} is not a {tp.__name__}") from e
    return _convert(tp, key, tvm, where)


def _convert(tp: Any, value: Any, tvm: dict[Any, Any], where: str) -> Any:
    """Convert a JSON-like ``value`` to the annotated type ``tp`` (leaves pass through as given)."""
    if isinstance(tp, TypeVar):
        tp = tvm.get(tp, Any)
    if value is None or tp is Any or isinstance(tp, str):
        return value
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in _UNION_ORIGINS:
        rest = tuple(a for a in args if a is not _NONE_TYPE)
        return (
            _convert(rest[0], value, tvm, where)
            if len(rest) == 1
            else _convert_union(rest, value, tvm, where)
        )
    if _is_dataclass_type(origin):
        params = getattr(origin, "__parameters__", ())
        return dataclass_obj_from_dict(origin, value, {**tvm, **dict(zip(params, args))}, where)
    if origin is not None:
        return _convert_generic(origin, args, value, tvm, where)
    if _is_dataclass_type(tp):
        return _convert_dataclass(tp, value, tvm, where)
    if _is_enum_type(tp):
        return _convert_enum(tp, value, where)
    if tp in _GENERIC_NAMES:
        return _convert_generic(tp, (), value, tvm, where)
    parse = _PARSERS.get(tp)
    if parse is not None and isinstance(value, str):
        try:
            return parse(value)
        except ValueError as e:
            raise _fail(f"{where}: {value!r} is not a valid {tp.__name__}") from e
    return value


def _convert_dataclass(tp: type, value: Any, tvm: dict[Any, Any], where: str) -> Any:
    if isinstance(value, tp):
        return value
    if isinstance(value, Mapping) and not tvm and _overrides_from_dict(tp):
        return tp.from_dict(value)  # e.g. Document.from_dict
    return dataclass_obj_from_dict(tp, value, tvm, where)


def _convert_enum(tp: type[Enum], value: Any, where: str) -> Enum:
    if isinstance(value, tp):
        return value
    try:
        return tp(value)
    except ValueError:
        if isinstance(value, str) and value in tp.__members__:
            return tp[value]
    allowed = ", ".join(f"{m.name}={m.value!r}" for m in tp)
    raise _fail(f"{where}: {value!r} is not a valid {tp.__name__} ({allowed})")


def _convert_generic(origin: Any, args: tuple, value: Any, tvm: dict, where: str) -> Any:
    if origin is typing.Literal or origin is type:
        return value
    if origin in _DICT_ORIGINS or origin is collections.defaultdict:
        if not isinstance(value, Mapping):
            raise _fail(f"{where}: expected a dict, got {type(value).__name__}")
        kt, vt = args if len(args) == 2 else (Any, Any)
        pairs = [
            (_convert_key(kt, k, tvm, where), _convert(vt, v, tvm, f"{where}[{k!r}]"))
            for k, v in value.items()
        ]
        return collections.OrderedDict(pairs) if origin is collections.OrderedDict else dict(pairs)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, cabc.Iterable):
        raise _fail(f"{where}: expected a list, got {type(value).__name__}")
    items = list(value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(items)
        elif not args:
            args = (Any,) * len(items)
        if len(args) != len(items):
            raise _fail(f"{where}: expected {len(args)} items, got {len(items)}")
        return tuple(
            _convert(a, v, tvm, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, items))
        )
    et = args[0] if args else Any
    converted = [_convert(et, v, tvm, f"{where}[{i}]") for i, v in enumerate(items)]
    if origin in _SET_ORIGINS:
        return frozenset(converted) if origin is frozenset else set(converted)
    return converted


def _overrides_from_dict(cls: type) -> bool:
    for klass in cls.__mro__:
        if "from_dict" in vars(klass):
            return getattr(klass, "__module__", "") != "lightrag.core.base_data_class"
    return False


def dataclass_obj_from_dict(
    cls: type, data: Any, type_var_map: dict[Any, Any] | None = None, where: str | None = None
) -> Any:
    """Build ``cls`` from ``data``, recursing through nested dataclasses and typed containers.

    Unknown keys, missing required fields and values of the wrong shape raise ``ValueError``
    (prefixed ``"Failed to load data:"``) naming the class, the field and, for nested values,
    ``where`` they sit (e.g. ``Person.address``).
    """
    name = cls.__name__
    at = f" at {where}" if where else ""
    if not _is_dataclass_type(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise _fail(f"{name}{at} expects a dict, got {type(data).__name__}: {data!r}")
    tvm = {**(type_var_map or {}), **getattr(cls, "__type_var_map__", {})}
    by_name = {f.name: f for f in fields(cls)}
    for key in data:
        if key not in by_name:
            raise _fail(f"unknown field {key!r} for {name}{at} (fields: {', '.join(by_name)})")
    for f in by_name.values():
        if f.init and f.name not in data and is_required_field(f):
            raise _fail(f"missing required field {f.name!r} for {name}{at}")
    hints = field_types(cls)
    init_kwargs, late = {}, {}
    for key, value in data.items():
        converted = _convert(hints[key], value, tvm, f"{where or name}.{key}")
        (init_kwargs if by_name[key].init else late)[key] = converted
    try:
        obj = cls(**init_kwargs)
    except TypeError as e:
        raise _fail(f"{name}{at}: {e}") from e
    for key, value in late.items():
        object.__setattr__(obj, key, value)
    return obj


convert_schema_to_signature = schema_to_signature


def is_dataclass_instance(obj: Any) -> bool:
    """Whether ``obj`` is a dataclass instance (not a dataclass type)."""
    return is_dataclass(obj) and not isinstance(obj, type)


def is_potential_dataclass(t: Any) -> bool:
    """Whether ``t`` is a dataclass type, directly or inside a Union / Optional."""
    if typing.get_origin(t) in _UNION_ORIGINS:
        return any(_is_dataclass_type(a) for a in typing.get_args(t) if a is not _NONE_TYPE)
    return _is_dataclass_type(t)


def extract_dataclass_type(type_hint: Any) -> Any:
    """The dataclass inside ``Optional[X]`` / ``Union[X, None]`` (or ``X`` itself), else None."""
    if typing.get_origin(type_hint) in _UNION_ORIGINS:
        for arg in typing.get_args(type_hint):
            if arg is not _NONE_TYPE and _is_dataclass_type(arg):
                return arg
    return type_hint if _is_dataclass_type(type_hint) else None


def check_data_class_field_args_zero(cls: Any) -> bool:
    """Whether the first type argument of a generic (``List[X]``) is a dataclass."""
    args = typing.get_args(cls)
    return len(args) > 0 and _is_dataclass_type(args[0])


def check_data_class_field_args_one(cls: Any) -> bool:
    """Whether the second type argument of a generic (``Dict[str, X]``) is a dataclass."""
    args = typing.get_args(cls)
    return len(args) > 1 and _is_dataclass_type(args[1])


def validate_data(data: dict[str, Any], fieldtypes: dict[str, Field]) -> bool:
    """Whether ``data`` has every required field of ``fieldtypes`` (``{name: Field}``)."""
    required = {name for name, f in fieldtypes.items() if is_required_field(f)}
    return required <= set(data)
