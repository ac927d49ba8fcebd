"""``NumpyRetriever``: exact cosine-similarity search over a NumPy matrix (no extra dependency).

The index is one ``(n, d)`` matrix of L2-normalised vectors (float32, or float16 to halve the
memory), so a dot product is the cosine similarity. A query is one matrix-vector product, a batch
of queries one matrix product, then ``np.argpartition`` picks the top k in O(n) and only those k are
sorted. 1M x 384 float32 vectors take 1.5 GB; searching never copies the matrix.

The helpers below (embedding, query parsing, normalisation) are shared with
:class:`~lightrag.components.retriever.faiss_retriever.FAISSRetriever`.
"""

from __future__ import annotations

import logging
import numbers
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from lightrag.components.retriever._common import (
    class_or_instance_method,
    documents_from_json,
    load_vector_index,
    require_index,
    resolve_top_k,
    save_vector_index,
    top_k_indices,
    top_k_rows,
)
from lightrag.core.embedder import Embedder
from lightrag.core.retriever import Retriever
from lightrag.core.types import Document, RetrieverOutput

log = logging.getLogger(__name__)

_ROW_CHUNK = 65_536  # rows normalised, converted or scored at a time
_QUERY_BLOCK = 64  # queries scored together against one chunk of rows
_EMBED_BATCH = 512

DenseQuery = Union[str, Sequence[float], np.ndarray]


def embed_texts(embedder: Optional[Embedder], texts: Sequence[str]) -> np.ndarray:
    """Embed ``texts`` in batches as a float32 ``(len(texts), d)`` matrix.

    Raises:
        ValueError: there is no embedder.
        RuntimeError: the embedder returned an error.
    """
    if embedder is None:
        raise ValueError(
            "strings need an embedder: pass embedder=Embedder(...) or give vectors instead"
        )
    rows: List[List[float]] = []
    for start in range(0, len(texts), _EMBED_BATCH):
        out = embedder(list(texts[start : start + _EMBED_BATCH]))
        if out.error is not None:
            raise RuntimeError(f"embedding failed: {out.error}")
        rows.extend(e.embedding for e in out.data)
    return np.asarray(rows, dtype=np.float32)


def _is_number(x: Any) -> bool:
    return isinstance(x, (numbers.Real, np.number)) and not isinstance(x, bool)


def document_vectors(
    documents: Any,
    document_map_func: Optional[Callable[[Any], Any]],
    embedder: Optional[Embedder],
) -> Tuple[np.ndarray, Optional[List[Any]]]:
    """``(vectors, documents_to_keep)`` from vectors, ``Document`` s (``.vector``) or strings.

    Documents without a vector and strings are embedded with ``embedder``. The documents are kept
    (to fill ``RetrieverOutput.documents``) unless they are the raw vectors themselves.
    """
    items = documents if document_map_func is None else [document_map_func(d) for d in documents]
    keep = None if documents is items else list(documents)
    if isinstance(items, np.ndarray):
        return items, keep
    items = list(items)
    if not items or not (isinstance(items[0], (str, Document))):
        try:
            return np.asarray(items, dtype=np.float32), keep
        except (TypeError, ValueError) as e:
            raise TypeError(
                "documents must be vectors, str or Document (or mapped to one of them by "
                f"document_map_func): {e}"
            ) from e
    if all(isinstance(d, str) for d in items):
        return embed_texts(embedder, items), list(documents)
    if not all(isinstance(d, Document) for d in items):
        raise TypeError("documents must be all vectors, all str or all Document")
    missing = [i for i, d in enumerate(items) if not len(d.vector)]
    embedded = embed_texts(embedder, [items[i].text or "" for i in missing]) if missing else None
    rows = [np.asarray(d.vector, dtype=np.float32) for d in items]
    for j, i in enumerate(missing):
        rows[i] = embedded[j]  # type: ignore[index]
    return np.vstack(rows), list(documents)


def normalized_matrix(vectors: np.ndarray, dtype: Any, inplace: bool = False) -> np.ndarray:
    """Unit-L2-norm rows of ``vectors`` as ``dtype`` (zero rows stay zero), chunk by chunk.

    With ``inplace=True`` a C-contiguous matrix of ``dtype`` is normalised in its own memory.

    Raises:
        ValueError: not a 2-D matrix, or a NaN/inf value.
    """
    vectors = np.asarray(vectors)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must form a 2-D (n, dimensions) matrix, got {vectors.shape}")
    same = inplace and vectors.dtype == np.dtype(dtype) and vectors.flags.c_contiguous
    out = vectors if same else np.empty(vectors.shape, dtype=dtype)
    for start in range(0, vectors.shape[0], _ROW_CHUNK):
        block = np.asarray(vectors[start : start + _ROW_CHUNK], dtype=np.float32)
        if not np.isfinite(block).all():
            raise ValueError("vectors contain NaN or infinite values")
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        np.divide(block, norms, out=out[start : start + _ROW_CHUNK])
    return out


