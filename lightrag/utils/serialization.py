"""Turn components and data objects into JSON-ready dicts and back (0.1's ``to_dict`` format).

A serialised object is ``{"type": ClassName, "data": {...}}``; classes are found again through
:class:`~lightrag.utils.registry.EntityMapping`. Values JSON cannot hold are pickled into a hex
string (``{"_pickle_data": ...}``), as in lightrag 0.1: only load dicts you produced yourself.
Values that cannot even be pickled (lambdas, closures) are recorded by their ``repr`` and come
back as None.
Secrets are not written: a string attribute named like a secret, and the headers, keys and tokens
in request settings (``model_kwargs``, ``extra_headers``, ...), read ``<redacted>``; a rebuilt
Generator refuses to send them (set them again first).
Configs (:mod:`lightrag.utils.config`) never use pickling.

Example:
    >>> serialize({"a": 1})
    '{\\n    "a": 1\\n}'
"""

from __future__ import annotations

import json
import logging
import pickle
import re
from collections import OrderedDict
from enum import Enum
from typing import Any, Dict, List, Optional

from lightrag.utils.registry import EntityMapping

log = logging.getLogger(__name__)

_PRIMITIVES = (str, int, float, bool, type(None))
_SKIP_ATTRS = {"_components", "_parameters", "_init_args", "_async_client_loop", "_async_clients_made"}


def _to_jsonable(value: Any) -> Any:
    if isinstance(value, _PRIMITIVES):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, OrderedDict):
        return {"_ordered_dict": True, "data": [[k, _to_jsonable(v)] for k, v in value.items()]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_jsonable(v) for v in value]
    to_json_obj = getattr(value, "to_json_obj", None)
    if callable(to_json_obj) and not isinstance(value, type):
        # DataClasses encode their own enums, datetimes, sets and OrderedDicts, and decode them
        # again in from_dict.
        return {"type": type(value).__name__, "data": to_json_obj()}
    if hasattr(value, "to_dict") and not isinstance(value, type):
        try:
            as_dict = value.to_dict()
        except TypeError:
            as_dict = None
        if isinstance(as_dict, dict) and set(as_dict) == {"type", "data"}:
            return as_dict
        if as_dict is not None:
            return {"type": type(value).__name__, "data": _to_jsonable(as_dict)}
    try:
        return {"_pickle_data": pickle.dumps(value).hex()}
    except (pickle.PicklingError, TypeError, AttributeError):
        log.debug("cannot serialise %r; stored as its repr", value)
        return {"_unserializable": repr(value)}


def jsonable(value: Any) -> Any:
    """``value`` as :meth:`Component.to_dict` writes an attribute (NumPy arrays and other
    objects pickled); for a component's ``to_dict`` that adds what its attributes do not hold."""
    return _to_jsonable(value)


