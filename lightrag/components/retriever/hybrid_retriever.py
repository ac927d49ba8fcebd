"""``HybridRetriever``: fuse several retrievers' rankings with reciprocal-rank fusion (RRF).

Each sub-retriever returns ``top_k * candidate_multiplier`` candidates; a document's fused score is
``sum_i weights[i] / (k + rank_i)`` over the retrievers that returned it (rank from 1), as in
Cormack et al., "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning
Methods" (SIGIR 2009). Only ranks matter, so BM25 scores and cosines need no calibration.

All sub-retrievers must index the same documents in the same order (so ``doc_indices`` agree):
:meth:`HybridRetriever.build_index_from_documents` forwards the documents to each of them.
"""

from __future__ import annotations

import inspect
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from lightrag.components.retriever._common import (
    as_query_list,
    check_saved_class,
    class_or_instance_method,
    resolve_top_k,
)
from lightrag.core.retriever import Retriever, saves_index
from lightrag.core.types import RetrieverOutput
from lightrag.utils.file_io import load_json, save_json
from lightrag.utils.registry import EntityMapping

log = logging.getLogger(__name__)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], k: int = 60, weights: Optional[Sequence[float]] = None
) -> Dict[int, float]:
    """RRF scores ``{doc index: score}`` of several rankings (best first), in first-seen order.

    Example:
        >>> reciprocal_rank_fusion([[3, 1], [1, 2]], k=1)
        {3: 0.5, 1: 0.8333333333333333, 2: 0.3333333333333333}
    """
    weights = weights if weights is not None else [1.0] * len(rankings)
    fused: Dict[int, float] = defaultdict(float)
    for ranking, weight in zip(rankings, weights):
        for rank, index in enumerate(ranking, start=1):
            fused[index] += weight / (k + rank)
    return dict(fused)


