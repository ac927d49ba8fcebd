"""``TextSplitter``: cut documents into overlapping chunks of words, sentences, tokens, ...

The text is first cut into *units* (words, sentences, passages, pages, tiktoken tokens or
characters), then a window of ``chunk_size`` units slides over them with a step of
``chunk_size - chunk_overlap`` units; the last window ends at the end of the text.

Every unit keeps the whitespace (or separator) that follows it, and every chunk is a plain slice
of the original text. Sentences, passages and pages are lightrag 0.1's: ``text.split(separator)``
(``"."``, ``"\n\n"``, ``"\f"``), empty units included (a leading or doubled separator, a
trailing one), windowed exactly as 0.1 does; tokens are 0.1's tiktoken tokens in 0.1's windows.
So a non-final chunk ends with its separator, chunks taken without overlap join back into the
exact text, and :meth:`TextSplitter.split_text_with_offsets` can tell where each chunk starts.

Example:
    >>> splitter = TextSplitter(split_by="word", chunk_size=3, chunk_overlap=1)
    >>> splitter.split_text("one two three four five six")
    ['one two three ', 'three four five ', 'five six']
    >>> TextSplitter(split_by="sentence", chunk_size=1, chunk_overlap=0).split_text(
    ...     "Hi there. How are you? Fine.")
    ['Hi there.', ' How are you? Fine.']
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Iterable, List, Literal, Tuple

from lightrag.core.component import Component
from lightrag.core.types import Document

log = logging.getLogger(__name__)

__all__ = ["DocumentSplitterInputType", "DocumentSplitterOutputType", "SplitBy", "TextSplitter"]

SplitBy = Literal["word", "sentence", "page", "passage", "token", "character"]

#: lightrag 0.1's default window (in units of ``split_by``)
DEFAULT_CHUNK_SIZE = 800
DEFAULT_CHUNK_OVERLAP = 200

#: The separator each kind of unit ends with, as in lightrag 0.1 (tokens and characters: none).
SEPARATORS = {
    "page": "\f",
    "passage": "\n\n",
    "word": " ",
    "sentence": ".",
    "token": "",
    "character": "",
}

#: The run of text that ends a word (the word keeps it), so no chunk starts with stray spaces.
_WORD_END = re.compile(r"\s+")

#: Units cut as 0.1 cut them: ``text.split(separator)``.
_SPLIT_LIKE_01 = ("sentence", "passage", "page")

#: Units for which whitespace-only text has no chunk. For tokens 0.1 gave the text as one chunk;
#: ``graph_rag.chunking.token_windows`` (which must cut the same chunks) has none yet.
_BLANK_IS_EMPTY = ("word", "token", "character")

_TOKENIZER_NAME = "cl100k_base"

DocumentSplitterInputType = List[Document]
DocumentSplitterOutputType = List[Document]


def _window_starts(num_units: int, chunk_size: int, step: int) -> range:
    """Unit indices where windows start: the last window is the first one reaching the end."""
    if num_units <= chunk_size:
        return range(0, 1)
    num_windows = -(-(num_units - chunk_size) // step) + 1
    return range(0, num_windows * step, step)


class TextSplitter(Component):
    """Split documents into chunks of ``chunk_size`` units overlapping by ``chunk_overlap``.

    Args:
        split_by: the unit to count in:

            - ``"word"``: runs of non-whitespace, each with the whitespace after it;
            - ``"sentence"``: text up to and including each ``.``, as lightrag 0.1 splits it
              (``!`` and ``?`` do not end a sentence; the next one starts with the whitespace);
            - ``"passage"``: text up to and including each ``"\\n\\n"``, as 0.1 splits it
              (a third newline starts the next passage; a text starting with ``"\\n\\n"``
              has an empty first passage, which counts);
            - ``"page"``: text up to and including each form feed (``"\\f"``), as 0.1;
            - ``"token"``: tiktoken ``cl100k_base`` tokens (a chunk never cuts a character);
            - ``"character"``: Unicode characters.
        chunk_size: units per chunk (> 0).
        chunk_overlap: units shared by consecutive chunks (0 <= overlap < chunk_size).
        batch_size: documents per progress-log step in :meth:`call`.

    Raises:
        ValueError: for an unknown ``split_by`` or an impossible size/overlap/batch size.

    Example:
        >>> from lightrag.core.types import Document
        >>> splitter = TextSplitter(split_by="word", chunk_size=2, chunk_overlap=0)
        >>> chunks = splitter([Document(text="a b c", id="doc-1")])
        >>> [(c.text, c.order, c.parent_doc_id) for c in chunks]
        [('a b ', 0, 'doc-1'), ('c', 1, 'doc-1')]
        >>> splitter
        TextSplitter(split_by=word, chunk_size=2, chunk_overlap=0)
    """

    def __init__(
        self,
        split_by: SplitBy = "word",
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
        batch_size: int = 1000,
    ) -> None:
        super().__init__()
        if split_by not in SEPARATORS:
            raise ValueError(
                f"Invalid split_by {split_by!r}: choose one of {', '.join(map(repr, SEPARATORS))}"
            )
        for name, value in (("chunk_size", chunk_size), ("chunk_overlap", chunk_overlap)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be greater than 0, got {chunk_size}")
        if chunk_overlap < 0:
            raise ValueError(f"chunk_overlap must be 0 or more, got {chunk_overlap}")
        if chunk_overlap >= chunk_size:
            raise ValueError(
                f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size}), "
                "otherwise the window would never move forward"
            )
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.split_by = split_by
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.batch_size = batch_size
        self.separator = SEPARATORS[split_by]

    # ------------------------------------------------------------------ units
    def _unit_starts(self, text: str) -> Tuple[str, List[int]]:
        """The text to slice and the character offset where each unit starts."""
        if self.split_by == "character":
            return text, list(range(len(text)))
        if self.split_by == "token":
            from lightrag.core.tokenizer import get_encoding

            encoding = get_encoding(_TOKENIZER_NAME)
            decoded, offsets = encoding.decode_with_offsets(
                encoding.encode(text, disallowed_special=())
            )
            return decoded, offsets
        starts = [0]
        for match in _WORD_END.finditer(text):
            if match.start() > 0 and match.end() < len(text):
                starts.append(match.end())
        return text, starts

    # ---------------------------------------------------------------- splitting
    def split_text_with_offsets(self, text: str) -> List[Tuple[str, int]]:
        """Split ``text`` into ``(chunk, character offset of the chunk in text)`` pairs.

        Empty text gives ``[]``, and so does text of only whitespace split by words, tokens or
        characters (by sentences, passages or pages it is one chunk, as in 0.1); text of at most
        ``chunk_size`` units gives one chunk, the whole text.

        Example:
            >>> TextSplitter("character", chunk_size=4, chunk_overlap=2).split_text_with_offsets(
            ...     "abcdefg")
            [('abcd', 0), ('cdef', 2), ('efg', 4)]
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text or (self.split_by in _BLANK_IS_EMPTY and not text.strip()):
            return []
        if self.split_by in _SPLIT_LIKE_01:
            return self._split_like_01(text, SEPARATORS[self.split_by])
        text, starts = self._unit_starts(text)
        step = self.chunk_size - self.chunk_overlap
        num_units = len(starts)
        chunks: List[Tuple[str, int]] = []
        for first in _window_starts(num_units, self.chunk_size, step):
            end_unit = first + self.chunk_size
            begin = starts[first]
            end = starts[end_unit] if end_unit < num_units else len(text)
            if end > begin:  # a token window inside one multi-token character is empty
                chunks.append((text[begin:end], begin))
        return chunks

    def _split_like_01(self, text: str, separator: str) -> List[Tuple[str, int]]:
        """0.1's ``str.split(separator)`` units and window: each non-final chunk ends with the
        separator, the last one runs to the end of the text (and is dropped when empty)."""
        units = text.split(separator)
        starts, offset = [], 0
        for unit in units:
            starts.append(offset)
            offset += len(unit) + len(separator)
        step = self.chunk_size - self.chunk_overlap
        chunks: List[Tuple[str, int]] = []
        first = 0
        for first in range(0, len(units), step):
            if first + self.chunk_size >= len(units):
                break
            end_unit = first + self.chunk_size - 1
            end = starts[end_unit] + len(units[end_unit]) + len(separator)
            chunks.append((text[starts[first] : end], starts[first]))
        if first < len(units) and starts[first] < len(text):
            chunks.append((text[starts[first] :], starts[first]))
        return chunks

    def split_text(self, text: str) -> List[str]:
        """Split ``text`` into chunks (see :meth:`split_text_with_offsets`).

        Example:
            >>> TextSplitter("passage", chunk_size=1, chunk_overlap=0).split_text(
            ...     "First.\\n\\nSecond.")
            ['First.\\n\\n', 'Second.']
        """
        return [chunk for chunk, _ in self.split_text_with_offsets(text)]

    # ------------------------------------------------------------------ calling
    def call(self, documents: DocumentSplitterInputType) -> DocumentSplitterOutputType:
        """Split each document; chunks come in input order, then chunk order.

        Each chunk is a new :class:`Document` with ``parent_doc_id=str(doc.id)``, ``order`` its
        position in the parent, a deep copy of the parent's ``meta_data`` and an empty vector.

        Raises:
            TypeError: when ``documents`` is not a list of Document.
            ValueError: when a document's text is None (the message names its id).
        """
        if isinstance(documents, (str, Document)) or not isinstance(documents, Iterable):
            raise TypeError(
                f"TextSplitter expects a list of Document, got {type(documents).__name__}"
            )
        documents = list(documents)
        for position, doc in enumerate(documents):
            if not isinstance(doc, Document):
                raise TypeError(
                    f"TextSplitter expects a list of Document; item {position} is a "
                    f"{type(doc).__name__}"
                )
            if doc.text is None:
                raise ValueError(f"Document {doc.id!r} has text=None: nothing to split")
        chunks: List[Document] = []
        for start in range(0, len(documents), self.batch_size):
            batch = documents[start : start + self.batch_size]
            for doc in batch:
                chunks.extend(self._split_document(doc))
            log.debug(
                "split documents %d-%d of %d: %d chunks so far",
                start,
                start + len(batch),
                len(documents),
                len(chunks),
            )
        return chunks

    async def acall(self, documents: DocumentSplitterInputType) -> DocumentSplitterOutputType:
        """Async :meth:`call`; the CPU work runs in a worker thread."""
        return await super().acall(documents)

    def _split_document(self, doc: Document) -> List[Document]:
        return [
            Document(
                text=text,
                meta_data=copy.deepcopy(doc.meta_data),
                vector=[],
                order=order,
                parent_doc_id=str(doc.id),
            )
            for order, text in enumerate(self.split_text(doc.text))
        ]

    def _extra_repr(self) -> str:
        return (
            f"split_by={self.split_by}, chunk_size={self.chunk_size}, "
            f"chunk_overlap={self.chunk_overlap}"
        )
