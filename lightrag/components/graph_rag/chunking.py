"""``Chunker``: cut a document into token windows for graph RAG (1200 tokens, 100 overlap).

A thin Component over :class:`~lightrag.components.data_process.TextSplitter` (token mode, tiktoken
``cl100k_base``) that returns :class:`TextChunkSchema` records keyed by positional chunk ids
``"<doc_id>-chunk-<order>"``, so re-inserting a document produces the same ids.

:meth:`Chunker.iter_chunks` yields the same chunks one at a time and, in token mode, tokenizes
the text a segment at a time (:func:`token_windows`), so a document of any length is cut with
memory for one segment and one window, not for every token of the text.

Example:
    >>> chunks = Chunker(chunk_token_size=5, chunk_overlap_token_size=1)(
    ...     "doc-1", "one two three four five six seven eight nine ten")
    >>> list(chunks)
    ['doc-1-chunk-000', 'doc-1-chunk-001', 'doc-1-chunk-002']
    >>> chunks["doc-1-chunk-001"].content
    'five six seven eight nine'
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Tuple

from lightrag.components.data_process import TextSplitter
from lightrag.components.graph_rag.schemas import TextChunkSchema
from lightrag.core.component import Component
from lightrag.core.tokenizer import count_tokens, get_encoding
from lightrag.utils.token_offsets import decode_with_offsets

#: Characters tokenized at a time by :func:`token_windows`.
SEGMENT_CHARS = 1 << 18
#: A space after a letter or digit: tiktoken's ``cl100k_base`` pre-tokenizer always ends a piece
#: before it (the piece ending in the letter or digit cannot take a space), so the segments cut
#: there tokenize, one by one, to exactly the tokens of the whole text.
_SAFE_CUT = re.compile(r"(?<=[^\W_]) ")


def chunk_id_for(doc_id: str, order: int) -> str:
    return f"{doc_id}-chunk-{order:03d}"


def _segments(text: str, size: int) -> Iterator[str]:
    """``text`` in consecutive pieces of about ``size`` characters, each cut at a safe point
    (:data:`_SAFE_CUT`, searched forward from ``size``); text without one stays in one piece."""
    start = 0
    while start < len(text):
        found = _SAFE_CUT.search(text, start + size) if start + size < len(text) else None
        end = found.start() if found is not None else len(text)
        yield text[start:end]
        start = end


def token_windows(text: str, chunk_size: int, chunk_overlap: int,
                  segment_chars: int = SEGMENT_CHARS) -> Iterator[str]:
    """The chunks of ``TextSplitter("token", chunk_size, chunk_overlap).split_text(text)``, one
    at a time, holding the tokens of one segment and one window instead of the whole text's.

    Example:
        >>> list(token_windows("one two three four five six", 4, 1, segment_chars=8))
        ['one two three four', ' four five six']
    """
    if not text.strip():
        return
    encoding = get_encoding("cl100k_base")
    step = chunk_size - chunk_overlap
    buffer, buffer_at = "", 0  # decoded text from character buffer_at on
    starts: List[int] = []  # character offset of each token from token_at on
    token_at = first = 0  # first: the token the next window starts at
    for segment in _segments(text, segment_chars):
        decoded, offsets = decode_with_offsets(encoding, encoding.encode(segment, disallowed_special=()))
        end_of_buffer = buffer_at + len(buffer)
        buffer += decoded
        starts.extend(end_of_buffer + o for o in offsets)
        while first + chunk_size < token_at + len(starts):
            piece = _window(buffer, buffer_at, starts[first - token_at],
                            starts[first + chunk_size - token_at])
            if piece:
                yield piece
            first += step
        drop = first - token_at
        if drop > 0:
            keep_from = starts[drop] if drop < len(starts) else buffer_at + len(buffer)
            buffer, buffer_at = buffer[keep_from - buffer_at:], keep_from
            del starts[:drop]
            token_at = first
    if first - token_at < len(starts):  # the last window: the first one reaching the end
        piece = _window(buffer, buffer_at, starts[first - token_at], buffer_at + len(buffer))
        if piece:
            yield piece


def _window(buffer: str, buffer_at: int, begin: int, end: int) -> str:
    """The text from character ``begin`` to ``end`` ('' for a window inside one character)."""
    return buffer[begin - buffer_at:end - buffer_at] if end > begin else ""


class Chunker(Component):
    """Token-window chunking of documents.

    Args:
        chunk_token_size: tokens per chunk.
        chunk_overlap_token_size: tokens shared by consecutive chunks.
        split_by: a :class:`TextSplitter` unit (``"token"`` by default).
    """

    def __init__(
        self,
        chunk_token_size: int = 1200,
        chunk_overlap_token_size: int = 100,
        split_by: str = "token",
    ) -> None:
        super().__init__()
        self.splitter = TextSplitter(
            split_by=split_by, chunk_size=chunk_token_size, chunk_overlap=chunk_overlap_token_size
        )

    def call(self, doc_id: str, text: str, file_path: str = "unknown_source") -> Dict[str, TextChunkSchema]:
        return dict(self.iter_chunks(doc_id, text, file_path))

    async def acall(self, doc_id: str, text: str,
                    file_path: str = "unknown_source") -> Dict[str, TextChunkSchema]:
        return self.call(doc_id, text, file_path)

    def iter_chunks(self, doc_id: str, text: str,
                    file_path: str = "unknown_source") -> Iterator[Tuple[str, TextChunkSchema]]:
        """``(chunk id, chunk)`` pairs of :meth:`call`, cut as they are consumed (in token
        mode a segment of the text at a time, so a huge document is never tokenized whole)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        splitter = self.splitter
        if splitter.split_by == "token":
            pieces = token_windows(text, splitter.chunk_size, splitter.chunk_overlap)
        else:
            pieces = iter(splitter.split_text(text))
        for order, piece in enumerate(pieces):
            content = piece.strip()
            if not content:
                continue
            yield chunk_id_for(doc_id, order), TextChunkSchema(
                tokens=count_tokens(content),
                content=content,
                full_doc_id=doc_id,
                chunk_order_index=order,
                file_path=file_path,
            )