def query_matrix(
    input: Any, embedder: Optional[Embedder], dimensions: Optional[int]
) -> Tuple[List[Any], np.ndarray]:
    """``(queries, vectors)`` for a string, a vector, or a list of either (float32, unnormalised).

    Raises:
        ValueError: no query, or vectors of the wrong dimension.
    """
    if isinstance(input, str):
        queries: List[Any] = [input]
    elif isinstance(input, np.ndarray):
        queries = [input] if input.ndim == 1 else list(input)
    elif isinstance(input, Sequence) and len(input) > 0 and _is_number(input[0]):
        queries = [input]
    elif isinstance(input, Sequence):
        queries = list(input)
    else:
        raise TypeError(f"queries must be str or vectors, got {type(input).__name__}")
    if not queries:
        raise ValueError("no query given: the input list is empty")
    if all(isinstance(q, str) for q in queries):
        vectors = embed_texts(embedder, queries)
    elif any(isinstance(q, str) for q in queries):
        raise TypeError("queries must be all str or all vectors, not a mix")
    else:
        vectors = np.asarray(queries, dtype=np.float32)
    if vectors.ndim != 2 or (dimensions is not None and vectors.shape[1] != dimensions):
        raise ValueError(
            f"query vectors have shape {vectors.shape}, the index has {dimensions} dimensions"
        )
    return queries, vectors


