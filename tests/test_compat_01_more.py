"""lightrag 0.1 behaviour found by a second round of 0.1 programs run on both packages
(Sequential, state_dict, retrievers, Embedder, Prompt printing, TextSplitter units, tool schemas,
error types). Each expected value is what lightrag 0.1.0b6 gives for the same code."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any, List, Optional

import numpy as np
import pytest

from lightrag.components.data_process import TextSplitter, ToEmbeddings
from lightrag.components.model_client import ScriptedClient
from lightrag.components.retriever import BM25Retriever, FAISSRetriever, HybridRetriever
from lightrag.components.retriever._common import top_k_indices, top_k_rows
from lightrag.core import Component, Embedder, Parameter, Sequential
from lightrag.core.component import FunComponent
from lightrag.core.default_prompt_template import SIMPLE_DEFAULT_LIGHTRAG_SYSTEM_PROMPT
from lightrag.core.func_tool import FunctionTool
from lightrag.core.model_client import ModelClient
from lightrag.core.prompt_builder import Prompt
from lightrag.core.retriever import Retriever
from lightrag.core.types import EmbedderOutput, Embedding, ModelType, RetrieverOutput
from lightrag.utils.logger import get_logger


# ------------------------------------------------------------------------------- Sequential
def add1(x: int) -> int:
    return x + 1


def times10(x: int) -> int:
    return x * 10


def sub5(x: int) -> int:
    return x - 5


def test_sequential_setitem_replaces_the_step_in_place():
    seq = Sequential(FunComponent(add1), FunComponent(times10), FunComponent(sub5))
    seq[0] = FunComponent(add1)
    assert (seq(1), list(seq._components)) == (15, ["0", "1", "2"])
    seq["1"] = FunComponent(times10)
    assert (seq(1), list(seq._components)) == (15, ["0", "1", "2"])
    seq[-1] = FunComponent(add1)
    assert (seq(1), list(seq._components)) == (21, ["0", "1", "2"])
    with pytest.raises(IndexError):
        seq[3] = FunComponent(add1)
    with pytest.raises(TypeError):
        seq[0] = add1


def test_reassigning_a_child_attribute_keeps_its_place():
    named = Sequential(OrderedDict([("first", FunComponent(add1)), ("second", FunComponent(times10))]))
    named.first = FunComponent(sub5)
    assert list(named._components) == ["first", "second"] and named(1) == -40


class AsyncCallDouble(Component):
    async def call(self, x: int) -> int:
        await asyncio.sleep(0)
        return x * 2


class AsyncDouble(Component):
    def call(self, x: int) -> int:
        return x * 2

    async def acall(self, x: int) -> int:
        await asyncio.sleep(0)
        return x * 2


def test_sequential_acall_awaits_an_async_def_call():
    assert asyncio.run(Sequential(AsyncCallDouble(), AsyncCallDouble()).acall(3)) == 12
    assert asyncio.run(AsyncCallDouble().acall(4)) == 8
    assert asyncio.run(Sequential(AsyncDouble(), AsyncCallDouble()).acall(3)) == 12
    assert asyncio.run(Sequential(FunComponent(add1), AsyncDouble()).acall(3)) == 8


# ------------------------------------------------------------------------------- state_dict
class Scale(Component):
    def __init__(self, factor: float = 2.0) -> None:
        super().__init__()
        self.factor = Parameter(data=factor)

    def call(self, x: float) -> float:
        return x * self.factor.data


class Aliased(Component):
    def __init__(self) -> None:
        super().__init__()
        self.instruction = Parameter(data="be nice")
        self.pre = Sequential(Scale(3.0))
        self.shared = self.pre

    def call(self, x: float) -> float:
        return self.shared(x)


def test_state_dict_lists_an_aliased_child_under_both_names_with_metadata():
    al = Aliased()
    state = al.state_dict()
    assert list(state) == ["instruction", "pre.0.factor", "shared.0.factor"]
    assert state["pre.0.factor"] is state["shared.0.factor"]
    assert dict(state._metadata) == {
        "": {"version": 1}, "pre": {"version": 1}, "pre.0": {"version": 1},
        "shared": {"version": 1}, "shared.0": {"version": 1},
    }
    assert [n for n, _ in al.named_parameters()] == ["instruction", "pre.0.factor"]


def test_load_state_dict_takes_01s_layout_and_the_deduplicated_one():
    al = Aliased()
    al.load_state_dict({"instruction": "x", "pre.0.factor": 4.0, "shared.0.factor": 4.0})
    assert al.pre[0].factor.data == 4.0
    al.load_state_dict({"instruction": "y", "pre.0.factor": 5.0})  # one name per Parameter
    assert al.pre[0].factor.data == 5.0
    al.load_state_dict({"instruction": "z", "shared.0.factor": 6.0})
    assert al.pre[0].factor.data == 6.0
    with pytest.raises(RuntimeError, match="missing keys"):
        al.load_state_dict({"instruction": "z"})
    result = Aliased().load_state_dict(al.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []


def test_load_state_dict_of_a_non_mapping_is_a_type_error():
    with pytest.raises(TypeError, match="mapping"):
        Aliased().load_state_dict([1, 2])


# ---------------------------------------------------------------------------- error types
def test_bad_child_and_parameter_names_are_value_errors_and_key_errors():
    comp = Aliased()
    for call in (
        lambda: comp.add_component("a.b", Scale()),
        lambda: comp.add_component("", Scale()),
        lambda: comp.register_component("a.b", Scale()),
        lambda: comp.register_parameter("x.y", Parameter(data=1)),
        lambda: comp.register_parameter("", Parameter(data=1)),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, KeyError)
        assert "'" not in str(info.value)[:1]  # a readable message, not KeyError's repr


def test_get_logger_with_an_unknown_level_falls_back_to_info(caplog):
    with caplog.at_level(logging.WARNING, logger="lightrag.utils.logger"):
        logger = get_logger(name="compat-loud", level="LOUD", enable_console=False)
    assert logger.level == logging.INFO
    assert any("LOUD" in m for m in caplog.messages)
    assert get_logger(name="compat-warn", level="warn", enable_console=False).level == logging.WARNING
    assert get_logger(name="compat-num", level=logging.DEBUG, enable_console=False).level == logging.DEBUG


# -------------------------------------------------------------------------------- top-k ties
def test_top_k_indices_breaks_ties_at_the_cut_off_by_the_lowest_index():
    assert top_k_indices(np.zeros(5), 2).tolist() == [0, 1]
    assert top_k_indices(np.array([0.375, 0.0, 0.375, 0.0, 0.0]), 3).tolist() == [0, 2, 1]
    rng = np.random.default_rng(3)
    for _ in range(300):
        n, k = int(rng.integers(1, 30)), int(rng.integers(1, 32))
        scores = rng.integers(0, 3, size=(3, n)).astype(np.float32)
        expected = [np.argsort(-row, kind="stable")[:k].tolist() for row in scores]
        assert [top_k_indices(row, k).tolist() for row in scores] == expected
        indices, values = top_k_rows(scores, k)
        assert indices.tolist() == expected
        assert values.tolist() == [row[i].tolist() for row, i in zip(scores, indices)]


def test_bm25_ties_go_to_the_lowest_index_as_in_01():
    bt = BM25Retriever(top_k=2, documents=["apple pie", "cherry tart", "apple pie", "plum cake", "fig jam"])
    assert bt("zebra")[0].doc_indices == [0, 1]
    assert bt("apple", top_k=3)[0].doc_indices == [0, 2, 1]
    bm = BM25Retriever(top_k=2, documents=["red green blue", "green grass", "blue sky"])
    assert bm("sky")[0].documents == ["blue sky", "red green blue"]


# ---------------------------------------------------------------------------------- BM25
def test_bm25_building_from_no_documents_raises_and_keeps_the_index():
    bm = BM25Retriever(top_k=1, documents=["red green blue", "green grass", "blue sky"])
    with pytest.raises(AssertionError, match="documents should not be empty"):
        bm.build_index_from_documents([])
    with pytest.raises(ValueError):
        bm.build_index_from_documents([])
    assert bm("grass")[0].doc_indices == [1]
    assert not BM25Retriever(documents=[]).indexed


def test_bm25_document_map_func_must_return_a_string():
    bm = BM25Retriever(top_k=1)
    with pytest.raises(AssertionError, match="should return a string"):
        bm.build_index_from_documents(["a b", "c d"], document_map_func=lambda d: [d])
    assert not bm.indexed
    docs = [{"t": "red apple"}, {"t": "green grass"}, {"t": "blue sky"}]
    bm.build_index_from_documents(docs, document_map_func=lambda d: d["t"])
    assert bm("grass")[0].doc_indices == [1]


# --------------------------------------------------------------------------------- FAISS
class UnitClient(ModelClient):
    """Embeds "q", "a" and "b" as fixed unit vectors; records what it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: List[List[str]] = []

    def convert_inputs_to_api_kwargs(self, input: Any = None, model_kwargs: Any = None,
                                     model_type: ModelType = ModelType.UNDEFINED) -> dict:
        return {"texts": [input] if isinstance(input, str) else list(input)}

    def call(self, api_kwargs: Any = None, model_type: ModelType = ModelType.UNDEFINED) -> Any:
        self.asked.append(api_kwargs["texts"])
        vectors = {"q": [0.6, 0.8], "a": [1.0, 0.0], "b": [0.0, 1.0]}
        return [vectors[t] for t in api_kwargs["texts"]]

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        return EmbedderOutput(data=[Embedding(embedding=v, index=i) for i, v in enumerate(response)])


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_faiss_skips_empty_string_queries(backend):
    client = UnitClient()
    fr = FAISSRetriever(embedder=Embedder(model_client=client), top_k=2,
                        documents=[[1.0, 0.0], [0.0, 1.0]], backend=backend)
    out = fr(["a", "", "b"])
    assert [(o.doc_indices, o.doc_scores, o.query) for o in out] == [
        ([0, 1], [1.0, 0.5], "a"), ([], None, ""), ([1, 0], [1.0, 0.5], "b")]
    assert client.asked == [["a", "b"]]
    assert [(o.doc_indices, o.doc_scores) for o in fr("")] == [([], None)]
    assert client.asked == [["a", "b"]]


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_faiss_cosine_string_queries_score_like_01(backend):
    embedder = Embedder(model_client=UnitClient())
    docs = [[1.0, 0.0], [0.0, 1.0]]
    cos = FAISSRetriever(embedder=embedder, top_k=2, documents=docs, metric="cosine", backend=backend)
    by_text, by_vector = cos("q")[0], cos([[0.6, 0.8]])[0]
    assert by_text.doc_indices == by_vector.doc_indices == [1, 0]
    assert by_text.doc_scores == [0.9, 0.8]  # (cos + 1) / 2, as 0.1 gives string queries
    assert by_vector.doc_scores == pytest.approx([0.8, 0.6])  # vector queries: raw cosine
    prob = FAISSRetriever(embedder=embedder, top_k=2, documents=docs, backend=backend)
    assert prob("q")[0].doc_scores == prob([[0.6, 0.8]])[0].doc_scores == [0.9, 0.8]
    l2 = FAISSRetriever(embedder=embedder, top_k=2, documents=docs, metric="euclidean", backend=backend)
    assert l2("q")[0].doc_scores == pytest.approx([0.4, 0.8])  # distances as they are (compat.md)


