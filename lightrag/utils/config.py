"""Build component trees from YAML or dicts, and dump them back.

A config names a registered class and its constructor arguments; an argument may itself be a
config, a list of configs, or a reference to a registered class (``{"class": "Answer"}``)::

    component_name: Generator
    component_config:
      model_client:
        component_name: OpenAIClient
        component_config: {}
      model_kwargs: {model: gpt-4o-mini}

Safety rules:

* only classes in :class:`~lightrag.utils.registry.EntityMapping` can be built (the library's own
  and those registered with :func:`~lightrag.utils.registry.register`): no import strings, no code;
* a missing required argument, an unknown argument or a value of the wrong type raises
  :class:`ConfigError` naming the path of the problem in the config (``generator.model_kwargs``);
* secrets are refused at any depth (:mod:`lightrag.utils.secrets`: ``api_key``, ``token``,
  ``Authorization`` headers, ``user:pass@`` or ``?api_key=`` in URLs, key-shaped values): keys
  come from the environment, never from a file;
* a dump (``to_config``, :func:`to_yaml`, ``lightrag print-config``) never holds a secret: values
  under secret names read ``<redacted>`` and URL credentials are removed; loading the dump back
  drops the ``<redacted>`` entries, so the clients read the environment;
* YAML is read with :func:`lightrag.utils.safe_yaml.safe_load`: bounded size and aliases.

Example:
    >>> cfg = {"component_name": "Sequential", "component_config": {"args": []}}
    >>> build(cfg)
    Sequential()
"""

from __future__ import annotations

import inspect
import logging
import typing
from pathlib import Path
from typing import Any, Callable, Dict, Union

import yaml

from lightrag.utils.registry import EntityMapping
from lightrag.utils.safe_yaml import MAX_BYTES, YamlLimitError, safe_load
from lightrag.utils.secrets import (
    REDACTED,
    find_secrets,
    is_secret_key,
    redact,
    redacted_paths,
    strip_redacted,
)

log = logging.getLogger(__name__)

COMPONENT_NAME = "component_name"
COMPONENT_CONFIG = "component_config"
CLASS_REF = "class"



