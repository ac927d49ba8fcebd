"""Components that move documents through a RAG pipeline: embed them, and join retrieved ones.

- :class:`ToEmbeddings` fills ``Document.vector`` in batches through an :class:`Embedder`.
- :class:`RetrieverOutputToContextStr` (and :func:`retriever_output_to_context_str`) turns what
  a retriever found into the context string of a prompt.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> from lightrag.core.embedder import Embedder
    >>> from lightrag.core.types import Document
    >>> to_embeddings = ToEmbeddings(Embedder(model_client=ScriptedClient(embedding_dim=8)))
    >>> [len(d.vector) for d in to_embeddings([Document(text="a"), Document(text="b")])]
    [8, 8]
"""

from __future__ import annotations

import copy
import logging
from typing import Any, Iterable, List, Set, Union

from lightrag.core.component import Component
from lightrag.core.embedder import BatchEmbedder, Embedder
from lightrag.core.types import Document, EmbedderOutput, RetrieverOutput

log = logging.getLogger(__name__)

__all__ = [
    "RetrieverOutputToContextStr",
    "ToEmbeddings",
    "ToEmbeddingsInputType",
    "ToEmbeddingsOutputType",
    "retriever_output_to_context_str",
]

ToEmbeddingsInputType = List[Document]
ToEmbeddingsOutputType = List[Document]
RetrieverOutputs = Union[RetrieverOutput, Iterable[RetrieverOutput]]

DEFAULT_SEPARATOR = "\n\n"


def _check_documents(documents: Any, who: str) -> List[Document]:
    if isinstance(documents, (str, Document)) or not isinstance(documents, Iterable):
        raise TypeError(f"{who} expects a list of Document, got {type(documents).__name__}")
    documents = list(documents)
    for position, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise TypeError(
                f"{who} expects a list of Document; item {position} is a {type(doc).__name__}"
            )
        if not isinstance(doc.text, str):
            raise ValueError(f"Document {doc.id!r} has no text to embed (text={doc.text!r})")
    return documents


class ToEmbeddings(Component):
    """Embed documents' text in batches and return copies with ``vector`` filled in.

    The input documents are left untouched. A failed batch raises instead of leaving documents
    without vectors, since a retriever cannot index a document that has none: the embedder's
    own exception (as in lightrag 0.1, the failed batch logged), or ``RuntimeError`` for a batch
    that timed out or came back with the wrong number of embeddings.

    Args:
        embedder: the :class:`Embedder` to use.
        batch_size: texts per embedding request.

    Raises:
        RuntimeError: from :meth:`call` when a batch comes back with an error (a timeout) or with
            the wrong number of embeddings; the message names the batch and its documents.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> from lightrag.core.types import Document
        >>> to_embeddings = ToEmbeddings(Embedder(model_client=ScriptedClient()), batch_size=2)
        >>> docs = [Document(text=t) for t in ["red apple", "green pear", "blue sky"]]
        >>> embedded = to_embeddings(docs)
        >>> [len(d.vector) for d in embedded], docs[0].vector
        ([64, 64, 64], [])
    """

    def __init__(self, embedder: Embedder, batch_size: int = 50) -> None:
        super().__init__()
        if not isinstance(embedder, Embedder):
            raise TypeError(f"embedder must be an Embedder, got {type(embedder).__name__}")
        self.embedder = embedder  # a child as in 0.1: named_children gives embedder, batch_embedder
        self.batch_size = batch_size
        self.batch_embedder = BatchEmbedder(embedder=embedder, batch_size=batch_size)

    def _where(self, batch_number: int, batch: List[Document]) -> str:
        start = batch_number * self.batch_size
        return (
            f"batch {batch_number} (documents {start}-{start + len(batch) - 1}, "
            f"first id {batch[0].id!r})"
        )

    def _batches(self, documents: List[Document]) -> List[List[Document]]:
        return [
            documents[s : s + self.batch_size] for s in range(0, len(documents), self.batch_size)
        ]

    def _embedding_failed(self, error: Exception, batch_number: int, batch: List[Document]) -> None:
        """Log which batch failed; on Python 3.11+ also note it on the exception, re-raised as is
        (as in 0.1, the model client's own exception type reaches the caller)."""
        where = self._where(batch_number, batch)
        log.error("ToEmbeddings: embedding %s failed: %s: %s", where, type(error).__name__, error)
        add_note = getattr(error, "add_note", None)
        if add_note is not None:
            add_note(f"ToEmbeddings: while embedding {where}")

    def _fill_vectors(
        self, documents: List[Document], outputs: List[EmbedderOutput]
    ) -> List[Document]:
        result = copy.deepcopy(documents)
        for batch_number, (batch, output) in enumerate(zip(self._batches(result), outputs)):
            where = self._where(batch_number, batch)
            if output.error is not None:
                raise RuntimeError(f"ToEmbeddings: embedding {where} failed: {output.error}")
            if output.length != len(batch):
                raise RuntimeError(
                    f"ToEmbeddings: {where} got {output.length} embeddings for {len(batch)} texts"
                )
            ordered = sorted(output.data, key=lambda e: e.index if e.index is not None else 0)
            for doc, embedding in zip(batch, ordered):
                doc.vector = list(embedding.embedding)
        return result

    def call(self, input: ToEmbeddingsInputType) -> ToEmbeddingsOutputType:
        """Deep copies of ``input`` with each ``vector`` set to the embedding of its text.

        An exception from the embedder propagates unchanged (as in 0.1); the failed batch is
        logged.
        """
        documents = _check_documents(input, "ToEmbeddings")
        outputs: List[EmbedderOutput] = []
        for batch_number, batch in enumerate(self._batches(documents)):
            try:
                outputs.extend(self.batch_embedder([doc.text for doc in batch]))
            except Exception as e:
                self._embedding_failed(e, batch_number, batch)
                raise
        return self._fill_vectors(documents, outputs)

    async def acall(self, input: ToEmbeddingsInputType) -> ToEmbeddingsOutputType:
        """Async :meth:`call`, using the embedder's ``acall``."""
        documents = _check_documents(input, "ToEmbeddings")
        outputs: List[EmbedderOutput] = []
        for batch_number, batch in enumerate(self._batches(documents)):
            try:
                outputs.extend(await self.batch_embedder.acall([doc.text for doc in batch]))
            except Exception as e:
                self._embedding_failed(e, batch_number, batch)
                raise
        return self._fill_vectors(documents, outputs)

    def _extra_repr(self) -> str:
        return f"batch_size={self.batch_size}"


