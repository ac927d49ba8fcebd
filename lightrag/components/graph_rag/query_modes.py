"""The query modes as Components: ``naive``, ``local``, ``global``, ``hybrid``, ``mix``,
``ppr``, ``bypass``.

Each mode decides *what to search* (``search``) and how its chunks are ranked
(``rank_chunks``); :meth:`QueryMode.retrieve` returns those
:class:`~lightrag.components.graph_rag.context_builder.Candidates`, and the one
:class:`~lightrag.components.graph_rag.context_builder.ContextBuilder` puts them under the token
budgets and formats the context (graph modes trade chunk tokens for graph lines instead of
adding them, capped at the tokens of the chunks ``naive`` would take). The
:class:`~lightrag.components.graph_rag.query_engine.QueryEngine` extracts keywords, embeds the
query and the keywords in one batch, measures the prompt, retrieves and builds the context.

Every mode is registered in :data:`MODE_CLASSES`, whose keys are
:data:`~lightrag.components.graph_rag.schemas.QUERY_MODES` (the one list of mode names).

Example:
    >>> LocalMode()
    LocalMode(uses=ll_keywords, seed_keywords)
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from lightrag.components.graph_rag.budgets import DEFAULT_TOTAL_TOKENS
from lightrag.components.graph_rag.context import (
    GraphStores,
    SearchResult,
    chunk_tokens,
    fit_chunks,
    gather_chunks,
    merge_searches,
    query_similarities,
    search_chunks,
    search_entities,
    search_relations,
    select_lines,
)
from lightrag.components.graph_rag.context_builder import (
    Candidates,
    ContextBudget,
    ContextBuilder,
    RetrievedContext,
)
from lightrag.components.graph_rag.kg_lines import entity_line, relation_line
from lightrag.components.graph_rag.ppr import (
    PassageGraph,
    PprSettings,
    fuse,
    rank_passages,
    seed_entities,
    seed_hits,
)
from lightrag.components.graph_rag.ppr_local import citation_counts, neighbourhood, too_large_for_whole_graph
from lightrag.components.graph_rag.query_reads import collection_paused, query_reads, store_of
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, QUERY_MODES, QueryParam
from lightrag.core.component import Component

log = logging.getLogger(__name__)

QUERY_VECTOR = "query"
LL_VECTOR = "ll_keywords"
HL_VECTOR = "hl_keywords"
SEED_VECTORS = "seed_keywords"  # one row per low-level keyword (each searched on its own)

#: tokens of entity lines, and of relation lines, a mode keeps as candidates (best first) before
#: the context builder's budgets: the lines the builder chooses from and the items whose chunks
#: are gathered. HKU LightRAG's budgets are 6k entity and 8k relation tokens; the builder's own
#: default share is far smaller (:data:`~lightrag.components.graph_rag.context_builder.KG_SHARE`
#: of the chunk context). Measured (docs/benchmarks.md, fifteenth session): the whole room
#: (~29k tokens) as the pool instead moved MuSiQue-100 R@2 / R@5 by -0.7 / -0.3 in ``local`` and
#: -0.8 / -0.1 in ``hybrid`` (the other modes unchanged), and at 1M chunks a query naming a hub
#: then tokenised and gathered chunks for ~480 relations instead of ~170 (``local`` p95
#: 139 -> 81 ms). An explicit ``max_entity_tokens`` / ``max_relation_tokens`` above it widens it.
CANDIDATE_LINE_TOKENS = 10_000


class QueryMode(Component):
    """Base of the query modes: subclasses implement :meth:`search` and name the vectors used.

    ``candidate_line_tokens`` (default :data:`CANDIDATE_LINE_TOKENS`) bounds the entity lines,
    and the relation lines, a mode keeps as candidates; set it on an instance to study its
    effect (``rag.engine.mode("local").candidate_line_tokens = 30000``).
    """

    mode: str = ""
    vectors_needed: tuple = ()
    candidate_line_tokens: int = CANDIDATE_LINE_TOKENS

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        raise NotImplementedError

    def rank_chunks(self, stores: GraphStores, found: SearchResult, entities: List[Dict[str, Any]],
                    relations: List[Dict[str, Any]], param: QueryParam,
                    vectors: Dict[str, np.ndarray]) -> List[Dict[str, Any]]:
        """Candidate chunks, best first (default: :func:`gather_chunks`)."""
        return gather_chunks(stores, entities, relations, found.vector_chunks, param,
                             vectors.get(QUERY_VECTOR))

    def retrieve(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam,
                 room: int, reranker: Optional[Component] = None, query: str = "") -> Candidates:
        """Search, rank the chunks (reranked when ``param.enable_rerank`` and a ``reranker`` is
        given), and keep the candidate lines that fit ``room`` tokens. The stores are read
        through :func:`query_reads` (a row one step read is not read again by the next), with
        the cycle collector paused (:func:`collection_paused`)."""
        with collection_paused():
            return self._retrieve(query_reads(stores), vectors, param, room, reranker, query)

    def _retrieve(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam,
                  room: int, reranker: Optional[Component], query: str) -> Candidates:
        started = time.perf_counter()
        found = self.search(stores, vectors, param)
        entities, _, _ = select_lines(found.entities, entity_line,
                                      self._candidate_tokens(room, param.max_entity_tokens))
        relations, _, _ = select_lines(found.relations, relation_line,
                                       self._candidate_tokens(room, param.max_relation_tokens))
        chunks = self.rank_chunks(stores, found, entities, relations, param, vectors)
        if reranker is not None and param.enable_rerank and chunks:
            scores = reranker(query, [c["content"] for c in chunks])
            for chunk, score in zip(chunks, scores):
                chunk["rerank_score"] = float(score)
            chunks.sort(key=lambda c: -c["rerank_score"])
        reference = None
        if param.max_entity_tokens is None and param.max_relation_tokens is None:
            reference = self.naive_tokens(stores, found, vectors, param, room)
        return Candidates(mode=self.mode, found=found, entities=entities, relations=relations,
                          chunks=chunks, reference_tokens=reference,
                          retrieval_ms=round((time.perf_counter() - started) * 1000, 3))

    def call(
        self,
        stores: GraphStores,
        vectors: Dict[str, np.ndarray],
        param: QueryParam,
        reserved_tokens: int = 0,
        reranker: Optional[Component] = None,
        query: str = "",
    ) -> RetrievedContext:
        """:meth:`retrieve`, then the :class:`ContextBuilder` within ``param.max_total_tokens``
        (of which ``reserved_tokens`` are taken by the prompt template and the query).

        Args:
            reserved_tokens: tokens already used by the prompt template and the query.
            reranker: a Component ``(query, texts) -> scores`` used when ``param.enable_rerank``.
        """
        total = param.max_total_tokens if param.max_total_tokens is not None else DEFAULT_TOTAL_TOKENS
        budget = ContextBudget(total=total, reserved=reserved_tokens)
        candidates = self.retrieve(stores, vectors, param, budget.room, reranker, query)
        return ContextBuilder()(candidates, param, budget)

    def _candidate_tokens(self, room: int, budget: Optional[int]) -> int:
        """Tokens of candidate lines of one kind: :attr:`candidate_line_tokens`, or the explicit
        budget when larger, within ``room``."""
        return min(room, max(self.candidate_line_tokens, budget or 0))

    def naive_tokens(self, stores: GraphStores, found: SearchResult, vectors: Dict[str, np.ndarray],
                     param: QueryParam, room: int) -> Optional[int]:
        """Tokens of the chunks ``naive`` would put in the context for this query (the mode's
        own dense hits, else one search with the query vector); ``None`` without one, and for
        ``naive`` itself."""
        if self.mode == "naive":
            return None
        dense = found.dense_chunks
        if dense is None and vectors.get(QUERY_VECTOR) is not None:
            dense = search_chunks(stores, vectors[QUERY_VECTOR], param.chunk_top_k)
        if dense is None:
            return None
        return sum(chunk_tokens(c) for c in fit_chunks(dense, room, param.chunk_top_k))

    def _extra_repr(self) -> str:
        return f"uses={', '.join(self.vectors_needed) or 'nothing'}"


class NaiveMode(QueryMode):
    """Chunks most similar to the query; no graph."""

    mode = "naive"
    vectors_needed = (QUERY_VECTOR,)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        return SearchResult(vector_chunks=search_chunks(stores, vectors[QUERY_VECTOR], param.chunk_top_k))


def _low_level(vectors: Dict[str, np.ndarray]) -> Optional[np.ndarray]:
    """The low-level keyword vectors: the joined keywords' vector, then one row per keyword
    when there are several (searched on their own and merged by turns, the joined first)."""
    seeds, joined = vectors.get(SEED_VECTORS), vectors.get(LL_VECTOR)
    if seeds is not None and len(seeds) > 1:
        return seeds if joined is None else np.vstack([joined, seeds])
    return joined


class LocalMode(QueryMode):
    """Low-level keywords -> entities -> their 1-hop relations -> their chunks."""

    mode = "local"
    vectors_needed = (LL_VECTOR, SEED_VECTORS)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        low = _low_level(vectors)
        return SearchResult() if low is None else search_entities(stores, low, param.top_k)


class GlobalMode(QueryMode):
    """High-level keywords -> relations -> their endpoint entities -> their chunks."""

    mode = "global"
    vectors_needed = (HL_VECTOR,)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        if HL_VECTOR not in vectors:
            return SearchResult()
        return search_relations(stores, vectors[HL_VECTOR], param.top_k)


class HybridMode(QueryMode):
    """Local and global, interleaved."""

    mode = "hybrid"
    vectors_needed = (LL_VECTOR, SEED_VECTORS, HL_VECTOR)

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        low = _low_level(vectors)
        local = search_entities(stores, low, param.top_k) if low is not None else SearchResult()
        global_ = (search_relations(stores, vectors[HL_VECTOR], param.top_k)
                   if HL_VECTOR in vectors else SearchResult())
        return merge_searches(local, global_)


#: seconds a store's size class (whole graph or neighbourhood) is kept while its version changes:
#: the bounded count reads up to ``whole_graph_max_citations`` index entries (~100 ms at 1M
#: citations, paid by the next query after every insert), and a store crosses it slowly
SIZE_RECHECK_S = 60.0
#: citations from which a changed store's graph is rebuilt in the background while queries use
#: the previous one (~0.2 s to build below; ~1 s at 300k citations, paid by every query after
#: each commit of a writer running beside the server: ppr/mix took 3-12 s then)
BACKGROUND_REBUILD_CITATIONS = 50_000


class _PprRanking:
    """PPR passage scores for a query, on a :class:`PassageGraph` cached per store version."""

    def __init__(self, settings: PprSettings) -> None:
        self.settings = settings
        self._graph: Optional[PassageGraph] = None
        self._key: Any = None
        self._size_key: Any = None
        self._size_checked = 0.0
        self._large = False
        self._lock = threading.Lock()
        self._rebuilding: Optional[threading.Thread] = None

    def graph(self, stores: GraphStores) -> PassageGraph:
        """The entity–passage graph of ``stores``, rebuilt when the graph store's ``version``
        (or the synonym pairs) change; a store without ``version`` is rebuilt every query. A
        graph of :data:`BACKGROUND_REBUILD_CITATIONS` citations or more is rebuilt in a
        background thread while queries go on with the previous version (the passages a
        commit added are still found by dense retrieval; removed ones are dropped when read)."""
        version = getattr(stores.graph, "version", None)
        store = id(store_of(stores.graph))
        with self._lock:
            current, current_key = self._graph, self._key
        if current is not None and version is not None and (store, version) == current_key:
            return current
        if (current is None or version is None or current_key[0] != store
                or float(current.chunk_counts.sum()) < BACKGROUND_REBUILD_CITATIONS):
            return self._build(stores, (store, version))
        with self._lock:
            if self._rebuilding is None or not self._rebuilding.is_alive():
                self._rebuilding = threading.Thread(
                    target=self._build_quietly, args=(stores, (store, version)),
                    name="ppr-graph-rebuild", daemon=True)
                self._rebuilding.start()
        return current

    def _build_quietly(self, stores: GraphStores, key: Any) -> None:
        """:meth:`_build` in the background: a failure (the store closed meanwhile) is logged and
        the next query tries again."""
        try:
            self._build(stores, key)
        except Exception as e:  # noqa: BLE001 - a background thread has no caller to raise to
            log.warning("ppr: rebuilding the entity-passage graph in the background failed: %s", e)

    def _build(self, stores: GraphStores, key: Any) -> PassageGraph:
        started = time.perf_counter()
        sources = getattr(stores.graph, "node_sources", None)
        pairs = (sources() if sources is not None else
                 [(n["id"], n.get("source_id")) for n in stores.graph.get_all_nodes()])
        graph = PassageGraph.build(((node, _split_ids(source)) for node, source in pairs),
                                   stores.synonym_pairs, synonym_weight=self.settings.synonym_weight,
                                   idf_power=self.settings.idf_power)
        with self._lock:
            self._graph, self._key = graph, key
        log.info("ppr: built the entity-passage graph (%d entities, %d passages) in %.0f ms",
                 graph.n_entities, len(graph.chunk_ids), (time.perf_counter() - started) * 1000)
        return graph

    def _too_large(self, stores: GraphStores) -> bool:
        """Whether the store is past ``whole_graph_max_citations``: counted for a new store, and
        again when its version changed at least :data:`SIZE_RECHECK_S` after the last count."""
        store, version = id(store_of(stores.graph)), getattr(stores.graph, "version", None)
        now = time.monotonic()
        if (self._size_key is None or self._size_key[0] != store
                or (self._size_key[1] != version and now - self._size_checked >= SIZE_RECHECK_S)):
            self._large = too_large_for_whole_graph(stores.graph, self.settings.whole_graph_max_citations)
            self._size_key, self._size_checked = (store, version), now
        return self._large

    def _local_graph(self, stores: GraphStores, names: List[str], hits: List[List[Dict[str, Any]]],
                     dense: Dict[str, float]) -> PassageGraph:
        """The seeds' neighbourhood (:mod:`~.ppr_local`); a seed's passages are counted over the
        whole store (its specificity)."""
        matched = [h["entity_name"] for row in hits for h in row
                   if h.get("entity_name") and h["score"] >= self.settings.seed_threshold]
        present = stores.graph.has_nodes_batch(names) if names else set()
        missing = [n for n in names if n not in present]
        variants = stores.graph.find_case_variants(missing) if missing else {}
        seeds = [*matched, *(n for n in names if n in present), *variants.values()]
        graph = PassageGraph.build(neighbourhood(stores.graph, seeds, list(dense),
                                                 self.settings.neighbourhood_passages,
                                                 self.settings.neighbourhood_entity_chunks),
                                   synonym_weight=self.settings.synonym_weight,
                                   idf_power=self.settings.idf_power)
        counts = citation_counts(stores.graph, [n for n in dict.fromkeys(seeds) if n in graph.entity_index])
        for name, count in counts.items():  # a seed's specificity counts every passage citing it
            graph.chunk_counts[graph.entity_index[name]] = count
        return graph

    def scores(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam,
               dense: Dict[str, float]) -> Tuple[PassageGraph, np.ndarray, Dict[str, float]]:
        rows = [v for v in (vectors.get(QUERY_VECTOR),) if v is not None and self.settings.query_seeds]
        seeds_matrix = vectors.get(SEED_VECTORS)
        if seeds_matrix is not None and len(seeds_matrix):
            rows.extend(np.atleast_2d(seeds_matrix))
        hits = seed_hits(stores.entities_vdb, np.stack(rows) if rows else None, self.settings)
        if self._too_large(stores):
            graph = self._local_graph(stores, list(param.ll_keywords or []), hits, dense)
        else:
            graph = self.graph(stores)
        seeds = seed_entities(stores.entities_vdb, graph, None, self.settings,
                              names=param.ll_keywords, hits=hits)
        node_scores, passages = rank_passages(graph, seeds, dense, self.settings,
                                              limit=2 * param.chunk_top_k)
        return graph, node_scores, passages


def _use_ppr(mode: QueryMode, settings: Optional[PprSettings]) -> None:
    """Give a mode its PPR scorer (``ppr`` ranks with it, ``mix`` re-ranks with it)."""
    mode.settings = settings or PprSettings()
    mode._ranking = _PprRanking(mode.settings)


def _split_ids(value: Any) -> List[str]:
    return [v for v in str(value or "").split(GRAPH_FIELD_SEP) if v]


def _combined(stores: GraphStores, query_vector: np.ndarray, cosines: Dict[str, float],
              ppr: Dict[str, float], settings: PprSettings, limit: int) -> List[Tuple[str, float]]:
    """Candidates (the cosine ones and the PPR ones) ranked by :func:`fuse`."""
    missing = [c for c in ppr if c not in cosines]
    if missing:
        cosines = {**cosines, **query_similarities(stores.chunks_vdb, missing, query_vector)}
    return fuse(cosines, ppr, settings, limit)


def _chunk_records(stores: GraphStores, ranked: List[Tuple[str, float]],
                   known: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    missing = [c for c, _ in ranked if c not in known]
    by_id = dict(known)
    for c, r in zip(missing, stores.text_chunks.get_by_ids(missing)):
        if r:
            by_id[c] = {"chunk_id": c, "content": r.get("content", ""),
                        "file_path": r.get("file_path", ""), "tokens": r.get("tokens")}
    return [{**by_id[c], "score": round(score, 6)} for c, score in ranked if c in by_id]


class PprMode(QueryMode):
    """HippoRAG-style retrieval: entities matching the query's keywords (each on its own) and
    the densely retrieved passages seed a Personalized PageRank over the entity–passage graph
    (with synonym edges); passages are ranked by cosine to the query plus the normalised PPR
    score, and the most visited entities become entity lines where they add to the chunks.

    Example:
        >>> PprMode()
        PprMode(uses=query, seed_keywords, damping=0.85, fusion=rrf, ppr_weight=2.0)
    """

    mode = "ppr"
    vectors_needed = (QUERY_VECTOR, SEED_VECTORS)

    def __init__(self, settings: Optional[PprSettings] = None) -> None:
        super().__init__()
        _use_ppr(self, settings)

    _to_dict_exclude = ("_ranking",)

    def _after_from_dict(self) -> None:
        _use_ppr(self, self.settings)  # the ranking's caches are not saved

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        query_vector = vectors.get(QUERY_VECTOR)
        if query_vector is None:
            return SearchResult()
        hits = search_chunks(stores, query_vector, max(param.chunk_top_k, self.settings.dense_candidates))
        dense = {h["chunk_id"]: h["score"] for h in hits}
        graph, node_scores, ppr = self._ranking.scores(stores, vectors, param, dense)
        ranked = _combined(stores, query_vector, dense, ppr, self.settings, 2 * param.chunk_top_k)
        chunks = _chunk_records(stores, ranked, {h["chunk_id"]: h for h in hits})
        entity_scores = node_scores[:graph.n_entities]
        top = np.argsort(-entity_scores)[:param.top_k] if graph.n_entities else []
        names = [graph.entity_names[i] for i in top if entity_scores[i] > 0]
        nodes = stores.graph.get_nodes_batch(names)
        entities = [{**nodes[n], "entity_name": n} for n in names if n in nodes]
        return SearchResult(entities=entities, vector_chunks=chunks,
                            dense_chunks=hits[:param.chunk_top_k])

    def rank_chunks(self, stores: GraphStores, found: SearchResult, entities: List[Dict[str, Any]],
                    relations: List[Dict[str, Any]], param: QueryParam,
                    vectors: Dict[str, np.ndarray]) -> List[Dict[str, Any]]:
        return list(found.vector_chunks)

    def _extra_repr(self) -> str:
        return (f"{super()._extra_repr()}, damping={self.settings.damping}, "
                f"fusion={self.settings.fusion}, ppr_weight={self.settings.ppr_weight}")


class MixMode(HybridMode):
    """Hybrid's candidates (entity, relation, bridge and vector chunks) re-scored by a
    reranker: a configured one (e.g. a local cross-encoder) when ``param.enable_rerank``, else
    the PPR scorer of :class:`PprMode` (cosine to the query + normalised PPR score), which also
    adds its best passages as candidates."""

    mode = "mix"
    vectors_needed = (QUERY_VECTOR, LL_VECTOR, SEED_VECTORS, HL_VECTOR)

    def __init__(self, settings: Optional[PprSettings] = None) -> None:
        super().__init__()
        _use_ppr(self, settings)

    _to_dict_exclude = ("_ranking",)

    def _after_from_dict(self) -> None:
        _use_ppr(self, self.settings)  # the ranking's caches are not saved

    def search(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam) -> SearchResult:
        merged = super().search(stores, vectors, param)
        merged.vector_chunks = search_chunks(stores, vectors[QUERY_VECTOR], param.chunk_top_k)
        merged.dense_chunks = merged.vector_chunks
        return merged

    def rank_chunks(self, stores: GraphStores, found: SearchResult, entities: List[Dict[str, Any]],
                    relations: List[Dict[str, Any]], param: QueryParam,
                    vectors: Dict[str, np.ndarray]) -> List[Dict[str, Any]]:
        candidates = super().rank_chunks(stores, found, entities, relations, param, vectors)
        query_vector = vectors.get(QUERY_VECTOR)
        if query_vector is None:
            return candidates
        cosines = query_similarities(stores.chunks_vdb, [c["chunk_id"] for c in candidates], query_vector)
        dense = {c["chunk_id"]: c["score"] for c in found.vector_chunks}
        _, _, ppr = self._ranking.scores(stores, vectors, param, dense)
        ranked = _combined(stores, query_vector, cosines, ppr, self.settings, 2 * param.chunk_top_k)
        return _chunk_records(stores, ranked, {c["chunk_id"]: c for c in candidates})


class BypassMode(QueryMode):
    """No retrieval: the question goes to the LLM alone."""

    mode = "bypass"
    vectors_needed = ()

    def retrieve(self, stores: GraphStores, vectors: Dict[str, np.ndarray], param: QueryParam,
                 room: int, reranker: Optional[Component] = None, query: str = "") -> Candidates:
        return Candidates(mode=self.mode, searched=False)


MODE_CLASSES = {cls.mode: cls for cls in (NaiveMode, LocalMode, GlobalMode, HybridMode, MixMode,
                                          PprMode, BypassMode)}
if tuple(MODE_CLASSES) != QUERY_MODES:  # pragma: no cover - a developer error
    raise RuntimeError(f"MODE_CLASSES {tuple(MODE_CLASSES)} differ from QUERY_MODES {QUERY_MODES}")
