import asyncio

import numpy as np
import pytest

from lightrag.components.data_process import (
    RetrieverOutputToContextStr,
    TextSplitter,
    ToEmbeddings,
    retriever_output_to_context_str,
)
from lightrag.components.model_client.scripted_client import ScriptedClient, hashed_bag_of_words
from lightrag.core.embedder import Embedder
from lightrag.core.types import Document, EmbedderOutput, Embedding, RetrieverOutput


def make_docs(n):
    return [Document(text=f"document number {i} about topic {i % 3}", id=f"d{i}") for i in range(n)]


# ---------------------------------------------------------------- ToEmbeddings
def test_to_embeddings_fills_vectors_in_batches():
    client = ScriptedClient(embedding_dim=16)
    to_embeddings = ToEmbeddings(Embedder(model_client=client), batch_size=2)
    docs = make_docs(5)
    out = to_embeddings(docs)
    assert len(client.requests) == 3
    assert [d.id for d in out] == [d.id for d in docs]
    for doc, embedded in zip(docs, out):
        assert embedded.text == doc.text
        assert np.allclose(embedded.vector, hashed_bag_of_words(doc.text, 16))
    assert all(d.vector == [] for d in docs)
    assert out[0] is not docs[0]


def test_to_embeddings_deep_copies_metadata():
    docs = [Document(text="x", meta_data={"tags": ["a"]})]
    out = ToEmbeddings(Embedder(model_client=ScriptedClient()))(docs)
    out[0].meta_data["tags"].append("b")
    assert docs[0].meta_data == {"tags": ["a"]}


def test_to_embeddings_empty_and_async():
    to_embeddings = ToEmbeddings(Embedder(model_client=ScriptedClient(embedding_dim=8)))
    assert to_embeddings([]) == []
    out = asyncio.run(to_embeddings.acall(make_docs(3)))
    assert [len(d.vector) for d in out] == [8, 8, 8]


def test_to_embeddings_error_names_the_batch(caplog):
    client = ScriptedClient()
    calls = {"n": 0}
    real_call = client.call

    def flaky(api_kwargs=None, model_type=None):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("service down")
        return real_call(api_kwargs, model_type)

    client.call = flaky
    to_embeddings = ToEmbeddings(Embedder(model_client=client), batch_size=2)
    docs = make_docs(5)
    with pytest.raises(ConnectionError, match="service down"):  # the client's own error, as 0.1
        to_embeddings(docs)
    assert any(
        "batch 1 (documents 2-3, first id 'd2')" in m and "service down" in m
        for m in caplog.messages
    )
    assert all(d.vector == [] for d in docs)


class ParsedAs(ScriptedClient):
    """A ScriptedClient whose embedding responses are rewritten by ``parse``."""

    def __init__(self, parse):
        super().__init__()
        self.parse = parse

    def parse_embedding_response(self, response):
        return EmbedderOutput(data=self.parse(response))


def test_to_embeddings_rejects_wrong_count():
    embedder = Embedder(model_client=ParsedAs(lambda vectors: [Embedding([1.0], 0)]))
    with pytest.raises(RuntimeError, match="got 1 embeddings for 2 texts"):
        ToEmbeddings(embedder)(make_docs(2))


def test_to_embeddings_orders_by_embedding_index():
    def reversed_order(vectors):
        return [Embedding([float(i)], i) for i in reversed(range(len(vectors)))]

    embedder = Embedder(model_client=ParsedAs(reversed_order))
    out = ToEmbeddings(embedder)(make_docs(3))
    assert [d.vector for d in out] == [[0.0], [1.0], [2.0]]


def test_to_embeddings_bad_input():
    to_embeddings = ToEmbeddings(Embedder(model_client=ScriptedClient()))
    with pytest.raises(TypeError, match="list of Document"):
        to_embeddings(["text"])
    with pytest.raises(TypeError, match="list of Document"):
        to_embeddings(Document(text="x"))
    with pytest.raises(ValueError, match="'no-text'"):
        to_embeddings([Document(text=None, id="no-text")])
    with pytest.raises(TypeError, match="Embedder"):
        ToEmbeddings(ScriptedClient())


