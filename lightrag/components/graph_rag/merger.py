"""``GraphMerger``: merge per-chunk extractions into the knowledge graph and its vector indexes.

Rules (see ``docs/graph_rag.md``):

* entities merge by normalised name (``normalize_entity_name``); the type is the most frequent one
  seen; description fragments are de-duplicated and joined with ``<SEP>``; an entity's source
  chunks are added through the graph (``add_node_sources``: an SQL graph keeps them as rows and
  the ``source_id`` property holds the most recent 512, so merging into a hub costs the same as
  into a leaf); file paths are joined (capped at ``max_file_paths``);
* relations are undirected (sorted pair); weights are summed; keywords are the sorted union; an
  endpoint missing from the graph is created with type ``unknown``;
* merging is idempotent per chunk: a record from a chunk the item already cites is skipped,
  so an interrupted insert can simply be run again;
* when an item accumulates ``force_llm_summary_on_merge`` fragments or more than
  ``summary_max_tokens`` tokens, the optional ``summarizer`` Generator condenses them
  (map-reduce in groups of at most ``summary_context_size`` tokens); without a summarizer the
  fragments are kept.

Without a summarizer an item keeps at most ``max_description_fragments`` fragments (the first
ones), so a hub entity's description cannot grow without bound.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.schemas import (
    GRAPH_FIELD_SEP,
    EntityRecord,
    RelationRecord,
    compute_mdhash_id,
    now_iso,
    relation_key,
)
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.tokenizer import count_tokens

log = logging.getLogger(__name__)

#: the largest summed weight of a relation: a weight stays a finite JSON number however many
#: records support it (each record's is at most extraction_parser.MAX_WEIGHT)
MAX_WEIGHT_SUM = 1e12


def entity_vector_id(name: str) -> str:
    return compute_mdhash_id(name, prefix="ent-")


def relation_vector_id(src: str, tgt: str) -> str:
    """Id of a relation's vector: a hash of the sorted pair, JSON-encoded so that no two pairs
    share it (``("A", "BC")`` and ``("AB", "C")`` differ)."""
    a, b = relation_key(src, tgt)
    return compute_mdhash_id(json.dumps([a, b], ensure_ascii=False), prefix="rel-")


def legacy_relation_vector_id(src: str, tgt: str) -> str:
    """The id stores written before the fix used (the two names concatenated: ambiguous).
    Only :func:`~lightrag.components.graph_rag.index_vectors.rekey_relation_vectors` and the
    store check read it."""
    a, b = relation_key(src, tgt)
    return compute_mdhash_id(a + b, prefix="rel-")


def split_field(value: Any) -> List[str]:
    return [v for v in str(value or "").split(GRAPH_FIELD_SEP) if v]


def first_fragment(description: Any) -> str:
    """The first non-empty ``<SEP>`` fragment of a description: what an item's vector stands
    for besides its name(s) (:mod:`~lightrag.components.graph_rag.index.vectors` cuts it)."""
    text = str(description or "")
    head = text.split(GRAPH_FIELD_SEP, 1)[0]
    return head or next(iter(split_field(text)), "")


def _count_ids(joined: str) -> int:
    return joined.count(GRAPH_FIELD_SEP) + 1 if joined else 0


def _join_unique(existing: Iterable[str], new: Iterable[str], cap: Optional[int] = None) -> str:
    merged = list(dict.fromkeys([*existing, *new]))
    if cap is not None and len(merged) > cap:
        merged = merged[:cap]
    return GRAPH_FIELD_SEP.join(merged)


def _entity_vector_parts(node: Dict[str, Any]) -> Tuple[str, str]:
    """What an entity's vector record takes from its node besides the name and the chunk and
    file samples (which a new citation leaves as they are): the type and the first fragment."""
    return str(node.get("entity_type") or ""), first_fragment(node.get("description"))


def _relation_vector_parts(edge: Dict[str, Any]) -> Tuple[str, str]:
    """As :func:`_entity_vector_parts`, for a relation: its keywords and first fragment."""
    return str(edge.get("keywords") or ""), first_fragment(edge.get("description"))


@dataclass
class MergeStats(DataClass):
    """What one merge changed."""

    entities: List[str] = field(default_factory=list, metadata={"desc": "Entities touched"})
    relations: List[Tuple[str, str]] = field(default_factory=list, metadata={"desc": "Relations"})
    summaries: int = field(default=0, metadata={"desc": "LLM summary calls"})
    changed_entities: List[str] = field(default_factory=list, metadata={
        "desc": "Entities new or changed in what their vector record holds (to embed)"})
    changed_relations: List[Tuple[str, str]] = field(default_factory=list, metadata={
        "desc": "Relations new or changed in what their vector record holds (to embed)"})


def unify_case_variants(graph: Any, extractions: Sequence[Any]) -> Dict[str, str]:
    """Rename, in place, entity names of ``extractions`` that differ from a stored entity (or
    from an earlier name of the same batch) only in letter case: "Acmecorp" joins "AcmeCorp",
    the first spelling seen. Returns the renames. A graph without ``find_case_variants`` (the
    legacy file store) is left as it is."""
    names = [n for e in extractions for n in [*(x.entity_name for x in e.entities),
                                              *(x for r in e.relations for x in (r.src_id, r.tgt_id))]]
    find = getattr(graph, "find_case_variants", None)
    if not names or find is None:
        return {}
    renames = dict(find(names))
    first: Dict[str, str] = {}
    for name in dict.fromkeys(names):
        if name in renames:
            continue
        kept = first.setdefault(name.lower(), name)
        if kept != name:
            renames[name] = kept
    if renames:
        for extraction in extractions:
            for entity in extraction.entities:
                entity.entity_name = renames.get(entity.entity_name, entity.entity_name)
            for relation in extraction.relations:
                relation.src_id = renames.get(relation.src_id, relation.src_id)
                relation.tgt_id = renames.get(relation.tgt_id, relation.tgt_id)
            extraction.relations = [r for r in extraction.relations if r.src_id != r.tgt_id]
    return renames


class _Prefetched:
    """``graph`` with the nodes and edges a merge will read fetched in two batched reads (and
    the citations of its chunks, where the graph keeps them as rows); each prefetched item
    serves its first read only (the merge then writes it). Nodes are read as a merge needs them
    (``get_nodes_for_merge`` where the graph has it: a hub's window of chunk ids left unread)."""

    def __init__(self, graph: Any, names: List[str], pairs: List[Tuple[str, str]],
                 chunk_ids: List[str]) -> None:
        self._graph = graph
        self._read_nodes = getattr(graph, "get_nodes_for_merge", graph.get_nodes_batch)
        self._nodes = self._read_nodes(names) if names else {}
        if chunk_ids and hasattr(graph, "prefetch_node_sources"):
            graph.prefetch_node_sources(chunk_ids)
        self._node_keys = set(names)
        self._edges = graph.get_edges_batch(pairs) if pairs else {}
        self._edge_keys = set(pairs)

    def get_node(self, name: str) -> Optional[Dict[str, Any]]:
        if name in self._node_keys:
            self._node_keys.discard(name)
            return self._nodes.get(name)
        return self._read_nodes([name]).get(name)

    def get_edge(self, src: str, tgt: str) -> Optional[Dict[str, Any]]:
        if (src, tgt) in self._edge_keys:
            self._edge_keys.discard((src, tgt))
            return self._edges.get((src, tgt))
        return self._graph.get_edge(src, tgt)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


class GraphMerger(Component):
    """Merge :class:`ExtractionResult` s into graph + entity/relation vector storages.

    Args:
        summarizer: a Generator whose template takes ``name`` and ``descriptions``; None keeps
            fragments as they are.
        force_llm_summary_on_merge: summarise once an item has this many fragments.
        summary_max_tokens: ... or its description exceeds this many tokens.
        summary_context_size: largest input of one summary call (map-reduce above it).
        max_file_paths: cap on the file paths kept per item.
        max_concurrency: parallel summary calls.
        max_description_fragments: fragments kept per item when there is no summarizer.
    """

    def __init__(
        self,
        summarizer: Optional[Generator] = None,
        force_llm_summary_on_merge: int = 8,
        summary_max_tokens: int = 1200,
        summary_context_size: int = 12000,
        max_file_paths: int = 75,
        max_concurrency: int = 4,
        max_description_fragments: int = 24,
    ) -> None:
        super().__init__()
        self.summarizer = summarizer
        self.force_llm_summary_on_merge = force_llm_summary_on_merge
        self.summary_max_tokens = summary_max_tokens
        self.summary_context_size = summary_context_size
        self.max_file_paths = max_file_paths
        self.max_concurrency = max_concurrency
        if max_description_fragments < 1:
            raise ValueError(f"max_description_fragments must be at least 1, got {max_description_fragments}")
        self.max_description_fragments = max_description_fragments

    def _extra_repr(self) -> str:
        return (
            f"force_llm_summary_on_merge={self.force_llm_summary_on_merge}, "
            f"summary_max_tokens={self.summary_max_tokens}"
        )

    # ------------------------------------------------------------------ summaries
    def _needs_summary(self, fragments: Sequence[str]) -> bool:
        if self.summarizer is None or len(fragments) < 2:
            return False
        if len(fragments) >= self.force_llm_summary_on_merge:
            return True
        return count_tokens(GRAPH_FIELD_SEP.join(fragments)) > self.summary_max_tokens

    async def _summarize_once(self, name: str, fragments: Sequence[str]) -> str:
        output = await self.summarizer.acall(  # type: ignore[union-attr]
            {"name": name, "descriptions": "\n".join(f"- {f}" for f in fragments)}
        )
        if output.error or not isinstance(output.data, str) or not output.data.strip():
            log.warning("summary of %r failed (%s); keeping fragments", name, output.error)
            return GRAPH_FIELD_SEP.join(fragments)
        return output.data.strip()

    async def summarize(self, name: str, fragments: Sequence[str]) -> Tuple[str, int]:
        """Condense ``fragments`` (map-reduce by ``summary_context_size``); returns (text, calls)."""
        calls = 0
        current = list(fragments)
        while len(current) > 1:
            groups: List[List[str]] = [[]]
            size = 0
            for fragment in current:
                tokens = count_tokens(fragment)
                if groups[-1] and size + tokens > self.summary_context_size and len(groups[-1]) >= 2:
                    groups.append([])
                    size = 0
                groups[-1].append(fragment)
                size += tokens
            if len(groups) == 1:
                calls += 1
                return await self._summarize_once(name, groups[0]), calls
            summaries = []
            for group in groups:
                if len(group) == 1:
                    summaries.append(group[0])
                else:
                    calls += 1
                    summaries.append(await self._summarize_once(name, group))
            if len(summaries) >= len(current):
                break
            current = summaries
        return GRAPH_FIELD_SEP.join(current), calls

    def _fragments(self, existing: Dict[str, Any], fresh: Sequence[Any]) -> List[str]:
        fragments = list(dict.fromkeys(
            [*split_field(existing.get("description")), *(r.description for r in fresh if r.description)]
        ))
        if self.summarizer is None:
            fragments = fragments[: self.max_description_fragments]
        return fragments

    # ---------------------------------------------------------------- entities
    async def _merge_entity(
        self, name: str, records: List[EntityRecord], graph: Any, stats: MergeStats
    ) -> Optional[Dict[str, Any]]:
        existing = graph.get_node(name) or {}
        known = graph.node_cites(name, [r.source_id for r in records]) if existing else set()
        fresh = [r for r in records if r.source_id not in known]
        if not fresh and existing:
            return None
        cited = int(existing.get("source_count") or _count_ids(str(existing.get("source_id") or "")))
        types = Counter({existing["entity_type"]: max(1, cited)} if existing.get("entity_type") else {})
        types.update(r.entity_type for r in fresh if r.entity_type)
        entity_type = types.most_common(1)[0][0] if types else "unknown"
        fragments = self._fragments(existing, fresh)
        description = GRAPH_FIELD_SEP.join(fragments)
        if self._needs_summary(fragments):
            description, calls = await self.summarize(name, fragments)
            stats.summaries += calls
        node = {
            "entity_id": name,
            "entity_type": entity_type,
            "description": description,
            "file_path": _join_unique(split_field(existing.get("file_path")),
                                      (r.file_path for r in fresh), self.max_file_paths),
            "created_at": existing.get("created_at") or now_iso(),
        }
        graph.upsert_node(name, node)
        graph.add_node_sources(name, [r.source_id for r in fresh])  # by key: a hub's size costs nothing
        stats.entities.append(name)
        if not existing or _entity_vector_parts(existing) != _entity_vector_parts(node):
            stats.changed_entities.append(name)
        return node  # what was written (not read back: a hub's record is ~12 KB of chunk ids)

    # --------------------------------------------------------------- relations
    async def _merge_relation(
        self, key: Tuple[str, str], records: List[RelationRecord], graph: Any, stats: MergeStats
    ) -> Optional[Dict[str, Any]]:
        src, tgt = key
        existing = graph.get_edge(src, tgt) or {}
        known_chunks = set(split_field(existing.get("source_id")))
        fresh = [r for r in records if r.source_id not in known_chunks]
        if not fresh and existing:
            return None
        weight = min(float(existing.get("weight", 0.0)) + sum(float(r.weight) for r in fresh), MAX_WEIGHT_SUM)
        keywords = sorted({
            k.strip() for text in [existing.get("keywords", ""), *(r.keywords for r in fresh)]
            for k in str(text).split(",") if k.strip()
        })
        fragments = self._fragments(existing, fresh)
        description = GRAPH_FIELD_SEP.join(fragments)
        if self._needs_summary(fragments):
            description, calls = await self.summarize(f"{src} - {tgt}", fragments)
            stats.summaries += calls
        source_id = _join_unique(split_field(existing.get("source_id")), (r.source_id for r in fresh))
        file_path = _join_unique(split_field(existing.get("file_path")),
                                 (r.file_path for r in fresh), self.max_file_paths)
        for endpoint in key:
            if not graph.has_node(endpoint):
                graph.upsert_node(endpoint, {
                    "entity_id": endpoint, "entity_type": "unknown", "description": description,
                    "source_id": source_id, "file_path": file_path, "created_at": now_iso(),
                })
                stats.entities.append(endpoint)
                stats.changed_entities.append(endpoint)
        edge = {
            "weight": weight, "description": description, "keywords": ",".join(keywords),
            "source_id": source_id, "file_path": file_path,
            "created_at": existing.get("created_at") or now_iso(),
        }
        graph.upsert_edge(src, tgt, edge)
        stats.relations.append(key)
        if not existing or _relation_vector_parts(existing) != _relation_vector_parts(edge):
            stats.changed_relations.append(key)
        return edge

    # -------------------------------------------------------------------- merge
    async def acall(self, results: Sequence[Any], graph: Any) -> MergeStats:
        """Merge the ``entities``/``relations`` of extraction results into ``graph``.

        Returns what changed; embedding the changed items is the caller's job (the
        :class:`~lightrag.components.graph_rag.index.GraphIndex` queues them and embeds each
        once, however many merges touched it)."""
        by_entity: Dict[str, List[EntityRecord]] = {}
        by_relation: Dict[Tuple[str, str], List[RelationRecord]] = {}
        for result in results:
            for entity in result.entities:
                by_entity.setdefault(entity.entity_name, []).append(entity)
            for relation in result.relations:
                key = relation_key(relation.src_id, relation.tgt_id)
                by_relation.setdefault(key, []).append(relation)
        stats = MergeStats()
        semaphore = asyncio.Semaphore(self.max_concurrency)
        chunk_ids = list(dict.fromkeys(e.source_id for es in by_entity.values() for e in es))
        graph = _Prefetched(graph, list(by_entity), list(by_relation), chunk_ids)

        async def bounded(coro: Any) -> Any:
            async with semaphore:
                return await coro

        nodes = await asyncio.gather(*(bounded(self._merge_entity(n, rs, graph, stats))
                                       for n, rs in by_entity.items()))
        await asyncio.gather(*(bounded(self._merge_relation(k, rs, graph, stats))
                               for k, rs in by_relation.items()))
        log.debug("merged %d entities (%d new records) and %d relations",
                  len(stats.entities), sum(n is not None for n in nodes), len(stats.relations))
        return stats

    def call(self, results: Sequence[Any], graph: Any) -> MergeStats:
        return asyncio.run(self.acall(results, graph))
