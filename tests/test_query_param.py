"""QueryParam validation (types and ranges, errors naming the field) and token budgets: derived
from the answer model's window, never exceeded, and an overflowing prompt cut to fit."""

import pytest
from graph_fakes import extraction_reply

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.budgets import (
    DEFAULT_TOTAL_TOKENS,
    answer_reserve,
    model_window,
    resolve_budgets,
)
from lightrag.components.graph_rag.schemas import QUERY_MODES, QueryParam
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator
from lightrag.core.tokenizer import count_tokens


@pytest.mark.parametrize("field, value, error, words", [
    ("top_k", 0, ValueError, "QueryParam.top_k must be at least 1, got 0"),
    ("top_k", -5, ValueError, "QueryParam.top_k must be at least 1"),
    ("top_k", "10", TypeError, "QueryParam.top_k must be an integer, got '10'"),
    ("top_k", 2.5, TypeError, "QueryParam.top_k must be an integer"),
    ("top_k", True, TypeError, "QueryParam.top_k must be an integer"),
    ("chunk_top_k", -1, ValueError, "QueryParam.chunk_top_k must be at least 1"),
    ("max_total_tokens", 0, ValueError, "QueryParam.max_total_tokens must be at least 1"),
    ("max_entity_tokens", -1, ValueError, "QueryParam.max_entity_tokens must be at least 0"),
    ("related_chunk_number", 0, ValueError, "QueryParam.related_chunk_number"),
    ("mode", "sideways", ValueError, "QueryParam.mode: unknown query mode 'sideways'"),
    ("mode", None, ValueError, "unknown query mode None"),
    ("stream", "yes", TypeError, "QueryParam.stream must be true or false"),
    ("ll_keywords", "Rome", TypeError, "QueryParam.ll_keywords must be a list of strings"),
    ("conversation_history", [{"role": "user", "content": 3}], TypeError,
     "QueryParam.conversation_history"),
    ("response_type", 3, TypeError, "QueryParam.response_type must be a string"),
    ("chunk_merge_method", "ZIPPER", ValueError, "QueryParam.chunk_merge_method"),
])
def test_bad_values_are_refused_naming_the_field(field, value, error, words):
    with pytest.raises(error) as caught:
        QueryParam(**{field: value})
    assert words in str(caught.value)
    with pytest.raises((TypeError, ValueError)) as caught:  # configs and HTTP bodies
        QueryParam.from_dict({field: value})
    assert f"QueryParam.{field}" in str(caught.value)


def test_valid_values_and_every_mode_are_accepted():
    for mode in QUERY_MODES:
        assert QueryParam(mode=mode).mode == mode
    param = QueryParam(top_k=1, chunk_top_k=1, max_total_tokens=1, max_entity_tokens=0,
                       max_relation_tokens=None, ll_keywords=["Rome"])
    assert QueryParam.from_dict(param.to_dict()) == param


def test_budgets_derive_from_the_model_window_and_never_exceed_it():
    param = resolve_budgets(QueryParam(), window=4096, answer_tokens=512)
    assert param.max_total_tokens == 3584
    assert param.max_entity_tokens is None and param.max_relation_tokens is None  # share of chunks
    cut = resolve_budgets(QueryParam(max_total_tokens=100_000, max_entity_tokens=90_000),
                          window=8192, answer_tokens=1024)
    assert cut.max_total_tokens == 7168 and cut.max_entity_tokens == 7168
    big = resolve_budgets(QueryParam(), window=1_000_000, answer_tokens=2048)
    assert big.max_total_tokens == DEFAULT_TOTAL_TOKENS


class SmallWindowClient(ScriptedClient):
    """A scripted answer model with a llama.cpp-like ``n_ctx``; records the prompts it gets."""

    n_ctx = 700

    def __init__(self):
        self.prompts = []
        super().__init__(response_fn=self.reply)

    def reply(self, prompt):
        self.prompts.append(prompt)
        return "Titan."


def test_model_window_and_reserve_come_from_the_generator():
    generator = Generator(model_client=SmallWindowClient())
    assert model_window(generator) == (700, True)
    assert answer_reserve(generator, 700) == 175
    hosted = Generator(model_client=ScriptedClient(responses=["x"]), model_kwargs={"model": "gpt-4o-mini"})
    assert model_window(hosted) == (128_000, True)
    assert model_window(Generator(model_client=ScriptedClient(responses=["x"])))[1] is False


