"""Data processing: split documents into chunks, embed them, and join retrieved text.

Example:
    >>> from lightrag.components.data_process import TextSplitter
    >>> TextSplitter(split_by="token", chunk_size=400, chunk_overlap=50)
    TextSplitter(split_by=token, chunk_size=400, chunk_overlap=50)
"""

from lightrag.components.data_process.data_components import (
    RetrieverOutputToContextStr,
    ToEmbeddings,
    retriever_output_to_context_str,
)
from lightrag.components.data_process.text_splitter import TextSplitter

__all__ = [
    "RetrieverOutputToContextStr",
    "TextSplitter",
    "ToEmbeddings",
    "retriever_output_to_context_str",
]
