"""0.1's BM25 statistics (``nd``, ``t2d``, ``idf``, ``doc_len``, ``avgdl``, ``average_idf``) as views
of :class:`BM25Retriever`'s postings.

lightrag 0.1 kept these as plain attributes (dicts keyed by token, lists per document) and
documented them as the retriever's index; this package indexes postings in NumPy arrays, so
the same names are computed from them when read.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np


class TokenIdf(dict):
    """``{token: idf}`` as in 0.1, that also reads as the per-term-id array: an integer (or array)
    index gives the idf of that vocabulary id, and ``min`` / ``max`` / ``mean`` / ``np.asarray``
    work on the array."""

    def __init__(self, tokens: List[str], values: np.ndarray) -> None:
        super().__init__((token, float(values[i])) for i, token in enumerate(tokens))
        self._values = values

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(key)
        return self._values[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._values if dtype is None else self._values.astype(dtype)

    def min(self) -> float:
        return self._values.min()

    def max(self) -> float:
        return self._values.max()

    def mean(self) -> float:
        return self._values.mean()


class BM25StatsMixin:
    """The 0.1 attribute names of the BM25 index, read from the postings (``vocab``, ``_indptr``,
    ``_doc_ids``, ``_tfs``, ``_doc_len``, ``_idf``) that :class:`BM25Retriever` keeps."""

    vocab: Dict[str, int]
    _indptr: np.ndarray
    _doc_ids: np.ndarray
    _tfs: np.ndarray
    _doc_len: np.ndarray
    _idf: np.ndarray

    @property
    def idf(self) -> TokenIdf:
        """``{token: idf}`` (negative idf replaced as in 0.1 by ``epsilon * average_idf``)."""
        return TokenIdf(list(self.vocab), self._idf)

    @property
    def nd(self) -> Dict[str, int]:
        """``{token: number of documents containing it}``."""
        df = np.diff(self._indptr)
        return {token: int(df[i]) for i, token in enumerate(self.vocab)}

    @property
    def t2d(self) -> List[Dict[str, int]]:
        """Per document, ``{token: frequency}``."""
        docs: List[Dict[str, int]] = [{} for _ in range(len(self._doc_len))]
        for t, token in enumerate(self.vocab):
            for p in range(int(self._indptr[t]), int(self._indptr[t + 1])):
                docs[int(self._doc_ids[p])][token] = int(self._tfs[p])
        return docs

    @property
    def doc_len(self) -> List[int]:
        """The number of tokens of each document."""
        return [int(n) for n in self._doc_len]

    @property
    def avgdl(self) -> float:
        """The average document length (0 without documents)."""
        return float(self._doc_len.mean()) if len(self._doc_len) else 0

    @property
    def average_idf(self) -> float:
        """The mean idf over the vocabulary, before negative values were replaced."""
        n = len(self._doc_len)
        df = np.diff(self._indptr).astype(np.float64)
        if not df.size:
            return 0.0
        return float(np.log((n - df + 0.5) / (df + 0.5)).mean())
