"""LLM reranker, cross-encoder reranker, RerankerRetriever and LLMRetriever, with scripted models."""

import pytest
from sample_corpus import BIGGEST, JUPITER, MARS
from sample_corpus import PLANETS as ALL_PLANETS

from lightrag.components.model_client import ScriptedClient
from lightrag.components.retriever import (
    BM25Retriever,
    CrossEncoderReranker,
    LLMReranker,
    LLMRetriever,
    RerankerRetriever,
)
from lightrag.components.retriever import reranker as reranker_module
from lightrag.components.retriever.llm_retriever import parse_indices
from lightrag.components.retriever.reranker import FAILED_SCORE, parse_relevance_score
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.types import Document, ModelType, RetrieverOutput

PLANETS = [ALL_PLANETS[i] for i in (0, MARS, JUPITER, 5)]  # Mercury, Mars, Jupiter, Saturn


def score_by_keyword(prompt: str) -> str:
    """A fake judge: 9 for the Jupiter passage, 2 otherwise, in assorted formats."""
    passage = prompt.split("Passage:")[1]
    return "Relevance: 9/10" if "Jupiter" in passage else "I would give it a 2."


class WordOverlap:
    """A stand-in cross-encoder: the number of query words in the passage."""

    def __init__(self):
        self.calls = []

    def predict(self, pairs):
        self.calls.append(list(pairs))
        return [len(set(q.lower().split()) & set(p.lower().split())) for q, p in pairs]


# ---- parsing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("7", 7.0),
        ("Score: 8", 8.0),
        ('{"score": 6.5}', 6.5),
        ("**Rating**: 10/10", 10.0),
        ("On a scale of 0-10 this is a 3.", 3.0),
        ("I'd say 4 out of 10", 4.0),
        ("score = 42", 10.0),
        ("It mentions 1990 and 2020; overall 5", 5.0),
        ("not relevant at all", None),
        ("", None),
    ],
)
def test_parse_relevance_score(reply, expected):
    assert parse_relevance_score(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("[2, 0]", [2, 0]),
        ("Sure! Relevant: [1, 3].\nThanks", [1, 3]),
        ("```json\n[3]\n```", [3]),
        ("Documents 2 and 0", [2, 0]),
        ("[Document 1, Document 2]", [1, 2]),
        ("[] then 4", [4]),
        ("none of them", []),
        ("-1", []),
    ],
)
def test_parse_indices(reply, expected):
    assert parse_indices(reply) == expected


# ---- LLMReranker ----------------------------------------------------------------------------


def test_llm_reranker_orders_by_llm_score_and_fails_low(caplog):
    client = ScriptedClient(responses=["3", "Score: 9/10", "no idea", RuntimeError("down")])
    reranker = LLMReranker(model_client=client, model_kwargs={"model": "m"}, top_k=4)
    docs = ["a", "b", "c", "d"]
    with caplog.at_level("WARNING"):
        out = reranker("q", docs)
    assert out.doc_indices == [1, 0, 2, 3]
    assert out.doc_scores == [9.0, 3.0, FAILED_SCORE, FAILED_SCORE]
    assert out.documents == ["b", "a", "c", "d"] and out.query == "q"
    assert sum("scored lowest" in m for m in caplog.messages) == 2
    assert "Passage: a" in client.requests[0]["prompt"] and client.requests[0]["model"] == "m"


def test_llm_reranker_keeps_retriever_indices_and_top_k():
    reranker = LLMReranker(model_client=ScriptedClient(response_fn=score_by_keyword), top_k=1)
    candidates = RetrieverOutput(
        doc_indices=[7, 12],
        doc_scores=[0.9, 0.1],
        documents=[Document(text=p) for p in PLANETS[1:3]],
    )
    out = reranker(BIGGEST, candidates)
    assert out.doc_indices == [12] and out.doc_scores == [9.0]
    assert out.documents[0].text == PLANETS[2]
    with pytest.raises(ValueError, match="documents"):
        reranker(BIGGEST, RetrieverOutput(doc_indices=[1]))
    with pytest.raises(ValueError, match="generator or a model_client"):
        LLMReranker()


async def test_llm_reranker_acall_and_custom_generator():
    generator = Generator(
        model_client=ScriptedClient(response_fn=score_by_keyword),
        template="Q: {{query}} Passage: {{passage}}",
    )
    out = await LLMReranker(generator=generator, top_k=2).acall(BIGGEST, PLANETS)
    assert out.doc_indices[0] == 2 and out.doc_scores == [9.0, 2.0]


# ---- CrossEncoderReranker -------------------------------------------------------------------


def test_cross_encoder_with_fake_model():
    model = WordOverlap()
    reranker = CrossEncoderReranker(model_obj=model, top_k=2)
    out = reranker("the red planet", PLANETS)
    assert out.doc_indices == [1, 0] and out.doc_scores == [3.0, 2.0]
    assert model.calls[0][0] == ("the red planet", PLANETS[0])
    assert reranker("q", []).doc_indices == []


