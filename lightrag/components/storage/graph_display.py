"""The explorer's reads of an SQL graph (the web UI, ``/graph``, ``/graph/search``): a
subgraph for display, labels by degree, label search, each bounded so that a 1M-chunk store's
hubs (100k edges each) answer in a second, not in minutes of reading and megabytes of JSON.

:class:`GraphDisplayReads` is a mixin of
:class:`~lightrag.components.storage.sql_graph.SQLGraphStorage`: it reads through the store's
own key look-ups (``get_nodes_edges_bounded``, ``_edges_to``, the ``node_degrees`` rows).

Example:
    >>> import tempfile, os
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
    >>> g = SQLGraphStorage(SQLiteDatabase(os.path.join(tempfile.mkdtemp(), "s.sqlite3")))
    >>> g.upsert_edges_batch({("Titan", "Saturn"): {}, ("Rhea", "Saturn"): {}})
    >>> g.get_popular_labels(2), g.search_labels("tit")
    (['Saturn', 'Rhea'], ['Titan'])
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Set, Tuple

from lightrag.components.storage.base import KnowledgeGraph
from lightrag.components.storage.graph_properties import busy_first_bfs, rank_labels

Pair = Tuple[str, str]

#: neighbours of a node read per ``max_nodes`` of a displayed subgraph (see ``_bfs``)
BFS_NEIGHBOURS_PER_NODE = 4
#: edges a node of a displayed subgraph keeps when the subgraph is denser (see
#: ``get_knowledge_graph``)
DISPLAY_EDGES_PER_NODE = 10


def _busiest_pairs(pairs: Set[Pair], degrees: Mapping[str, int]) -> Set[Pair]:
    """Of ``pairs``, each node's ``DISPLAY_EDGES_PER_NODE`` edges to the busiest other nodes."""
    by_node: Dict[str, List[Tuple[int, str, Pair]]] = {}
    for pair in pairs:
        for node, other in (pair, pair[::-1]):
            by_node.setdefault(node, []).append((-degrees.get(other, 0), other, pair))
    kept: Set[Pair] = set()
    for items in by_node.values():
        items.sort()
        kept.update(pair for _, _, pair in items[:DISPLAY_EDGES_PER_NODE])
    return kept


def _pair(src: str, tgt: str) -> Pair:
    return (src, tgt) if src <= tgt else (tgt, src)


