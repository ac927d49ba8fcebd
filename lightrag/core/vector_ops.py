"""Small vector helpers: normalisation and top-k selection over score lists.

Example:
    >>> normalize_vector([3.0, 4.0])
    [0.6, 0.8]
    >>> get_top_k_indices_scores([0.1, 0.9, 0.5], 2)
    ([1, 2], [0.9, 0.5])
"""

from __future__ import annotations

from typing import List, Tuple, Union

import numpy as np

VECTOR_TYPE = Union[List[float], np.ndarray]


def is_normalized(v: VECTOR_TYPE, tol: float = 1e-4) -> bool:
    """Whether ``v`` has unit L2 norm (within ``tol``)."""
    return bool(abs(float(np.linalg.norm(np.asarray(v, dtype=float))) - 1.0) < tol)


def normalize_np_array(v: np.ndarray) -> np.ndarray:
    """``v / ||v||``; a zero vector is returned unchanged instead of dividing by zero."""
    arr = np.asarray(v, dtype=float)
    norm = np.linalg.norm(arr)
    return arr if norm == 0 else arr / norm


def normalize_vector(v: VECTOR_TYPE) -> List[float]:
    """:func:`normalize_np_array` returned as a list of floats."""
    return normalize_np_array(np.asarray(v, dtype=float)).tolist()


def get_top_k_indices_scores(
    scores: Union[List[float], np.ndarray], top_k: int
) -> Tuple[List[int], List[float]]:
    """Indices and scores of the ``top_k`` highest scores, best first."""
    arr = np.asarray(scores, dtype=float)
    if top_k <= 0 or arr.size == 0:
        return [], []
    order = np.argsort(-arr, kind="stable")[:top_k]
    return order.tolist(), arr[order].tolist()