# ---------------------------------------------------------------------------- Retriever
class KeywordRetriever(Retriever[str, str]):
    def __init__(self, top_k: int = 1) -> None:
        super().__init__()
        self.top_k = top_k
        self.documents: List[str] = []

    def build_index_from_documents(self, documents, document_map_func=None, **kwargs) -> None:
        self.documents = list(documents)
        self.indexed = True

    def call(self, input, top_k: Optional[int] = None, **kwargs) -> List[RetrieverOutput]:
        queries = [input] if isinstance(input, str) else input
        return [RetrieverOutput(doc_indices=[0], doc_scores=[1.0], query=q) for q in queries]


def test_save_to_file_of_a_user_retriever_is_a_no_op(tmp_path, caplog):
    kr = KeywordRetriever()
    kr.build_index_from_documents(["a b"])
    with caplog.at_level(logging.WARNING):
        assert kr.save_to_file(str(tmp_path / "kr.json")) is None
    assert not (tmp_path / "kr.json").exists()
    assert any("save_to_file" in m for m in caplog.messages)
    bm = BM25Retriever(documents=["red apple", "green grass", "blue sky"])
    bm.save_to_file(tmp_path / "bm25.json")  # our retrievers still save
    assert BM25Retriever.load_from_file(tmp_path / "bm25.json")("grass")[0].doc_indices[0] == 1
    hybrid = HybridRetriever([bm, kr])
    with pytest.raises(NotImplementedError, match="KeywordRetriever"):
        hybrid.save_to_file(tmp_path / "hybrid.json")
    assert not (tmp_path / "hybrid.json").exists()


