"""Rerankers: rescore a retriever's candidates with a stronger (slower) model.

- :class:`LLMReranker` asks an LLM for a 0-10 relevance score of each (query, passage) pair.
- :class:`CrossEncoderReranker` scores the pairs with a sentence-transformers ``CrossEncoder``.
- :class:`~lightrag.components.retriever.http_reranker.HTTPReranker` (and its presets
  ``CohereReranker``, ``JinaReranker``) call a hosted or self-hosted ``/rerank`` API.
- :class:`RerankerRetriever` chains a first-stage retriever with a reranker.

A reranker's ``call(query, documents, top_k)`` takes a list of passages (strings, ``Document`` s or
dicts with ``"text"``) or a :class:`RetrieverOutput` with ``documents``, and returns one
:class:`RerankOutput` (a ``RetrieverOutput``) with the ``top_k`` best, highest score first.
``doc_indices`` are the documents' positions in the list, or the retriever's own indices when
given a RetrieverOutput. Iterating a ``RerankOutput`` gives every input passage's score in input
order, so a reranker is also the ``(query, texts) -> scores`` Component that the graph RAG query
modes call when ``QueryParam.enable_rerank`` is set.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from lightrag.components.retriever._common import as_query_list, doc_text, resolve_top_k
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.retriever import Retriever
from lightrag.core.types import GeneratorOutput, ModelType, RetrieverOutput
from lightrag.utils.lazy_import import OptionalPackages, safe_import

log = logging.getLogger(__name__)

RerankInput = Union[Sequence[Any], RetrieverOutput]

FAILED_SCORE = -1.0
"""The score of a passage whose LLM reply had no usable score: below every real score (0-10)."""

LLM_RERANK_TEMPLATE = r"""<SYS>
You judge how relevant a passage is to a search query.
Reply with a single relevance score from 0 (unrelated) to 10 (fully answers the query), and nothing else.
</SYS>
Query: {{query}}
Passage: {{passage}}
Score:"""

_SCALE = re.compile(r"\b(?:0|1)\s*(?:-|–|to)\s*10\b|\bout of 10\b|/\s*10\b", re.IGNORECASE)
_KEYED = re.compile(
    r"(?:score|relevance|rating)[\"'*\s]*(?:is|of|[:=])?[\"'*\s]*(-?\d+(?:\.\d+)?)", re.IGNORECASE
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


def parse_relevance_score(text: str) -> Optional[float]:
    """A 0-10 score from an LLM reply, tolerant of prose; None when there is none.

    A number after "score"/"relevance"/"rating" wins (clamped to 0-10); otherwise the first
    number in 0-10, ignoring the scale itself ("0-10", "/10", "out of 10").

    Example:
        >>> parse_relevance_score("**Score: 8/10** - it names the planet.")
        8.0
        >>> parse_relevance_score("On a 0-10 scale I'd say 7.5")
        7.5
        >>> parse_relevance_score("no idea") is None
        True
    """
    if not isinstance(text, str):
        return None
    keyed = _KEYED.search(text)
    if keyed:
        return min(max(float(keyed.group(1)), 0.0), 10.0)
    for match in _NUMBER.finditer(_SCALE.sub(" ", text)):
        value = float(match.group())
        if 0.0 <= value <= 10.0:
            return value
    return None


def _candidates(documents: RerankInput) -> Tuple[List[int], List[Any]]:
    if isinstance(documents, RetrieverOutput):
        if documents.documents is None:
            raise ValueError("a RetrieverOutput to rerank must carry its documents")
        return list(documents.doc_indices), list(documents.documents)
    docs = list(documents)
    return list(range(len(docs))), docs


@dataclass
class RerankOutput(RetrieverOutput):
    """A reranker's result: the ``top_k`` best (a :class:`RetrieverOutput`), plus every input
    passage's score in input order (``input_scores``).

    Iterating it, ``len()`` and indexing go over ``input_scores``, so the output is also the list
    of scores ``zip(passages, reranker(query, passages))`` expects (the graph RAG query modes
    rerank their chunks that way).

    Example:
        >>> out = RerankOutput(doc_indices=[1, 0], doc_scores=[0.9, 0.2], input_scores=[0.2, 0.9])
        >>> list(out), out.doc_indices
        ([0.2, 0.9], [1, 0])
    """

    input_scores: List[float] = field(
        default_factory=list, metadata={"desc": "Every input passage's score, in input order"}
    )

    def __iter__(self) -> Iterator[float]:  # type: ignore[override]
        return iter(self.input_scores)

    def __len__(self) -> int:
        return len(self.input_scores)

    def __getitem__(self, position: int) -> float:
        return self.input_scores[position]


def _ranked(
    query: Any, indices: List[int], docs: List[Any], scores: Sequence[float], top_k: int
) -> RerankOutput:
    order = sorted(range(len(docs)), key=lambda i: -scores[i])[:top_k]  # stable: ties keep order
    return RerankOutput(
        doc_indices=[indices[i] for i in order],
        doc_scores=[float(scores[i]) for i in order],
        query=query,
        documents=[docs[i] for i in order],
        input_scores=[float(s) for s in scores],
    )


class LLMReranker(Component):
    """Rerank passages by the 0-10 relevance score an LLM gives each (query, passage) pair.

    Args:
        generator: a Generator whose template uses ``{{query}}`` and ``{{passage}}``; built from
            ``model_client``/``model_kwargs`` with :data:`LLM_RERANK_TEMPLATE` when None.
        model_client: the LLM client (when no generator is given).
        model_kwargs: request arguments, e.g. ``{"model": "gpt-4o-mini", "temperature": 0}``.
        top_k: default number of passages kept.

    One LLM call per passage (``acall`` runs them concurrently). A reply without a score, or a
    failed call, gives :data:`FAILED_SCORE` and a log warning.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> reranker = LLMReranker(model_client=ScriptedClient(responses=["2", "Score: 9"]))
        >>> out = reranker("biggest planet?", ["Mars is red.", "Jupiter is the biggest."], top_k=1)
        >>> out.doc_indices, out.doc_scores
        ([1], [9.0])
    """

    def __init__(
        self,
        generator: Optional[Generator] = None,
        model_client: Optional[ModelClient] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        top_k: int = 5,
    ) -> None:
        super().__init__()
        if generator is None:
            if model_client is None:
                raise ValueError("LLMReranker needs a generator or a model_client")
            generator = Generator(
                model_client=model_client,
                model_kwargs=dict(model_kwargs or {}),
                template=LLM_RERANK_TEMPLATE,
            )
        self.generator = generator
        self.top_k = resolve_top_k(top_k, 5)

    def _score(self, output: GeneratorOutput, position: int) -> float:
        if output.error is not None:
            log.warning(
                "LLMReranker: passage %d scored lowest: the call failed: %s", position, output.error
            )
            return FAILED_SCORE
        raw = output.raw_response if isinstance(output.raw_response, str) else output.data
        score = parse_relevance_score(raw if isinstance(raw, str) else str(raw))
        if score is None:
            log.warning("LLMReranker: passage %d scored lowest: no score in %r", position, raw)
            return FAILED_SCORE
        return score

    def call(
        self, query: str, documents: RerankInput, top_k: Optional[int] = None
    ) -> RetrieverOutput:
        """Score every passage for ``query`` and keep the ``top_k`` best."""
        k = resolve_top_k(top_k, self.top_k)
        indices, docs = _candidates(documents)
        scores = [
            self._score(self.generator(prompt_kwargs={"query": query, "passage": doc_text(d)}), i)
            for i, d in enumerate(docs)
        ]
        return _ranked(query, indices, docs, scores, k)

    async def acall(
        self, query: str, documents: RerankInput, top_k: Optional[int] = None
    ) -> RetrieverOutput:
        """Like :meth:`call`, with the LLM calls made concurrently."""
        k = resolve_top_k(top_k, self.top_k)
        indices, docs = _candidates(documents)
        outputs = await asyncio.gather(
            *(
                self.generator.acall(prompt_kwargs={"query": query, "passage": doc_text(d)})
                for d in docs
            )
        )
        scores = [self._score(out, i) for i, out in enumerate(outputs)]
        return _ranked(query, indices, docs, scores, k)

    def _extra_repr(self) -> str:
        return f"top_k={self.top_k}, "


class CrossEncoderReranker(Component):
    """Rerank passages with a sentence-transformers ``CrossEncoder`` (query and passage read jointly).

    Args:
        model: a hub id or local path of a cross-encoder model.
        top_k: default number of passages kept.
        model_obj: an already-built model with a ``predict(pairs) -> scores`` method; when None,
            ``sentence_transformers.CrossEncoder(model)`` is loaded on first use (``pip install -e
            '.[local]'``).

    Example:
        >>> class Overlap:  # a stand-in model: counts shared words
        ...     def predict(self, pairs):
        ...         return [len(set(q.split()) & set(p.split())) for q, p in pairs]
        >>> reranker = CrossEncoderReranker(model_obj=Overlap(), top_k=1)
        >>> reranker("red planet", ["Jupiter is big", "Mars the red planet"]).doc_indices
        [1]
    """

    def __init__(
        self,
        model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2",
        top_k: int = 5,
        model_obj: Optional[Any] = None,
    ) -> None:
        super().__init__()
        self.model = model
        self.top_k = resolve_top_k(top_k, 5)
        self._model_obj = model_obj

    _to_dict_exclude = ("_model_obj",)

    def _after_from_dict(self) -> None:
        """The model is not saved: loaded again from ``model`` at the first call (a model
        object passed to ``__init__`` is not restored)."""
        object.__setattr__(self, "_model_obj", None)

    @property
    def model_obj(self) -> Any:
        """The cross-encoder, loaded on first use."""
        if self._model_obj is None:
            st = safe_import(*OptionalPackages.SENTENCE_TRANSFORMERS.value)
            log.info("loading cross-encoder %s", self.model)
            self._model_obj = st.CrossEncoder(self.model)
        return self._model_obj

    def call(
        self, query: str, documents: RerankInput, top_k: Optional[int] = None
    ) -> RetrieverOutput:
        """Score every (query, passage) pair and keep the ``top_k`` best."""
        k = resolve_top_k(top_k, self.top_k)
        indices, docs = _candidates(documents)
        if not docs:
            return RerankOutput(doc_indices=[], doc_scores=[], query=query, documents=[])
        scores = self.model_obj.predict([(query, doc_text(d)) for d in docs])
        return _ranked(query, indices, docs, [float(s) for s in scores], k)

    def _extra_repr(self) -> str:
        return f"model={self.model!r}, top_k={self.top_k}"


class RerankerRetriever(Retriever[Any, str]):
    """A first-stage retriever followed by a reranker.

    Args:
        retriever: returns the candidates (with ``documents``, as every built-in retriever does
            when it indexed strings or ``Document`` s).
        reranker: an :class:`LLMReranker`, :class:`CrossEncoderReranker` or any Component with
            ``call(query, RetrieverOutput, top_k) -> RetrieverOutput``.
        top_k: default number of results per query.
        candidates: how many candidates the retriever returns (default ``4 * top_k``).

    lightrag 0.1's form, ``RerankerRetriever(model_client=..., model_kwargs={"model": ...},
    top_k=5, documents=...)``, also works: the client is called with ``ModelType.RERANKER``
    on all indexed documents and must return ``(indices, scores)``.

    Example:
        >>> from lightrag.components.retriever import BM25Retriever
        >>> class Shortest:
        ...     def predict(self, pairs):
        ...         return [-len(p) for _, p in pairs]
        >>> docs = ["Jupiter, the biggest planet, is a gas giant", "the biggest planet: Jupiter"]
        >>> rr = RerankerRetriever(BM25Retriever(documents=docs),
        ...                        CrossEncoderReranker(model_obj=Shortest()), top_k=1)
        >>> rr("biggest planet")[0].doc_indices
        [1]
    """

    def __init__(
        self,
        retriever: Optional[Retriever] = None,
        reranker: Optional[Component] = None,
        top_k: int = 5,
        candidates: Optional[int] = None,
        *,
        model_client: Optional[ModelClient] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        documents: Optional[Sequence[Any]] = None,
        document_map_func: Optional[Any] = None,
    ) -> None:
        super().__init__()
        if isinstance(retriever, ModelClient):  # 0.1 positional form
            retriever, model_client = None, retriever
        if model_client is None and (retriever is None or reranker is None):
            raise ValueError(
                "RerankerRetriever needs a retriever and a reranker (or a model_client)"
            )
        self.retriever = retriever
        self.reranker = reranker
        self.model_client = model_client
        self.model_kwargs = dict(model_kwargs or {})
        self.top_k = resolve_top_k(top_k, 5)
        self.candidates = candidates
        self.documents: Optional[List[Any]] = None
        if documents is not None:
            self.build_index_from_documents(documents, document_map_func)

    def reset_index(self) -> None:
        """Reset the first-stage index."""
        if self.retriever is not None:
            self.retriever.reset_index()
        self.documents = None
        self.indexed = False

    def build_index_from_documents(
        self, documents: Sequence[Any], document_map_func: Optional[Any] = None, **kwargs: Any
    ) -> None:
        """Index ``documents`` in the first-stage retriever (or keep them for the client)."""
        if self.retriever is not None:
            self.retriever.build_index_from_documents(documents, document_map_func, **kwargs)
        mapped = [document_map_func(d) for d in documents] if document_map_func else documents
        self.documents = list(mapped)
        self.indexed = True

    def _with_client(self, query: str, k: int) -> RetrieverOutput:
        if not self.documents:
            raise ValueError("RerankerRetriever: no documents; call build_index_from_documents()")
        api_kwargs = self.model_client.convert_inputs_to_api_kwargs(  # type: ignore[union-attr]
            input=query,
            model_kwargs={**self.model_kwargs, "documents": self.documents, "top_k": k},
            model_type=ModelType.RERANKER,
        )
        indices, scores = self.model_client.call(api_kwargs, ModelType.RERANKER)  # type: ignore[union-attr]
        indices = [int(i) for i in indices]
        return RetrieverOutput(
            doc_indices=indices,
            doc_scores=[float(s) for s in scores],
            query=query,
            documents=[self.documents[i] for i in indices],
        )

    def call(
        self, input: Union[str, Sequence[str]], top_k: Optional[int] = None, **kwargs: Any
    ) -> List[RetrieverOutput]:
        """Retrieve candidates, rerank them, keep ``top_k`` per query."""
        k = resolve_top_k(top_k, self.top_k)
        queries = as_query_list(input)
        if self.model_client is not None and self.retriever is None:
            return [self._with_client(q, k) for q in queries]
        first = self.retriever(queries, top_k=self.candidates or 4 * k)  # type: ignore[misc]
        return [self.reranker(q, out, top_k=k) for q, out in zip(queries, first)]  # type: ignore[misc]

    def _extra_repr(self) -> str:
        return f"top_k={self.top_k}, candidates={self.candidates}, "
