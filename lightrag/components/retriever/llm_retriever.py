"""``LLMRetriever``: let an LLM read numbered documents and pick the relevant ones.

Good for small collections (everything fits in one prompt) or to choose among a few candidates.
The reply is parsed tolerantly: a list such as ``[2, 0]`` anywhere in the text, else every integer
in it ("Documents 2 and 0."). Indices out of range and repeats are dropped, and at most ``top_k``
are kept, in the LLM's order. A failed call or a reply without indices gives an empty result
(logged), never an exception.

(lightrag 0.1's ``LLMRetriever`` could not run: it passed arguments its Generator did not take.
This one keeps its constructor and behaviour.)
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from lightrag.components.retriever._common import (
    as_query_list,
    check_saved_class,
    class_or_instance_method,
    doc_text,
    documents_from_json,
    documents_to_json,
    resolve_top_k,
)
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.retriever import Retriever
from lightrag.core.types import GeneratorOutput, RetrieverOutput
from lightrag.utils.file_io import load_json, save_json

log = logging.getLogger(__name__)

LLM_RETRIEVER_TEMPLATE = r"""<SYS>
You are a retriever. Read the numbered documents and pick the {{top_k}} most relevant to the query,
most relevant first. Answer only with a JSON list of document numbers, e.g. [3, 0].
</SYS>
Documents:
{% for doc in documents %}
[{{loop.index0}}] {{doc}}
{% endfor %}
Query: {{input_str}}
Answer:"""

#: lightrag 0.1's name of the template
DEFAULT_LLM_AS_RETRIEVER_PROMPT_TEMPLATE = LLM_RETRIEVER_TEMPLATE

_LIST = re.compile(r"\[([^\[\]]*)\]")
_INT = re.compile(r"(?<![\w.-])\d+(?![\w.])")


def parse_indices(text: str) -> List[int]:
    """The document numbers in an LLM reply: the first ``[...]`` list holding integers, else
    every standalone integer in the text.

    Example:
        >>> parse_indices("Sure! The answer is [2, 0].")
        [2, 0]
        >>> parse_indices("Documents 3 and 1 are relevant")
        [3, 1]
    """
    if not isinstance(text, str):
        return []
    for match in _LIST.finditer(text):
        found = [int(x) for x in _INT.findall(match.group(1))]
        if found:
            return found
    return [int(x) for x in _INT.findall(text)]


class LLMRetriever(Retriever[str, str]):
    """Retrieve by asking an LLM which of the numbered documents answer the query.

    Args:
        top_k: default number of documents to ask for.
        model_client: the LLM client.
        model_kwargs: request arguments, e.g. ``{"model": "gpt-4o-mini", "temperature": 0}``.
        documents: strings, ``Document`` s or dicts with ``"text"``; indexed at once when given.
        document_map_func: maps each document to its text.

    ``doc_scores`` is None: the LLM gives an order, not scores.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> r = LLMRetriever(top_k=1, model_client=ScriptedClient(responses=["[1]"]),
        ...                  documents=["Mars is red.", "Jupiter is the biggest planet."])
        >>> r("Which planet is the biggest?")[0].documents
        ['Jupiter is the biggest planet.']
    """

    def __init__(
        self,
        *,
        top_k: int = 1,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        documents: Optional[Sequence[Any]] = None,
        document_map_func: Optional[Callable[[Any], str]] = None,
    ) -> None:
        super().__init__()
        self.top_k = resolve_top_k(top_k, 1)
        self.generator = Generator(
            model_client=model_client,
            model_kwargs=dict(model_kwargs or {}),
            template=LLM_RETRIEVER_TEMPLATE,
        )
        self.reset_index()
        if documents is not None:
            self.build_index_from_documents(documents, document_map_func)

    def reset_index(self) -> None:
        """Forget the documents."""
        self.documents: List[Any] = []
        self.texts: List[str] = []
        self.total_documents = 0
        self.indexed = False

    def build_index_from_documents(
        self,
        documents: Sequence[Any],
        document_map_func: Optional[Callable[[Any], str]] = None,
        **kwargs: Any,
    ) -> None:
        """Keep the documents (and their texts, shown to the LLM)."""
        self.documents = list(documents)
        mapped = [document_map_func(d) for d in documents] if document_map_func else documents
        self.texts = [doc_text(d) for d in mapped]
        self.total_documents = len(self.documents)
        self.indexed = True

    def _to_output(self, query: str, output: GeneratorOutput, k: int) -> RetrieverOutput:
        if output.error is not None:
            log.warning("LLMRetriever: the LLM call failed: %s", output.error)
            return RetrieverOutput(doc_indices=[], query=query, documents=[])
        reply = output.data if isinstance(output.data, (str, list)) else output.raw_response
        raw = reply if isinstance(reply, list) else parse_indices(str(reply))
        indices: List[int] = []
        for i in raw:
            if isinstance(i, int) and 0 <= i < self.total_documents and i not in indices:
                indices.append(i)
        if len(indices) < len(raw):
            log.info("LLMRetriever: dropped invalid or repeated indices from %r", reply)
        if not indices:
            log.warning("LLMRetriever: no document index in the reply %r", reply)
        indices = indices[:k]
        return RetrieverOutput(
            doc_indices=indices, query=query, documents=[self.documents[i] for i in indices]
        )

    def _ready_top_k(self, top_k: Optional[int]) -> int:
        """The ``top_k`` of a call, once there are documents to pick from."""
        k = resolve_top_k(top_k, self.top_k)
        if not self.total_documents:
            raise ValueError("LLMRetriever: no documents; call build_index_from_documents() first")
        return k

    def _prompt_kwargs(self, query: str, k: int) -> Dict[str, Any]:
        return {"input_str": query, "top_k": k, "documents": self.texts}

    def call(
        self,
        input: Union[str, Sequence[str]],
        top_k: Optional[int] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> List[RetrieverOutput]:
        """One LLM call per query; one :class:`RetrieverOutput` per query."""
        k = self._ready_top_k(top_k)
        return [
            self._to_output(q, self.generator(self._prompt_kwargs(q, k), model_kwargs), k)
            for q in as_query_list(input)
        ]

    async def acall(
        self,
        input: Union[str, Sequence[str]],
        top_k: Optional[int] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> List[RetrieverOutput]:
        """Async :meth:`call` (queries one after another)."""
        k = self._ready_top_k(top_k)
        outputs = []
        for q in as_query_list(input):
            out = await self.generator.acall(self._prompt_kwargs(q, k), model_kwargs)
            outputs.append(self._to_output(q, out, k))
        return outputs

    def save_to_file(self, path: Union[str, Path]) -> None:
        """Save ``top_k`` and the documents as JSON (the model client is not saved)."""
        save_json(
            {
                "class": type(self).__name__,
                "top_k": self.top_k,
                "documents": documents_to_json(self.documents),
                "texts": self.texts,
            },
            path,
        )

    @class_or_instance_method
    def load_from_file(
        owner: Any,
        path: Union[str, Path],
        model_client: Optional[ModelClient] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
    ) -> LLMRetriever:
        """Load saved documents into this retriever, or (class call) a new one on ``model_client``."""
        meta = load_json(path, missing_ok=False)
        check_saved_class(meta, "LLMRetriever", path)
        if isinstance(owner, LLMRetriever):
            target = owner
        else:
            if model_client is None:
                raise ValueError("LLMRetriever.load_from_file needs model_client=")
            target = owner(
                top_k=meta["top_k"], model_client=model_client, model_kwargs=model_kwargs
            )
        target.top_k = meta["top_k"]
        target.documents = documents_from_json(meta.get("documents")) or list(meta["texts"])
        target.texts = list(meta["texts"])
        target.total_documents = len(target.texts)
        target.indexed = True
        return target

    def _extra_repr(self) -> str:
        return f"top_k={self.top_k}, total_documents={self.total_documents}, "