class ConfigError(ValueError):
    """A config cannot be built; ``path`` says where in the config the problem is."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path or "<root>"
        super().__init__(f"config error at '{self.path}': {message}")


class MissingComponentNameError(ConfigError, AssertionError):
    """A component config without ``component_name`` (0.1 failed an ``assert`` there, so an
    ``except AssertionError`` written for 0.1 still catches it)."""


class UnknownComponentError(ConfigError, TypeError):
    """A ``component_name`` that is not registered (0.1 raised ``TypeError`` there, calling
    the missing class)."""


def _join(path: str, key: Union[str, int]) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


# ----------------------------------------------------------------------------- loading
def load_config(source: Union[str, Path, Dict[str, Any]]) -> Dict[str, Any]:
    """Read a config from a dict, a YAML file path, or a YAML string.

    YAML is read with bounds (:func:`lightrag.utils.safe_yaml.safe_load`: size, aliases,
    expanded size, depth), so an alias bomb fails at once with a :class:`ConfigError`.
    """
    if isinstance(source, dict):
        return source
    text: str
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source
                                    and source.endswith((".yaml", ".yml"))):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"config file not found: {path}")
        if path.stat().st_size > MAX_BYTES:
            raise ConfigError("", f"{path} is {path.stat().st_size} bytes, over the config "
                                  f"size limit of {MAX_BYTES}")
        text = path.read_text(encoding="utf-8")
    else:
        text = str(source)
    try:
        data = safe_load(text)
    except YamlLimitError as e:
        raise ConfigError("", str(e)) from None
    except yaml.YAMLError as e:
        raise ConfigError("", f"invalid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError("", f"a config must be a mapping, got {type(data).__name__}")
    return data


def build(source: Union[str, Path, Dict[str, Any]]) -> Any:
    """Build the component a config (dict, YAML path or YAML text) describes."""
    return new_component(load_config(source))


def registered(name: Any) -> Any:
    """The class registered as ``name``, or None: ``name`` must be a plain name the registry
    holds (a string naming a module attribute such as ``__class__``, or a class a library
    package merely imports, is not one; a list or a dict is None, not a crash)."""
    if not isinstance(name, str) or not name or name.startswith("_"):
        return None
    found = EntityMapping.get(name)
    return found if found is not None and EntityMapping.get_all().get(name) is found else None


def new_component(config: Dict[str, Any], path: str = "") -> Any:
    """Build ``{"component_name": ..., "component_config": {...}}`` (0.1-compatible)."""
    if not isinstance(config, dict) or COMPONENT_NAME not in config:
        raise MissingComponentNameError(path, f"expected a mapping with '{COMPONENT_NAME}'")
    if not path:  # the whole tree, before any class is imported or built
        check_no_secrets(config)
    extra = set(config) - {COMPONENT_NAME, COMPONENT_CONFIG}
    if extra:
        raise ConfigError(path, f"unexpected keys {sorted(extra)} next to '{COMPONENT_NAME}'")
    name = config[COMPONENT_NAME]
    cls = registered(name)
    if cls is None:
        raise UnknownComponentError(
            _join(path, COMPONENT_NAME),
            f"unknown component {name!r:.100}: only registered classes can be built "
            "(register your own with lightrag.utils.registry.register)",
        )
    kwargs = config.get(COMPONENT_CONFIG) or {}
    if not isinstance(kwargs, dict):
        raise ConfigError(_join(path, COMPONENT_CONFIG), "must be a mapping of arguments")
    return _instantiate(cls, kwargs, _join(path, COMPONENT_CONFIG) if path else COMPONENT_CONFIG)


def new_components_from_config(config: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """Build ``{attr: config}`` into ``{attr: component}``."""
    return {key: new_component(cfg, key) for key, cfg in config.items()}


def component_from_config(cls: type, config: Dict[str, Any]) -> Any:
    """``cls.from_config``: accepts the 0.1 form or the flat kwargs form."""
    if COMPONENT_NAME in config:
        built = new_component(config)
        if not isinstance(built, cls):
            raise ConfigError(COMPONENT_NAME, f"{type(built).__name__} is not a {cls.__name__}")
        return built
    return _instantiate(cls, config, "")


def _resolve_value(value: Any, path: str) -> Any:
    if isinstance(value, dict):
        if COMPONENT_NAME in value:
            return new_component(value, path)
        if set(value) == {CLASS_REF}:
            found = registered(value[CLASS_REF])
            if found is None:
                raise ConfigError(path, f"unknown class {value[CLASS_REF]!r:.100}: register it first")
            return found
        return {k: _resolve_value(v, _join(path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_value(v, _join(path, i)) for i, v in enumerate(value)]
    return value


def check_no_secrets(config: Any, path: str = "") -> None:
    """Raise :class:`ConfigError` at the first secret in ``config`` (any depth: key names such
    as ``api_key``/``Authorization``, headers, credentials in URLs, key-shaped values).

    Example:
        >>> check_no_secrets({"model_kwargs": {"base_url": "https://u:p@host/v1"}}, "generator")
        Traceback (most recent call last):
        ...
        lightrag.utils.config.ConfigError: config error at 'generator.model_kwargs.base_url': \
