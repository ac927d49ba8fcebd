"""How :mod:`~lightrag.tracing.otel` hooks into Component calls: while a session is active, the
``call``/``acall`` functions defined by ``Component`` and its subclasses (and by subclasses
defined meanwhile) are wrapped so each call is one span; :func:`deactivate` puts the originals
back, so with tracing off a call costs exactly what it did. Generators (sync or async) are not
wrapped: a span would end before their iteration does.

The state lives here: the active session (:func:`active`), what was wrapped, and :data:`CURRENT`,
the component whose call runs in this context (a child's span names it as its parent).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import threading
from typing import Any, Dict, List, Optional, Tuple

from lightrag.core.component import Component

log = logging.getLogger(__name__)

#: (component, path) of the component whose call is running in this context
CURRENT: contextvars.ContextVar[Optional[Tuple[Component, str]]] = contextvars.ContextVar(
    "lightrag_traced_component", default=None
)
LOCK = threading.RLock()  # held while tracing is enabled or disabled
_ACTIVE: Any = None  # the TracingSession whose spans calls make
#: (class, method name) -> (original function, wrapper) for everything wrapped while enabled
_WRAPPED: Dict[Tuple[type, str], Tuple[Any, Any]] = {}
_ORIGINAL_INIT_SUBCLASS: Any = None


def active() -> Any:
    """The active ``TracingSession``, or None."""
    return _ACTIVE


def _skip(tracing: Any, component: Any) -> bool:
    if tracing is None:
        return True
    parent = CURRENT.get()
    if parent is not None and parent[0] is component:  # super().call(), acall -> call, ...
        return True
    return bool(tracing.exclude) and isinstance(component, tracing.exclude)


def _sync_wrapper(fn: Any, method: str) -> Any:
    @functools.wraps(fn)
    def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracing = _ACTIVE
        if _skip(tracing, self):
            return fn(self, *args, **kwargs)
        parent = CURRENT.get()
        try:
            span, token, started = tracing.begin(self, method, parent, args, kwargs)
        except Exception:  # noqa: BLE001 - tracing never breaks a call
            log.debug("could not start a span for %s", type(self).__name__, exc_info=True)
            return fn(self, *args, **kwargs)
        try:
            result = fn(self, *args, **kwargs)
        except BaseException as e:
            quietly(tracing.fail, span, e)
            raise
        else:
            quietly(tracing.succeed, span, self, parent, result)
            return result
        finally:
            quietly(tracing.finish, span, token, started)

    traced.__lightrag_traced__ = fn  # type: ignore[attr-defined]
    return traced


def _async_wrapper(fn: Any, method: str) -> Any:
    @functools.wraps(fn)
    async def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracing = _ACTIVE
        if _skip(tracing, self):
            return await fn(self, *args, **kwargs)
        parent = CURRENT.get()
        try:
            span, token, started = tracing.begin(self, method, parent, args, kwargs)
        except Exception:  # noqa: BLE001
            log.debug("could not start a span for %s", type(self).__name__, exc_info=True)
            return await fn(self, *args, **kwargs)
        try:
            result = await fn(self, *args, **kwargs)
        except BaseException as e:
            quietly(tracing.fail, span, e)
            raise
        else:
            quietly(tracing.succeed, span, self, parent, result)
            return result
        finally:
            quietly(tracing.finish, span, token, started)

    traced.__lightrag_traced__ = fn  # type: ignore[attr-defined]
    return traced


def quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        log.debug("tracing hook %s failed", getattr(fn, "__name__", fn), exc_info=True)


def _wrap_class(cls: type) -> None:
    for method in ("call", "acall"):
        fn = cls.__dict__.get(method)
        if fn is None or not inspect.isfunction(fn) or hasattr(fn, "__lightrag_traced__"):
            continue
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            continue  # the span would end before the iteration does
        if inspect.iscoroutinefunction(fn):
            wrapper = _async_wrapper(fn, method)
        else:
            wrapper = _sync_wrapper(fn, method)
        type.__setattr__(cls, method, wrapper)
        _WRAPPED[(cls, method)] = (fn, wrapper)


def _all_component_classes() -> List[type]:
    seen: List[type] = []
    stack = [Component]
    visited = set()
    while stack:
        cls = stack.pop()
        if cls in visited:
            continue
        visited.add(cls)
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return seen


def _traced_init_subclass(cls: type, **kwargs: Any) -> None:
    _ORIGINAL_INIT_SUBCLASS.__get__(None, cls)(**kwargs)
    if _ACTIVE is not None:
        _wrap_class(cls)


def activate(session: Any) -> None:
    global _ACTIVE, _ORIGINAL_INIT_SUBCLASS
    for cls in _all_component_classes():
        _wrap_class(cls)
    if _ORIGINAL_INIT_SUBCLASS is None:
        _ORIGINAL_INIT_SUBCLASS = Component.__dict__["__init_subclass__"]
        type.__setattr__(Component, "__init_subclass__", classmethod(_traced_init_subclass))
    _ACTIVE = session


def deactivate() -> None:
    global _ACTIVE, _ORIGINAL_INIT_SUBCLASS
    _ACTIVE = None
    for (cls, method), (original, wrapper) in list(_WRAPPED.items()):
        if cls.__dict__.get(method) is wrapper:  # not replaced since (e.g. by mock.patch)
            type.__setattr__(cls, method, original)
    _WRAPPED.clear()
    if _ORIGINAL_INIT_SUBCLASS is not None:
        type.__setattr__(Component, "__init_subclass__", _ORIGINAL_INIT_SUBCLASS)
        _ORIGINAL_INIT_SUBCLASS = None