DOCS = [f"Voyager {i} photographed Titan, the largest moon of Saturn, in 19{70 + i}. "
        f"NASA built Voyager {i} at the Jet Propulsion Laboratory in Pasadena." for i in range(1, 13)]


def make_rag(tmp_path, answer_client):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=128)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=answer_client),
        keyword_extractor=HeuristicKeywordExtractor(use_spacy=False),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=0),
        working_dir=str(tmp_path), cosine_threshold=0.0)


@pytest.mark.parametrize("mode", ["naive", "local", "hybrid", "mix", "ppr"])
def test_an_overflowing_context_is_cut_to_fit_the_window(tmp_path, mode):
    client = SmallWindowClient()
    rag = make_rag(tmp_path, client)
    rag.insert(DOCS)
    # an explicit budget far beyond the 700-token window: cut to fit, never sent overflowing
    result = rag.query("Which moon did Voyager photograph?", mode=mode, max_total_tokens=50_000,
                       max_entity_tokens=20_000, max_relation_tokens=20_000, chunk_top_k=40)
    assert result.content == "Titan."
    assert client.prompts and count_tokens(client.prompts[-1]) <= 700 - 175
    info = result.raw_data["processing_info"]
    assert info["prompt_tokens"] <= 525 and info["max_total_tokens"] == 525


@pytest.mark.parametrize("mode", ["naive", "local", "global", "hybrid", "mix", "ppr"])
def test_context_budgets_are_never_exceeded(tmp_path, mode):
    rag = make_rag(tmp_path, ScriptedClient(responses=["ok"], cycle=True))
    rag.insert(DOCS)
    for total, entity, relation in [(400, 60, 60), (250, None, None), (900, 0, 500)]:
        result = rag.query("Voyager Titan NASA", mode=mode, only_need_context=True,
                           max_total_tokens=total, max_entity_tokens=entity,
                           max_relation_tokens=relation)
        context = result.content
        assert count_tokens(context) <= total, (mode, total)
        entity_part = context.split("Knowledge Graph Data (Relationship)")[0]
        if entity is not None and "Knowledge Graph Data (Entity)" in context:
            assert count_tokens(entity_part) <= entity + 40
        if entity == 0:
            assert not result.raw_data["entities"]


def test_graph_modes_spend_no_more_context_than_naive_by_default(tmp_path):
    rag = make_rag(tmp_path, ScriptedClient(responses=["ok"], cycle=True))
    rag.insert(DOCS)
    for question in ["Voyager Titan NASA", "Which moon did Voyager photograph?"]:
        naive = rag.query(question, mode="naive", only_need_context=True, chunk_top_k=12)
        budget = naive.raw_data["processing_info"]["context_tokens"]
        assert budget > 400  # more than the first chunks + the lines' floor: the cap binds
        for mode in ["local", "global", "hybrid", "mix", "ppr"]:
            result = rag.query(question, mode=mode, only_need_context=True, chunk_top_k=12)
            info = result.raw_data["processing_info"]
            assert info["context_tokens"] <= budget, (mode, question)
            assert count_tokens(result.content) <= count_tokens(naive.content) + 40, mode
        # a small context keeps its first chunks and still gets graph lines
        small = rag.query(question, mode="local", only_need_context=True, chunk_top_k=2)
        assert small.raw_data["chunks"] and (small.raw_data["entities"] or small.raw_data["relationships"])


def test_too_long_a_question_for_the_window_raises_clearly(tmp_path):
    rag = make_rag(tmp_path, SmallWindowClient())
    rag.insert(DOCS[:2])
    with pytest.raises(ValueError, match="without any context"):
        rag.query("Voyager " * 800, mode="naive")


def test_an_empty_reply_says_why_in_content(tmp_path):
    rag = make_rag(tmp_path, ScriptedClient(responses=["   "], cycle=True))
    rag.insert(DOCS[:2])
    result = rag.query("Which moon did Voyager photograph?", mode="naive")
    assert result.content.startswith("No answer: the answer model returned an empty reply")
    assert "empty reply" in result.raw_data["error"]
    assert result.raw_data["processing_info"]["answer_failed"]  # as a failed call: exit 1, 502
