"""YAML loading with bounds: size, aliases, expanded size and nesting depth.

``yaml.safe_load`` builds no Python objects beyond plain data, but it still expands aliases:
a 600-byte "billion laughs" document (nine levels of nine aliases) stands for 10^9 nodes, and
whatever walks the result (config checks, dumps, JSON encoding) runs for minutes and eats
gigabytes. :func:`safe_load` composes the document first, counts aliases and the size the
aliases expand to, and refuses before any Python object is built.

Example:
    >>> safe_load("a: &x [1, 2]\\nb: *x")
    {'a': [1, 2], 'b': [1, 2]}
    >>> bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\\n' + "".join(
    ...     f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\\n" for i in range(8))
    >>> try:
    ...     safe_load(bomb)
    ... except YamlLimitError as e:
    ...     print(str(e)[:48])
    YAML expands to more than 100000 nodes through a
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Set, Union

import yaml

__all__ = [
    "MAX_ALIASES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_NUMBER_CHARS",
    "YamlLimitError",
    "check_yaml_bounds",
    "read_yaml_file",
    "safe_load",
]

MAX_BYTES = 2 * 1024 * 1024
MAX_ALIASES = 1000
MAX_NODES = 100_000
MAX_DEPTH = 100
#: the longest integer or float scalar built (Python's own limit for decimal text): PyYAML builds
#: ``1:1:1:...`` (base 60) in quadratic time, 2 MiB of it in minutes
MAX_NUMBER_CHARS = 4300


class YamlLimitError(ValueError):
    """A YAML document is over one of the bounds (size, aliases, expanded nodes, depth)."""


class _BoundedLoader(yaml.SafeLoader):
    """A SafeLoader that counts aliases and nesting while it composes."""

    max_aliases = MAX_ALIASES
    max_depth = MAX_DEPTH

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > self.max_aliases:
                raise YamlLimitError(
                    f"YAML has more than {self.max_aliases} aliases (*name); "
                    "refusing it (alias bombs expand exponentially)"
                )
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise YamlLimitError(f"YAML nests deeper than {self.max_depth} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _bounded_number(kind: str) -> Any:
    build = getattr(yaml.SafeLoader, f"construct_yaml_{kind}")

    def construct(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        if len(node.value) > MAX_NUMBER_CHARS:
            raise YamlLimitError(f"YAML {kind} of {len(node.value)} characters at line "
                                 f"{node.start_mark.line + 1}; at most {MAX_NUMBER_CHARS} are read")
        return build(loader, node)

    return construct


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _bounded_number("int"))
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _bounded_number("float"))


def _expanded_size(node: yaml.Node, limit: int) -> int:
    """Nodes the document holds once every alias is expanded (stops past ``limit``)."""
    sizes: Dict[int, int] = {}
    active: Set[int] = set()

    def size(current: yaml.Node) -> int:
        key = id(current)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise YamlLimitError("YAML has a recursive alias (an anchor that contains itself)")
        active.add(key)
        total = 1
        if isinstance(current, yaml.SequenceNode):
            children = list(current.value)
        elif isinstance(current, yaml.MappingNode):
            children = [part for pair in current.value for part in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                raise YamlLimitError(
                    f"YAML expands to more than {limit} nodes through aliases "
                    "(a 'billion laughs' document?); refusing it"
                )
        active.discard(key)
        sizes[key] = total
        return total

    return size(node)


def safe_load(
    text: Union[str, bytes],
    max_bytes: int = MAX_BYTES,
    max_aliases: int = MAX_ALIASES,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """``yaml.safe_load`` with bounds; the first document only.

    Raises:
        YamlLimitError: the text is over ``max_bytes``, has more than ``max_aliases`` aliases,
            expands to more than ``max_nodes`` nodes, nests deeper than ``max_depth``, has a
            recursive alias or a number longer than :data:`MAX_NUMBER_CHARS`.
        yaml.YAMLError: the text is not valid YAML, or holds a value that cannot be built
            (``2001-13-45`` as a date), with its line.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if len(text) > max_bytes:
        raise YamlLimitError(f"YAML text is {len(text)} characters, over the limit of {max_bytes}")
    loader = _BoundedLoader(text)
    loader.max_aliases = max_aliases
    loader.max_depth = max_depth
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, max_nodes)
        return loader.construct_document(node)
    except RecursionError:
        raise YamlLimitError("YAML nests too deeply to be read") from None
    except YamlLimitError:
        raise
    except (ValueError, OverflowError) as e:  # a date such as 2001-13-45: a YAML error, not a crash
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot build a value: {e}", getattr(loader, "problem_mark", None)) from None
    finally:
        loader.dispose()


def check_yaml_bounds(text: str, max_aliases: int = 100, max_nodes: int = MAX_NODES) -> None:
    """Raise :class:`YamlLimitError` when ``text`` (e.g. a model's reply) would expand past the
    bounds; YAML errors are left to the real parser. For untrusted YAML read by other parsers.

    Example:
        >>> check_yaml_bounds("name: Paris")  # fine: returns None
    """
    try:
        safe_load(text, max_bytes=max(len(text), 1), max_aliases=max_aliases, max_nodes=max_nodes)
    except yaml.YAMLError:
        return


def read_yaml_file(path: Union[str, Path], max_bytes: int = MAX_BYTES, **bounds: Any) -> Any:
    """Read and :func:`safe_load` a UTF-8 YAML file, refusing files over ``max_bytes`` before
    reading them.

    Raises:
        FileNotFoundError: no such file.
        YamlLimitError: over a bound (see :func:`safe_load`).
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"YAML file not found: {file}")
    size = file.stat().st_size
    if size > max_bytes:
        raise YamlLimitError(f"{file} is {size} bytes, over the limit of {max_bytes}")
    return safe_load(file.read_text(encoding="utf-8"), max_bytes=max_bytes, **bounds)