a password in the URL: secrets are not read from configs; set them in the environment \
(e.g. OPENAI_API_KEY, GROQ_API_KEY), which the clients read
    """
    found = find_secrets(config, path)
    if found:
        where, reason = found[0]
        raise ConfigError(
            where,
            f"{reason}: secrets are not read from configs; set them in the environment "
            "(e.g. OPENAI_API_KEY, GROQ_API_KEY), which the clients read",
        )


def _drop_redacted(raw_kwargs: Dict[str, Any], path: str) -> Dict[str, Any]:
    """A redacted dump loaded back: its keys and passwords are dropped (the clients and stores
    read them from the environment); a redacted header, query or body entry is kept, and the
    component refuses to send it until it is set again (:func:`~lightrag.utils.secrets.
    strip_redacted`)."""
    cleaned = strip_redacted(raw_kwargs)
    if cleaned != raw_kwargs:
        log.info("%s: dropped %s values of a redacted dump; the clients read keys from the "
                 "environment", path or "<root>", REDACTED)
    kept = redacted_paths(cleaned)
    if kept:
        log.warning("%s: %s read %s (secrets are not saved); set them again before calling",
                    path or "<root>", ", ".join(kept), REDACTED)
    return cleaned


def _instantiate(cls: type, raw_kwargs: Dict[str, Any], path: str) -> Any:
    raw_kwargs = _drop_redacted(raw_kwargs, path)
    check_no_secrets(raw_kwargs, path)
    signature = inspect.signature(cls.__init__)
    params = list(signature.parameters.values())[1:]
    var_positional = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    accepts_var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    named = {p.name: p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    hints = _type_hints(cls.__init__)

    kwargs = {k: _resolve_value(v, _join(path, k)) for k, v in raw_kwargs.items()}
    args: list = []
    if var_positional is not None and var_positional.name in kwargs and var_positional.name not in named:
        positional = kwargs.pop(var_positional.name)
        if not isinstance(positional, list):
            raise ConfigError(_join(path, var_positional.name), "must be a list")
        args = positional
    unknown = [k for k in kwargs if k not in named]
    if unknown and not accepts_var_kw:
        raise ConfigError(
            _join(path, unknown[0]),
            f"{cls.__name__} has no argument {unknown[0]!r} (accepted: {sorted(named)})",
        )
    missing = [
        name for name, p in named.items()
        if p.default is p.empty and name not in kwargs and p.kind is not p.POSITIONAL_ONLY
    ]
    if missing:
        raise ConfigError(_join(path, missing[0]), f"missing required argument for {cls.__name__}")
    for key, value in kwargs.items():
        if key in hints:
            _check_type(value, hints[key], _join(path, key))
    try:
        return cls(*args, **kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(path, f"{cls.__name__}(...) failed: {e}") from e


def _type_hints(fn: Any) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # unresolved forward references: skip type checks rather than fail
        return {}


def _check_type(value: Any, annotation: Any, path: str) -> None:
    if not _matches(value, annotation):
        shown = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
        raise ConfigError(path, f"expected {shown}, got {type(value).__name__} ({value!r:.60})")


def _matches(value: Any, annotation: Any) -> bool:
    if annotation is Any or annotation is inspect.Parameter.empty:
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        return any(_matches(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if isinstance(annotation, type) and annotation in _SCALAR_CHECKS:
        return _SCALAR_CHECKS[annotation](value)
    if origin is not None:
        return _matches_generic(value, origin)
    if isinstance(annotation, type):
        if annotation in (list, tuple):
            return isinstance(value, (list, tuple))
        return isinstance(value, annotation)
    return True


# Plain annotations checked by more than isinstance: an int is a float, a bool is not a number.
_SCALAR_CHECKS: Dict[Any, Callable[[Any], bool]] = {
    type(None): lambda value: value is None,
    float: lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    int: lambda value: isinstance(value, int) and not isinstance(value, bool),
    dict: lambda value: isinstance(value, dict),
    type: lambda value: isinstance(value, type),
}


def _matches_generic(value: Any, origin: Any) -> bool:
    """``List[int]``, ``Dict[str, X]``, ``Type[X]``...: only the container is checked."""
    if origin in (list, tuple, set, frozenset):
        return isinstance(value, (list, tuple, set, frozenset))
    if origin in (dict, typing.Mapping):
        return isinstance(value, dict)
    if origin is type:
        return isinstance(value, type)
    return isinstance(value, origin) if isinstance(origin, type) else True


# ------------------------------------------------------------------------------ dumping
def component_to_config(component: Any, path: str = "") -> Dict[str, Any]:
    """The ``{component_name, component_config}`` config that rebuilds ``component``."""
    cls = type(component)
    if EntityMapping.get(cls.__name__) is not cls:
        raise ConfigError(
            path, f"{cls.__name__} is not registered: decorate it with @register to put it in a config"
        )
    init_args: Dict[str, Any] = getattr(component, "_init_args", {})
    excluded = set(getattr(component, "_config_exclude", ()))
    signature = inspect.signature(cls.__init__)
    kinds = {p.name: p.kind for p in list(signature.parameters.values())[1:]}
    defaults = {
        p.name: p.default for p in list(signature.parameters.values())[1:] if p.default is not p.empty
    }
    config: Dict[str, Any] = {}
    for name, value in init_args.items():
        if name in excluded:
            continue
        if is_secret_key(name) and value not in (None, ""):
            config[name] = REDACTED
            continue
        if kinds.get(name) is inspect.Parameter.VAR_KEYWORD:
            for k, v in value.items():
                config[k] = _dump_value(v, _join(path, k))
            continue
        if kinds.get(name) is inspect.Parameter.VAR_POSITIONAL:
            if value:
                config[name] = _dump_value(list(value), _join(path, name))
            continue
        if name in defaults and _same(defaults[name], value):
            continue
        config[name] = _dump_value(value, _join(path, name))
    _declare_trainable(component, init_args, config)
    return {COMPONENT_NAME: cls.__name__, COMPONENT_CONFIG: redact(config)}


def _declare_trainable(component: Any, init_args: Dict[str, Any], config: Dict[str, Any]) -> None:
    """A component whose ``_trainable_from`` names a dict argument (a Generator's
    ``prompt_kwargs``): the keys holding a :class:`~lightrag.core.parameter.Parameter` are written
    as its ``trainable_params`` too, so the rebuilt component has them as Parameters (their
    values alone became plain prompt variables: ``build(g.to_config())`` had no parameters)."""
    from lightrag.core.parameter import Parameter

    source = getattr(component, "_trainable_from", None)
    values = init_args.get(source) if source else None
    if not isinstance(values, dict):
        return
    declared = list(config.get("trainable_params") or [])
    variables = getattr(getattr(component, "prompt", None), "prompt_variables", None)
    config_keys = [k for k, v in values.items() if isinstance(v, Parameter) and k not in declared
                   and (variables is None or k in variables)]
    if config_keys:
        config["trainable_params"] = [*declared, *config_keys]


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _is_component(value: Any) -> bool:
    """Whether ``value`` is a Component (by its protocol: this module is what
    ``Component.to_config`` calls, so it does not import the class back)."""
    return callable(getattr(type(value), "to_config", None)) and hasattr(value, "named_children")


def _dump_value(value: Any, path: str) -> Any:
    from lightrag.core.parameter import Parameter

    if _is_component(value):
        return component_to_config(value, path)
    if isinstance(value, Parameter):
        return _dump_value(value.data, path)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple, set)):
        return [_dump_value(v, _join(path, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): _dump_value(v, _join(path, str(k))) for k, v in value.items()}
    if isinstance(value, type) or callable(value):
        name = getattr(value, "__name__", "")
        if EntityMapping.get(name) is value:
            return {CLASS_REF: name}
        raise ConfigError(path, f"{name or value!r} must be registered (@register) to appear in a config")
    if hasattr(value, "value") and type(value).__module__ != "builtins":  # Enum members
        return value.value
    raise ConfigError(path, f"a {type(value).__name__} cannot be written to a config")


def to_yaml(component: Any) -> str:
    """The YAML text of ``component.to_config()``."""
    return yaml.safe_dump(component_to_config(component), sort_keys=False, allow_unicode=True)


def save_config(component: Any, path: Union[str, Path]) -> None:
    """Write ``component``'s config to ``path`` atomically."""
    from lightrag.utils.file_io import atomic_write_text

    atomic_write_text(path, to_yaml(component))

