"""``Sequential``: run components one after another, like ``torch.nn.Sequential``.

Example:
    >>> from lightrag.core.component import FunComponent
    >>> seq = Sequential(FunComponent(lambda x: x + 1), FunComponent(lambda x: x * 10))
    >>> seq(1)
    20
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from typing import Any, Dict, Iterable, Iterator, Tuple, TypeVar, Union, overload

from lightrag.core.component import Component

T = TypeVar("T")  # 0.1's generic type variable of this module


def _is_args_kwargs(result: Any) -> bool:
    return (
        isinstance(result, tuple)
        and len(result) == 2
        and isinstance(result[0], tuple)
        and isinstance(result[1], dict)
    )


class Sequential(Component):
    """A chain of components; each one's output is the next one's input.

    Built from positional components (keys ``"0"``, ``"1"``, …) or one ``OrderedDict`` of named
    components. With one positional argument the value is piped through; otherwise the first
    component gets ``*args, **kwargs`` and a component may return ``((args...), {kwargs})`` to
    pass several arguments on.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for key, component in args[0].items():
                self.register_component(key, component)
        else:
            for idx, component in enumerate(args):
                self.register_component(str(idx), component)

    # ----------------------------------------------------------------- container
    def _get_item_by_idx(self, idx: int) -> Component:
        size = len(self)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range for Sequential of length {size}")
        return list(self._components.values())[idx % size]

    @overload
    def __getitem__(self, idx: int) -> Component: ...
    @overload
    def __getitem__(self, idx: str) -> Component: ...
    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...

    def __getitem__(self, idx: Union[int, str, slice]) -> Union[Component, Sequential]:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._components.items())[idx]))
        if isinstance(idx, str):
            return self._components[idx]
        return self._get_item_by_idx(idx)

    def _key_at(self, idx: int) -> str:
        """The key of the step at position ``idx`` (negative counts from the end)."""
        keys = list(self._components)
        if not -len(keys) <= idx < len(keys):
            raise IndexError(f"index {idx} is out of range for Sequential of length {len(keys)}")
        return keys[idx]

    def __setitem__(self, idx: Union[int, str], component: Component) -> None:
        """Replace the step at position ``idx`` (or under key ``idx``) in place; a new key is
        added at the end."""
        if not isinstance(component, Component):
            raise TypeError(
                f"component should be an instance of Component, but got {type(component)}"
            )
        key = idx if isinstance(idx, str) else self._key_at(idx)
        if key in self._components:
            setattr(self, key, component)  # an existing key keeps its position
        else:
            self.register_component(key, component)

    def __delitem__(self, idx: Union[int, str, slice]) -> None:
        if isinstance(idx, slice):
            keys = list(self._components)[idx]
        elif isinstance(idx, str):
            keys = [idx]
        else:
            keys = [self._key_at(idx)]
        for key in keys:
            delattr(self, key)
        self._rekey()

    def _rekey(self) -> None:
        items = list(self._components.values())
        for key in list(self._components):
            delattr(self, key)
        for i, component in enumerate(items):
            self.register_component(str(i), component)

    def __len__(self) -> int:
        return len(self._components)

    def __iter__(self) -> Iterator[Component]:
        return iter(self._components.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class")
        return self.extend(other)

    def append(self, component: Component) -> Sequential:
        self.register_component(str(len(self)), component)
        return self

    def insert(self, idx: int, component: Component) -> Sequential:
        """Insert ``component`` before position ``idx`` (0.1's argument name)."""
        if not isinstance(component, Component):
            raise TypeError(f"Sequential.insert takes a Component, got {type(component).__name__}")
        items = list(self._components.values())
        items.insert(idx, component)
        for key in list(self._components):
            delattr(self, key)
        for i, item in enumerate(items):
            self.register_component(str(i), item)
        return self

    def extend(self, components: Iterable[Component]) -> Sequential:
        for component in components:
            self.append(component)
        return self

    # -------------------------------------------------------------------- calling
    def call(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            value = args[0]
            for component in self._components.values():
                value = component(value)
            return value
        call_args: Tuple[Any, ...] = args
        call_kwargs: Dict[str, Any] = kwargs
        for component in self._components.values():
            result = component(*call_args, **call_kwargs)
            call_args, call_kwargs = result if _is_args_kwargs(result) else ((result,), {})
        return call_args[0] if call_args else None

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """Like :meth:`call`, awaiting each component's ``acall``.

        A component whose ``call`` is ``async def`` (lightrag 0.1's pattern) is awaited through
        the default ``acall``; a sync result passes through.
        """
        call_args: Tuple[Any, ...] = args
        call_kwargs: Dict[str, Any] = kwargs
        for component in self._components.values():
            result = component.acall(*call_args, **call_kwargs)
            while inspect.isawaitable(result):  # an acall that returns a coroutine
                result = await result
            if len(call_args) == 1 and not call_kwargs:
                call_args, call_kwargs = (result,), {}
            else:
                call_args, call_kwargs = result if _is_args_kwargs(result) else ((result,), {})
        return call_args[0] if call_args else None