def test_to_embeddings_structure():
    embedder = Embedder(model_client=ScriptedClient())
    to_embeddings = ToEmbeddings(embedder, batch_size=7)
    assert to_embeddings.embedder is embedder
    assert to_embeddings.batch_embedder.batch_size == 7
    assert "batch_size=7" in repr(to_embeddings)
    assert [name for name, _ in to_embeddings.named_children()] == ["embedder", "batch_embedder"]
    assert to_embeddings.batch_embedder.embedder is embedder


def test_split_then_embed_pipeline():
    docs = [Document(text="alpha beta gamma delta epsilon", id="p")]
    chunks = TextSplitter(chunk_size=2, chunk_overlap=0)(docs)
    embedded = ToEmbeddings(Embedder(model_client=ScriptedClient(embedding_dim=4)))(chunks)
    assert [(d.parent_doc_id, d.order, len(d.vector)) for d in embedded] == [
        ("p", 0, 4),
        ("p", 1, 4),
        ("p", 2, 4),
    ]


# ---------------------------------------------------------------- context string
A = Document(text="Paris is the capital of France.", id="a")
B = Document(text="The Seine flows through Paris.", id="b")
C = Document(text="Lyon is in France.", id="c")


def test_context_str_single_output():
    out = RetrieverOutput(doc_indices=[0, 1], documents=[A, B])
    assert retriever_output_to_context_str(out) == f"{A.text}\n\n{B.text}"
    assert retriever_output_to_context_str(out, separator=" ") == f"{A.text} {B.text}"


def test_context_str_list_with_and_without_dedup():
    outputs = [
        RetrieverOutput(doc_indices=[0, 1], documents=[A, B]),
        RetrieverOutput(doc_indices=[1, 2], documents=[B, C]),
    ]
    assert retriever_output_to_context_str(outputs, separator="|") == "|".join(
        [A.text, B.text, B.text, C.text]
    )
    assert retriever_output_to_context_str(outputs, deduplicate=True, separator="|") == "|".join(
        [A.text, B.text, C.text]
    )


def test_context_str_dedup_by_id_and_by_text():
    same_id = Document(text="edited text", id="a")
    same_text = Document(text=A.text, id="other")
    out = RetrieverOutput(doc_indices=[0, 1, 2, 3], documents=[A, same_id, same_text, C])
    assert retriever_output_to_context_str(out, deduplicate=True) == f"{A.text}\n\n{C.text}"
    assert retriever_output_to_context_str(out).count(A.text) == 2


def test_context_str_accepts_strings_and_skips_missing_text():
    out = RetrieverOutput(doc_indices=[0, 1, 2], documents=["one", Document(text=None), "two"])
    assert retriever_output_to_context_str(out, separator=" ") == "one two"
    assert retriever_output_to_context_str([]) == ""
    assert retriever_output_to_context_str(RetrieverOutput(doc_indices=[], documents=[])) == ""


def test_context_str_errors():
    with pytest.raises(ValueError, match="has no documents"):
        retriever_output_to_context_str(RetrieverOutput(doc_indices=[0], query="q"))
    with pytest.raises(TypeError):
        retriever_output_to_context_str("not an output")
    with pytest.raises(TypeError, match="item 1"):
        retriever_output_to_context_str([RetrieverOutput(doc_indices=[], documents=[]), 3])


def test_context_str_component():
    outputs = [
        RetrieverOutput(doc_indices=[0], documents=[A]),
        RetrieverOutput(doc_indices=[0], documents=[A]),
    ]
    component = RetrieverOutputToContextStr(deduplicate=True)
    assert component(outputs) == A.text
    assert asyncio.run(component.acall(outputs)) == A.text
    assert RetrieverOutputToContextStr(separator=" ")(outputs) == f"{A.text} {A.text}"
    assert repr(component) == "RetrieverOutputToContextStr(deduplicate=True, separator='\\n\\n')"
    rebuilt = RetrieverOutputToContextStr.from_config(component.to_config())
    assert rebuilt.deduplicate is True and rebuilt.separator == "\n\n"