# ------------------------------------------------------------------------------ Embedder
class FailingClient(ScriptedClient):
    def call(self, api_kwargs: Any = None, model_type: Any = None) -> Any:
        raise RuntimeError("embedding service failed")

    async def acall(self, api_kwargs: Any = None, model_type: Any = None) -> Any:
        raise RuntimeError("embedding service failed")


def test_embedder_lets_model_client_errors_through():
    embedder = Embedder(model_client=FailingClient())
    with pytest.raises(RuntimeError, match="embedding service failed"):
        embedder("hello")
    with pytest.raises(RuntimeError, match="embedding service failed"):
        asyncio.run(embedder.acall(["hello"]))


def test_embedder_output_without_data_has_dimension_minus_one():
    assert EmbedderOutput().embedding_dim == -1
    assert EmbedderOutput(data=[Embedding(embedding=np.zeros(3), index=0)]).embedding_dim == 3


def test_embedder_model_kwargs_must_be_a_dict():
    with pytest.raises(TypeError, match="model_kwargs"):
        Embedder(model_client=ScriptedClient(), model_kwargs="det-1")


def test_to_embeddings_has_its_embedder_as_a_child():
    embedder = Embedder(model_client=ScriptedClient())
    to_embeddings = ToEmbeddings(embedder)
    assert [n for n, _ in to_embeddings.named_children()] == ["embedder", "batch_embedder"]
    assert to_embeddings.embedder is embedder