class HybridRetriever(Retriever[Any, Any]):
    """Reciprocal-rank fusion of several retrievers (e.g. dense + BM25).

    Args:
        retrievers: the retrievers to fuse; they must index the same documents in the same order.
        top_k: default number of fused results per query.
        k: the RRF constant (60 in the paper): larger values flatten the rank differences.
        weights: one weight per retriever (default all 1.0).
        candidate_multiplier: each retriever returns ``top_k * candidate_multiplier`` candidates.

    ``doc_scores`` are the fused RRF scores; ties keep the order in which documents first appear
    (the first retriever's ranking, then the next retriever's).

    Example:
        >>> from lightrag.components.retriever import BM25Retriever, NumpyRetriever
        >>> from lightrag.core.embedder import Embedder
        >>> from lightrag.components.model_client import ScriptedClient
        >>> docs = ["Jupiter is the biggest planet", "Mars is red", "Venus is hot"]
        >>> dense = NumpyRetriever(embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)))
        >>> hybrid = HybridRetriever([dense, BM25Retriever()], top_k=1)
        >>> hybrid.build_index_from_documents(docs)
        >>> hybrid("the biggest planet")[0].doc_indices
        [0]
    """

    def __init__(
        self,
        retrievers: List[Retriever],
        top_k: int = 5,
        k: int = 60,
        weights: Optional[List[float]] = None,
        candidate_multiplier: int = 3,
    ) -> None:
        super().__init__()
        retrievers = list(retrievers)
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever")
        if weights is not None and len(weights) != len(retrievers):
            raise ValueError(f"got {len(weights)} weights for {len(retrievers)} retrievers")
        if k < 0 or candidate_multiplier < 1:
            raise ValueError("k must be >= 0 and candidate_multiplier >= 1")
        self.top_k = resolve_top_k(top_k, 5)
        self.k = k
        self.weights = [float(w) for w in weights] if weights is not None else None
        self.candidate_multiplier = candidate_multiplier
        self.retrievers = retrievers
        for i, retriever in enumerate(retrievers):
            self.register_component(f"retriever_{i}", retriever)
        self.indexed = all(r.indexed for r in retrievers)

    def reset_index(self) -> None:
        """Reset every sub-retriever's index."""
        for retriever in self.retrievers:
            retriever.reset_index()
        self.indexed = False

    def build_index_from_documents(
        self,
        documents: Sequence[Any],
        document_map_func: Optional[Callable[[Any], Any]] = None,
        **kwargs: Any,
    ) -> None:
        """Index the same ``documents`` in every sub-retriever.

        ``document_map_func`` is a function, or one function (or None) per retriever: e.g. BM25
        indexes the text while a dense retriever indexes precomputed vectors.
        """
        funcs = (
            list(document_map_func)
            if isinstance(document_map_func, (list, tuple))
            else [document_map_func] * len(self.retrievers)
        )
        if len(funcs) != len(self.retrievers):
            raise ValueError(f"got {len(funcs)} document_map_funcs for {len(self.retrievers)}")
        for retriever, func in zip(self.retrievers, funcs):
            retriever.build_index_from_documents(documents, document_map_func=func, **kwargs)
        self.indexed = True

    def call(self, input: Any, top_k: Optional[int] = None, **kwargs: Any) -> List[RetrieverOutput]:
        """Fused top ``top_k`` for each query (a string or a list of strings)."""
        k = resolve_top_k(top_k, self.top_k)
        queries = as_query_list(input)
        per_retriever = [
            r(queries, top_k=k * self.candidate_multiplier, **kwargs) for r in self.retrievers
        ]
        outputs = []
        for q, query in enumerate(queries):
            results = [outs[q] for outs in per_retriever]
            fused = reciprocal_rank_fusion([r.doc_indices for r in results], self.k, self.weights)
            ranked = sorted(fused.items(), key=lambda item: -item[1])[:k]
            known: Dict[int, Any] = {}
            for result in reversed(results):
                if result.documents is not None:
                    known.update(zip(result.doc_indices, result.documents))
            indices = [i for i, _ in ranked]
            outputs.append(
                RetrieverOutput(
                    doc_indices=indices,
                    doc_scores=[s for _, s in ranked],
                    query=query,
                    documents=[known.get(i) for i in indices] if known else None,
                )
            )
        return outputs

    def _sub_paths(self, path: Union[str, Path]) -> List[str]:
        return [f"{path}.retriever_{i}" for i in range(len(self.retrievers))]

    def save_to_file(self, path: Union[str, Path]) -> None:
        """Save each sub-retriever to ``<path>.retriever_<i>`` and the fusion settings to ``path``.

        Raises:
            NotImplementedError: a sub-retriever cannot save its index (nothing is written).
        """
        unsaved = [type(r).__name__ for r in self.retrievers if not saves_index(r)]
        if unsaved:
            raise NotImplementedError(f"HybridRetriever: {', '.join(unsaved)} cannot save its index")
        for retriever, sub_path in zip(self.retrievers, self._sub_paths(path)):
            retriever.save_to_file(sub_path)
        save_json(
            {
                "class": type(self).__name__,
                "retrievers": [type(r).__name__ for r in self.retrievers],
                "top_k": self.top_k,
                "k": self.k,
                "weights": self.weights,
                "candidate_multiplier": self.candidate_multiplier,
            },
            path,
        )

    @class_or_instance_method
    def load_from_file(owner: Any, path: Union[str, Path], **kwargs: Any) -> HybridRetriever:
        """Load a saved hybrid index.

        Called on an instance, each of its retrievers loads its saved index (keeping their
        embedders). Called on the class, the sub-retrievers are rebuilt from their saved class
        names; ``kwargs`` (e.g. ``embedder=``) go to each sub-retriever's ``load_from_file`` that
        accepts them.
        """
        meta = load_json(path, missing_ok=False)
        check_saved_class(meta, "HybridRetriever", path)
        names = meta["retrievers"]
        paths = [f"{path}.retriever_{i}" for i in range(len(names))]
        if isinstance(owner, HybridRetriever):
            if [type(r).__name__ for r in owner.retrievers] != names:
                raise ValueError(f"{path} holds retrievers {names}, this hybrid has others")
            for retriever, sub_path in zip(owner.retrievers, paths):
                retriever.load_from_file(sub_path)
            target = owner
        else:
            retrievers = []
            for name, sub_path in zip(names, paths):
                cls = EntityMapping.get(name)
                if cls is None:
                    raise ValueError(f"unknown retriever class {name!r} in {path}")
                accepted = inspect.signature(cls.load_from_file).parameters
                sub_kwargs = {k: v for k, v in kwargs.items() if k in accepted}
                retrievers.append(cls.load_from_file(sub_path, **sub_kwargs))
            target = owner(retrievers)
        target.top_k, target.k = meta["top_k"], meta["k"]
        target.weights, target.candidate_multiplier = meta["weights"], meta["candidate_multiplier"]
        target.indexed = True
        return target

    def _extra_repr(self) -> str:
        return f"top_k={self.top_k}, k={self.k}, weights={self.weights}, "
