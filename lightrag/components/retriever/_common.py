"""Helpers shared by the retrievers: top-k selection, query lists, document persistence.

Example:
    >>> import numpy as np
    >>> top_k_indices(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist()
    [1, 3, 2]
"""

from __future__ import annotations

import logging
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from lightrag.core.types import Document
from lightrag.utils.file_io import atomic_open, load_json, save_json

log = logging.getLogger(__name__)

PathLike = Union[str, Path]


class class_or_instance_method:  # noqa: N801 (a decorator, named like classmethod)
    """Bind a method to the instance when called on one, else to the class.

    Retrievers use it for ``load_from_file``: ``Cls.load_from_file(path)`` builds a new retriever
    (lightrag 0.1's classmethod style) while ``retriever.load_from_file(path)`` loads the index
    into that retriever, keeping its embedder, and returns it (0.1's instance-method style).
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, objtype: Optional[type] = None) -> Callable[..., Any]:
        return types.MethodType(self.fn, obj if obj is not None else objtype)


class DocumentsError(ValueError, AssertionError):
    """Documents a retriever cannot index: none at all, or a ``document_map_func`` that does not
    give what the retriever needs. lightrag 0.1 raised ``AssertionError`` (an ``assert``);
    this is also a ``ValueError``, so ``except`` clauses written for either catch it."""


def resolve_top_k(top_k: Optional[int], default: int) -> int:
    """``top_k`` or the default, checked to be a positive int."""
    k = default if top_k is None else top_k
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ValueError(f"top_k must be a positive integer, got {k!r}")
    return int(k)


def _ranking_scores(scores: np.ndarray) -> np.ndarray:
    """``scores`` with NaN as ``-inf`` (ranked last), copied only when there is a NaN."""
    if scores.dtype.kind == "f" and np.isnan(scores).any():
        return np.where(np.isnan(scores), -np.inf, scores)
    return scores


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first; equal scores keep index order.

    Ties at the cut-off go to the lowest indices too (lightrag 0.1's ``heapq.nlargest``), so
    the result is the first ``k`` of a stable sort by descending score. ``np.partition`` finds
    the k-th largest score in O(n); only the ``k`` selected indices are sorted. NaN ranks last.
    """
    ranking = _ranking_scores(scores)
    n = ranking.shape[0]
    if k >= n:
        return np.argsort(-ranking, kind="stable")
    threshold = np.partition(ranking, n - k)[n - k]
    above = np.flatnonzero(ranking > threshold)
    tied = np.flatnonzero(ranking == threshold)[: k - above.size]
    candidates = np.sort(np.concatenate((above, tied)))
    return candidates[np.argsort(-ranking[candidates], kind="stable")]