def _document_text(doc: Any) -> str | None:
    if isinstance(doc, str):
        return doc
    return getattr(doc, "text", None)


def retriever_output_to_context_str(
    retriever_output: RetrieverOutputs,
    deduplicate: bool = False,
    separator: str = DEFAULT_SEPARATOR,
) -> str:
    """Join the text of every retrieved document, in retrieval order, with ``separator``.

    Args:
        retriever_output: one :class:`RetrieverOutput` or a list of them (one per query).
        deduplicate: keep only the first occurrence of a document, recognised by its id or by
            its text (the same chunk retrieved for two queries adds nothing the second time).
        separator: put between texts; lightrag 0.1 used a single space.

    Documents may be :class:`Document` objects, anything with a ``text`` attribute, or plain
    strings; documents without text are skipped.

    Raises:
        TypeError: for input that is not a RetrieverOutput or a list of them.
        ValueError: for a RetrieverOutput without documents (only indices), which usually means
            the retriever was not given a way to map indices back to documents.

    Example:
        >>> from lightrag.core.types import Document, RetrieverOutput
        >>> a, b = Document(text="Paris is in France.", id="a"), Document(text="It rains.", id="b")
        >>> outputs = [RetrieverOutput(doc_indices=[0, 1], documents=[a, b]),
        ...            RetrieverOutput(doc_indices=[0], documents=[a])]
        >>> retriever_output_to_context_str(outputs, deduplicate=True, separator=" | ")
        'Paris is in France. | It rains.'
    """
    if isinstance(retriever_output, RetrieverOutput):
        outputs: List[Any] = [retriever_output]
    elif isinstance(retriever_output, Iterable) and not isinstance(retriever_output, str):
        outputs = list(retriever_output)
    else:
        raise TypeError(
            f"expected a RetrieverOutput or a list of them, got {type(retriever_output).__name__}"
        )
    texts: List[str] = []
    seen_ids: Set[Any] = set()
    seen_texts: Set[str] = set()
    for position, output in enumerate(outputs):
        if not isinstance(output, RetrieverOutput):
            raise TypeError(
                f"expected a list of RetrieverOutput; item {position} is a {type(output).__name__}"
            )
        if output.documents is None:
            raise ValueError(
                f"RetrieverOutput {position} (query {output.query!r}) has no documents, only "
                f"indices {output.doc_indices}: give the retriever its documents"
            )
        for doc in output.documents:
            text = _document_text(doc)
            if text is None:
                continue
            if deduplicate:
                doc_id = getattr(doc, "id", None)
                if text in seen_texts or (doc_id is not None and doc_id in seen_ids):
                    continue
                seen_texts.add(text)
                if doc_id is not None:
                    seen_ids.add(doc_id)
            texts.append(text)
    return separator.join(texts)


class RetrieverOutputToContextStr(Component):
    """Component form of :func:`retriever_output_to_context_str`.

    Args:
        deduplicate: drop repeated documents (same id or same text).
        separator: put between document texts (default a blank line; 0.1 used a space).

    Example:
        >>> from lightrag.core.types import RetrieverOutput
        >>> to_context = RetrieverOutputToContextStr(separator=" ")
        >>> to_context(RetrieverOutput(doc_indices=[0, 1], documents=["one", "two"]))
        'one two'
        >>> to_context
        RetrieverOutputToContextStr(deduplicate=False, separator=' ')
    """

    def __init__(self, deduplicate: bool = False, separator: str = DEFAULT_SEPARATOR) -> None:
        super().__init__()
        self.deduplicate = deduplicate
        self.separator = separator

    def call(self, input: RetrieverOutputs) -> str:
        """The context string of ``input`` (one RetrieverOutput or a list of them)."""
        return retriever_output_to_context_str(
            input, deduplicate=self.deduplicate, separator=self.separator
        )

    async def acall(self, input: RetrieverOutputs) -> str:
        """Same as :meth:`call` (no I/O involved)."""
        return self.call(input)

    def _extra_repr(self) -> str:
        return f"deduplicate={self.deduplicate}, separator={self.separator!r}"
