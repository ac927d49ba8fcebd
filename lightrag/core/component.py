"""``Component``: the base class of every piece of a lightrag pipeline.

Modelled on ``torch.nn.Module``: assigning a Component or a :class:`Parameter` to an attribute
registers it, so a pipeline is a tree that can be walked (``named_components``), switched between
training and evaluation (``train``/``eval``), saved (``state_dict``), rebuilt from a config
(``to_config``/``from_config``) and printed.

Calling a component runs its ``call`` method, looked up at call time as in lightrag 0.1, so
``mock.patch.object(Cls, "call")`` or a ``call`` assigned on an instance takes effect; ``acall`` is
the async twin. Registered children also live in the instance ``__dict__`` so attribute access
never falls back to ``__getattr__``, which keeps a call through a deep tree cheap
(``benchmarks/component_overhead.py``).

Example:
    >>> class Double(Component):
    ...     def call(self, x: int) -> int:
    ...         return 2 * x
    >>> class Pipeline(Component):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.double = Double()
    ...     def call(self, x: int) -> int:
    ...         return self.double(x) + 1
    >>> Pipeline()(3)
    7
    >>> print(Pipeline())
    Pipeline(
      (double): Double()
    )
"""

from __future__ import annotations

import inspect
import logging
import operator
from collections import OrderedDict
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
    TypeVar,
)

from lightrag.core.component_state import LoadStateResult, ParameterState  # noqa: F401 (importable from here)
from lightrag.core.parameter import Parameter

log = logging.getLogger(__name__)

C = TypeVar("C", bound="Component")
T = TypeVar("T")  # 0.1's generic type variable of this module



class ComponentNameError(KeyError, ValueError):
    """A child or Parameter name that is empty or contains ``"."``.

    lightrag 0.1 raised ``ValueError`` here and this package used to raise ``KeyError``; the
    error is both, so an ``except`` written for either catches it.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _check_name(kind: str, name: Any) -> None:
    """Raise :class:`ComponentNameError` unless ``name`` can name a child or Parameter."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string, but got {type(name)}")
    if "." in name:
        raise ComponentNameError(f"{kind} name can't contain \".\", got {name!r}")
    if name == "":
        raise ComponentNameError(f'{kind} name can\'t be empty string ""')


_SIGNATURES: Dict[type, inspect.Signature] = {}


def _init_signature(cls: type) -> inspect.Signature:
    sig = _SIGNATURES.get(cls)
    if sig is None:
        sig = inspect.signature(cls.__init__)
        _SIGNATURES[cls] = sig
    return sig


class _CallSignature:
    """``component.__signature__``: the signature of its ``call`` (None on the class itself),
    so ``inspect.signature(component)`` describes what ``component(...)`` takes."""

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Optional[inspect.Signature]:
        if obj is None:
            return None
        try:
            return inspect.signature(obj.call)
        except (TypeError, ValueError):
            return None


