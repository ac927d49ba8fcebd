"""``SimpleRAG``: retrieve passages, put them in the prompt, generate the answer.

The classic (non-graph) RAG pipeline as one Component: any :class:`Retriever` plus any
:class:`Generator` whose template uses ``{{context}}`` and ``{{question}}``.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> from lightrag.components.retriever import BM25Retriever
    >>> from lightrag.core import Generator
    >>> rag = SimpleRAG(
    ...     retriever=BM25Retriever(top_k=1),
    ...     generator=Generator(model_client=ScriptedClient(responses=["Jupiter"]),
    ...                         template="{{context}} {{question}}"),
    ... )
    >>> rag.build_index(["Jupiter is the biggest planet.", "Mars is red.", "Venus is hot."])
    >>> out = rag("Which planet is the biggest?")
    >>> out.answer.data, out.documents
    ('Jupiter', ['Jupiter is the biggest planet.'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence

from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.retriever import Retriever
from lightrag.core.types import GeneratorOutput, RetrieverOutput

#: a small model told to answer "using only the context" still answered "Jupiter has rings."
#: from a passage on Saturn's rings; told to copy the sentence that answers, it quotes it
DEFAULT_RAG_TEMPLATE = (
    "<SYS>Answer with the sentence of the context that answers the question, copied word for "
    "word.</SYS>\nCONTEXT: {{context}}\nQUESTION: {{question}}\nANSWER:"
)


@dataclass
class RAGOutput(DataClass):
    """What a RAG call retrieved and answered."""

    question: str = field(default="", metadata={"desc": "The question"})
    retrieved: Optional[RetrieverOutput] = field(default=None, metadata={"desc": "Retrieval"})
    context: str = field(default="", metadata={"desc": "The context put in the prompt"})
    answer: Optional[GeneratorOutput] = field(default=None, metadata={"desc": "The answer"})
    unsupported: List[str] = field(
        default_factory=list,
        metadata={"desc": "Sentences of the answer the retrieved passages do not support"})

    @property
    def documents(self) -> List[Any]:
        return list(self.retrieved.documents or []) if self.retrieved else []


class SimpleRAG(Component):
    """Retriever + Generator.

    Args:
        retriever: finds passages for the question.
        generator: answers; its template receives ``context`` and ``question``.
        context_separator: joins the retrieved passages.
    """

    def __init__(self, retriever: Retriever, generator: Generator, context_separator: str = " "):
        super().__init__()
        self.retriever = retriever
        self.generator = generator
        self.context_separator = context_separator

    def build_index(self, documents: Sequence[Any]) -> None:
        """Index ``documents`` (strings or Documents) in the retriever."""
        self.retriever.build_index_from_documents(list(documents))

    def _context(self, hits: RetrieverOutput) -> str:
        texts = [getattr(d, "text", d) for d in (hits.documents or [])]
        return self.context_separator.join(str(t) for t in texts)

    def call(self, question: str, top_k: Optional[int] = None) -> RAGOutput:
        hits = self.retriever(question, top_k=top_k)[0]
        context = self._context(hits)
        answer = self.generator({"context": context, "question": question})
        return self._output(question, hits, context, answer)

    async def acall(self, question: str, top_k: Optional[int] = None) -> RAGOutput:
        hits = (await self.retriever.acall(question, top_k=top_k))[0]
        context = self._context(hits)
        answer = await self.generator.acall({"context": context, "question": question})
        return self._output(question, hits, context, answer)

    @staticmethod
    def _output(question: str, hits: RetrieverOutput, context: str, answer: GeneratorOutput) -> RAGOutput:
        """The output, with the answer's sentences the passages do not support listed (a small
        model answers "Jupiter has rings." from a passage about Saturn's rings)."""
        unsupported: List[str] = []
        if answer.error is None and isinstance(answer.data, str) and answer.data.strip():
            from lightrag.components.graph_rag.grounding import check_answer

            texts = [str(getattr(d, "text", d)) for d in (hits.documents or [])]
            unsupported = check_answer(answer.data, texts, valid_references=set()).unsupported
        return RAGOutput(question=question, retrieved=hits, context=context, answer=answer,
                         unsupported=unsupported)
