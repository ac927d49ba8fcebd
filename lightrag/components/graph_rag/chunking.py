"""``Chunker``: cut a document into token windows for graph RAG (1200 tokens, 100 overlap).

A thin Component over :class:`~lightrag.components.data_process.TextSplitter` (token mode, tiktoken
``cl100k_base``) that returns :class:`TextChunkSchema` records keyed by positional chunk ids
``"<doc_id>-chunk-<order>"``, so re-inserting a document produces the same ids.

Example:
    >>> chunks = Chunker(chunk_token_size=5, chunk_overlap_token_size=1)(
    ...     "doc-1", "one two three four five six seven eight nine ten")
    >>> list(chunks)
    ['doc-1-chunk-000', 'doc-1-chunk-001', 'doc-1-chunk-002']
    >>> chunks["doc-1-chunk-001"].content
    'five six seven eight nine'
"""

from __future__ import annotations

from typing import Dict

from lightrag.components.data_process import TextSplitter
from lightrag.components.graph_rag.schemas import TextChunkSchema
from lightrag.core.component import Component
from lightrag.core.tokenizer import count_tokens


def chunk_id_for(doc_id: str, order: int) -> str:
    return f"{doc_id}-chunk-{order:03d}"


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
        chunks: Dict[str, TextChunkSchema] = {}
        for order, piece in enumerate(self.splitter.split_text(text)):
            content = piece.strip()
            if not content:
                continue
            chunks[chunk_id_for(doc_id, order)] = TextChunkSchema(
                tokens=count_tokens(content),
                content=content,
                full_doc_id=doc_id,
                chunk_order_index=order,
                file_path=file_path,
            )
        return chunks

    async def acall(self, doc_id: str, text: str,
                    file_path: str = "unknown_source") -> Dict[str, TextChunkSchema]:
        return self.call(doc_id, text, file_path)
