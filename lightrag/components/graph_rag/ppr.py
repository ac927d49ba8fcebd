"""Personalized PageRank over the entity–passage graph (the ``ppr`` query mode's engine).

Following HippoRAG ("From RAG to Memory", Gutiérrez et al., 2025), the graph has one node per
entity and one per passage (chunk). An entity is joined to every passage that cites it (its
``source_id``), near-duplicate entity names are joined by synonym edges (weight = their
embedding similarity), and a random walk that restarts at the query's seeds (matched entities
and, with a small weight, the densely retrieved passages) ranks the passages. A passage that
shares an entity with a seed passage — the second hop of a multi-hop question — gets mass even
when it shares no word with the question.

- :func:`synonym_pairs`: the synonym edges, computed when entity vectors are written (new
  entities against all, in blocks, so memory stays bounded);
- :class:`PassageGraph`: the sparse transition matrix in three blocks (entity -> passage,
  passage -> entity, entity -> entity synonyms), built once per store version;
- :func:`personalized_pagerank`: a block Gauss–Seidel sweep (passages from the entities, then
  the entities from the *new* passage scores), which reaches the power iteration's fixed point
  in about half the sweeps because the graph is bipartite but for the synonym edges (scipy CSR
  when installed, else a NumPy COO product; float32).

Example:
    >>> g = PassageGraph.build([("Alice", ["c1"]), ("Acme", ["c1", "c2"])])
    >>> scores = personalized_pagerank(g, {g.entity_index["Alice"]: 1.0})
    >>> [g.chunk_ids[i] for i in np.argsort(-g.passage_scores(scores))]
    ['c1', 'c2']
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

log = logging.getLogger(__name__)

DAMPING = 0.85  # probability of following an edge (PageRank's classic value); 1 - DAMPING restarts
MAX_ITERATIONS = 12  # Gauss-Seidel sweeps; ranks settle within ~10 (MuSiQue, damping 0.85)
TOLERANCE = 1e-3  # L1 change of the score vector that ends the iteration (ranks settle long before)
SYNONYM_THRESHOLD = 0.9
SYNONYM_TOP_K = 5
SYNONYM_BLOCK = 4096


def synonym_pairs(names: Sequence[str], matrix: np.ndarray, new_rows: Optional[Sequence[int]] = None,
                  threshold: float = SYNONYM_THRESHOLD, top_k: int = SYNONYM_TOP_K,
                  block: int = SYNONYM_BLOCK) -> List[Tuple[str, str, float]]:
    """Near-duplicate entity names: ``(name_a, name_b, cosine)`` for each entity of
    ``new_rows`` (default: all) and its ``top_k`` most similar other entities with a cosine of
    at least ``threshold``. ``matrix`` holds one vector per name (normalised here); new rows are
    compared with all rows a block at a time (a ``block × len(names)`` product at most). Each
    unordered pair appears once, names sorted.

    Example:
        >>> m = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0]])
        >>> synonym_pairs(["U.S.", "United States", "Canada"], m, threshold=0.9)
        [('U.S.', 'United States', 0.9901)]
    """
    if len(names) != len(matrix):
        raise ValueError(f"synonym_pairs got {len(names)} names but {len(matrix)} vectors")
    if not 0.0 < threshold <= 1.0 or top_k < 1:
        raise ValueError(f"synonym_pairs needs 0 < threshold <= 1 and top_k >= 1, got {threshold}, {top_k}")
    if len(names) < 2:
        return []
    vectors = np.asarray(matrix, dtype=np.float32)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    rows = np.arange(len(names)) if new_rows is None else np.asarray(list(new_rows), dtype=np.int64)
    k = min(top_k, len(names) - 1)
    found: Dict[Tuple[str, str], float] = {}
    for start in range(0, len(rows), block):
        batch = rows[start:start + block]
        sims = vectors[batch] @ vectors.T
        sims[np.arange(len(batch)), batch] = -1.0  # not its own synonym
        r_idx, c_idx = np.nonzero(sims >= threshold)  # most names have no synonym at all
        if r_idx.size == 0:
            continue
        scores = sims[r_idx, c_idx]
        order = np.lexsort((-scores, r_idx))  # by row, best first
        r_idx, c_idx, scores = r_idx[order], c_idx[order], scores[order]
        starts = np.flatnonzero(np.r_[True, r_idx[1:] != r_idx[:-1]])
        rank = np.arange(len(r_idx)) - np.repeat(starts, np.diff(np.r_[starts, len(r_idx)]))
        keep = rank < k
        for r, col, score in zip(r_idx[keep].tolist(), c_idx[keep].tolist(), scores[keep].tolist()):
            row = int(batch[r])
            if names[row] != names[col]:
                pair = (names[row], names[col]) if names[row] <= names[col] else (names[col], names[row])
                found[pair] = max(found.get(pair, 0.0), round(float(score), 4))
    return [(a, b, s) for (a, b), s in sorted(found.items())]


@dataclass
class PassageGraph:
    """The entity–passage graph as a column-stochastic sparse matrix (entities first, then
    passages), with the lookups the ``ppr`` mode needs.

    Build it with :meth:`build` from ``(entity name, chunk ids)`` records and optional synonym
    pairs; node ``i < n_entities`` is ``entity_names[i]``, node ``n_entities + j`` is
    ``chunk_ids[j]``.
    """

    entity_names: List[str]
    chunk_ids: List[str]
    to_passages: Any  # [passage, entity]: probability of a step entity -> passage
    to_entities: Any  # [entity, passage]: probability of a step passage -> entity
    synonym_steps: Any  # [entity, entity]: probability of a synonym step (None without synonyms)
    dangling: np.ndarray  # nodes without edges (their mass restarts)
    chunk_counts: np.ndarray  # passages citing each entity
    entity_counts: np.ndarray  # entities cited by each passage (aligned with ``chunk_ids``)
    entity_index: Dict[str, int] = field(default_factory=dict)
    chunk_index: Dict[str, int] = field(default_factory=dict)
    _lowered: Optional[Dict[str, List[int]]] = field(default=None, repr=False)

    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    @property
    def n_nodes(self) -> int:
        return len(self.entity_names) + len(self.chunk_ids)

    @classmethod
    def build(cls, entities: Iterable[Tuple[str, Sequence[str]]],
              synonyms: Iterable[Tuple[str, str, float]] = (),
              synonym_weight: float = 1.0, idf_power: float = 0.0) -> PassageGraph:
        """The graph of ``entities`` (name and the chunk ids citing it) and the synonym edges
        between known names (weighted ``synonym_weight × similarity``). With ``idf_power`` > 0
        the edges of an entity weigh ``log(passages / passages citing it) ** idf_power``, so a
        walk leaving a passage prefers its specific names over generic concepts cited
        everywhere."""
        names: List[str] = []
        entity_index: Dict[str, int] = {}
        chunk_index: Dict[str, int] = {}
        rows: List[int] = []
        cols: List[int] = []
        for name, chunks in entities:
            if name in entity_index:
                continue
            entity_index[name] = len(names)
            names.append(name)
            for chunk in dict.fromkeys(chunks):
                rows.append(entity_index[name])
                cols.append(chunk_index.setdefault(chunk, len(chunk_index)))
        n_e, n_p = len(names), len(chunk_index)
        e_idx = np.asarray(rows, dtype=np.int64)
        p_idx = np.asarray(cols, dtype=np.int64)
        counts = np.bincount(e_idx, minlength=n_e).astype(np.float32) if n_e else np.zeros(0, np.float32)
        cited = np.bincount(p_idx, minlength=n_p).astype(np.float32)
        edge_weight = np.ones(len(e_idx), dtype=np.float32)
        if idf_power > 0 and n_p > 1:
            idf = np.log((n_p + 1.0) / np.maximum(counts, 1.0)).astype(np.float32)
            edge_weight = np.maximum(idf[e_idx], 1e-3) ** idf_power
        syn = [(entity_index[a], entity_index[b], float(s)) for a, b, s in synonyms
               if a in entity_index and b in entity_index and a != b]
        syn_src = syn_dst = np.zeros(0, dtype=np.int64)
        syn_weight = np.zeros(0, dtype=np.float32)
        if syn and synonym_weight > 0:
            a_idx, b_idx, sims = (np.asarray(x) for x in zip(*syn))
            syn_src, syn_dst = np.concatenate([a_idx, b_idx]), np.concatenate([b_idx, a_idx])
            syn_weight = np.concatenate([sims, sims]).astype(np.float32) * synonym_weight
        # out-weight of every node; each block is column-stochastic together with the others
        entity_out = (np.bincount(e_idx, weights=edge_weight, minlength=n_e)
                      + np.bincount(syn_src, weights=syn_weight, minlength=n_e)).astype(np.float32)
        passage_out = np.bincount(p_idx, weights=edge_weight, minlength=n_p).astype(np.float32)
        entity_inv = np.divide(1.0, entity_out, out=np.zeros_like(entity_out), where=entity_out > 0)
        passage_inv = np.divide(1.0, passage_out, out=np.zeros_like(passage_out), where=passage_out > 0)
        to_passages = _sparse(p_idx, e_idx, edge_weight * entity_inv[e_idx], (n_p, n_e))
        to_entities = _sparse(e_idx, p_idx, edge_weight * passage_inv[p_idx], (n_e, n_p))
        synonym_steps = (_sparse(syn_dst, syn_src, syn_weight * entity_inv[syn_src], (n_e, n_e))
                         if len(syn_src) else None)
        chunk_ids = [""] * n_p
        for chunk, j in chunk_index.items():
            chunk_ids[j] = chunk
        return cls(entity_names=names, chunk_ids=chunk_ids, to_passages=to_passages,
                   to_entities=to_entities, synonym_steps=synonym_steps,
                   dangling=np.concatenate([entity_out == 0, passage_out == 0]),
                   chunk_counts=counts, entity_counts=cited,
                   entity_index=entity_index,
                   chunk_index=chunk_index)

    def lookup(self, name: str) -> List[int]:
        """Entity nodes named ``name``, exactly or case-insensitively (and without a final
        possessive or punctuation)."""
        if self._lowered is None:
            lowered: Dict[str, List[int]] = {}
            for i, entity in enumerate(self.entity_names):
                lowered.setdefault(entity.lower(), []).append(i)
            self._lowered = lowered
        key = " ".join(str(name).split()).strip(" .,;:!?\"'").lower()
        if key.endswith("'s"):
            key = key[:-2]
        return list(self._lowered.get(key, []))

    def passage_scores(self, scores: np.ndarray) -> np.ndarray:
        """The passage part of a node score vector (aligned with ``chunk_ids``)."""
        return scores[self.n_entities:]


class CooMatrix:
    """A sparse matrix as coordinate lists with a NumPy ``matrix @ vector`` (``np.bincount``):
    the fallback when scipy is not installed (about 5x slower per product than scipy's CSR, still
    exact; duplicates add up, as in a sparse sum)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                 shape: Tuple[int, int]) -> None:
        self.rows, self.cols, self.values, self.shape = rows, cols, values.astype(np.float32), shape

    @property
    def nnz(self) -> int:
        return len(self.values)

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        products = self.values * vector[self.cols]
        return np.bincount(self.rows, weights=products, minlength=self.shape[0]).astype(np.float32)


