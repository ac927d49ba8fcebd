"""The entity–passage graph around a query's seeds, for stores too large for the whole graph.

The ``ppr`` and ``mix`` modes walk the entity–passage graph from the query's entities and its
densely retrieved passages. Up to :data:`GLOBAL_MAX_CITATIONS` (entity, chunk) citations
(``PprSettings.whole_graph_max_citations``) the
whole graph is built once per store version (cached; about 1.5 s at 100k chunks, 300k
citations, after which a walk takes ~50 ms); above it, building it would read every citation of
the store at the first query after each change (over 10 s at a million chunks) and every walk
would cross millions of edges, so the walk runs on the seeds' neighbourhood instead, read by key
for each query (~100-150 ms whatever the store's size):

* hop 1: the seed entities and the entities of the seed passages, each with the last
  :data:`ENTITY_CHUNKS` passages of its ``source_id`` window (its most recent, or for a hub a
  uniform sample: a hub contributes a bounded share);
* hop 2: the entities of those passages, linked to the passages already taken (no new ones).

Mass that would leave the neighbourhood restarts, as at a dangling node: the walk's damping
(0.85) already makes far nodes count little. The passages stay at most
:data:`MAX_PASSAGES`, so a query reads a bounded number of rows however large the store.

Example:
    >>> from lightrag.components.storage.sql_db import SQLiteDatabase
    >>> from lightrag.components.storage.sql_graph import SQLGraphStorage
    >>> g = SQLGraphStorage(SQLiteDatabase(":memory:"))
    >>> g.upsert_node("Titan", {"source_id": "c1<SEP>c2"})
    >>> g.upsert_node("Saturn", {"source_id": "c2<SEP>c3"})
    >>> sorted((n, sorted(c)) for n, c in neighbourhood(g, ["Titan"], []))
    [('Saturn', ['c2']), ('Titan', ['c1', 'c2'])]
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from lightrag.components.graph_rag.merger import split_field

#: citations up to which the whole entity–passage graph is built (and cached per version)
GLOBAL_MAX_CITATIONS = 1_000_000
#: passages of one entity the neighbourhood takes (the last of its window; ``PprSettings``'s default)
ENTITY_CHUNKS = 32
#: passages in one neighbourhood at most (``PprSettings``'s default). MuSiQue-100 with the
#: neighbourhood forced: ppr/mix R@5 72.0 at 2,000 passages and 64 per entity, 72.3 at 1,000
#: and 32 (half the rows read per query)
MAX_PASSAGES = 1_000


def supports_neighbourhood(graph: Any) -> bool:
    """Whether the graph store can list the entities of a chunk (by key)."""
    return all(callable(getattr(graph, m, None)) for m in ("chunk_entities", "count_citations"))


def too_large_for_whole_graph(graph: Any, max_citations: int = GLOBAL_MAX_CITATIONS) -> bool:
    """Whether the store holds more than ``max_citations`` citations (a bounded count)."""
    return supports_neighbourhood(graph) and graph.count_citations(max_citations + 1) > max_citations


def neighbourhood(graph: Any, seed_names: Sequence[str], seed_chunks: Sequence[str],
                  max_passages: int = MAX_PASSAGES, entity_chunks: int = ENTITY_CHUNKS,
                  ) -> List[Tuple[str, List[str]]]:
    """``(entity, its passages in the neighbourhood)`` records for :meth:`PassageGraph.build`:
    at most ``max_passages`` passages, ``entity_chunks`` of them per hop-1 entity."""
    hop1 = list(dict.fromkeys(seed_names))
    chunk_entities = graph.chunk_entities(list(dict.fromkeys(seed_chunks)))
    known = set(hop1)
    for names in chunk_entities.values():
        fresh = [n for n in names if n not in known]
        known.update(fresh)
        hop1.extend(fresh)
    passages: Dict[str, None] = dict.fromkeys(seed_chunks)
    recent: Dict[str, List[str]] = {}
    for name, node in graph.get_nodes_batch(hop1).items():
        recent[name] = split_field(node.get("source_id"))[-entity_chunks:]
        passages.update(dict.fromkeys(recent[name]))
    taken = list(passages)[:max_passages]
    inside = set(taken)
    chunk_entities.update(graph.chunk_entities([c for c in taken if c not in chunk_entities]))
    edges: Dict[str, Dict[str, None]] = {name: dict.fromkeys(c for c in chunks if c in inside)
                                         for name, chunks in recent.items()}
    for chunk in taken:  # hop 2 (and hop-1 entities' older passages): links to taken passages
        for name in chunk_entities.get(chunk, ()):
            edges.setdefault(name, {})[chunk] = None
    return [(name, list(chunks)) for name, chunks in edges.items()]


def citation_counts(graph: Any, names: Sequence[str]) -> Dict[str, int]:
    """How many passages of the whole store cite each entity (its ``source_count``)."""
    nodes = graph.get_nodes_batch(list(names))
    return {n: int(d.get("source_count") or len(split_field(d.get("source_id")))) for n, d in nodes.items()}
