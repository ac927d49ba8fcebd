"""``Retriever``: the base of every retriever (dense, BM25, hybrid, LLM, graph).

``call`` takes one query or a list of queries and always returns a list with one
:class:`~lightrag.core.types.RetrieverOutput` per query (as in lightrag 0.1).
"""

from __future__ import annotations

from typing import Any, Callable, Generic, List, Optional, Sequence, TypeVar, Union

from lightrag.core.component import Component
from lightrag.core.types import RetrieverOutput

DocType = TypeVar("DocType")
QueryType = TypeVar("QueryType")

RetrieverQueriesType = Union[QueryType, Sequence[QueryType]]
RetrieverOutputType = List[RetrieverOutput]


class Retriever(Component, Generic[DocType, QueryType]):
    """Base class of retrievers: build an index from documents, then answer queries with top-k.

    Subclasses implement ``build_index_from_documents`` and ``call``; ``save_to_file`` and
    ``load_from_file`` persist the index.
    """

    indexed: bool = False
    index_keys: List[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.indexed = False
        self.index_keys = []

    def reset_index(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement reset_index")

    def build_index_from_documents(
        self,
        documents: Sequence[DocType],
        document_map_func: Optional[Callable[[Any], DocType]] = None,
        **kwargs: Any,
    ) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} must implement build_index_from_documents"
        )

    def save_to_file(self, path: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot save its index")

    @classmethod
    def load_from_file(cls, path: str) -> Retriever:
        raise NotImplementedError(f"{cls.__name__} cannot load an index")

    def call(
        self, input: RetrieverQueriesType, top_k: Optional[int] = None, **kwargs: Any
    ) -> RetrieverOutputType:
        raise NotImplementedError(f"{type(self).__name__} must implement call")

    async def acall(
        self, input: RetrieverQueriesType, top_k: Optional[int] = None, **kwargs: Any
    ) -> RetrieverOutputType:
        import asyncio

        return await asyncio.to_thread(self.call, input, top_k, **kwargs)