def dot_top_k(matrix: np.ndarray, queries: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """Top-k rows of ``matrix`` by dot product with each row of float32 ``queries``.

    One query is one mat-vec product over the whole matrix. A batch is scored block by block
    (``_QUERY_BLOCK`` queries x ``_ROW_CHUNK`` rows, a few MB), keeping each block's top k, so
    memory stays small and the matrix is read once per block of queries. A float16 matrix is
    converted to float32 one chunk of rows at a time, never as a whole.
    """
    n = matrix.shape[0]
    k = min(k, n)
    if queries.shape[0] == 1 and matrix.dtype == np.float32:
        scores = matrix @ queries[0]
        best = top_k_indices(scores, k)
        return best[None, :], scores[best][None, :]
    indices, scores_out = [], []
    for start in range(0, queries.shape[0], _QUERY_BLOCK):
        q = queries[start : start + _QUERY_BLOCK]
        chunk_idx, chunk_scores = [], []
        for row in range(0, n, _ROW_CHUNK):
            rows = matrix[row : row + _ROW_CHUNK]
            idx, sc = top_k_rows(q @ rows.astype(np.float32, copy=False).T, k)
            chunk_idx.append(idx + row)
            chunk_scores.append(sc)
        idx, sc = np.hstack(chunk_idx), np.hstack(chunk_scores)
        if len(chunk_idx) > 1:  # merge the chunks' winners
            positions, sc = top_k_rows(sc, k)
            idx = np.take_along_axis(idx, positions, axis=1)
        indices.append(idx)
        scores_out.append(sc)
    return np.vstack(indices), np.vstack(scores_out)


def make_outputs(
    queries: List[Any],
    indices: np.ndarray,
    scores: np.ndarray,
    documents: Optional[List[Any]],
) -> List[RetrieverOutput]:
    """One :class:`RetrieverOutput` per query."""
    outputs = []
    for query, idx, sc in zip(queries, indices.tolist(), scores.tolist()):
        docs = [documents[i] for i in idx] if documents is not None else None
        outputs.append(RetrieverOutput(doc_indices=idx, doc_scores=sc, query=query, documents=docs))
    return outputs


class NumpyRetriever(Retriever[Any, DenseQuery]):
    """Exact cosine-similarity retriever on a NumPy matrix.

    Args:
        embedder: embeds string documents and string queries (not needed for vectors).
        top_k: default number of results per query.
        documents: vectors (a list or an ``(n, d)`` array), ``Document`` s with ``.vector`` (or
            text, embedded), or strings (embedded); indexed at once when given.
        document_map_func: maps each document to one of the above before indexing.
        dtype: ``"float32"`` or ``"float16"`` (half the memory; queries still score in float32).

    Scores are cosine similarities in [-1, 1], best first. ``top_k`` larger than the index gives
    every document. Querying an empty index raises ValueError.

    Example:
        >>> r = NumpyRetriever(top_k=2, documents=[[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
        >>> out = r([1.0, 0.1])[0]
        >>> out.doc_indices, [round(s, 3) for s in out.doc_scores]
        ([0, 2], [0.995, 0.774])
        >>> from lightrag.core.embedder import Embedder
        >>> from lightrag.components.model_client import ScriptedClient
        >>> emb = Embedder(model_client=ScriptedClient(embedding_dim=256))
        >>> r = NumpyRetriever(embedder=emb, top_k=1, documents=["cats purr", "dogs bark"])
        >>> r(["do dogs bark", "why do cats purr"])[1].documents
        ['cats purr']
    """

    def __init__(
        self,
        embedder: Optional[Embedder] = None,
        top_k: int = 5,
        documents: Optional[Any] = None,
        document_map_func: Optional[Callable[[Any], Any]] = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        if dtype not in ("float32", "float16"):
            raise ValueError(f"dtype must be 'float32' or 'float16', got {dtype!r}")
        self.embedder = embedder
        self.top_k = resolve_top_k(top_k, 5)
        self.dtype = dtype
        self.index_keys = ["top_k", "dtype", "dimensions", "total_documents"]
        self.reset_index()
        if documents is not None:
            self.build_index_from_documents(documents, document_map_func)

    def reset_index(self) -> None:
        """Drop the index."""
        self._matrix: Optional[np.ndarray] = None
        self.documents: Optional[List[Any]] = None
        self.dimensions: Optional[int] = None
        self.total_documents = 0
        self.indexed = False

    def build_index_from_documents(
        self,
        documents: Any,
        document_map_func: Optional[Callable[[Any], Any]] = None,
        copy: bool = True,
        **kwargs: Any,
    ) -> None:
        """Index ``documents`` (see the class doc), replacing any previous index.

        Args:
            copy: with ``False``, a C-contiguous array of the index dtype is normalised in place
                and kept as the index (no second copy of a large matrix).
        """
        vectors, kept = document_vectors(documents, document_map_func, self.embedder)
        if len(vectors) == 0:
            log.warning("NumpyRetriever: no documents to index; the index is empty")
            self.reset_index()
            return
        owned = not copy or vectors is not documents
        matrix = normalized_matrix(vectors, self.dtype, inplace=owned)
        self._matrix = matrix
        self.documents = kept
        self.total_documents, self.dimensions = int(matrix.shape[0]), int(matrix.shape[1])
        self.indexed = True
        log.debug("NumpyRetriever indexed %d x %d vectors", *matrix.shape)

    def call(
        self,
        input: Union[DenseQuery, Sequence[DenseQuery]],
        top_k: Optional[int] = None,
        **kwargs: Any,
    ) -> List[RetrieverOutput]:
        """The ``top_k`` most similar documents for each query (a string, a vector, or a list)."""
        k = resolve_top_k(top_k, self.top_k)
        require_index("NumpyRetriever", self._matrix is not None and self.total_documents > 0)
        queries, vectors = query_matrix(input, self.embedder, self.dimensions)
        vectors = normalized_matrix(vectors, np.float32, inplace=True)
        indices, scores = dot_top_k(self._matrix, vectors, k)
        return make_outputs(queries, indices, scores, self.documents)

    def save_to_file(self, path: Union[str, Path]) -> None:
        """Write ``<path>.npz`` (the matrix) then ``<path>.json`` (settings, documents), atomically."""
        if self._matrix is None:
            raise ValueError("NumpyRetriever: nothing to save, the index was never built")
        save_vector_index(path, self._matrix, {
            "class": type(self).__name__, "top_k": self.top_k, "dtype": self.dtype,
            "dimensions": self.dimensions, "total_documents": self.total_documents,
        }, self.documents)

    @class_or_instance_method
    def load_from_file(
        owner: Any, path: Union[str, Path], embedder: Optional[Embedder] = None
    ) -> NumpyRetriever:
        """Load an index saved by :meth:`save_to_file` (see ``class_or_instance_method``)."""
        matrix, meta = load_vector_index(path, "NumpyRetriever")
        target = owner if isinstance(owner, NumpyRetriever) else owner(dtype=meta["dtype"])
        target.embedder = embedder if embedder is not None else target.embedder
        target.top_k, target.dtype = meta["top_k"], meta["dtype"]
        target.reset_index()
        target._matrix = matrix
        target.documents = documents_from_json(meta.get("documents"))
        target.total_documents, target.dimensions = int(matrix.shape[0]), int(matrix.shape[1])
        target.indexed = True
        return target

    def _extra_repr(self) -> str:
        return f"top_k={self.top_k}, dtype={self.dtype!r}, total_documents={self.total_documents}"