#: From this many entries a block is scipy's CSR matrix. Below it (a query's neighbourhood: ~7k
#: entries at 1M chunks) NumPy's product costs ~1 ms a query more, and a fresh process does not
#: import scipy.sparse for it (0.13 s of its first query).
SCIPY_FROM_NNZ = 50_000


def _sparse(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: Tuple[int, int]) -> Any:
    """scipy's CSR matrix for a large block when scipy is installed (the ``local`` extra), else
    :class:`CooMatrix`."""
    if len(values) < SCIPY_FROM_NNZ:
        return CooMatrix(rows, cols, values, shape)
    try:
        from scipy import sparse
    except ImportError:
        return CooMatrix(rows, cols, values, shape)
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=shape, dtype=np.float32)
    matrix.sum_duplicates()
    return matrix


def personalized_pagerank(graph: PassageGraph, seeds: Mapping[int, float],
                          damping: float = DAMPING, max_iterations: int = MAX_ITERATIONS,
                          tolerance: float = TOLERANCE) -> np.ndarray:
    """Stationary scores of a walk on ``graph`` that restarts at ``seeds`` (node index ->
    weight, normalised here) with probability ``1 - damping`` each step; the mass of dangling
    nodes restarts too. Returns one score per node, summing to 1 (zeros without seeds)."""
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    reset = np.zeros(graph.n_nodes, dtype=np.float32)
    for node, weight in seeds.items():
        if weight > 0:
            reset[node] += weight
    total = float(reset.sum())
    if total <= 0:
        return reset
    reset /= total
    n_e = graph.n_entities
    dangling = np.flatnonzero(graph.dangling)
    reset_e, reset_p = reset[:n_e], reset[n_e:]
    scores = reset.copy()
    for _ in range(max_iterations):
        entities = scores[:n_e]
        lost = damping * float(scores[dangling].sum()) if len(dangling) else 0.0
        restart = 1.0 - damping + lost
        new_passages = damping * (graph.to_passages @ entities) + restart * reset_p
        new_entities = damping * (graph.to_entities @ new_passages) + restart * reset_e
        if graph.synonym_steps is not None:
            new_entities += damping * (graph.synonym_steps @ entities)
        updated = np.concatenate([new_entities, new_passages]).astype(np.float32)
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < tolerance:
            break
    return scores


