"""Token usage by model, for what one insert or one query cost.

Every :class:`~lightrag.core.generator.Generator` counts the tokens of its calls
(``generator.usage``); :func:`usage_snapshot` reads those counters for every Generator of a
component tree, keyed by model, and :func:`usage_since` is what was spent between two snapshots.
An insert reports it in ``InsertResult.usage`` and a query in
``raw_data["processing_info"]["usage"]``, as ``{model: {"prompt_tokens", "completion_tokens",
"calls"}}``. Counts come from the provider's replies (a local model or a provider that reports no
usage counts zero tokens, but its calls); cached replies cost nothing and are not counted.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> from lightrag.core import Generator
    >>> gen = Generator(model_client=ScriptedClient(responses=["hi"], cycle=True),
    ...                 model_kwargs={"model": "m1"})
    >>> before = usage_snapshot(gen)
    >>> _ = gen({"input_str": "x"})
    >>> usage_since(before, usage_snapshot(gen))["m1"]["calls"]
    1
"""

from __future__ import annotations

from typing import Any, Dict

from lightrag.core.generator import Generator

Usage = Dict[str, Dict[str, int]]
FIELDS = ("prompt_tokens", "completion_tokens", "calls")


def model_name(generator: Generator) -> str:
    """The model a Generator calls: its ``model`` kwarg, else the client's class name."""
    model = (generator.model_kwargs or {}).get("model")
    return str(model) if model else type(generator.model_client).__name__


def usage_snapshot(*components: Any) -> Usage:
    """The usage counters of every Generator in the given component trees, summed by model."""
    totals: Usage = {}
    seen = set()
    for root in components:
        if root is None:
            continue
        tree = [root] + [c for _, c in root.named_components()] if hasattr(
            root, "named_components") else [root]
        for component in tree:
            if not isinstance(component, Generator) or id(component) in seen:
                continue
            seen.add(id(component))
            counts = component.usage
            row = totals.setdefault(model_name(component), dict.fromkeys(FIELDS, 0))
            row["prompt_tokens"] += int(counts.prompt_tokens or 0)
            row["completion_tokens"] += int(counts.completion_tokens or 0)
            row["calls"] += int(counts.calls or 0) + int(getattr(counts, "streamed_calls", 0) or 0)
    return totals


def usage_since(before: Usage, after: Usage) -> Usage:
    """What ``after`` adds to ``before``, models with no new calls or tokens left out."""
    spent: Usage = {}
    for model, row in after.items():
        base = before.get(model, {})
        delta = {k: row.get(k, 0) - base.get(k, 0) for k in FIELDS}
        if any(delta.values()):
            spent[model] = delta
    return spent