# -------------------------------------------------------------------------------- Prompt
def test_prompt_print_methods_print_01s_format(capsys):
    prompt = Prompt(template="Hi {{name}}")
    prompt.print_prompt_template()
    assert capsys.readouterr().out == "Template:\n-------\nHi {{name}}\n-------\n"
    assert prompt.print_prompt(name="Bo") == "Hi Bo"
    assert capsys.readouterr().out == "Prompt:\n______________________\nHi Bo\n"


def test_simple_default_template_is_01s():
    text = Prompt(template=SIMPLE_DEFAULT_LIGHTRAG_SYSTEM_PROMPT)(task_desc_str="T", input_str="I")
    assert text == "<SYS>T</SYS>\nUser: I\nYou:"


# ---------------------------------------------------------------------------- FunctionTool
def total(*prices: float) -> float:
    """Sum prices."""
    return sum(prices)


def test_function_tool_schema_lists_varargs_as_01():
    tool = FunctionTool(fn=total)
    assert tool.definition.func_parameters == {
        "type": "object", "properties": {"prices": {"type": "float"}}, "required": ["prices"]}
    assert tool(1.0, 2.0, 3.5).output == 6.5


# --------------------------------------------------------------------------- TextSplitter
@pytest.mark.parametrize("split_by, size, overlap, text, chunks", [
    ("passage", 1, 0, "Title\n\n\nBody one.\n\nBody two.", ["Title\n\n", "\nBody one.\n\n", "Body two."]),
    ("page", 1, 0, "\fcover\fpage two", ["\f", "cover\f", "page two"]),
    ("passage", 2, 1, "Para A line.\n\nPara B line.\n\nPara C.\n\n",
     ["Para A line.\n\nPara B line.\n\n", "Para B line.\n\nPara C.\n\n", "Para C.\n\n"]),
    ("passage", 1, 0, "\n\nA\n\n", ["\n\n", "A\n\n"]),
    ("passage", 2, 0, "  \n ", ["  \n "]),
    ("page", 3, 1, "\f\f", ["\f\f"]),
    ("sentence", 2, 1, " ", [" "]),
])
def test_text_splitter_units_with_empty_parts_are_01s(split_by, size, overlap, text, chunks):
    assert TextSplitter(split_by=split_by, chunk_size=size, chunk_overlap=overlap).split_text(text) == chunks
