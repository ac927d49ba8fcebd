"""``Retriever``: the base of every retriever (dense, BM25, hybrid, LLM, graph).

``call`` takes one query or a list of queries and always returns a list with one
:class:`~lightrag.core.types.RetrieverOutput` per query (as in lightrag 0.1).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Generic, List, Optional, Sequence, TypeVar, Union

from lightrag.core.component import Component
from lightrag.core.types import RetrieverOutput

log = logging.getLogger(__name__)

DocType = TypeVar("DocType")
QueryType = TypeVar("QueryType")

RetrieverQueriesType = Union[QueryType, Sequence[QueryType]]
RetrieverOutputType = List[RetrieverOutput]


class Retriever(Component, Generic[DocType, QueryType]):
    """Base class of retrievers: build an index from documents, then answer queries with top-k.

    Subclasses implement ``build_index_from_documents`` and ``call``; ``save_to_file`` and
    ``load_from_file`` persist the index (:func:`saves_index` tells whether a class does).
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
        """Save the index to ``path``: optional, and by default (as in 0.1) a no-op that logs a
        warning and returns None. Retrievers with an index to persist override it."""
        log.warning("%s does not implement save_to_file: nothing saved to %s",
                    type(self).__name__, path)

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


def saves_index(retriever: Retriever) -> bool:
    """Whether ``retriever``'s class overrides :meth:`Retriever.save_to_file` (the base one
    saves nothing)."""
    return type(retriever).save_to_file is not Retriever.save_to_file