# ------------------------------------------------------------------ passage ranking
@dataclass
class PprSettings:
    """The constants of PPR passage ranking (chosen on MuSiQue questions 1-50 only, see
    ``docs/benchmarks/graph_rag_quality.md``; questions 51-100 are reported apart).

    The defaults rank passages by reciprocal rank fusion of two orders: cosine to the query
    and the PPR score of a long walk (``damping`` 0.85, PageRank's classic value) that restarts
    at the query's entities and, with a 30% share, at the 20 densely retrieved passages. The
    walk's passage scores are divided by ``passage_entities ** degree_power``: a random walk
    visits a node in proportion to its degree, so without it long passages naming many
    entities win for their length alone.

    Args:
        damping: probability of following an edge at each step.
        seed_top_k: entities matched per seed text (each keyword and the query).
        seed_threshold: smallest cosine of a seed entity match.
        specificity: seed weight × ``1 / passages(entity) ** specificity`` (rare names count
            more, as HippoRAG's node specificity).
        passage_weight: share of the restart mass on the densely retrieved passages.
        dense_candidates: passages taken from dense retrieval as restart nodes and candidates.
        ppr_weight: the weight of the PPR order against the cosine order (``"rrf"``), or of
            the normalised PPR score added to the cosine (``"score"``).
        ppr_power: ``"score"`` fusion adds ``ppr_weight × (PPR / max PPR) ** ppr_power``.
        degree_power: passage PPR score ÷ ``entities cited by the passage ** degree_power``.
        synonym_weight: weight of synonym edges relative to entity–passage edges.
        idf_power: entity–passage edges weigh ``idf(entity) ** idf_power`` (0: all equal).
        query_seeds: also match the whole query's vector against the entities.
        fusion: ``"rrf"``: reciprocal rank fusion, ``1 / (rrf_k + cosine rank) + ppr_weight /
            (rrf_k + PPR rank)``; or ``"score"``: cosine + weighted normalised PPR score.
        rrf_k: the rank offset of ``"rrf"`` (small: the first ranks of each order count most).
        whole_graph_max_citations: up to this many (entity, chunk) citations the walk runs on
            the whole graph (built once per store version); above, on the query's
            neighbourhood (:mod:`~lightrag.components.graph_rag.ppr_local`).
        neighbourhood_passages: passages of one query's neighbourhood at most.
        neighbourhood_entity_chunks: passages one entity brings into a neighbourhood (its most
            recent; a hub's share).
    """

    damping: float = DAMPING
    seed_top_k: int = 1
    seed_threshold: float = 0.5
    specificity: float = 1.0
    passage_weight: float = 0.3
    dense_candidates: int = 20
    ppr_weight: float = 2.0
    ppr_power: float = 0.5
    degree_power: float = 0.25
    synonym_weight: float = 1.0
    idf_power: float = 0.0
    query_seeds: bool = False
    fusion: str = "rrf"
    rrf_k: int = 5
    whole_graph_max_citations: int = 1_000_000
    neighbourhood_passages: int = 1_000
    neighbourhood_entity_chunks: int = 32

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if f.type in ("float", "int") and not numeric:
                raise TypeError(f"PprSettings.{f.name} must be a number, got {value!r}")
            if f.type == "int" and not isinstance(value, int):
                raise TypeError(f"PprSettings.{f.name} must be an integer, got {value!r}")
            if f.type in ("float", "int") and not (0 <= value < float("inf")):
                raise ValueError(f"PprSettings.{f.name} must be a finite number >= 0, got {value!r}")
        if not 0.0 <= self.damping < 1.0:
            raise ValueError(f"PprSettings.damping must be in [0, 1), got {self.damping!r}")
        if not 0.0 <= self.passage_weight <= 1.0:
            raise ValueError(f"PprSettings.passage_weight must be in [0, 1], got {self.passage_weight!r}")
        if self.seed_top_k < 1 or self.dense_candidates < 1:
            raise ValueError("PprSettings.seed_top_k and dense_candidates must be at least 1")
        if not isinstance(self.query_seeds, bool):
            raise TypeError(f"PprSettings.query_seeds must be true or false, got {self.query_seeds!r}")
        if self.fusion not in ("rrf", "score"):
            raise ValueError(f"PprSettings.fusion is {self.fusion!r}; use 'rrf' or 'score'")

    @classmethod
    def from_dict(cls, values: Optional[Mapping[str, Any]]) -> PprSettings:
        """Settings from a config mapping (``GraphRAG(ppr_settings={...})``); an unknown key
        raises ``ValueError`` naming it and the known ones."""
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown PprSettings field(s) {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(sorted(known))}")
        return cls(**values)


