"""Graph-RAG query modes and retrievers as agent tools, on a small offline GraphRAG."""

import json

import pytest
from graph_fakes import fake_graph_rag
from sample_corpus import space_docs

from lightrag.components.agent import ReActAgent, graph_rag_tools, retriever_tool
from lightrag.components.agent.rag_tools import format_graph_context
from lightrag.components.model_client import ScriptedClient
from lightrag.components.retriever import BM25Retriever
from lightrag.core import Embedder
from lightrag.core.retriever import Retriever
from lightrag.core.tokenizer import count_tokens
from lightrag.core.types import Document, RetrieverOutput

DOCS = space_docs(2)


def build_rag(path):
    return fake_graph_rag(path, chunk_tokens=60)


@pytest.fixture(scope="module")
def rag(tmp_path_factory):
    rag = build_rag(tmp_path_factory.mktemp("graph"))
    rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    return rag


def test_each_mode_is_a_tool_with_a_docstring(rag):
    tools = graph_rag_tools(rag)
    names = [tool.definition.func_name for tool in tools]
    assert names == ["local_search", "global_search", "hybrid_search", "naive_search", "mix_search"]
    local = tools[0].definition
    assert local.func_desc.startswith("local_search(query: str, keywords: Optional[List[str]] = None)")
    assert "entities" in local.func_desc and local.func_parameters["required"] == ["query"]
    assert "themes" in tools[1].definition.func_parameters["properties"]
    with pytest.raises(ValueError, match="unknown graph-RAG modes"):
        graph_rag_tools(rag, modes=["bypass"])


def test_local_search_returns_entities_relations_and_numbered_sources(rag):
    local = graph_rag_tools(rag, modes=["local"])[0]
    out = local.call(query="Which moon did Voyager 1 photograph?", keywords=["Voyager 1", "Titan"])
    assert out.error is None
    text = out.output
    assert text.startswith("Entities:\n- Voyager 1 (concept): NASA launched Voyager 1 in 1977. [1]")
    titan = next(line for line in text.splitlines() if line.startswith("- Titan (concept): "))
    # the merger's description order is its own business: both sources are cited on the line
    assert "Voyager 1 photographed Titan" in titan and titan.endswith(("[1][2]", "[2][1]"))
    assert "Relations:" in text and "Sources:" in text
    assert "[1] voyager.md: NASA launched Voyager 1" in text and "[2] cassini.md: " in text
    assert "<SEP>" not in text
    string_keywords = local.call(query="Titan", keywords="Titan, Saturn").output
    assert "Titan" in string_keywords


def test_other_modes_and_the_token_budget(rag):
    tools = {t.definition.func_name: t for t in graph_rag_tools(rag, max_tokens=80)}
    for name in ["naive_search", "mix_search", "hybrid_search"]:
        text = tools[name].call(query="Saturn Titan Voyager").output
        assert "Sources:" in text, name
        assert count_tokens(text) <= 80, name
    assert tools["global_search"].call(query="missions", themes=["Saturn"]).error is None
    with pytest.raises(ValueError, match="at least 50"):
        graph_rag_tools(rag, max_tokens=10)


def test_empty_index_and_failing_queries_are_reported(tmp_path):
    empty = build_rag(tmp_path)
    out = graph_rag_tools(empty, modes=["mix"])[0].call(query="Titan")
    assert out.output.startswith("No results for 'Titan' with mix_search")
    failing = graph_rag_tools(empty, modes=["naive"])[0].call(query="   ")
    assert failing.output is None and "non-empty" in failing.error


def test_format_graph_context_cites_every_file():
    raw = {"entities": [{"entity_name": "Titan", "entity_type": "moon",
                         "description": "A moon.<SEP>Has lakes.", "file_path": "a.md<SEP>b.md"}],
           "relationships": [], "chunks": [{"reference_id": "1", "file_path": "a.md",
                                            "content": "Titan is a moon."}],
           "references": [{"reference_id": "1", "file_path": "a.md"},
                          {"reference_id": "2", "file_path": "b.md"}]}
    assert format_graph_context(raw).splitlines() == [
        "Entities:", "- Titan (moon): A moon. Has lakes. [1][2]", "Sources:", "[1] a.md: Titan is a moon."]
    assert format_graph_context({}) == ""


def test_agent_uses_graph_tools(rag):
    client = ScriptedClient(responses=[
        json.dumps({"thought": "Look up Titan.",
                    "action": "local_search(query='Titan', keywords=['Titan'])"}),
        json.dumps({"thought": "Found it.", "action": "finish(answer='Voyager 1 photographed Titan.')"}),
    ])
    agent = ReActAgent(tools=graph_rag_tools(rag, modes=["local", "mix"]), model_client=client,
                       add_llm_as_fallback=False)
    run = agent.run("Which spacecraft photographed Titan?")
    assert run.stopped_reason == "finish" and run.answer == "Voyager 1 photographed Titan."
    assert "Titan" in run.steps[0].observation
    assert "Observation: Entities:" in client.requests[1]["prompt"]
    tree = repr(agent)
    assert "(local_search): FunctionTool(fn=local_search" in tree
    assert "(mix_search): FunctionTool(fn=mix_search" in tree and "GraphRAG(" not in tree


