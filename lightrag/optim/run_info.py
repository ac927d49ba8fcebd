"""What a benchmark report records about its run: configs, dataset hash, package versions.

Example:
    >>> describe_inputs(["question", "paragraphs"])
    ['question', 'paragraphs']
    >>> len(dataset_sha256([{"question": "q"}]))
    64
"""

from __future__ import annotations

import copy
import hashlib
import json
import platform
import sys
from typing import Any, Dict, Sequence

from lightrag.core.component import Component
from lightrag.utils.secrets import redact

__all__ = ["config_of", "dataset_sha256", "describe_inputs", "describe_pipeline", "versions"]


def config_of(obj: Any) -> Any:
    """``obj.to_config()``, or the class's dotted name when it has no config."""
    try:
        return obj.to_config()
    except Exception:  # noqa: BLE001 - a report names what it cannot serialise
        return f"{type(obj).__module__}.{type(obj).__qualname__}"


def describe_pipeline(pipeline: Any) -> Any:
    """A pipeline config (secrets redacted), or a factory's dotted name."""
    if isinstance(pipeline, dict):
        return redact(copy.deepcopy(pipeline))
    if isinstance(pipeline, Component):
        return redact(config_of(pipeline))
    return f"{getattr(pipeline, '__module__', '')}.{getattr(pipeline, '__qualname__', repr(pipeline))}"


def versions() -> Dict[str, str]:
    """lightrag's and Python's versions, and those of the provider SDKs already imported."""
    from lightrag import __version__

    found = {"lightrag": __version__, "python": platform.python_version()}
    for package in ("openai", "groq", "anthropic", "numpy"):
        module = sys.modules.get(package)
        if module is not None:
            found[package] = str(getattr(module, "__version__", "?"))
    return found


def dataset_sha256(items: Sequence[Any]) -> str:
    """A SHA-256 of the items (canonical JSON): two runs with the same hash ran on the same data.

    Example:
        >>> dataset_sha256([{"q": 1}]) == dataset_sha256([{"q": 1}])
        True
    """
    text = json.dumps(list(items), sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def describe_inputs(inputs: Any) -> Any:
    """The runner's ``inputs`` as plain data (a function as its dotted name)."""
    if inputs is None or isinstance(inputs, str):
        return inputs
    if callable(inputs):
        return f"{getattr(inputs, '__module__', '')}.{getattr(inputs, '__qualname__', 'function')}"
    return list(inputs)
