"""``BM25Retriever``: Okapi BM25 keyword search on sparse postings, in NumPy.

Tokenisation (the same for documents and queries):

1. lower-case the text;
2. split it on single spaces, punctuation kept (``"energy?"``), as lightrag 0.1 does;
3. with ``use_tokenizer=True`` (the default), split each word further into tiktoken
   ``cl100k_base`` pieces (``"energy?"`` gives ``"energy"`` and ``"?"``);
4. drop stop words: none by default, ``stopwords="en"`` for the built-in English list
   (:data:`ENGLISH_STOPWORDS`), or any collection of words.

Scoring, for a query term t in document d (the query's repeated terms count repeatedly)::

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg_len))
    idf(t) = log((N - df + 0.5) / (df + 0.5)), and epsilon * mean(idf) where that is negative
    (floored at 0: in a tiny corpus the mean itself can be negative)

Each term's postings (document ids and precomputed weights) are contiguous arrays, so a query
costs one vectorised add per query term. ``backend="bm25s"`` searches with the ``bm25s`` package
instead (its Lucene BM25 variant: same ranking idea, slightly different scores).
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Collection, Dict, List, Optional, Sequence, Union

import numpy as np

from lightrag.components.retriever._common import (
    DocumentsError,
    as_query_list,
    check_saved_class,
    class_or_instance_method,
    doc_text,
    documents_from_json,
    documents_to_json,
    resolve_top_k,
    top_k_indices,
)
from lightrag.components.retriever.bm25_stats import BM25StatsMixin
from lightrag.core.retriever import Retriever
from lightrag.core.types import RetrieverOutput
from lightrag.utils.file_io import load_json, save_json
from lightrag.utils.lazy_import import OptionalPackages, safe_import

log = logging.getLogger(__name__)

ENGLISH_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves""".split()
)


#: lightrag 0.1's default BM25 parameters
PARAM_K1 = 1.5
PARAM_B = 0.75
PARAM_EPSILON = 0.25


def split_text_by_word_fn(x: str) -> List[str]:
    """Lower-cased ``x`` split on single spaces, punctuation kept (lightrag 0.1's word split).

    Example:
        >>> split_text_by_word_fn("What is renewable energy?")
        ['what', 'is', 'renewable', 'energy?']
    """
    return x.lower().split(" ")


def split_text_by_word_fn_then_lower_tokenized(x: str) -> List[str]:
    """Each word of :func:`split_text_by_word_fn` split into tiktoken ``cl100k_base`` pieces
    (the retriever's default tokenisation, as in lightrag 0.1; punctuation pieces are kept).

    Example:
        >>> split_text_by_word_fn_then_lower_tokenized("Renewable energy?")
        ['re', 'new', 'able', 'energy', '?']
    """
    from lightrag.core.tokenizer import default_tokenizer

    tokenizer = default_tokenizer()
    return [piece for word in split_text_by_word_fn(x) for piece in tokenizer.get_string_tokens(word)]


def split_text_tokenized(x: str) -> List[str]:
    """The tiktoken ``cl100k_base`` pieces of the whole text, case kept (lightrag 0.1's function).

    Example:
        >>> split_text_tokenized("Hello world")
        ['Hello', ' world']
    """
    from lightrag.core.tokenizer import default_tokenizer

    return default_tokenizer().get_string_tokens(x)


def _stopword_set(stopwords: Union[None, bool, str, Collection[str]]) -> frozenset:
    if stopwords is None or stopwords is False:
        return frozenset()
    if stopwords is True or (isinstance(stopwords, str) and stopwords.lower() in ("en", "english")):
        return ENGLISH_STOPWORDS
    if isinstance(stopwords, str):
        raise ValueError(f"unknown stop-word list {stopwords!r}: use 'en' or a collection of words")
    return frozenset(w.lower() for w in stopwords)


