"""The library's own retrieval as agent tools: graph-RAG query modes and any retriever.

Each tool returns a compact context string (never an LLM answer): the entities, relations and
passages found, with numbered sources, clipped to a token budget so it fits in an agent's prompt.
The docstrings are what the agent's model reads to choose a tool.

Example:
    >>> from lightrag.components.retriever import BM25Retriever
    >>> retriever = BM25Retriever(top_k=1, documents=["Titan is the largest moon of Saturn.",
    ...                                               "Io is a moon of Jupiter.",
    ...                                               "Mars is the red planet."])
    >>> tool = retriever_tool(retriever, name="search_notes", description="Search my notes.")
    >>> print(tool.call(query="largest moon Saturn").output)
    [1] doc 0: Titan is the largest moon of Saturn.
"""

import logging
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from lightrag.core.func_tool import FunctionTool
from lightrag.core.retriever import Retriever
from lightrag.core.tokenizer import default_tokenizer

log = logging.getLogger(__name__)

__all__ = ["GRAPH_MODES", "format_graph_context", "graph_rag_tools", "retriever_tool"]

#: The retrieval modes offered as tools. ``bypass`` (no retrieval, the LLM answers alone) is not
#: one: an agent has ``llm_tool`` for that.
GRAPH_MODES = ("local", "global", "hybrid", "naive", "mix")
_SEP = "<SEP>"


def _clip(text: str, max_tokens: int) -> str:
    tokenizer = default_tokenizer()
    tokens = tokenizer.encode(text)
    if len(tokens) <= max_tokens:
        return text
    return tokenizer.decode(tokens[: max(max_tokens, 1)]).rstrip() + "…"


def _fit(lines: List[str], budget: int) -> Tuple[List[str], int]:
    """The leading lines that fit in ``budget`` tokens (the last one clipped); tokens used."""
    tokenizer = default_tokenizer()
    kept, used = [], 0
    for line in lines:
        size = len(tokenizer.encode(line)) + 1
        if used + size <= budget:
            kept.append(line)
            used += size
            continue
        if budget - used >= 12:
            kept.append(_clip(line, budget - used - 1))
            used = budget
        break
    return kept, used


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").replace(_SEP, " ").split())