def test_cross_encoder_without_package_says_what_to_install(monkeypatch):
    def missing(name, hint):
        raise ImportError(hint)

    monkeypatch.setattr(reranker_module, "safe_import", missing)
    reranker = CrossEncoderReranker()  # building is lazy: no error yet
    with pytest.raises(ImportError, match=r"\.\[local\]"):
        reranker("q", ["p"])


# ---- RerankerRetriever ----------------------------------------------------------------------


def test_reranker_retriever_composes_first_stage_and_reranker():
    model = WordOverlap()
    rr = RerankerRetriever(
        BM25Retriever(documents=PLANETS), CrossEncoderReranker(model_obj=model), top_k=1
    )
    outs = rr([BIGGEST, "iron oxide dust"])
    assert [o.doc_indices for o in outs] == [[2], [1]]
    assert len(model.calls[0]) == len(PLANETS)  # 4 * top_k candidates, capped by the index
    llm = RerankerRetriever(
        BM25Retriever(documents=PLANETS),
        LLMReranker(model_client=ScriptedClient(response_fn=score_by_keyword)),
        top_k=2,
        candidates=3,
    )
    out = llm(BIGGEST)[0]
    assert out.doc_indices[0] == 2 and out.documents[0] == PLANETS[2]


class FakeRerankClient(ModelClient):
    """A 0.1-style reranker client: returns (indices, scores) of the documents it is given."""

    def convert_inputs_to_api_kwargs(self, input=None, model_kwargs=None, model_type=None):
        assert model_type is ModelType.RERANKER
        return {"query": input, **(model_kwargs or {})}

    def call(self, api_kwargs=None, model_type=None):
        docs, k = api_kwargs["documents"], api_kwargs["top_k"]
        ranked = sorted(range(len(docs)), key=lambda i: -("Jupiter" in docs[i]))[:k]
        return ranked, [1.0 if "Jupiter" in docs[i] else 0.0 for i in ranked]


def test_reranker_retriever_accepts_the_0_1_client_form():
    rr = RerankerRetriever(
        model_client=FakeRerankClient(), model_kwargs={"model": "r"}, top_k=2, documents=PLANETS
    )
    out = rr(BIGGEST)[0]
    assert out.doc_indices[0] == 2 and out.doc_scores[0] == 1.0 and len(out.doc_indices) == 2
    positional = RerankerRetriever(FakeRerankClient(), top_k=1, documents=PLANETS)
    assert positional(BIGGEST)[0].documents == [PLANETS[2]]
    with pytest.raises(ValueError, match="needs a retriever"):
        RerankerRetriever(BM25Retriever())


# ---- LLMRetriever ---------------------------------------------------------------------------


def test_llm_retriever_prompt_and_tolerant_parsing(caplog):
    replies = ["[2, 0]", "Documents 1, 1 and 9 are relevant.", "I cannot tell.", RuntimeError("x")]
    client = ScriptedClient(responses=replies)
    r = LLMRetriever(top_k=2, model_client=client, model_kwargs={"model": "m"}, documents=PLANETS)
    with caplog.at_level("WARNING"):
        outs = r([BIGGEST, "red", "?", "??"])
    assert [o.doc_indices for o in outs] == [[2, 0], [1], [], []]
    assert outs[0].documents == [PLANETS[2], PLANETS[0]] and outs[0].doc_scores is None
    assert outs[1].query == "red"
    prompt = client.requests[0]["prompt"]
    assert "[0] " + PLANETS[0] in prompt and "[3] " + PLANETS[3] in prompt
    assert BIGGEST in prompt and "2 most relevant" in prompt
    assert any("no document index" in m for m in caplog.messages)


def test_llm_retriever_top_k_documents_and_errors():
    client = ScriptedClient(responses=["[3, 2, 1]"], cycle=True)
    docs = [Document(text=t) for t in PLANETS]
    r = LLMRetriever(model_client=client, documents=docs)
    out = r(BIGGEST)[0]
    assert out.doc_indices == [3] and out.documents == [docs[3]]  # default top_k=1
    assert r(BIGGEST, top_k=2)[0].doc_indices == [3, 2]
    assert "Jupiter is the biggest" in client.requests[0]["prompt"]
    with pytest.raises(ValueError, match="no documents"):
        LLMRetriever(model_client=client)(BIGGEST)


async def test_llm_retriever_acall_and_save_load(tmp_path):
    client = ScriptedClient(responses=["[2]"], cycle=True)
    r = LLMRetriever(top_k=1, model_client=client, documents=PLANETS)
    assert (await r.acall(BIGGEST))[0].doc_indices == [2]
    r.save_to_file(tmp_path / "llm.json")
    loaded = LLMRetriever.load_from_file(tmp_path / "llm.json", model_client=client)
    assert loaded(BIGGEST)[0].documents == [PLANETS[2]]
