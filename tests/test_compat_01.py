"""lightrag 0.1's documented examples, run unchanged against this package with a scripted client.

Each test is a program in the style of 0.1's tutorials (prompt, generator, parsers, embedder,
retrievers, text splitter, LocalDB, tools, ReAct, evaluation, tracing, save/restore), written from
0.1's documented behaviour; only the model client is replaced by :class:`ScriptedClient` (or by
a fake provider SDK), so no network or key is needed.
"""

from __future__ import annotations

import json
import os
import sys
import types
from copy import deepcopy
from dataclasses import dataclass, field
from types import SimpleNamespace as NS
from typing import List
from unittest import mock

import numpy as np
import pytest

from lightrag.components.model_client import ScriptedClient


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# ------------------------------------------------------------------------------------ prompt


def test_prompt_tutorial():
    from lightrag.core.prompt_builder import Prompt

    template = r"""<SYS>{{ task_desc_str }}</SYS>
{# tools #}
{% if tools %}
<TOOLS>
{% for tool in tools %}
{{loop.index}}. {{ tool }}
{% endfor %}
</TOOLS>
{% endif %}
User: {{ input_str }}"""
    prompt = Prompt(template=template, prompt_kwargs={"task_desc_str": "You are a helpful assitant"})
    text = prompt(input_str="What is the capital of France?",
                  tools=["google_search", "wikipedia_search"])
    assert "<SYS>You are a helpful assitant</SYS>" in text
    assert "1. google_search" in text and "2. wikipedia_search" in text
    assert text.strip().endswith("User: What is the capital of France?")


def test_default_prompt_template_variables():
    from lightrag.core import DEFAULT_LIGHTRAG_SYSTEM_PROMPT, Prompt

    prompt = Prompt(template=DEFAULT_LIGHTRAG_SYSTEM_PROMPT)
    for name in ("task_desc_str", "tools_str", "input_str"):
        assert name in prompt.get_prompt_variables()
    assert "What is LLM?" in prompt(input_str="What is LLM?")


# --------------------------------------------------------------------------------- generator


def test_generator_tutorial_with_model_client_type(monkeypatch):
    from lightrag.core import Generator, GeneratorOutput
    from lightrag.core.types import ModelClientType

    assert ModelClientType.OPENAI.__name__ == "OpenAIClient"
    client = ScriptedClient(responses=["LLM stands for Large Language Model."])
    generator = Generator(model_client=client, model_kwargs={"model": "gpt-3.5-turbo"})
    out = generator(prompt_kwargs={"input_str": "What is LLM? Explain in one sentence."})
    assert isinstance(out, GeneratorOutput) and out.error is None
    assert out.data == "LLM stands for Large Language Model."
    assert "What is LLM?" in client.requests[0]["prompt"]
    assert generator.template and "input_str" in generator.template
    assert "hi" in generator.print_prompt(input_str="hi")


def test_generator_errors_are_data_not_exceptions():
    from lightrag.core import Generator

    gen = Generator(model_client=ScriptedClient(responses=[RuntimeError("rate limited")]))
    out = gen(prompt_kwargs={"input_str": "x"})
    assert out.data is None and "rate limited" in out.error


def test_generator_with_a_component_in_prompt_kwargs_and_state_dict():
    from lightrag.core import Component, Generator, Parameter

    class Helper(Component):
        def call(self, x):
            return x

        def __str__(self):
            return "helper"

    gen = Generator(model_client=ScriptedClient(responses=["ok"]), template="{{h}} {{q}}",
                    prompt_kwargs={"h": Helper(), "q": Parameter(data="question")})
    assert gen({}).data == "ok"
    assert isinstance(gen.state_dict()["q"], Parameter)


# ----------------------------------------------------------------------------------- parsers


def test_string_parsers_tutorial():
    from lightrag.core.string_parser import BooleanParser, IntParser, JsonParser, ListParser

    assert JsonParser()('Here you go: {"name": "John", "age": 30}') == {"name": "John", "age": 30}
    assert ListParser()('["a", "b", "c"]') == ["a", "b", "c"]
    assert IntParser()("The answer is 42.") == 42
    assert BooleanParser()("True") is True


def test_output_parser_with_dataclass_tutorial():
    from lightrag.components.output_parsers import JsonOutputParser
    from lightrag.core import DataClass, Generator

    @dataclass
    class User(DataClass):
        id: int = field(default=1, metadata={"desc": "The id of the user"})
        name: str = field(default="John", metadata={"desc": "The name of the user"})

    parser = JsonOutputParser(data_class=User, examples=[User(id=1, name="John")])
    assert "name" in parser.format_instructions()
    gen = Generator(model_client=ScriptedClient(responses=['{"id": 2, "name": "Ada"}']),
                    template="{{output_format_str}} {{input_str}}",
                    prompt_kwargs={"output_format_str": parser.format_instructions()},
                    output_processors=parser)
    data = gen({"input_str": "Who?"}).data
    assert data == {"id": 2, "name": "Ada"} or data == User(id=2, name="Ada")