def _as_list(value: Any) -> List[str]:
    """Keywords as a list, however the model wrote them (a list, or one comma-separated str)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(item).strip() for item in value if str(item).strip()]


def format_graph_context(raw_data: Dict[str, Any], max_tokens: int = 600) -> str:
    """Entities, relations and source passages of a graph-RAG query, in ``max_tokens`` tokens.

    Entities and relations cite their sources as ``[n]``; the passages are listed last, each as
    ``[n] file: text``. A third of the budget goes to entities, a third to relations, the rest
    (with whatever they left) to the passages.
    """
    refs = {r.get("file_path"): r.get("reference_id") for r in raw_data.get("references", [])}

    def cite(file_path: Any) -> str:
        ids = [refs[p] for p in str(file_path or "").split(_SEP) if p in refs]
        return "".join(f"[{i}]" for i in dict.fromkeys(ids))

    entities = [
        f"- {e.get('entity_name')} ({e.get('entity_type', '?')}): "
        f"{_clip(_one_line(e.get('description')), 60)} {cite(e.get('file_path'))}".rstrip()
        for e in raw_data.get("entities", [])
    ]
    relations = [
        f"- {r.get('src_id')} -> {r.get('tgt_id')}: "
        f"{_clip(_one_line(r.get('description')), 50)} {cite(r.get('file_path'))}".rstrip()
        for r in raw_data.get("relationships", [])
    ]
    passages = [
        f"[{c.get('reference_id', '?')}] {c.get('file_path', 'unknown')}: "
        f"{_clip(_one_line(c.get('content')), max(40, max_tokens // 3))}"
        for c in raw_data.get("chunks", [])
    ]
    out: List[str] = []
    spare = max_tokens
    for title, lines, share in (("Entities:", entities, max_tokens // 3),
                                ("Relations:", relations, max_tokens // 3),
                                ("Sources:", passages, max_tokens)):
        if not lines:
            continue
        kept, used = _fit(lines, min(share, spare) - 2)
        if kept:
            out += [title, *kept]
            spare -= used + 2
    return "\n".join(out)


def _graph_tool(rag: Any, mode: str, max_tokens: int, query_overrides: Dict[str, Any]) -> Callable:
    def search(query: str, keywords: Any = None, themes: Any = None) -> str:
        result = rag.query(query, mode=mode, only_need_context=True,
                           ll_keywords=_as_list(keywords), hl_keywords=_as_list(themes),
                           **query_overrides)
        context = format_graph_context(result.raw_data, max_tokens)
        if not context:
            return (f"No results for {query!r} with {mode}_search. Try other keywords or "
                    "another search tool.")
        return context

    def local_search(query: str, keywords: Optional[List[str]] = None) -> str:
        """Look up specific entities (people, places, missions, objects) in the knowledge
        graph: their descriptions, direct relations and source passages. keywords: the names to
        look up, e.g. ['Voyager 1', 'Titan'] (taken from the query when left out)."""
        return search(query, keywords=keywords)

    def global_search(query: str, themes: Optional[List[str]] = None) -> str:
        """Search the relations of the knowledge graph for broad themes and connections across
        documents. themes: general topics, e.g. ['planetary moons', 'space telescopes']."""
        return search(query, themes=themes)

    def hybrid_search(query: str, keywords: Optional[List[str]] = None,
                      themes: Optional[List[str]] = None) -> str:
        """Both local_search and global_search at once: specific entity names (keywords) and
        broad topics (themes)."""
        return search(query, keywords=keywords, themes=themes)

    def naive_search(query: str) -> str:
        """Find the text passages most similar to the query (plain vector search, no graph)."""
        return search(query)

    def mix_search(query: str) -> str:
        """Search everything at once: entities, relations and the most similar passages. A good
        first search for any question."""
        return search(query)

    tools = {"local": local_search, "global": global_search, "hybrid": hybrid_search,
             "naive": naive_search, "mix": mix_search}
    return tools[mode]


def graph_rag_tools(
    rag: Any,
    modes: Sequence[str] = GRAPH_MODES,
    max_tokens: int = 600,
    **query_overrides: Any,
) -> List[FunctionTool]:
    """Offer graph-RAG query modes as tools: ``local_search(query, keywords)``,
    ``global_search(query, themes)``, ``hybrid_search(query, keywords, themes)``,
    ``naive_search(query)`` and ``mix_search(query)``.

    Args:
        rag: a :class:`~lightrag.components.graph_rag.GraphRAG` (anything with its ``query``).
        modes: which modes to offer, in this order.
        max_tokens: the token budget of each tool's returned context.
        query_overrides: ``QueryParam`` fields for every query (``top_k=10``, ``chunk_top_k=3``).

    Raises:
        ValueError: for a mode that is not one of :data:`GRAPH_MODES`.

    Example:
        >>> class FakeRAG:
        ...     def query(self, query, **kwargs):
        ...         from types import SimpleNamespace
        ...         return SimpleNamespace(raw_data={"chunks": [
        ...             {"reference_id": "1", "file_path": "a.md", "content": "Titan orbits Saturn."}]})
        >>> tool = graph_rag_tools(FakeRAG(), modes=["naive"])[0]
        >>> print(tool.call("Titan").output)
        Sources:
        [1] a.md: Titan orbits Saturn.
    """
    unknown = [mode for mode in modes if mode not in GRAPH_MODES]
    if unknown:
        raise ValueError(f"unknown graph-RAG modes {unknown}; use some of {GRAPH_MODES}")
    if max_tokens < 50:
        raise ValueError(f"max_tokens must be at least 50, got {max_tokens}")
    return [FunctionTool(_graph_tool(rag, mode, max_tokens, query_overrides)) for mode in modes]


def _doc_text_and_label(doc: Any, index: int) -> Tuple[str, str]:
    if isinstance(doc, str):
        return doc, f"doc {index}"
    text = getattr(doc, "text", None) or getattr(doc, "content", None) or str(doc)
    meta = getattr(doc, "meta_data", None) or {}
    label = next((str(meta[k]) for k in ("title", "file_path", "source") if meta.get(k)), None)
    return str(text), label or f"doc {index}"


def retriever_tool(
    retriever: Retriever,
    name: str = "search",
    description: Optional[str] = None,
    top_k: Optional[int] = None,
    max_tokens: int = 600,
    documents: Optional[Sequence[Any]] = None,
) -> FunctionTool:
    """Offer a retriever as a tool ``name(query)`` returning its top passages, numbered.

    Args:
        retriever: any :class:`~lightrag.core.retriever.Retriever`.
        name: the tool's name (a Python identifier), as the model will call it.
        description: the docstring the model reads (a generic one by default).
        top_k: passages per query (the retriever's own default when None).
        max_tokens: the token budget of the returned text.
        documents: the indexed documents, for retrievers whose outputs carry only indices.

    Raises:
        ValueError: when ``name`` is not a valid identifier.
    """
    if not name.isidentifier():
        raise ValueError(f"tool name must be a Python identifier, got {name!r}")

    def search(query: str) -> str:
        outputs = retriever(query, top_k=top_k)
        output = outputs[0] if outputs else None
        if output is None or not output.doc_indices:
            return f"No results for {query!r}."
        docs = output.documents
        lines = []
        for rank, index in enumerate(output.doc_indices, start=1):
            if docs is not None and rank - 1 < len(docs):
                doc = docs[rank - 1]
            elif documents is not None and 0 <= index < len(documents):
                doc = documents[index]
            else:
                doc = f"(document {index}: text not available)"
            text, label = _doc_text_and_label(doc, index)
            lines.append(f"[{rank}] {label}: {_one_line(text)}")
        return "\n".join(_fit(lines, max_tokens)[0])

    search.__name__ = search.__qualname__ = name
    search.__doc__ = description or (
        "Search the document collection for passages relevant to the query; returns the top "
        "passages, numbered."
    )
    return FunctionTool(search)