def top_k_rows(scores: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """Row-wise :func:`top_k_indices` of a ``(queries, n)`` matrix: ``(indices, scores)``."""
    ranking = _ranking_scores(scores)
    n = scores.shape[1]
    if k >= n:
        candidates = np.broadcast_to(np.arange(n), scores.shape)
    else:
        candidates = np.sort(np.argpartition(ranking, n - k, axis=1)[:, n - k :], axis=1)
        picked = np.take_along_axis(ranking, candidates, axis=1)
        threshold = picked.min(axis=1, keepdims=True)
        # argpartition picks any of the scores tied at the cut-off: redo the (rare) rows where
        # a tie reaches past it, so the lowest indices win
        short = (ranking == threshold).sum(axis=1) > (picked == threshold).sum(axis=1)
        for row in np.flatnonzero(short):
            candidates[row] = np.sort(top_k_indices(ranking[row], k))
    order = np.argsort(-np.take_along_axis(ranking, candidates, axis=1), axis=1, kind="stable")
    best = np.take_along_axis(candidates, order, axis=1)
    return best, np.take_along_axis(scores, best, axis=1)


def as_query_list(input: Any, what: str = "query") -> List[Any]:
    """One query or a list of queries, as a non-empty list."""
    if isinstance(input, str):
        return [input]
    if isinstance(input, Sequence) and not isinstance(input, (bytes, bytearray)):
        if len(input) == 0:
            raise ValueError(f"no {what} given: the input list is empty")
        return list(input)
    raise TypeError(f"a {what} must be a str or a list of str, got {type(input).__name__}")


def doc_text(doc: Any) -> str:
    """The text of a document: a str, a ``Document``'s ``text`` or a dict's ``"text"``."""
    if isinstance(doc, str):
        return doc
    if isinstance(doc, Document):
        return doc.text or ""
    if isinstance(doc, dict) and isinstance(doc.get("text"), str):
        return doc["text"]
    return str(doc)


def documents_to_json(documents: Optional[Sequence[Any]], keep_vectors: bool = True) -> Any:
    """``documents`` as JSON: strings as they are, ``Document`` s as dicts, else None (logged)."""
    if documents is None:
        return None
    if all(isinstance(d, str) for d in documents):
        return {"type": "str", "items": list(documents)}
    if all(isinstance(d, Document) for d in documents):
        exclude = None if keep_vectors else ["vector"]
        return {"type": "Document", "items": [d.to_dict(exclude=exclude) for d in documents]}
    log.warning("documents are neither all str nor all Document: they are not saved with the index")
    return None


def documents_from_json(data: Any) -> Optional[List[Any]]:
    """Inverse of :func:`documents_to_json`."""
    if not data:
        return None
    if data["type"] == "Document":
        return [Document.from_dict(d) for d in data["items"]]
    return list(data["items"])


def index_paths(path: PathLike) -> Tuple[Path, Path]:
    """``(base.npz, base.json)`` for ``path`` given with or without one of those suffixes."""
    p = Path(path)
    base = p.with_suffix("") if p.suffix in (".npz", ".json") else p
    return base.with_name(base.name + ".npz"), base.with_name(base.name + ".json")


def atomic_save_npz(path: PathLike, **arrays: np.ndarray) -> None:
    """``np.savez`` to a temporary file next to ``path``, fsync, then rename over ``path``.

    The arrays are streamed to disk, never buffered whole in memory.
    """
    with atomic_open(path) as f:
        np.savez(f, **arrays)


def check_saved_class(meta: Any, cls_name: str, path: PathLike) -> None:
    """Raise ValueError unless ``meta`` is the metadata a ``cls_name`` saved."""
    found = meta.get("class") if isinstance(meta, dict) else None
    if found != cls_name:
        raise ValueError(f"{path} holds a {found or 'unknown'} index, not a {cls_name} index")


def save_vector_index(path: PathLike, vectors: np.ndarray, settings: Dict[str, Any],
                      documents: Optional[Sequence[Any]]) -> None:
    """Write ``<path>.npz`` (the vectors), then ``<path>.json``: ``settings`` (the class name
    first, ``total_documents`` among them) and the documents without their vectors."""
    npz_path, json_path = index_paths(path)
    atomic_save_npz(npz_path, vectors=vectors)
    save_json({**settings, "documents": documents_to_json(documents, keep_vectors=False)}, json_path)


def load_vector_index(path: PathLike, cls_name: str) -> Tuple[np.ndarray, Dict[str, Any]]:
    """``(vectors, settings)`` saved by :func:`save_vector_index` for a ``cls_name``."""
    npz_path, json_path = index_paths(path)
    meta = load_json(json_path, missing_ok=False)
    check_saved_class(meta, cls_name, json_path)
    with np.load(npz_path) as data:
        matrix = data["vectors"]
    if matrix.shape[0] != meta["total_documents"]:
        raise ValueError(f"{npz_path} does not match {json_path}: re-save the index")
    return matrix, meta


def require_index(name: str, ready: bool) -> None:
    """Raise the ValueError of a retriever queried before it has an index."""
    if not ready:
        raise ValueError(f"{name}: the index is empty; call build_index_from_documents() first")