def test_retriever_tool_over_bm25_and_documents():
    docs = [Document(text="Titan has methane lakes.", meta_data={"title": "Titan"}),
            Document(text="Io has volcanoes.", meta_data={"title": "Io"}),
            Document(text="Mars is red.", meta_data={})]
    bm25 = BM25Retriever(top_k=2, documents=docs, document_map_func=lambda d: d.text)
    tool = retriever_tool(bm25, name="search_moons", description="Search notes about moons.")
    assert tool.definition.func_name == "search_moons"
    assert tool.definition.func_desc == "search_moons(query: str) -> str\nSearch notes about moons."
    text = tool.call(query="methane lakes").output
    assert text.splitlines()[0] == "[1] Titan: Titan has methane lakes."
    with pytest.raises(ValueError, match="identifier"):
        retriever_tool(bm25, name="search moons")


def test_retriever_tool_with_index_only_outputs():
    class IndexOnly(Retriever):
        def call(self, input, top_k=None, **kwargs):
            return [RetrieverOutput(doc_indices=[2, 0][: top_k or 2], query=input)]

    texts = ["alpha text", "beta text", "gamma text"]
    tool = retriever_tool(IndexOnly(), top_k=2, documents=texts)
    assert tool.definition.func_name == "search" and "Search the document" in tool.definition.func_desc
    assert tool.call("x").output == "[1] doc 2: gamma text\n[2] doc 0: alpha text"
    no_docs = retriever_tool(IndexOnly(), name="lookup")
    assert "text not available" in no_docs.call("x").output

    class Empty(Retriever):
        def call(self, input, top_k=None, **kwargs):
            return [RetrieverOutput(doc_indices=[], query=input)]

    assert retriever_tool(Empty()).call("q").output == "No results for 'q'."


def _each_retriever():
    """One of every built-in retriever over the same three moon notes (offline fakes)."""
    from lightrag.components.retriever import (
        CrossEncoderReranker,
        FAISSRetriever,
        HybridRetriever,
        LLMRetriever,
        NumpyRetriever,
        RerankerRetriever,
    )

    texts = ["Titan has methane lakes.", "Io has active volcanoes.", "Mars is the red planet."]
    embedder = Embedder(model_client=ScriptedClient(embedding_dim=256))

    class WordOverlap:
        def predict(self, pairs):
            return [len(set(q.lower().split()) & set(d.lower().split())) for q, d in pairs]

    return texts, {
        "BM25Retriever": BM25Retriever(top_k=1, documents=texts),
        "NumpyRetriever": NumpyRetriever(embedder=embedder, top_k=1, documents=texts),
        "FAISSRetriever": FAISSRetriever(embedder=embedder, top_k=1, documents=texts),
        "HybridRetriever": HybridRetriever(
            [BM25Retriever(documents=texts), NumpyRetriever(embedder=embedder, documents=texts)],
            top_k=1),
        "LLMRetriever": LLMRetriever(
            top_k=1, model_client=ScriptedClient(responses=["[0]"], cycle=True), documents=texts),
        "RerankerRetriever": RerankerRetriever(BM25Retriever(documents=texts),
                                               CrossEncoderReranker(model_obj=WordOverlap()),
                                               top_k=1),
    }


def test_every_retriever_can_be_an_agent_tool():
    texts, retrievers = _each_retriever()
    for name, retriever in retrievers.items():
        if name == "RerankerRetriever":
            retriever.build_index_from_documents(texts)
        tool = retriever_tool(retriever, name="search_moons",
                              description="Search the notes about moons and planets.")
        assert tool.definition.func_desc.endswith("Search the notes about moons and planets.")
        out = tool.call(query="Titan methane lakes")
        assert out.error is None, (name, out.error)
        assert out.output == "[1] doc 0: Titan has methane lakes.", (name, out.output)
        client = ScriptedClient(responses=[
            json.dumps({"thought": "Search.", "action": "search_moons(query='Titan lakes')"}),
            json.dumps({"thought": "Done.", "action": "finish(answer='methane')"}),
        ])
        agent = ReActAgent(tools=[tool], model_client=client, add_llm_as_fallback=False)
        assert agent("What are Titan's lakes made of?") == "methane", name
        assert agent.step_history[0].observation.startswith("[1] doc 0: Titan"), name