def _addindent(text: str, num_spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * num_spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class Component(ParameterState):
    """Base class for all lightrag components.

    Subclasses call ``super().__init__()`` first, then assign sub-components and Parameters as
    attributes, and implement ``call`` (and ``acall`` for async use).
    """

    _version: int = 1
    _components: Dict[str, Optional[Component]]
    _parameters: Dict[str, Optional[Parameter]]
    _init_args: Dict[str, Any]
    training: bool

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("lightrag."):
            from lightrag.utils.registry import EntityMapping

            EntityMapping.register(cls.__name__, cls)

    def __new__(cls, *args: Any, **kwargs: Any) -> Component:
        obj = super().__new__(cls)
        try:
            bound = _init_signature(cls).bind(obj, *args, **kwargs)
            init_args = dict(list(bound.arguments.items())[1:])
        except TypeError:
            init_args = {}  # __init__ will raise the real error with Python's own message
        object.__setattr__(obj, "_init_args", init_args)
        return obj

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_components", OrderedDict())
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "name", type(self).__name__)

    # ------------------------------------------------------------------ calling
    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the component. Subclasses implement this."""
        raise NotImplementedError(
            f"Component {type(self).__name__} is missing the required 'call' method"
        )

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """Async twin of :meth:`call`.

        By default a sync ``call`` runs in a worker thread, and an ``async def call`` (the
        pattern lightrag 0.1's ``Sequential.acall`` awaited) is awaited in this event loop.
        """
        import asyncio

        call = self.call
        if inspect.iscoroutinefunction(call):
            return await call(*args, **kwargs)
        result = await asyncio.to_thread(call, *args, **kwargs)
        return await result if inspect.isawaitable(result) else result

    # ``component(x)`` looks ``call`` up on the instance at call time (a C-level getter: no
    # Python frame and no *args packing), so patching ``call`` on the class or an instance works.
    __call__ = property(operator.attrgetter("call"))
    __signature__ = _CallSignature()

    # ------------------------------------------------------------- registration
    def __setattr__(self, name: str, value: Any) -> None:
        registries = self.__dict__.get("_components")
        if isinstance(value, (Component, Parameter)):
            if registries is None:
                raise AttributeError(
                    f"cannot assign {type(value).__name__} {name!r} before "
                    f"{type(self).__name__}.__init__() calls super().__init__()"
                )
            # a name already registered keeps its place (a Sequential step replaced in place)
            if isinstance(value, Parameter):
                self._components.pop(name, None)
                self._parameters[name] = value
                if value.name is None:
                    value.name = name
            else:
                self._parameters.pop(name, None)
                self._components[name] = value
        elif registries is not None and (name in registries or name in self._parameters):
            if value is None:
                target = self._components if name in registries else self._parameters
                target[name] = None
            else:
                self._unregister(name)
        object.__setattr__(self, name, value)

    def _unregister(self, name: str) -> None:
        self._components.pop(name, None)
        self._parameters.pop(name, None)

    def __delattr__(self, name: str) -> None:
        if "_components" in self.__dict__:
            self._unregister(name)
        object.__delattr__(self, name)

    def register_component(self, name: str, component: Optional[Component]) -> None:
        """Register ``component`` under ``name`` (the same as assigning the attribute)."""
        if "_components" not in self.__dict__:
            raise AttributeError("cannot register a component before Component.__init__() call")
        if component is not None and not isinstance(component, Component):
            raise TypeError(f"{type(component).__name__} is not a Component")
        _check_name("component", name)
        if hasattr(self, name) and name not in self._components:
            raise KeyError(f"attribute {name!r} already exists")
        self._components[name] = component
        object.__setattr__(self, name, component)

    add_component = register_component

    def register_parameter(self, name: str, param: Optional[Parameter] = None) -> None:
        """Register ``param`` under ``name`` (the same as assigning the attribute)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot register a parameter before Component.__init__() call")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"{type(param).__name__} is not a Parameter")
        _check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute {name!r} already exists")
        self._parameters[name] = param
        if param is not None and param.name is None:
            param.name = name
        object.__setattr__(self, name, param)

    def get_subcomponent(self, name: str) -> Optional[Component]:
        """The direct child registered as ``name``, or None."""
        return self._components.get(name)

    # ---------------------------------------------------------------- traversal
    def named_children(self) -> Iterator[Tuple[str, Component]]:
        """Direct children as ``(name, component)``, each object once."""
        seen: Set[int] = set()
        for name, child in self._components.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Component]:
        for _, child in self.named_children():
            yield child

    components = children

    def named_components(
        self,
        memo: Optional[Set[int]] = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[Tuple[str, Component]]:
        """Depth-first walk yielding ``("", self)`` first, then dotted names of descendants."""
        if memo is None:
            memo = set()
        if id(self) in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, child in self._components.items():
            if child is None:
                continue
            child_prefix = f"{prefix}.{name}" if prefix else name
            yield from child.named_components(memo, child_prefix, remove_duplicate)

    def named_parameters(
        self, prefix: str = "", recursive: bool = True, remove_duplicate: bool = True
    ) -> Iterator[Tuple[str, Parameter]]:
        """Parameters as ``(dotted name, parameter)`` in registration order."""
        seen: Set[int] = set()
        owners = self.named_components(prefix=prefix) if recursive else [(prefix, self)]
        for owner_prefix, owner in owners:
            for name, param in owner._parameters.items():
                if param is None or (remove_duplicate and id(param) in seen):
                    continue
                seen.add(id(param))
                yield (f"{owner_prefix}.{name}" if owner_prefix else name), param

    def parameters(self, recursive: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recursive=recursive):
            yield param

    # -------------------------------------------------------------------- modes
    def train(self: C, mode: bool = True) -> C:
        """Set training mode on this component and every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode must be a bool, got {mode!r}")
        for _, component in self.named_components():
            object.__setattr__(component, "training", mode)
        return self

    def eval(self: C) -> C:
        return self.train(False)

    # ------------------------------------------------------------ serialization
    def to_dict(self, exclude: Optional[List[str]] = None) -> Dict[str, Any]:
        """``{"type": ClassName, "data": {attribute: value}}``, recursing into children."""
        from lightrag.utils.serialization import component_to_dict

        return component_to_dict(self, exclude)

    @classmethod
    def from_dict(cls: type[C], data: Dict[str, Any]) -> C:
        """Rebuild a component from :meth:`to_dict` output without calling ``__init__``."""
        from lightrag.utils.serialization import component_from_dict

        return component_from_dict(cls, data)

    # ---------------------------------------------------------------- pickling
    def is_picklable(self) -> bool:
        """Whether :meth:`to_dict` output survives a pickle round trip."""
        import pickle

        try:
            pickle.loads(pickle.dumps(self.to_dict()))
            return True
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            log.info("%s is not picklable: %s", type(self).__name__, e)
            return False

    def pickle_to_file(self, filepath: str) -> None:
        """Pickle :meth:`to_dict` output to ``filepath`` (written atomically)."""
        import pickle

        from lightrag.utils.file_io import atomic_write_bytes

        atomic_write_bytes(filepath, pickle.dumps(self.to_dict()))

    @classmethod
    def load_from_pickle(cls: type[C], filepath: str) -> C:
        """Rebuild a component saved by :meth:`pickle_to_file` (trusted files only)."""
        import pickle

        with open(filepath, "rb") as f:
            return cls.from_dict(pickle.load(f))

    @classmethod
    def load_state_pickle(cls, filepath: str) -> Any:
        """Unpickle whatever ``filepath`` holds, e.g. a whole pickled component (trusted only)."""
        import pickle

        with open(filepath, "rb") as f:
            return pickle.load(f)

    def to_config(self) -> Dict[str, Any]:
        """The config (``component_name`` + ``component_config``) that rebuilds this component."""
        from lightrag.utils.config import component_to_config

        return component_to_config(self)

    @classmethod
    def from_config(cls: type[C], config: Dict[str, Any]) -> C:
        """Build from a config: either ``{component_name, component_config}`` or plain kwargs."""
        from lightrag.utils.config import component_from_config

        return component_from_config(cls, config)

    # --------------------------------------------------------------------- repr
    def _extra_repr(self) -> str:
        """Extra text shown inside the parentheses of this component's repr."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self._extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): {_addindent(repr(child), 2)}"
            for name, child in self._components.items()
            if child is not None
        ]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __dir__(self) -> Iterable[str]:
        return sorted(set(super().__dir__()) | set(self._components) | set(self._parameters))