def test_functional_helpers():
    from lightrag.core.functional import (
        extract_json_str,
        get_top_k_indices_scores,
        normalize_vector,
        parse_json_str_to_obj,
    )

    assert extract_json_str('The result: {"a": 1}. Done') == '{"a": 1}'
    assert parse_json_str_to_obj('{"a": 1,}') == {"a": 1}
    assert normalize_vector([3, 4]) == pytest.approx([0.6, 0.8])
    assert get_top_k_indices_scores([0.1, 0.5, 0.3], 2) == ([1, 2], [0.5, 0.3])


# ---------------------------------------------------------------------------------- embedder


def test_embedder_tutorial_with_an_output_processor():
    from lightrag.core import Component, Embedder
    from lightrag.core.functional import normalize_vector
    from lightrag.core.types import Embedding

    class DecreaseEmbeddingDim(Component):
        """0.1's tutorial processor: it gets the list of Embeddings."""

        def __init__(self, old_dim: int, new_dim: int, normalize: bool = True):
            super().__init__()
            self.old_dim, self.new_dim, self.normalize = old_dim, new_dim, normalize

        def call(self, input: List[Embedding]) -> List[Embedding]:
            output = deepcopy(input)
            for embedding in output:
                new = embedding.embedding[: self.new_dim]
                embedding.embedding = normalize_vector(new) if self.normalize else new
            return output

    embedder = Embedder(model_client=ScriptedClient(embedding_dim=64),
                        model_kwargs={"model": "text-embedding-3-small"},
                        output_processors=DecreaseEmbeddingDim(64, 16))
    out = embedder(["What is LLM?", "What is RAG?"])
    assert out.error is None and len(out.data) == 2
    assert out.embedding_dim == 16
    norms = [np.linalg.norm(e.embedding) for e in out.data]
    assert all(n == pytest.approx(1.0) or n == 0.0 for n in norms)
    single = embedder("What is LLM?")
    assert len(single.data) == 1


def test_batch_embedder():
    from lightrag.core import BatchEmbedder, Embedder

    batch = BatchEmbedder(embedder=Embedder(model_client=ScriptedClient()), batch_size=2)
    outs = batch(["a", "b", "c"])
    assert len(outs) == 2 and sum(len(o.data) for o in outs) == 3


# -------------------------------------------------------------------------------- retrievers


QUERY_DOCS = [
    "The Eiffel Tower is in Paris, France.",
    "Pandas are native to China.",
    "The Great Wall stretches across northern China.",
]


def test_faiss_retriever_tutorial():
    from lightrag.components.retriever import FAISSRetriever
    from lightrag.core import Embedder

    embedder = Embedder(model_client=ScriptedClient(), model_kwargs={"model": "m"})
    vectors = [e.embedding for e in embedder(QUERY_DOCS).data]
    retriever = FAISSRetriever(top_k=1, embedder=embedder, documents=vectors)
    out = retriever.retrieve_string_queries(["Where is the Eiffel Tower?"])
    assert out[0].doc_indices == [0]
    out = retriever(["Where do pandas live China"])
    assert out[0].doc_indices[0] == 1


def test_bm25_retriever_tutorial():
    from lightrag.components.retriever import BM25Retriever

    retriever = BM25Retriever(top_k=1, documents=QUERY_DOCS)
    assert retriever.use_tokenizer  # 0.1's default
    out = retriever("How long is the Great Wall?")
    assert out[0].doc_indices == [2]


def test_llm_retriever_and_reranker_retriever(monkeypatch):
    from lightrag.components.model_client import CohereAPIClient
    from lightrag.components.retriever import LLMRetriever, RerankerRetriever

    llm_retriever = LLMRetriever(top_k=1, model_client=ScriptedClient(responses=["[1]"]),
                                 model_kwargs={"model": "gpt-3.5-turbo"}, documents=QUERY_DOCS)
    assert llm_retriever("Pandas?")[0].doc_indices == [1]

    reply = NS(results=[NS(index=1, relevance_score=0.9)])
    fake = types.ModuleType("cohere")
    fake.Client = lambda **kw: NS(rerank=lambda **req: reply)
    monkeypatch.setitem(sys.modules, "cohere", fake)
    reranker = RerankerRetriever(top_k=1, model_client=CohereAPIClient(api_key="k"),
                                 model_kwargs={"model": "rerank-english-v3.0"},
                                 documents=QUERY_DOCS)
    out = reranker("pandas")
    assert out[0].doc_indices == [1] and out[0].doc_scores == [0.9]


