"""``FAISSRetriever``: exact vector search with FAISS when installed, NumPy otherwise.

Metrics (as in lightrag 0.1):

- ``"cosine"``: vectors are normalised and searched with ``IndexFlatIP``; scores are cosines for
  vector queries and, as in 0.1, ``(s + 1) / 2`` (rounded to 3 decimals) for string queries.
- ``"prob"`` (default): the same search, scores mapped from [-1, 1] to [0, 1] by ``(s + 1) / 2`` and
  rounded to 3 decimals.
- ``"euclidean"``: raw vectors in ``IndexFlatL2``; scores are squared L2 distances, smallest first.

Without the ``faiss`` package (``pip install -e '.[faiss]'``) the same results come from NumPy
(logged once), so code using this class runs everywhere.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from lightrag.components.retriever._common import (
    class_or_instance_method,
    documents_from_json,
    load_vector_index,
    require_index,
    resolve_top_k,
    save_vector_index,
    top_k_rows,
)
from lightrag.components.retriever.dense_retriever import (
    DenseQuery,
    document_vectors,
    dot_top_k,
    make_outputs,
    normalized_matrix,
    query_matrix,
)
from lightrag.core.embedder import Embedder
from lightrag.core.retriever import Retriever
from lightrag.core.types import RetrieverOutput
from lightrag.utils.lazy_import import OptionalPackages, safe_import

log = logging.getLogger(__name__)

METRICS = ("prob", "cosine", "euclidean")
BACKENDS = ("auto", "faiss", "numpy")
_fallback_logged = False


def _load_faiss(backend: str) -> Any:
    """The faiss module, or None for the NumPy path (``auto`` falls back, logged once)."""
    global _fallback_logged
    if backend == "numpy":
        return None
    os.environ.setdefault("KMP_DUPLICATE_LIB_OK", "TRUE")  # as 0.1: two OpenMP runtimes on macOS
    try:
        faiss = safe_import(*OptionalPackages.FAISS.value)
        faiss.IndexFlatIP  # noqa: B018 - a build whose AVX2/generic module failed lacks it
        return faiss
    except Exception as e:  # noqa: BLE001 - ImportError, OSError or a half-loaded module
        if backend == "faiss":
            raise ImportError(f"faiss could not be loaded: {e}") from e
        if not _fallback_logged:
            _fallback_logged = True
            log.info("faiss could not be loaded (%s): FAISSRetriever searches with NumPy", e)
        return None


def _is_text_query(input: Any) -> bool:
    """True for a string or a non-empty list/tuple of strings."""
    if isinstance(input, str):
        return True
    return (
        isinstance(input, (list, tuple))
        and len(input) > 0
        and all(isinstance(q, str) for q in input)
    )


class FAISSRetriever(Retriever[Any, DenseQuery]):
    """Dense retriever on a FAISS flat index (or its exact NumPy equivalent).

    Args:
        embedder: embeds string documents and string queries.
        top_k: default number of results per query.
        dimensions: the vector size; inferred from the documents when None, else checked.
        documents: vectors, ``Document`` s or strings, as for
            :class:`~lightrag.components.retriever.dense_retriever.NumpyRetriever`.
        document_map_func: maps each document before indexing.
        metric: ``"prob"``, ``"cosine"`` or ``"euclidean"`` (see the module doc).
        backend: ``"auto"`` (FAISS when installed), ``"faiss"`` (required) or ``"numpy"``.

    Example:
        >>> r = FAISSRetriever(top_k=2, documents=[[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
        >>> r([0.0, 1.0])[0].doc_indices, r([0.0, 1.0])[0].doc_scores
        ([1, 2], [1.0, 0.9])
    """

    def __init__(
        self,
        embedder: Optional[Embedder] = None,
        top_k: int = 5,
        dimensions: Optional[int] = None,
        documents: Optional[Any] = None,
        document_map_func: Optional[Callable[[Any], Any]] = None,
        metric: str = "prob",
        backend: str = "auto",
    ) -> None:
        super().__init__()
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.embedder = embedder
        self.top_k = resolve_top_k(top_k, 5)
        self.dimensions = dimensions
        self.metric = metric
        self.backend = backend
        self._faiss = _load_faiss(backend)
        self.index_keys = ["top_k", "dimensions", "metric", "total_documents"]
        self.reset_index()
        if documents is not None:
            self.build_index_from_documents(documents, document_map_func)

    _to_dict_exclude = ("_faiss", "index")

    def to_dict(self, exclude: Optional[List[str]] = None) -> Dict[str, Any]:
        """The settings, documents and indexed vectors (a faiss index itself is not
        serialisable: its vectors are written, and the index is built again on load)."""
        from lightrag.utils.serialization import jsonable

        saved = super().to_dict(exclude)
        if self.index is not None:
            saved["data"]["_matrix"] = jsonable(self._vectors())
        return saved

    def _after_from_dict(self) -> None:
        object.__setattr__(self, "_faiss", _load_faiss(self.backend))
        object.__setattr__(self, "index", None)
        matrix = self.__dict__.get("_matrix")
        if matrix is not None:
            self._matrix = None
            self._set_matrix(np.asarray(matrix, dtype=np.float32))

    @property
    def uses_faiss(self) -> bool:
        """True when searches go through FAISS."""
        return self._faiss is not None

    def reset_index(self) -> None:
        """Drop the index (``dimensions`` stays as configured)."""
        self.index: Any = None  # the faiss index (0.1's attribute); None on the NumPy path
        self._matrix: Optional[np.ndarray] = None
        self._sq_norms: Optional[np.ndarray] = None
        self.documents: Optional[List[Any]] = None
        self.total_documents = 0
        self.indexed = False

    def build_index_from_documents(
        self,
        documents: Any,
        document_map_func: Optional[Callable[[Any], Any]] = None,
        **kwargs: Any,
    ) -> None:
        """Index ``documents``, replacing any previous index."""
        vectors, kept = document_vectors(documents, document_map_func, self.embedder)
        self.reset_index()
        if len(vectors) == 0:
            log.warning("FAISSRetriever: no documents to index; the index is empty")
            return
        vectors = np.asarray(vectors)
        if vectors.ndim != 2:
            raise ValueError(f"vectors must form a 2-D (n, dimensions) matrix, got {vectors.shape}")
        if self.dimensions is not None and vectors.shape[1] != self.dimensions:
            raise ValueError(
                f"FAISSRetriever: vectors have {vectors.shape[1]} dimensions, "
                f"expected dimensions={self.dimensions}"
            )
        if self.metric == "euclidean":
            matrix = np.array(vectors, dtype=np.float32, order="C")
            if not np.isfinite(matrix).all():
                raise ValueError("vectors contain NaN or infinite values")
        else:
            log.debug("FAISSRetriever: normalising vectors for the %r metric", self.metric)
            matrix = normalized_matrix(vectors, np.float32, inplace=vectors is not documents)
        self._set_matrix(matrix)
        self.documents = kept

    def _set_matrix(self, matrix: np.ndarray) -> None:
        self.total_documents, self.dimensions = int(matrix.shape[0]), int(matrix.shape[1])
        if self._faiss is not None:
            flat = (
                self._faiss.IndexFlatL2 if self.metric == "euclidean" else self._faiss.IndexFlatIP
            )
            self.index = flat(self.dimensions)
            self.index.add(matrix)
        else:
            self._matrix = matrix
            if self.metric == "euclidean":
                self._sq_norms = np.einsum("ij,ij->i", matrix, matrix)
        self.indexed = True

    @property
    def xb(self) -> Optional[np.ndarray]:
        """The indexed (normalised, for cosine and prob) vectors, 0.1's attribute."""
        return self._vectors() if self.indexed else None

    @staticmethod
    def _convert_cosine_similarity_to_probability(D: np.ndarray) -> np.ndarray:
        """Map cosine scores from [-1, 1] to [0, 1], rounded to 3 decimals (0.1's ``prob``)."""
        return np.round((D + 1) / 2, 3)

    def _l2_top_k(self, queries: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
        """Smallest squared L2 distances, ``|x|^2 - 2 x.q + |q|^2``, in blocks of queries."""
        matrix, sq_norms = self._matrix, self._sq_norms
        block = max(1, (32 * 1024 * 1024) // self.total_documents)
        indices, scores = [], []
        for start in range(0, queries.shape[0], block):
            q = queries[start : start + block]
            distances = sq_norms[None, :] - 2.0 * (q @ matrix.T)  # type: ignore[index, union-attr]
            distances += np.einsum("ij,ij->i", q, q)[:, None]
            idx, negated = top_k_rows(-np.maximum(distances, 0.0), k)
            indices.append(idx)
            scores.append(-negated)
        return np.vstack(indices), np.vstack(scores)

    def _vectors(self) -> np.ndarray:
        if self.index is not None:
            return self.index.reconstruct_n(0, self.total_documents)
        return self._matrix  # type: ignore[return-value]

    def call(
        self,
        input: Union[DenseQuery, Sequence[DenseQuery]],
        top_k: Optional[int] = None,
        **kwargs: Any,
    ) -> List[RetrieverOutput]:
        """The ``top_k`` nearest documents for each query (a string, a vector, or a list).

        As in lightrag 0.1, an empty string query is skipped (its output has no indices and
        no scores) and string queries with ``metric="cosine"`` are scored ``(cos + 1) / 2``
        like ``"prob"``; vector queries get the metric's own scores.
        """
        k = resolve_top_k(top_k, self.top_k)
        require_index("FAISSRetriever", self.indexed and self.total_documents > 0)
        if _is_text_query(input):
            return self._search_texts([input] if isinstance(input, str) else list(input), k)
        queries, vectors = query_matrix(input, self.embedder, self.dimensions)
        return self._search(queries, vectors, k, as_probability=self.metric == "prob")

    def _search_texts(self, texts: List[str], k: int) -> List[RetrieverOutput]:
        """:meth:`call` for string queries: empty ones skipped, the others embedded together."""
        valid = [i for i, text in enumerate(texts) if text]
        if len(valid) < len(texts):
            log.warning("FAISSRetriever: skipping %d empty query(ies)", len(texts) - len(valid))
        empty_docs = None if self.documents is None else []
        outputs = [RetrieverOutput(doc_indices=[], query=t, documents=empty_docs) for t in texts]
        if valid:
            queries, vectors = query_matrix([texts[i] for i in valid], self.embedder, self.dimensions)
            found = self._search(queries, vectors, k, as_probability=self.metric != "euclidean")
            for i, out in zip(valid, found):
                outputs[i] = out
        return outputs

    def _search(
        self, queries: List[Any], vectors: np.ndarray, k: int, as_probability: bool
    ) -> List[RetrieverOutput]:
        """Search the query ``vectors``; cosines become ``(s + 1) / 2`` with ``as_probability``."""
        if self.metric != "euclidean":
            vectors = normalized_matrix(vectors, np.float32, inplace=True)
        k = min(k, self.total_documents)
        if self.index is not None:
            scores, indices = self.index.search(np.ascontiguousarray(vectors), k)
        elif self.metric == "euclidean":
            indices, scores = self._l2_top_k(vectors, k)
        else:
            indices, scores = dot_top_k(self._matrix, vectors, k)  # type: ignore[arg-type]
        if as_probability:
            scores = self._convert_cosine_similarity_to_probability(scores.astype(np.float64))
        outputs = make_outputs(queries, indices, scores, self.documents)
        for out in outputs:  # faiss pads with -1 when it has fewer than k results
            keep = [j for j, i in enumerate(out.doc_indices) if i >= 0]
            if len(keep) < len(out.doc_indices):
                out.doc_indices = [out.doc_indices[j] for j in keep]
                out.doc_scores = [out.doc_scores[j] for j in keep]  # type: ignore[index]
        return outputs

    def retrieve_string_queries(
        self, input: Union[str, Sequence[str]], top_k: Optional[int] = None
    ) -> List[RetrieverOutput]:
        """0.1's name: :meth:`call` for text queries (embedded with the retriever's embedder)."""
        texts = [input] if isinstance(input, str) else list(input)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("retrieve_string_queries takes a string or a list of strings")
        return self.call(input, top_k)

    def retrieve_embedding_queries(
        self, input: Union[Sequence[float], Sequence[Sequence[float]], np.ndarray],
        top_k: Optional[int] = None,
    ) -> List[RetrieverOutput]:
        """0.1's name: :meth:`call` for query vectors (one vector or a list/matrix of them)."""
        if isinstance(input, str) or (
            isinstance(input, (list, tuple)) and input and isinstance(input[0], str)
        ):
            raise TypeError("retrieve_embedding_queries takes vectors; use retrieve_string_queries")
        return self.call(input, top_k)

    def save_to_file(self, path: Union[str, Path]) -> None:
        """Write ``<path>.npz`` (the vectors) then ``<path>.json`` (settings, documents)."""
        if not self.indexed:
            raise ValueError("FAISSRetriever: nothing to save, the index was never built")
        save_vector_index(path, self._vectors(), {
            "class": type(self).__name__, "top_k": self.top_k, "dimensions": self.dimensions,
            "metric": self.metric, "total_documents": self.total_documents,
        }, self.documents)

    @class_or_instance_method
    def load_from_file(
        owner: Any,
        path: Union[str, Path],
        embedder: Optional[Embedder] = None,
        backend: str = "auto",
    ) -> FAISSRetriever:
        """Load an index saved by :meth:`save_to_file` into a new (class call) or this retriever."""
        matrix, meta = load_vector_index(path, "FAISSRetriever")
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if isinstance(owner, FAISSRetriever):
            target = owner
        else:
            target = owner(metric=meta["metric"], backend=backend)
        target.embedder = embedder if embedder is not None else target.embedder
        target.top_k, target.metric = meta["top_k"], meta["metric"]
        target.reset_index()
        target._set_matrix(matrix)
        target.documents = documents_from_json(meta.get("documents"))
        return target

    def _extra_repr(self) -> str:
        parts = [f"top_k={self.top_k}", f"metric={self.metric}"]  # 0.1's text
        if self.dimensions:
            parts.append(f"dimensions={self.dimensions}")
        if self.total_documents:
            parts.append(f"total_documents={self.total_documents}")
        if self.indexed and not self.uses_faiss:
            parts.append("backend=numpy")
        return ", ".join(parts)