def _restore(value: Any) -> Any:
    if isinstance(value, list):
        return [_restore(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "_pickle_data" in value and len(value) == 1:
        return pickle.loads(bytes.fromhex(value["_pickle_data"]))
    if "_unserializable" in value and len(value) == 1:
        return None
    if value.get("_ordered_dict") is True:
        return OrderedDict((k, _restore(v)) for k, v in value["data"])
    if set(value) == {"type", "data"} and isinstance(value["type"], str):
        cls = EntityMapping.get(value["type"])
        if cls is not None and hasattr(cls, "from_dict"):
            return cls.from_dict(value["data"])
        if isinstance(value["data"], dict) and "_component_names" in value["data"]:
            raise ValueError(
                f"cannot rebuild component {value['type']!r}: it is not registered "
                "(decorate the class with lightrag.utils.registry.register)"
            )
    return {k: _restore(v) for k, v in value.items()}


def _without_credentials(value: Any) -> Any:
    """A URL attribute without its credentials (``https://user:pw@host`` -> ``https://host``):
    keys are never serialised; a rebuilt client reads them from the environment."""
    if isinstance(value, str) and "://" in value:
        from lightrag.utils.secrets import redact, url_secret

        if url_secret(value):
            return redact(value)
    return value


#: attributes holding request settings (``model_kwargs``, ``extra_headers``, ``client_kwargs``,
#: ``default_query``): their secrets (headers, keys, tokens) are redacted in :func:`to_dict`
#: (``prompt_kwargs`` are prompt variables, written as they are)
_SETTINGS_ATTR = re.compile(r"(?:^|_)(?:kwargs|headers|query|params)$")


def _redacted_attribute(name: str, value: Any) -> Any:
    """``value`` of the attribute ``name`` as it may be written: a string under a secret name
    (``token``, ``password``) is :data:`~lightrag.utils.secrets.REDACTED`, a dict of request
    settings has its secrets redacted (:func:`~lightrag.utils.secrets.redact`), a URL loses its
    credentials. Other values (documents, indexes) are written as they are."""
    from lightrag.utils.secrets import REDACTED, is_secret_key, redact

    if isinstance(value, str) and value and is_secret_key(name):
        return REDACTED
    lowered = name.lstrip("_").lower()
    if isinstance(value, dict) and _SETTINGS_ATTR.search(lowered) and not lowered.startswith("prompt"):
        return redact(value, in_headers="headers" if lowered.endswith("headers") else False)
    return _without_credentials(value)


def component_to_dict(component: Any, exclude: Optional[List[str]] = None) -> Dict[str, Any]:
    """Serialise a Component's attributes (children included) into a JSON-ready dict; secrets
    in request settings are redacted (see :func:`_redacted_attribute`)."""
    exclude_set = set(exclude or ()) | set(getattr(component, "_to_dict_exclude", ()))
    data = {
        name: _to_jsonable(_redacted_attribute(name, value))
        for name, value in component.__dict__.items()
        if name not in _SKIP_ATTRS and name not in exclude_set
    }
    data["_component_names"] = list(component._components)
    data["_parameter_names"] = list(component._parameters)
    return {"type": type(component).__name__, "data": data}


def _warn_redacted(cls: type, name: str, value: Any) -> None:
    """Log the redacted values a rebuilt component must be given again before it is called."""
    from lightrag.utils.secrets import redacted_paths

    found = redacted_paths(value)
    if found:
        log.warning("%s.%s: %s read '<redacted>' (secrets are not saved); set them again before "
                    "calling", cls.__name__, name, ", ".join(name + p for p in found))


def component_from_dict(cls: type, payload: Dict[str, Any]) -> Any:
    """Rebuild a Component from :func:`component_to_dict` output without calling ``__init__``."""
    data = dict(payload.get("data", payload))
    component_names = data.pop("_component_names", [])
    parameter_names = data.pop("_parameter_names", [])
    obj = cls.__new__(cls)
    object.__setattr__(obj, "_components", OrderedDict())
    object.__setattr__(obj, "_parameters", OrderedDict())
    for name, value in data.items():
        restored = _restore(value)
        _warn_redacted(cls, name, restored)
        object.__setattr__(obj, name, restored)
        if name in component_names:
            obj._components[name] = restored
        elif name in parameter_names:
            obj._parameters[name] = restored
    restore_hook = getattr(obj, "_after_from_dict", None)
    if restore_hook is not None:
        restore_hook()
    return obj


def default(o: Any) -> Any:
    """``json.dumps`` hook: classes give their schema, objects their ``to_dict``."""
    if isinstance(o, type) and hasattr(o, "to_dict_class"):
        return o.to_dict_class()
    if hasattr(o, "to_dict"):
        return {"type": type(o).__name__, "data": o.to_dict()}
    return {"type": type(o).__name__, "data": str(o)}


def serialize(obj: Any) -> str:
    """``obj`` as indented JSON, objects through :func:`default`."""
    return json.dumps(obj, indent=4, default=default)


def deserialize(data: str) -> Any:
    """Parse JSON from :func:`serialize`, rebuilding registered ``{"type", "data"}`` objects."""
    return _restore(json.loads(data))


def to_dict(obj: Any) -> Dict[str, Any]:
    """``obj`` as plain JSON-ready data (``json.loads(serialize(obj))``)."""
    return json.loads(serialize(obj))


class ObjectTypes(Enum):
    """What :func:`check_object` found."""

    CLASS = 1
    INSTANCE = 2
    TYPE = 3


def check_object(obj: Any) -> ObjectTypes:
    """Whether ``obj`` is a class, a typing construct or an instance."""
    import inspect

    if inspect.isclass(obj):
        return ObjectTypes.CLASS
    if type(obj).__module__ == "typing":
        return ObjectTypes.TYPE
    return ObjectTypes.INSTANCE