# ----------------------------------------------------------------------------- text splitter


def test_text_splitter_tutorial():
    from lightrag.components.data_process import TextSplitter
    from lightrag.core.types import Document

    splitter = TextSplitter(split_by="word", chunk_size=5, chunk_overlap=1)
    doc = Document(text="Example text. More example text. Even more text to illustrate.", id="doc1")
    chunks = splitter.call(documents=[doc])
    assert [c.text.strip() for c in chunks] == [
        "Example text. More example text.",
        "text. Even more text to",
        "to illustrate.",
    ]
    assert all(c.parent_doc_id == "doc1" for c in chunks)
    assert [c.order for c in chunks] == [0, 1, 2]


# ----------------------------------------------------------------------------------- LocalDB


def test_local_db_tutorial():
    from lightrag.components.data_process import TextSplitter
    from lightrag.core import LocalDB, Sequential
    from lightrag.core.types import Document

    db = LocalDB()
    db.load([Document(text="one two three four five six", id="a"),
             Document(text="seven eight nine ten", id="b")])
    key = "split"
    db.transform(Sequential(TextSplitter(split_by="word", chunk_size=3, chunk_overlap=0)),
                 key=key)
    assert len(db.get_transformed_data(key)) == 4
    db.save_state("index.pkl")
    restored = LocalDB.load_state("index.pkl")
    assert restored.length == 2 and len(restored.get_transformed_data(key)) == 4
    db2 = LocalDB(items=[1, 2], transformed_items={"x": [10, 20]})
    assert db2.get_transformed_data("x") == [10, 20]


# -------------------------------------------------------------------------------------- tools


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


async def async_add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_function_tool_and_tool_manager_tutorial():
    from lightrag.core import FunctionTool, ToolManager
    from lightrag.core.types import Function, FunctionExpression

    tool = FunctionTool(fn=multiply)
    assert tool.definition.func_name == "multiply"
    out = tool(2, b=3)
    assert out.output == 6 and out.input.args == (2,)
    manager = ToolManager(tools=[multiply, async_add])
    assert manager.execute_func(Function(name="multiply", args=[2, 3])).output == 6
    expr = FunctionExpression(action="multiply(a=2, b=3)")
    assert manager.execute_func_expr(expr).output == 6
    assert manager.execute_func_expr_via_eval(expr).output.output == 6
    assert manager(expr_or_fun=expr, step="execute").output == 6
    assert manager.execute_func(Function(name="async_add", args=[1, 2])).output == 3


# -------------------------------------------------------------------------------------- ReAct


def test_react_agent_tutorial():
    from lightrag.components.agent import ReActAgent

    replies = ['{"thought": "I multiply.", "action": "multiply(a=3, b=4)"}',
               '{"thought": "I have it.", "action": "finish(answer=\'12\')"}']
    agent = ReActAgent(tools=[multiply], max_steps=3, add_llm_as_fallback=False,
                       model_client=ScriptedClient(responses=replies),
                       model_kwargs={"model": "gpt-3.5-turbo"})
    agent.planner.print_prompt()
    assert agent.call("What is 3 * 4?") == "12"
    # observations are the text the model reads (0.1 kept the raw value: a documented difference)
    assert agent.step_history[0].observation == "12"
    agent.reset()
    assert agent.step_history == []


# --------------------------------------------------------------------------------- evaluation


def test_evaluation_tutorial():
    from lightrag.eval import AnswerMatchAcc, LLMasJudge, RetrieverRecall, RetrieverRelevance

    acc, per_item = AnswerMatchAcc(type="exact_match").compute(
        pred_answers=["positive", "negative", "neutral"],
        gt_answers=["positive", "negative", "positive"])
    assert acc == pytest.approx(2 / 3) and per_item == [1.0, 1.0, 0.0]
    fuzzy, _ = AnswerMatchAcc(type="fuzzy_match").compute(["the answer is Paris"], ["Paris"])
    assert fuzzy == 1.0
    recall, _ = RetrieverRecall().compute(
        retrieved_contexts=["Apple was founded in 1976. Steve Jobs founded it."],
        gt_contexts=[["Apple was founded in 1976.", "It is in Cupertino."]])
    assert recall == 0.5
    relevance, _ = RetrieverRelevance().compute(
        retrieved_contexts=["Apple was founded in 1976."],
        gt_contexts=[["Apple was founded in 1976."]])
    assert relevance == 1.0
    from lightrag.eval.llm_as_judge import DefaultLLMJudge

    evaluator = DefaultLLMJudge(model_client=ScriptedClient(responses=["true", "false"]))
    judge = LLMasJudge(llm_evaluator=evaluator)
    avg, per = judge.compute(questions=["Capital of France?", "Capital of Italy?"],
                             pred_answers=["Paris", "Berlin"], gt_answers=["Paris", "Rome"])
    assert avg == 0.5 and per == [True, False]


