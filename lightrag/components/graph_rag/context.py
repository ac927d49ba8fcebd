"""Retrieval steps shared by the query modes, and context building under token budgets.

The steps follow the LightRAG algorithm:

1. **search**: low-level keywords -> entity vectors -> entities and their 1-hop relations
   (``local``); high-level keywords -> relation vectors -> relations and their endpoints
   (``global``); the raw query -> chunk vectors (``naive``/``mix``);
2. **truncate** entities and relations to ``max_entity_tokens`` / ``max_relation_tokens``
   (JSON lines, best first);
3. **gather chunks** of the surviving entities and relations (and of the bridge entities at the
   far end of their relations), picked by similarity to the query (``VECTOR``) or by a linear
   quota per item (``WEIGHT``), ranked together with the vector chunks by query similarity plus
   graph support (``RELEVANCE``) or interleaved with them (``ROUND_ROBIN``), optionally
   reranked, capped at ``chunk_top_k`` and at the tokens left by ``max_total_tokens``;
4. **format** the context as plain text (graph lines as bullets, each chunk under its ``[n]``
   reference) with a numbered reference list of source files.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag.chunk_choice import (  # noqa: F401 (query_similarities re-exported)
    allot_chunk_ids,
    hub_chunk_choice,
    item_chunk_ids,
    query_similarities,
)
from lightrag.components.graph_rag.kg_lines import dump_line, line_tokens
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, QueryParam, relation_key
from lightrag.core.tokenizer import count_tokens, default_tokenizer

CONTEXT_TOKEN_BUFFER = 200


@dataclass
class GraphStores:
    """The storages a query reads: read-only views of the GraphIndex's stores (``GraphIndex.view``).

    ``synonym_pairs`` are near-duplicate entity names ``(name_a, name_b, similarity)`` found at
    index time (:func:`lightrag.components.graph_rag.ppr.synonym_pairs`); the ``ppr`` mode
    joins them with synonym edges.
    """

    graph: Any
    entities_vdb: Any
    relations_vdb: Any
    chunks_vdb: Any
    text_chunks: Any
    synonym_pairs: Sequence[Tuple[str, str, float]] = ()


@dataclass
class SearchResult:
    """Entities, relations and vector chunks found for one query, best first.

    ``dense_chunks`` are the chunks ``naive`` would take for the query, when the mode searched
    them anyway (their token count caps a graph mode's default context).
    """

    entities: List[Dict[str, Any]] = field(default_factory=list)
    relations: List[Dict[str, Any]] = field(default_factory=list)
    vector_chunks: List[Dict[str, Any]] = field(default_factory=list)
    dense_chunks: Optional[List[Dict[str, Any]]] = None


#: edges of one entity a ``local`` search ranks: a hub's edges to the other hits, then the rest
#: up to this many (ranking all 100k edges of a hub by their endpoints' degrees costs seconds)
MAX_EDGES_PER_ENTITY = 100
# ----------------------------------------------------------------------------- search
def entity_hits(stores: GraphStores, vector: np.ndarray, top_k: int) -> List[Dict[str, Any]]:
    """The ``top_k`` entities matching ``vector``; a 2-D ``vector`` holds one row per keyword,
    each searched on its own and merged by turns (every keyword's best match first, then every
    keyword's second, …), so no keyword crowds the others out of a small ``top_k``."""
    matrix = np.asarray(vector)
    if matrix.ndim == 1:
        return stores.entities_vdb.query(matrix, top_k=top_k)
    merged = round_robin(*stores.entities_vdb.query_batch(matrix, top_k=top_k),
                         key=lambda h: h["entity_name"])
    return merged[:top_k]


def search_entities(stores: GraphStores, vector: np.ndarray, top_k: int,
                    max_relations: int = 1000) -> SearchResult:
    """``local``: entities similar to the low-level keywords (one vector, or one row per
    keyword: :func:`entity_hits`), then their incident relations (the ``max_relations``
    best-ranked ones, ranked by the degrees of their endpoints)."""
    hits = entity_hits(stores, vector, top_k)
    names = [h["entity_name"] for h in hits]
    nodes = stores.graph.get_nodes_batch(names)
    degrees = stores.graph.node_degrees_batch(names)
    entities = [
        {**nodes[n], "entity_name": n, "rank": degrees.get(n, 0), "score": h["score"]}
        for n, h in zip(names, hits) if n in nodes
    ]
    pairs: List[Tuple[str, str]] = []
    seen = set()
    found = set(names)
    bounded = stores.graph.get_nodes_edges_bounded([e["entity_name"] for e in entities],
                                                   MAX_EDGES_PER_ENTITY, prefer=list(found),
                                                   degrees=degrees)
    for edges in bounded.values():  # a hub: its edges among the hits first, then a share
        for src, tgt in edges:
            key = relation_key(src, tgt)
            if key not in seen:
                seen.add(key)
                pairs.append(key)
    endpoint_degrees = stores.graph.node_degrees_batch(list({n for p in pairs for n in p}))
    rank = {p: endpoint_degrees.get(p[0], 0) + endpoint_degrees.get(p[1], 0) for p in pairs}
    if len(pairs) > max_relations:
        # Hubs can bring thousands of edges, but only the best-ranked ones fit the token budget:
        # fetch properties for the top ``max_relations`` by degree (ties keep discovery order).
        pairs = sorted(pairs, key=lambda p: -rank[p])[:max_relations]
    edge_data = stores.graph.get_edges_batch(pairs)
    relations = [
        {**edge_data[p], "src_id": p[0], "tgt_id": p[1], "rank": rank[p]}
        for p in pairs if p in edge_data
    ]
    relations.sort(key=lambda r: (r["rank"], float(r.get("weight", 0.0))), reverse=True)
    return SearchResult(entities=entities, relations=relations)


def search_relations(stores: GraphStores, vector: np.ndarray, top_k: int) -> SearchResult:
    """``global``: relations similar to the high-level keywords, then their endpoints."""
    hits = stores.relations_vdb.query(vector, top_k=top_k)
    pairs = [relation_key(h["src_id"], h["tgt_id"]) for h in hits]
    edge_data = stores.graph.get_edges_batch(pairs)
    relations = [
        {**edge_data[p], "src_id": p[0], "tgt_id": p[1], "score": h["score"]}
        for p, h in zip(pairs, hits) if p in edge_data
    ]
    names = list(dict.fromkeys(n for r in relations for n in (r["src_id"], r["tgt_id"])))
    nodes = stores.graph.get_nodes_batch(names)
    entities = [{**nodes[n], "entity_name": n} for n in names if n in nodes]
    return SearchResult(entities=entities, relations=relations)


def search_chunks(stores: GraphStores, vector: np.ndarray, top_k: int) -> List[Dict[str, Any]]:
    """``naive``: chunks similar to the query (with their stored token counts)."""
    hits = stores.chunks_vdb.query(vector, top_k=top_k)
    records = stores.text_chunks.get_by_ids([h["id"] for h in hits])
    return [
        {"chunk_id": h["id"], "content": h.get("content", ""), "file_path": h.get("file_path", ""),
         "score": h["score"], "tokens": (r or {}).get("tokens")}
        for h, r in zip(hits, records)
    ]


def round_robin(*lists: Sequence[Dict[str, Any]],
                key: Callable[[Dict[str, Any]], Any]) -> List[Dict[str, Any]]:
    """Interleave lists (a[0], b[0], a[1], …), keeping the first occurrence of each key."""
    merged, seen = [], set()
    for i in range(max((len(lst) for lst in lists), default=0)):
        for lst in lists:
            if i < len(lst) and key(lst[i]) not in seen:
                seen.add(key(lst[i]))
                merged.append(lst[i])
    return merged


def merge_searches(local: SearchResult, global_: SearchResult) -> SearchResult:
    """``hybrid``: round-robin interleaving of local and global results."""
    return SearchResult(
        entities=round_robin(local.entities, global_.entities, key=lambda e: e["entity_name"]),
        relations=round_robin(local.relations, global_.relations,
                              key=lambda r: relation_key(r["src_id"], r["tgt_id"])),
    )


# ------------------------------------------------------------------------ truncation
TRUNCATION_BLOCK = 32  # lines tokenised per call: one call per line costs far more


def truncate_by_tokens(items: Sequence[Dict[str, Any]], to_line: Callable[[Dict[str, Any]], Any],
                       max_tokens: int) -> Tuple[List[Dict[str, Any]], List[str], int]:
    """The longest prefix of ``items`` whose JSON lines fit ``max_tokens``; returns the items,
    their lines and the tokens used. Lines are built a block at a time, so a long candidate list
    costs only as much as the prefix that fits; their token counts come from the graph when
    the merger recorded them (:mod:`~lightrag.components.graph_rag.kg_lines`)."""
    kept: List[Dict[str, Any]] = []
    lines: List[str] = []
    used = 0
    for start in range(0, len(items), TRUNCATION_BLOCK):
        block = items[start:start + TRUNCATION_BLOCK]
        block_lines = [dump_line(to_line(item)) for item in block]
        for item, line, tokens in zip(block, block_lines, line_tokens(block, block_lines)):
            if used + tokens + 1 > max_tokens:
                return kept, lines, used
            used += tokens + 1
            kept.append(item)
            lines.append(line)
    return kept, lines, used


_WORDS = re.compile(r"\w+", re.UNICODE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
REDUNDANT_OVERLAP = 0.8  # share of a description's word trigrams found in the chunks


def word_trigrams(text: str) -> set:
    """The lower-cased word trigrams of ``text`` (single words when it has fewer than three)."""
    words = _WORDS.findall(text.lower())
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return set(zip(words, words[1:], words[2:]))


@functools.lru_cache(maxsize=200_000)
def _description_trigrams(description: str) -> frozenset:
    """The word trigrams of a description's sentences (remembered: the same entity and relation
    descriptions come back query after query)."""
    pieces = _SENTENCE_BREAK.split(description.replace(GRAPH_FIELD_SEP, "\n").replace("...", "\n"))
    return frozenset().union(*(word_trigrams(p) for p in pieces)) if pieces else frozenset()


def adds_information(description: str, context_trigrams: set) -> bool:
    """False when at least :data:`REDUNDANT_OVERLAP` of the description's word trigrams already
    appear in the context chunks (a description made of sentences of those chunks, as the
    spaCy extractor writes them); True for text the chunks do not contain (an LLM summary).

    Example:
        >>> chunks = word_trigrams("Voyager 1 photographed Titan in 1980. It left in 2012.")
        >>> adds_information("Voyager 1 photographed Titan in 1980.", chunks)
        False
        >>> adds_information("A NASA space probe launched in 1977.", chunks)
        True
    """
    grams = _description_trigrams(description)
    if not grams:
        return False
    return len(grams & context_trigrams) < REDUNDANT_OVERLAP * len(grams)


def select_lines(items: Sequence[Dict[str, Any]], to_line: Callable[[Dict[str, Any]], Any],
                 max_tokens: int, context_trigrams: Optional[set] = None,
                 ) -> Tuple[List[Dict[str, Any]], List[str], int]:
    """Like :func:`truncate_by_tokens`, but when ``context_trigrams`` (the
    :func:`word_trigrams` of the context chunks) is given, an item whose description only
    repeats the chunks (:func:`adds_information`) gets a compact line without it: its name,
    type or endpoints are graph information, its description is not."""
    budget = max(0, max_tokens)
    if context_trigrams is None:
        return truncate_by_tokens(items, to_line, budget)

    def line(item: Dict[str, Any]) -> Any:
        record = to_line(item)
        if not adds_information(str(item.get("description", "")), context_trigrams):
            record = {k: v for k, v in record.items() if k != "description"}
        return record

    return truncate_by_tokens(items, line, budget)


# ----------------------------------------------------------------------- chunk picking
def _chunk_ids_by_item(items: Sequence[Dict[str, Any]], taken: set,
                       chosen: Optional[Dict[str, tuple]] = None) -> List[List[str]]:
    counts = Counter(c for item in items for c in item_chunk_ids(item, chosen))
    per_item, seen = [], set(taken)
    for item in items:
        ids = [c for c in item_chunk_ids(item, chosen) if c not in seen]
        seen.update(ids)
        per_item.append(sorted(ids, key=lambda c: -counts[c]))
    return per_item


def pick_by_weight(per_item: List[List[str]], max_related: int) -> List[str]:
    """Linear quota: ``max_related`` chunks for the first item down to 1 for the last."""
    n = len(per_item)
    if n == 0:
        return []
    quotas = [max(1, round(max_related - (max_related - 1) * i / max(1, n - 1))) for i in range(n)]
    picked = [ids[:q] for ids, q in zip(per_item, quotas)]
    spare = sum(quotas) - sum(len(p) for p in picked)
    while spare > 0:
        progressed = False
        for ids, chosen in zip(per_item, picked):
            if spare > 0 and len(chosen) < len(ids):
                chosen.append(ids[len(chosen)])
                spare -= 1
                progressed = True
        if not progressed:
            break
    return [c for chosen in picked for c in chosen]


def pick_by_vector(per_item: List[List[str]], max_related: int,
                   similarity: Optional[Dict[str, float]]) -> List[str]:
    """The candidate chunks most similar to the query (``related_chunk_number × items / 2``),
    by the ``similarity`` of :func:`query_similarities`; by weight without it."""
    candidates = list(dict.fromkeys(c for ids in per_item for c in ids))
    scored = [(similarity[c], c) for c in candidates if c in similarity] if similarity else []
    if not scored:
        return pick_by_weight(per_item, max_related)
    limit = max(1, int(max_related * len(per_item) / 2))
    scored.sort(key=lambda t: -t[0])
    return [c for _, c in scored[:limit]]


SUPPORT_BONUS = 0.02  # score added per log(1 + support) when ranking chunks by relevance


def bridge_entities(stores: GraphStores, entities: Sequence[Dict[str, Any]],
                    relations: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Endpoints of the kept relations that are not kept entities: the next hop of a
    multi-hop question ("Who founded the company that made X?" reaches the company through X)."""
    kept = {e["entity_name"] for e in entities}
    names = list(dict.fromkeys(n for r in relations for n in (r["src_id"], r["tgt_id"]) if n not in kept))
    nodes = stores.graph.get_nodes_batch(names) if names else {}
    return [{**nodes[n], "entity_name": n} for n in names if n in nodes]


def chunk_support(*item_lists: Sequence[Dict[str, Any]],
                  chosen: Optional[Dict[str, tuple]] = None) -> Counter:
    """How many of the retrieved entities and relations cite each chunk id."""
    return Counter(c for items in item_lists for item in items
                   for c in item_chunk_ids(item, chosen))


def rank_by_relevance(candidates: Sequence[str], support: Counter, similarity: Dict[str, float],
                      limit: int) -> List[Tuple[str, float]]:
    """The ``limit`` best candidates by ``cosine(query, chunk) + SUPPORT_BONUS·log(1 + support)``
    (cosines from :func:`query_similarities`; candidates without one are dropped).

    One ranking for vector-search and graph chunks alike, instead of interleaving the lists:
    on MuSiQue-100 round-robin let off-topic chunks of hub entities push good vector hits out of
    the top ranks (see ``docs/benchmarks/graph_rag_quality.md``).
    """
    ids = [c for c in candidates if c in similarity]
    if not ids:
        return []
    scores = (np.array([similarity[c] for c in ids])
              + SUPPORT_BONUS * np.log1p(np.array([support.get(c, 0.0) for c in ids])))
    order = np.argsort(-scores, kind="stable")[:limit]
    return [(ids[i], float(scores[i])) for i in order]


def gather_chunks(stores: GraphStores, entities: Sequence[Dict[str, Any]],
                  relations: Sequence[Dict[str, Any]], vector_chunks: Sequence[Dict[str, Any]],
                  param: QueryParam, query_vector: Optional[np.ndarray]) -> List[Dict[str, Any]]:
    """Chunks of the kept entities and relations, merged with the vector chunks.

    Graph candidates are picked per source (entities, relations and, for ``RELEVANCE``, bridge
    entities) by ``param.chunk_pick_method``. ``param.chunk_merge_method`` then either ranks
    them together with the vector chunks (``RELEVANCE``: :func:`rank_by_relevance`, keeping
    ``2 × chunk_top_k`` for the reranker and the token budget) or interleaves the lists
    (``ROUND_ROBIN``, as HKU LightRAG does). Without a query vector it falls back to
    round-robin.
    """
    by_relevance = param.chunk_merge_method == "RELEVANCE" and query_vector is not None
    sources: List[Sequence[Dict[str, Any]]] = [entities, relations]
    support: Counter = Counter()
    if by_relevance:
        sources.append(bridge_entities(stores, entities, relations))
    ranked_items = [i for items in sources for i in items]
    cosines: Dict[str, float] = {}  # to the query, computed once per chunk
    chosen = allot_chunk_ids(ranked_items,
                             hub_chunk_choice(stores.chunks_vdb, ranked_items, query_vector, known=cosines),
                             floor=param.related_chunk_number)
    if by_relevance:
        support = chunk_support(*sources, chosen=chosen)
    known = {c["chunk_id"]: c for c in vector_chunks}
    similarity: Optional[Dict[str, float]] = None
    if query_vector is not None and (by_relevance or param.chunk_pick_method == "VECTOR"):
        cited = (c for items in sources for item in items for c in item_chunk_ids(item, chosen))
        ranked_too = list(known) if by_relevance else []  # round-robin keeps the vector order
        similarity = query_similarities(stores.chunks_vdb, list(dict.fromkeys([*ranked_too, *cited])),
                                        query_vector, known=cosines)
    taken: set = set()
    picked: List[List[str]] = []
    for items in sources:
        per_item = _chunk_ids_by_item(items, taken, chosen)
        if param.chunk_pick_method == "VECTOR":
            ids = pick_by_vector(per_item, param.related_chunk_number, similarity)
        else:
            ids = pick_by_weight(per_item, param.related_chunk_number)
        taken.update(ids)
        picked.append(ids)
    if by_relevance:
        candidates = list(dict.fromkeys([*known, *(c for ids in picked for c in ids)]))
        ranked = rank_by_relevance(candidates, support, similarity or {}, 2 * param.chunk_top_k)
        wanted = [c for c, _ in ranked]
    else:
        wanted = [c for ids in picked for c in ids]
    missing = [c for c in wanted if c not in known]
    by_id = {c: {"chunk_id": c, "content": r.get("content", ""), "file_path": r.get("file_path", ""),
                 "tokens": r.get("tokens")}
             for c, r in zip(missing, stores.text_chunks.get_by_ids(missing)) if r}
    by_id.update(known)
    if by_relevance:
        return [{**by_id[c], "score": score} for c, score in ranked if c in by_id]
    return round_robin(list(vector_chunks), *([by_id[c] for c in ids if c in by_id] for ids in picked),
                       key=lambda c: c["chunk_id"])


# -------------------------------------------------------------------------- formatting
def assign_references(chunks: List[Dict[str, Any]]) -> List[Dict[str, str]]:
    """Number the distinct source files (most used first) and tag each chunk with its number."""
    paths = [c.get("file_path") or "unknown_source" for c in chunks]
    order = {p: i for i, p in reversed(list(enumerate(paths)))}
    ranked = sorted(Counter(paths).items(), key=lambda kv: (-kv[1], order[kv[0]]))
    ids = {path: str(i) for i, (path, _) in enumerate(ranked, start=1)}
    for chunk, path in zip(chunks, paths):
        chunk["reference_id"] = ids[path]
    return [{"reference_id": rid, "file_path": path} for path, rid in ids.items()]


CHUNK_LINE_OVERHEAD = 12  # tokens of the JSON wrapping around a chunk's content


def chunk_tokens(chunk: Dict[str, Any]) -> int:
    """Tokens of a chunk in the context (the count stored at insert, else counted now)."""
    stored = chunk.get("tokens")
    return (stored if isinstance(stored, int) else count_tokens(chunk["content"])) + CHUNK_LINE_OVERHEAD


#: tokens of a chunk worth giving when the best chunk alone is larger than the budget
MIN_PARTIAL_CHUNK = 64


def fit_chunks(chunks: List[Dict[str, Any]], max_tokens: int, max_count: int) -> List[Dict[str, Any]]:
    """The first ``max_count`` chunks, while they fit ``max_tokens``. When the first chunk alone
    is larger than the budget (a small model's window against 1,200-token chunks), its opening
    is given instead of nothing (cut at a sentence or word end, marked ``truncated``)."""
    kept, used = [], 0
    for chunk in chunks[:max_count]:
        cost = chunk_tokens(chunk)
        if used + cost > max_tokens:
            room = max_tokens - CHUNK_LINE_OVERHEAD
            if not kept and room >= MIN_PARTIAL_CHUNK:
                kept.append(chunk_head(chunk, room))
            break
        used += cost
        kept.append(chunk)
    return kept


def chunk_head(chunk: Dict[str, Any], max_tokens: int) -> Dict[str, Any]:
    """A copy of ``chunk`` with its content cut to at most ``max_tokens`` tokens, at the last
    sentence end in the kept part's second half, else at a word end."""
    tokenizer = default_tokenizer()
    head = tokenizer.decode(tokenizer.encode(chunk["content"])[:max_tokens])
    sentence_end = max(head.rfind(". "), head.rfind(".\n"))
    if sentence_end > len(head) // 2:
        head = head[: sentence_end + 1]
    elif " " in head:
        head = head[: head.rfind(" ")]
    return {**chunk, "content": head, "tokens": count_tokens(head), "truncated": True}


def _plain(line: str) -> str:
    """A context line as plain text: ``- name (type): description`` for an entity,
    ``- a | b: description`` for a relation (no JSON quoting or escapes a model could copy)."""
    try:
        record = json.loads(line)
    except ValueError:
        return f"- {line}"
    description = " ".join(str(record.get("description", "")).split())
    if "entity" in record:
        head = f"{record['entity']} ({record.get('type', 'unknown')})"
    else:
        head = f"{record.get('entity1', '')} | {record.get('entity2', '')}"
    return f"- {head}: {description}" if description else f"- {head}"


def format_context(entity_lines: List[str], relation_lines: List[str],
                   chunks: List[Dict[str, Any]], references: List[Dict[str, str]]) -> str:
    """The context text the answer model reads, as plain text: graph lines as bullets, then each
    chunk under its ``[n] source`` header (``n`` is its reference number), then the references.

    Plain text on purpose: JSON-quoted context reached small models as ``\\n`` and ``\\u2014``
    escapes and fenced blocks, which they copied into their answers.
    """
    parts = []
    if entity_lines:
        parts.append("Knowledge Graph Data (Entity):\n" + "\n".join(map(_plain, entity_lines)))
    if relation_lines:
        parts.append("Knowledge Graph Data (Relationship):\n"
                     + "\n".join(map(_plain, relation_lines)))
    paths = {r["reference_id"]: r["file_path"] for r in references}
    chunk_parts = [f"[{c['reference_id']}] {paths.get(c['reference_id'], '')}\n{c['content'].strip()}"
                   for c in chunks]
    parts.append("Document Chunks (cite them by their [n]):\n\n" + "\n\n".join(chunk_parts))
    parts.append("Reference Document List:\n"
                 + "\n".join(f"[{r['reference_id']}] {r['file_path']}" for r in references))
    return "\n\n".join(parts)