class GraphDisplayReads:
    """Display reads of a graph stored as rows (mixed into ``SQLGraphStorage``, whose look-ups
    and ``_mine``/``_scan_*`` views of the writer's pending changes they use)."""

    db: Any
    namespace: str
    _degrees: Any

    def search_labels(self, query: str, limit: int = 50) -> List[str]:
        """Labels containing ``query`` (case-insensitive): exact, then prefix, then shorter first."""
        q = query.strip().lower()
        if not q:
            return []
        if self._mine():
            return rank_labels(list(self._scan_nodes()), q, limit)
        # exact and prefix matches through the (ns, LOWER(id)) index, so that a short query on a
        # large graph still ranks them first; then substring matches, at most a bounded number
        found = [r[0] for r in self.db.read(
            "SELECT id FROM nodes WHERE ns = ? AND LOWER(id) >= ? AND LOWER(id) < ? "
            "ORDER BY LOWER(id) LIMIT ?", (self.namespace, q, q + "\U0010ffff", max(limit * 20, 1000)))]
        escaped = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        found += [r[0] for r in self.db.read(
            "SELECT id FROM nodes WHERE ns = ? AND LOWER(id) LIKE ? ESCAPE '\\' LIMIT ?",
            (self.namespace, f"%{escaped}%", max(limit * 20, 1000)))]
        return rank_labels(list(dict.fromkeys(found)), q, limit)

    def get_popular_labels(self, limit: int = 300) -> List[str]:
        """Labels by degree, highest first (ties by name; nodes without edges last)."""
        if not self._mine():
            popular = self._degrees.highest(limit)
            if len(popular) < limit:
                chosen = set(popular)
                isolated = [n for (n,) in self.db.read(
                    "SELECT id FROM nodes WHERE ns = ? ORDER BY id", (self.namespace,))
                    if n not in chosen]
                popular += isolated[:limit - len(popular)]
            return popular
        degrees: Dict[str, int] = dict.fromkeys(self._scan_nodes(), 0)
        for s, t in self._scan_edges():
            degrees[s] = degrees.get(s, 0) + 1
            degrees[t] = degrees.get(t, 0) + 1
        return [n for n, _ in sorted(degrees.items(), key=lambda nd: (-nd[1], nd[0]))[:limit]]

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3,
                            max_nodes: int = 1000) -> KnowledgeGraph:
        """A subgraph for display: ``"*"``, the ``max_nodes`` most connected nodes; else a BFS
        from ``node_label`` up to ``max_depth`` hops (busier neighbours first), cut at
        ``max_nodes``. Unknown label: empty. The edges among the nodes, unless they average more
        than ``DISPLAY_EDGES_PER_NODE`` per node (the 1,000 hubs of a 1M-chunk store share 106k
        edges, a 55 MB answer): then each node keeps its edges to the busiest others, at most
        that many, and the graph is marked truncated."""
        if max_nodes < 1 or max_depth < 0:
            raise ValueError("max_nodes must be >= 1 and max_depth >= 0")
        if node_label == "*":
            chosen = self.get_popular_labels(max_nodes)
            truncated = self._more_nodes_than(max_nodes)
        elif not self.has_node(node_label):
            return KnowledgeGraph()
        else:
            chosen, truncated = self._bfs(node_label, max_depth, max_nodes)
        nodes = self.get_nodes_batch(chosen)
        degrees = self.node_degrees_batch(chosen)
        pairs = self._pairs_among(chosen, degrees)
        if len(pairs) > DISPLAY_EDGES_PER_NODE * len(chosen):
            pairs, truncated = _busiest_pairs(pairs, degrees), True
        edges = self.get_edges_batch(sorted(pairs))
        return KnowledgeGraph(
            nodes=[{"id": n, "labels": [n], "properties": nodes.get(n, {})} for n in chosen],
            edges=[{"id": f"{s}-{t}", "source": s, "target": t, "properties": d}
                   for (s, t), d in edges.items()],
            is_truncated=truncated)

    def _more_nodes_than(self, count: int) -> bool:
        """Whether the graph has more than ``count`` nodes (``count + 1`` index entries read, not
        a count of every node: 17 ms at 450k nodes)."""
        if self._mine():
            return self.node_count() > count
        return bool(self.db.read("SELECT 1 FROM nodes WHERE ns = ? LIMIT 1 OFFSET ?",
                                 (self.namespace, count)))

    def _pairs_among(self, chosen: Sequence[str], degrees: Mapping[str, int]) -> Set[Pair]:
        """The edges whose two ends are both in ``chosen`` (``degrees``: theirs). Each pair is
        found from its end of lower rank (degree, then name): that node either reads its edges
        or, when that is cheaper, looks up by key the nodes ranked above it (two look-ups each),
        so a hub at the top checks a few dozen keys instead of reading its 100k edges, and the
        display of the 1,000 busiest nodes of a 1M-chunk store reads ~4x fewer index entries
        than when every hub looked up all the others."""
        if self._mine():  # the writer's pending edges are not in the rows looked up by key
            inside = set(chosen)
            read = self.get_nodes_edges_batch(list(chosen))
            return {_pair(s, t) for found in read.values() for s, t in found if s in inside and t in inside}
        ranked = sorted(dict.fromkeys(chosen), key=lambda n: (degrees.get(n, 0), n))
        readers = [n for i, n in enumerate(ranked) if degrees.get(n, 0) <= 2 * (len(ranked) - 1 - i)]
        inside = set(ranked)
        pairs = {_pair(s, t) for found in self.get_nodes_edges_batch(readers).values()
                 for s, t in found if s in inside and t in inside}
        reading = set(readers)
        for i, node in enumerate(ranked):
            if node not in reading and i + 1 < len(ranked):
                pairs.update(_pair(s, t) for s, t in self._edges_to(node, ranked[i + 1:]))
        return pairs

    def _bfs(self, start: str, max_depth: int, max_nodes: int) -> Tuple[List[str], bool]:
        """:func:`busy_first_bfs` reading at most ``BFS_NEIGHBOURS_PER_NODE`` times
        ``max_nodes`` neighbours of a node (the busiest first among those): a hub's 100k
        neighbours are not all read and ranked to keep a few hundred."""
        limit = BFS_NEIGHBOURS_PER_NODE * max_nodes

        def neighbours(node: str) -> List[str]:
            return [o for _, o in self.get_nodes_edges_bounded([node], limit)[node]]

        return busy_first_bfs(start, max_depth, max_nodes, neighbours, self.node_degrees_batch)
