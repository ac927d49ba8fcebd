"""A registry of the classes a config may name.

Only classes in this registry can be built from YAML or a dict (see :mod:`lightrag.utils.config`):
a config never imports an arbitrary dotted path, so loading a config cannot execute foreign code.
The library registers its own public classes when their packages are imported; users register
theirs with :func:`register` (also usable as a class decorator).

Example:
    >>> from lightrag.utils.registry import EntityMapping, register
    >>> @register
    ... class MyPipeline: ...
    >>> EntityMapping.get("MyPipeline") is MyPipeline
    True
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Optional, TypeVar, overload

log = logging.getLogger(__name__)

T = TypeVar("T")


class EntityMapping:
    """Class-level mapping from a public name to a class (or function). Compatible with 0.1."""

    _registry: Dict[str, Any] = {}
    _library_loaded: bool = False

    @classmethod
    def register(cls, name: str, entity_cls: Any) -> None:
        existing = cls._registry.get(name)
        if existing is not None and existing is not entity_cls:
            log.debug("EntityMapping: %r re-registered (%r -> %r)", name, existing, entity_cls)
        cls._registry[name] = entity_cls

    @classmethod
    def get(cls, name: str) -> Optional[Any]:
        """The entity registered as ``name``; library classes are imported on first miss."""
        found = cls._registry.get(name)
        if found is None and not cls._library_loaded:
            cls._library_loaded = True
            _import_library()
            found = cls._registry.get(name)
        if found is None:  # a class a package imports when first asked for (its __getattr__)
            found = _lazy_library_class(name)
        return found

    @classmethod
    def get_all(cls) -> Dict[str, Any]:
        return dict(cls._registry)


@overload
def register(obj: T) -> T: ...
@overload
def register(obj: None = None, *, name: Optional[str] = None) -> Callable[[T], T]: ...


def register(obj: Any = None, *, name: Optional[str] = None) -> Any:
    """Register a class so configs can name it; works as ``@register`` or ``@register(name=...)``."""

    def _do(target: Any) -> Any:
        EntityMapping.register(name or target.__name__, target)
        return target

    return _do(obj) if obj is not None else _do


#: Packages whose public classes configs may name. Importing them never imports an optional SDK.
LIBRARY_PACKAGES = (
    "lightrag.core",
    "lightrag.components.model_client",
    "lightrag.components.output_parsers",
    "lightrag.components.data_process",
    "lightrag.components.retriever",
    "lightrag.components.rag",
    "lightrag.components.loaders",
    "lightrag.components.storage",
    "lightrag.components.graph_rag",
    "lightrag.components.agent",
    "lightrag.components.memory",
    "lightrag.optim",
    "lightrag.eval",
    "lightrag.tracing",
)


def _import_library() -> None:
    import importlib

    for package in LIBRARY_PACKAGES:
        try:
            importlib.import_module(package)
        except ModuleNotFoundError as e:
            if e.name != package:
                raise


def _lazy_library_class(name: str) -> Optional[Any]:
    """``name`` from a library package that imports it on first access (its module
    ``__getattr__``: ``NetworkXGraphStorage``, whose NetworkX import is left to the processes
    that use it). The import registers the class (``Component.__init_subclass__``)."""
    import sys

    for package in LIBRARY_PACKAGES:
        module = sys.modules.get(package)
        if module is not None and hasattr(module, "__getattr__"):
            found = getattr(module, name, None)
            if isinstance(found, type):
                return found
    return None


def register_all(namespace: Dict[str, Any], names: list[str]) -> None:
    """Register every name of a package's ``__all__`` that is a class (import-time helper)."""
    for n in names:
        value = namespace.get(n)
        if isinstance(value, type):
            EntityMapping.register(n, value)