# ------------------------------------------------------------------------------------ tracing


def test_tracing_tutorial():
    from lightrag.core import Component, Generator
    from lightrag.tracing import trace_generator_call, trace_generator_states
    from lightrag.tracing.generator_call_logger import GeneratorCallLogger  # noqa: F401
    from lightrag.tracing.generator_state_logger import GeneratorStateLogger  # noqa: F401

    @trace_generator_states()
    @trace_generator_call(error_only=False)
    class DocQA(Component):
        def __init__(self):
            super().__init__()
            self.generator = Generator(
                model_client=ScriptedClient(responses=["42"]), template="Q: {{input_str}}")

        def call(self, query: str) -> str:
            return self.generator(prompt_kwargs={"input_str": query}).data

    qa = DocQA()
    assert qa("What is the answer?") == "42"
    state_file = qa.generator_logger.get_log_location()
    assert os.path.exists(state_file)
    assert "Q: {{input_str}}" in open(state_file).read()
    with open(qa.generator_call_logger.get_log_location("generator")) as f:
        record = json.loads(f.readline())
    assert record["output"]["data"] == "42"


# ------------------------------------------------------------------------------ save/restore


def test_component_save_and_restore():
    from lightrag.core import Component, Generator
    from lightrag.utils import load, load_json, save, save_json

    class QA(Component):
        def __init__(self):
            super().__init__()
            self.generator = Generator(model_client=ScriptedClient(responses=["A"], cycle=True),
                                       template="{{q}}")

        def call(self, q):
            return self.generator({"q": q}).data

    qa = QA()
    restored = QA.from_dict(qa.to_dict())
    assert restored("x") == "A"
    qa.pickle_to_file("qa.pkl")
    assert QA.load_from_pickle("qa.pkl")("y") == "A"
    assert qa.is_picklable()
    save_json(qa.to_dict(), f="qa.json")
    assert load_json(f="qa.json")["type"] == "QA"
    save({"a": 1}, f="task")
    assert load(f="task") == ({"a": 1}, {"a": 1})
    assert load_json("missing.json") is None


def test_patching_call_works_as_in_0_1():
    from lightrag.core import Component

    class Step(Component):
        def call(self, x):
            return x + 1

    step = Step()
    with mock.patch.object(Step, "call", return_value=0):
        assert step(1) == 0
    assert step(1) == 2


def test_rag_tutorial_data_pipeline():
    """0.1's RAG tutorial: LocalDB + Sequential(TextSplitter, ToEmbeddings) -> FAISS -> context."""
    from lightrag.components.data_process import (
        RetrieverOutputToContextStr,
        TextSplitter,
        ToEmbeddings,
    )
    from lightrag.components.retriever import FAISSRetriever
    from lightrag.core import Embedder, Generator, LocalDB, Sequential
    from lightrag.core.types import Document

    embedder = Embedder(model_client=ScriptedClient(), model_kwargs={"model": "m"})
    data_transformer = Sequential(TextSplitter(split_by="word", chunk_size=6, chunk_overlap=0),
                                  ToEmbeddings(embedder=embedder, batch_size=2))
    db = LocalDB()
    db.load([Document(text=" ".join(QUERY_DOCS), id="doc")])
    db.transform(data_transformer, key="data_transformer")
    chunks = db.get_transformed_data("data_transformer")
    assert len(chunks) == 4 and all(len(c.vector) == 64 for c in chunks)  # 21 words / 6
    retriever = FAISSRetriever(top_k=2, embedder=embedder, documents=chunks,
                               document_map_func=lambda doc: doc.vector)
    out = retriever("Where do pandas live?")
    out[0].documents = [chunks[i] for i in out[0].doc_indices]
    context = RetrieverOutputToContextStr(deduplicate=True)(out)
    assert context and all(chunks[i].text in context for i in out[0].doc_indices)
    generator = Generator(model_client=ScriptedClient(responses=["China."]),
                          template="Context: {{context_str}}\nQ: {{input_str}}")
    answer = generator(prompt_kwargs={"context_str": context, "input_str": "Pandas?"})
    assert answer.data == "China."