def seed_hits(entities_vdb: object, seed_vectors: Optional[np.ndarray],
              settings: PprSettings) -> List[List[Dict[str, Any]]]:
    """Each seed vector's ``seed_top_k`` entity matches (one batched vector search)."""
    if seed_vectors is None or len(seed_vectors) == 0:
        return []
    return entities_vdb.query_batch(np.atleast_2d(seed_vectors), top_k=settings.seed_top_k)  # type: ignore[attr-defined]


def seed_entities(entities_vdb: object, graph: PassageGraph, seed_vectors: Optional[np.ndarray],
                  settings: PprSettings, names: Sequence[str] = (),
                  hits: Optional[List[List[Dict[str, Any]]]] = None) -> Dict[int, float]:
    """Entity node -> restart weight: 1 for an entity named exactly like one of ``names`` (the
    query's keywords; case-insensitive), else the best cosine of each seed vector's
    ``seed_top_k`` entity matches (:func:`seed_hits`, unless given); times the entity's
    specificity."""
    if graph.n_entities == 0:
        return {}
    best: Dict[int, float] = {}
    for name in names:
        for node in graph.lookup(name):
            best[node] = 1.0
    if hits is None:
        hits = seed_hits(entities_vdb, seed_vectors, settings)
    for row in hits:
        for hit in row:
            node = graph.entity_index.get(hit.get("entity_name", ""))
            if node is not None and hit["score"] >= settings.seed_threshold:
                best[node] = max(best.get(node, 0.0), float(hit["score"]))
    return {node: score / max(1.0, float(graph.chunk_counts[node])) ** settings.specificity
            for node, score in best.items()}