class FunComponent(Component):
    """Wrap a plain function as a Component whose ``call`` is the function.

    Example:
        >>> add_one = FunComponent(lambda x: x + 1)
        >>> add_one(1)
        2
    """

    def __init__(self, fun: Optional[Callable] = None, afun: Optional[Callable] = None) -> None:
        super().__init__()
        if fun is None and afun is None:
            raise ValueError("FunComponent needs a function")
        self.fun_name = getattr(fun or afun, "__name__", "fun")
        self.fun = fun
        self.afun = afun

    def call(self, *args: Any, **kwargs: Any) -> Any:
        if self.fun is None:
            raise ValueError(f"{self.fun_name} is async only: use acall")
        return self.fun(*args, **kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        if self.afun is not None:
            return await self.afun(*args, **kwargs)
        return await super().acall(*args, **kwargs)

    def _extra_repr(self) -> str:
        return f"fun_name={self.fun_name}"


def _camel_case(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def fun_to_component(fun: Callable) -> FunComponent:
    """Turn a function into a Component instance of a new class ``<CamelName>Component``.

    Works as a decorator; the new class is registered so configs can name it.

    Example:
        >>> @fun_to_component
        ... def add_one(x):
        ...     return x + 1
        >>> add_one
        AddOneComponent(fun_name=add_one)
        >>> add_one(1)
        2
    """
    from lightrag.utils.registry import EntityMapping

    is_async = inspect.iscoroutinefunction(fun)
    class_name = _camel_case(fun.__name__) + "Component"

    def __init__(self: FunComponent) -> None:
        FunComponent.__init__(self, afun=fun) if is_async else FunComponent.__init__(self, fun=fun)

    cls = type(class_name, (FunComponent,), {"__init__": __init__, "__doc__": fun.__doc__})
    EntityMapping.register(class_name, cls)
    return cls()