def _document_texts(
    documents: Sequence[Any], document_map_func: Optional[Callable[[Any], str]]
) -> List[str]:
    """The text to index of each document (see :meth:`BM25Retriever.build_index_from_documents`)."""
    if len(documents) == 0:
        raise DocumentsError("documents should not be empty")
    if document_map_func is None:
        return [doc_text(d) for d in documents]
    if not callable(document_map_func):
        raise DocumentsError("document_map_func should be callable")
    texts = [document_map_func(d) for d in documents]
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise DocumentsError(
                f"document_map_func should return a string; for document {position} it "
                f"returned a {type(text).__name__}"
            )
    return texts


class BM25Retriever(BM25StatsMixin, Retriever[Any, str]):
    """Keyword retriever scoring documents with Okapi BM25 (see the module doc).

    Args:
        top_k: default number of results per query.
        k1: term-frequency saturation.
        b: document-length normalisation (0 = none, 1 = full).
        epsilon: negative idf (terms in over half the documents) becomes ``epsilon * mean idf``.
        documents: strings, ``Document`` s or dicts with ``"text"``; indexed at once when given.
        document_map_func: maps each document to its text before indexing.
        use_tokenizer: split words into tiktoken pieces (the default, as in lightrag 0.1);
            False keeps whole words.
        stopwords: None, ``"en"`` (built-in English list) or a collection of words to ignore.
        backend: ``"numpy"`` (built in) or ``"bm25s"`` (needs the ``bm25s`` package).

    Example:
        >>> r = BM25Retriever(top_k=1, documents=["Jupiter is the biggest planet.",
        ...                                       "Mercury is the closest planet to the Sun.",
        ...                                       "Mars is the red planet."])
        >>> r("which planet is the biggest?")[0].doc_indices
        [0]
        >>> [o.documents for o in r(["closest to the sun", "biggest"])]
        [['Mercury is the closest planet to the Sun.'], ['Jupiter is the biggest planet.']]
    """

    def __init__(
        self,
        top_k: int = 5,
        k1: float = PARAM_K1,
        b: float = PARAM_B,
        epsilon: float = PARAM_EPSILON,
        documents: Optional[Sequence[Any]] = None,
        document_map_func: Optional[Callable[[Any], str]] = None,
        use_tokenizer: bool = True,
        stopwords: Union[None, bool, str, Collection[str]] = None,
        backend: str = "numpy",
    ) -> None:
        super().__init__()
        if backend not in ("numpy", "bm25s"):
            raise ValueError(f"backend must be 'numpy' or 'bm25s', got {backend!r}")
        self.top_k = resolve_top_k(top_k, 5)
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.use_tokenizer = use_tokenizer
        self.stopwords = stopwords
        self._stopwords = _stopword_set(stopwords)
        self.backend = backend
        if backend == "bm25s":
            safe_import(*OptionalPackages.BM25S.value)
        self.index_keys = [  # 0.1's names (the statistics are views of the postings)
            "nd", "t2d", "idf", "doc_len", "avgdl", "total_documents",
            "top_k", "k1", "b", "epsilon", "indexed", "use_tokenizer",
        ]  # fmt: skip
        self.reset_index()
        if documents is not None and len(documents) > 0:  # as 0.1: [] leaves no index
            self.build_index_from_documents(documents, document_map_func)

    _to_dict_exclude = ("_bm25s",)

    def _after_from_dict(self) -> None:
        """The bm25s index is not saved: made again from the postings, which are."""
        object.__setattr__(self, "_bm25s", None)
        if self.__dict__.get("indexed") and self.backend == "bm25s" and self.total_documents:
            self._build_bm25s()

    def reset_index(self) -> None:
        """Drop the index."""
        self.vocab: Dict[str, int] = {}
        self._indptr = np.zeros(1, dtype=np.int64)
        self._doc_ids = np.zeros(0, dtype=np.int32)
        self._tfs = np.zeros(0, dtype=np.float32)
        self._doc_len = np.zeros(0, dtype=np.float32)
        self._weights = np.zeros(0, dtype=np.float32)
        self._idf = np.zeros(0, dtype=np.float32)
        self._bm25s: Any = None
        self.documents: Optional[List[Any]] = None
        self.total_documents = 0
        self.indexed = False

    def tokenize(self, text: str) -> List[str]:
        """The tokens of ``text`` (see the module doc)."""
        split = (
            split_text_by_word_fn_then_lower_tokenized if self.use_tokenizer
            else split_text_by_word_fn
        )
        words = split(text)
        if not self._stopwords:
            return words
        return [w for w in words if w not in self._stopwords]

    def build_index_from_documents(
        self,
        documents: Sequence[Any],
        document_map_func: Optional[Callable[[Any], str]] = None,
        **kwargs: Any,
    ) -> None:
        """Tokenise and index ``documents``, replacing any previous index.

        Documents are strings, ``Document`` s or dicts with ``"text"``; ``document_map_func``
        must map each one to a string.

        Raises:
            DocumentsError: (a ``ValueError`` and, as in 0.1, an ``AssertionError``) when
                ``documents`` is empty or ``document_map_func`` returns something other than a
                string; the existing index is kept.
        """
        documents = [] if documents is None else list(documents)
        texts = _document_texts(documents, document_map_func)
        term_ids: List[int] = []
        doc_ids: List[int] = []
        tfs: List[int] = []
        doc_len = np.zeros(len(texts), dtype=np.float32)
        vocab: Dict[str, int] = {}
        for d, text in enumerate(texts):
            tokens = self.tokenize(text)
            doc_len[d] = len(tokens)
            for token, count in Counter(tokens).items():
                term_ids.append(vocab.setdefault(token, len(vocab)))
                doc_ids.append(d)
                tfs.append(count)
        terms = np.asarray(term_ids, dtype=np.int64)
        order = np.argsort(terms, kind="stable")
        self.reset_index()
        self.vocab = vocab
        self._indptr = np.concatenate(([0], np.cumsum(np.bincount(terms, minlength=len(vocab)))))
        self._doc_ids = np.asarray(doc_ids, dtype=np.int32)[order]
        self._tfs = np.asarray(tfs, dtype=np.float32)[order]
        self._doc_len = doc_len
        self.documents = list(documents)
        self._finish_index()

    def _finish_index(self) -> None:
        """Compute idf and the per-posting weights from the postings."""
        n = len(self._doc_len)
        self.total_documents = n
        df = np.diff(self._indptr).astype(np.float64)
        idf = np.log((n - df + 0.5) / (df + 0.5))
        if idf.size:
            idf[idf < 0] = max(self.epsilon * idf.mean(), 0.0)
        self._idf = idf.astype(np.float32)
        avg_len = float(self._doc_len.mean()) if n and self._doc_len.mean() > 0 else 1.0
        lengths = self._doc_len[self._doc_ids]
        term_of_posting = np.repeat(np.arange(len(df)), np.diff(self._indptr))
        norm = self.k1 * (1.0 - self.b + self.b * lengths / avg_len)
        weights = self._idf[term_of_posting] * self._tfs * (self.k1 + 1.0) / (self._tfs + norm)
        self._weights = weights.astype(np.float32)
        self.indexed = True
        if self.backend == "bm25s" and n:
            self._build_bm25s()
        log.debug("BM25Retriever indexed %d documents, %d terms", n, len(self.vocab))

    def _build_bm25s(self) -> None:
        bm25s = safe_import(*OptionalPackages.BM25S.value)
        terms = list(self.vocab)
        corpus: List[List[str]] = [[] for _ in range(self.total_documents)]
        for t, term in enumerate(terms):
            for p in range(self._indptr[t], self._indptr[t + 1]):
                corpus[self._doc_ids[p]].extend([term] * int(self._tfs[p]))
        self._bm25s = bm25s.BM25(k1=self.k1, b=self.b)
        self._bm25s.index(corpus, show_progress=False)

    def get_scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query`` (built-in backend)."""
        scores = np.zeros(self.total_documents, dtype=np.float32)
        for token, count in Counter(self.tokenize(query)).items():
            t = self.vocab.get(token)
            if t is not None:
                start, end = self._indptr[t], self._indptr[t + 1]
                scores[self._doc_ids[start:end]] += count * self._weights[start:end]
        return scores

    def _search_bm25s(self, query: str, k: int) -> RetrieverOutput:
        tokens = [t for t in self.tokenize(query) if t in self.vocab]
        if not tokens:
            return RetrieverOutput(doc_indices=list(range(k)), doc_scores=[0.0] * k, query=query)
        ids, scores = self._bm25s.retrieve([tokens], k=k, show_progress=False)
        return RetrieverOutput(
            doc_indices=[int(i) for i in ids[0]],
            doc_scores=[float(s) for s in scores[0]],
            query=query,
        )

    def call(
        self, input: Union[str, Sequence[str]], top_k: Optional[int] = None, **kwargs: Any
    ) -> List[RetrieverOutput]:
        """The ``top_k`` best-scoring documents for each query (a string or a list of strings)."""
        k = resolve_top_k(top_k, self.top_k)
        if not self.indexed or self.total_documents == 0:
            raise ValueError(
                "BM25Retriever: the index is empty; call build_index_from_documents() first"
            )
        k = min(k, self.total_documents)
        outputs = []
        for query in as_query_list(input):
            if self._bm25s is not None:
                out = self._search_bm25s(query, k)
            else:
                scores = self.get_scores(query)
                idx = top_k_indices(scores, k)
                out = RetrieverOutput(
                    doc_indices=idx.tolist(), doc_scores=scores[idx].tolist(), query=query
                )
            if self.documents is not None:
                out.documents = [self.documents[i] for i in out.doc_indices]
            outputs.append(out)
        return outputs

    def save_to_file(self, path: Union[str, Path]) -> None:
        """Save settings, postings and documents as one JSON file (written atomically)."""
        stopwords: Any = self.stopwords
        if not (stopwords is None or isinstance(stopwords, (bool, str))):
            stopwords = sorted(self._stopwords)
        save_json(
            {
                "class": type(self).__name__,
                "top_k": self.top_k,
                "k1": self.k1,
                "b": self.b,
                "epsilon": self.epsilon,
                "use_tokenizer": self.use_tokenizer,
                "stopwords": stopwords,
                "vocab": list(self.vocab),
                "indptr": self._indptr.tolist(),
                "doc_ids": self._doc_ids.tolist(),
                "tfs": self._tfs.astype(np.int64).tolist(),
                "doc_len": self._doc_len.astype(np.int64).tolist(),
                "documents": documents_to_json(self.documents),
            },
            path,
            indent=0,
        )

    @class_or_instance_method
    def load_from_file(
        owner: Any, path: Union[str, Path], backend: Optional[str] = None
    ) -> BM25Retriever:
        """Load a saved index into a new retriever (class call) or this one (instance call)."""
        meta = load_json(path, missing_ok=False)
        check_saved_class(meta, "BM25Retriever", path)
        settings = {
            key: meta[key] for key in ("top_k", "k1", "b", "epsilon", "use_tokenizer", "stopwords")
        }
        if isinstance(owner, BM25Retriever):
            target = owner
            target.reset_index()
            target.top_k, target.use_tokenizer = settings["top_k"], settings["use_tokenizer"]
            target.k1, target.b, target.epsilon = settings["k1"], settings["b"], settings["epsilon"]
            target.stopwords = settings["stopwords"]
            target._stopwords = _stopword_set(settings["stopwords"])
            target.backend = backend or target.backend
        else:
            target = owner(**settings, backend=backend or "numpy")
        target.vocab = {term: i for i, term in enumerate(meta["vocab"])}
        target._indptr = np.asarray(meta["indptr"], dtype=np.int64)
        target._doc_ids = np.asarray(meta["doc_ids"], dtype=np.int32)
        target._tfs = np.asarray(meta["tfs"], dtype=np.float32)
        target._doc_len = np.asarray(meta["doc_len"], dtype=np.float32)
        target.documents = documents_from_json(meta.get("documents"))
        target._finish_index()
        return target

    def _extra_repr(self) -> str:
        return (
            f"top_k={self.top_k}, k1={self.k1}, b={self.b}, epsilon={self.epsilon}, "
            f"backend={self.backend!r}, total_documents={self.total_documents}"
        )