def rank_passages(graph: PassageGraph, entity_seeds: Mapping[int, float],
                  dense: Mapping[str, float], settings: PprSettings,
                  limit: int) -> Tuple[np.ndarray, Dict[str, float]]:
    """Run PPR from ``entity_seeds`` and the dense passages (``chunk id -> cosine``, restart
    mass ``passage_weight``, spread by cosine); returns the node scores and, for the ``limit``
    best passages, their PPR score (÷ ``entity_counts ** degree_power``) divided by the best
    one, to the power ``ppr_power``. Without entity seeds the query names nothing the graph
    knows: the node scores still come back (for entity lines), the passage scores do not, so
    the dense order stands."""
    seeds: Dict[int, float] = {}
    entity_total = sum(entity_seeds.values())
    passage_nodes = {graph.n_entities + graph.chunk_index[c]: max(s, 0.0)
                     for c, s in dense.items() if c in graph.chunk_index}
    passage_total = sum(passage_nodes.values())
    if entity_total > 0:
        share = 1.0 - settings.passage_weight if passage_total > 0 else 1.0
        seeds.update({n: share * w / entity_total for n, w in entity_seeds.items()})
    if passage_total > 0:
        share = settings.passage_weight if entity_total > 0 else 1.0
        for n, w in passage_nodes.items():
            seeds[n] = seeds.get(n, 0.0) + share * w / passage_total
    scores = personalized_pagerank(graph, seeds, damping=settings.damping)
    if entity_total <= 0:
        return scores, {}
    passages = graph.passage_scores(scores)
    if settings.degree_power > 0 and len(passages):
        passages = passages / np.maximum(graph.entity_counts, 1.0) ** settings.degree_power
    top = float(passages.max()) if len(passages) else 0.0
    if top <= 0:
        return scores, {}
    k = min(limit, len(passages))
    best = np.argpartition(-passages, k - 1)[:k] if k < len(passages) else np.arange(len(passages))
    power = settings.ppr_power
    return scores, {graph.chunk_ids[j]: (float(passages[j]) / top) ** power
                    for j in best.tolist() if passages[j] > 0}


def fuse(cosines: Mapping[str, float], ppr: Mapping[str, float], settings: PprSettings,
         limit: int) -> List[Tuple[str, float]]:
    """The ``limit`` best candidates (the keys of ``cosines``) by ``settings.fusion`` of their
    cosine to the query and their normalised PPR score (0 when absent)."""
    ids = list(cosines)
    if settings.fusion == "rrf":
        by_cos = {c: r for r, c in enumerate(sorted(ids, key=lambda c: -cosines[c]))}
        by_ppr = {c: r for r, c in enumerate(sorted(ids, key=lambda c: -ppr.get(c, 0.0)))}
        k = settings.rrf_k
        scored = [(c, 1.0 / (k + by_cos[c]) + settings.ppr_weight / (k + by_ppr[c])
                   if ppr.get(c, 0.0) > 0 else 1.0 / (k + by_cos[c])) for c in ids]
    elif settings.fusion == "score":
        scored = [(c, cosines[c] + settings.ppr_weight * ppr.get(c, 0.0)) for c in ids]
    else:
        raise ValueError(f"PprSettings.fusion is {settings.fusion!r}; use 'score' or 'rrf'")
    scored.sort(key=lambda t: -t[1])
    return scored[:limit]
