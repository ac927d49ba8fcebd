"""Graph helpers shared by the NetworkX and SQL graph stores, without importing NetworkX:
the properties a node or edge may hold, label search and the explorer's breadth-first walk.

Example:
    >>> clean_properties({"weight": 2.0, "note": None}, "edge a-b")
    {'weight': 2.0}
    >>> rank_labels(["Saturn V", "Saturn", "Pre-Saturn"], "saturn", 2)
    ['Saturn', 'Saturn V']
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

_GRAPHML_TYPES = (str, int, float, bool)


def clean_properties(data: Dict[str, Any], what: str) -> Dict[str, Any]:
    """Properties GraphML can hold: None dropped, NumPy scalars unwrapped, others rejected."""
    if not isinstance(data, dict):
        raise TypeError(f"{what} properties must be a dict, got {type(data).__name__}")
    clean = {}
    for key, value in data.items():
        if not isinstance(key, str):
            raise TypeError(f"{what} property names must be strings, got {key!r}")
        if value is None:
            continue
        if isinstance(value, np.generic):
            value = value.item()
        if not isinstance(value, _GRAPHML_TYPES):
            raise TypeError(f"{what} property {key!r} is a {type(value).__name__}; GraphML holds "
                            "only str, int, float and bool (join lists with GRAPH_FIELD_SEP)")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{what} property {key!r} is {value}; only finite numbers are stored "
                             "(JSON and SQLite's JSON functions have no Infinity or NaN)")
        clean[key] = value
    return clean


def rank_labels(found: List[str], query: str, limit: int) -> List[str]:
    """Labels containing ``query`` (lower case), best first: exact, then prefix, then shorter."""
    found = [n for n in found if query in n.lower()]
    found.sort(key=lambda n: (n.lower() != query, not n.lower().startswith(query), len(n), n))
    return found[:limit]


def busy_first_bfs(start: str, max_depth: int, max_nodes: int,
                   neighbours: Callable[[str], List[str]],
                   degrees: Callable[[List[str]], Dict[str, int]]) -> Tuple[List[str], bool]:
    """Nodes reached from ``start`` within ``max_depth`` hops, busier neighbours first, at most
    ``max_nodes``; and whether the walk was cut short."""
    chosen: List[str] = []
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        if len(chosen) >= max_nodes:
            return chosen, True
        node, depth = queue.popleft()
        chosen.append(node)
        if depth < max_depth:
            fresh = [o for o in neighbours(node) if o not in seen]
            degree = degrees(fresh)
            fresh.sort(key=lambda o: (-degree.get(o, 0), o))
            seen.update(fresh)
            queue.extend((o, depth + 1) for o in fresh)
    return chosen, False
