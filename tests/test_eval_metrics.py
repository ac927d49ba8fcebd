"""lightrag.eval: answer matching, retrieval metrics, the pointwise (lightrag 0.1) and pairwise LLM
judges, on hand-checked examples."""

import json

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.parameter import Parameter
from lightrag.core.types import GeneratorOutput
from lightrag.eval import (
    AnswerMatchAcc,
    EvaluationResult,
    ExactMatch,
    F1Score,
    PairwiseLLMJudge,
    RetrieverHits,
    RetrieverMRR,
    RetrieverPrecision,
    RetrieverRecall,
    normalize_answer,
    parse_verdicts,
    retrieval_metrics,
)


# ---------------------------------------------------------------------------- answer matching
@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Beatles", "beatles"),
        ("  A  cat, an apple & THE end! ", "cat apple end"),
        ("U.S.A.", "usa"),
        ("theatre", "theatre"),  # "the" only as a whole word
        (None, ""),
    ],
)
def test_normalize_answer_follows_squad(text, expected):
    assert normalize_answer(text) == expected


def test_exact_match_with_aliases_takes_the_best():
    em = ExactMatch()
    assert em.compute_single_item("the Eiffel Tower.", "Eiffel Tower") == 1.0
    assert em.compute_single_item("Tour Eiffel", ["Eiffel Tower", "Tour Eiffel"]) == 1.0
    assert em.compute_single_item("Eiffel", ["Eiffel Tower", "Tour Eiffel"]) == 0.0
    assert em.compute_single_item(None, "x") == 0.0


def test_f1_hand_computed():
    f1 = F1Score()
    # pred -> "cat sat on mat" (4 tokens), gold -> "cat on mat" (3): 3 shared, P=3/4, R=1
    assert f1.compute_single_item("The cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)
    # repeated tokens count once per occurrence: "paris paris" vs "paris": P=1/2, R=1 -> 2/3
    assert f1.compute_single_item("Paris Paris", "Paris") == pytest.approx(2 / 3)
    # max over aliases: 0.5 vs 1.0
    assert f1.compute_single_item("New York City", ["York", "new york city"]) == 1.0
    assert f1.compute_single_item("", "") == 1.0 and f1.compute_single_item("the", "x") == 0.0
    assert f1.compute_single_item("red", "blue") == 0.0


def test_compute_returns_mean_and_unpacks_like_01():
    result = F1Score().compute(["Paris", "in Lyon", "x"], ["Paris", "Lyon", "y"])
    assert isinstance(result, EvaluationResult)
    avg, per_item = result
    assert per_item == pytest.approx([1.0, 2 / 3, 0.0])
    assert avg == pytest.approx(5 / 9)
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        ExactMatch().compute(["a", "b"], ["a"])


@pytest.mark.parametrize(
    "kind, pred, gold, expected",
    [
        ("exact_match", "42 ", "42", 1.0),
        ("exact_match", "Paris", "paris", 0.0),
        ("normalized", "Paris.", "the paris", 1.0),
        ("fuzzy_match", "It is Paris.", "Paris", 1.0),
        ("fuzzy_match", "it is paris", "Paris", 0.0),  # 0.1 semantics: raw substring
        ("contains", "It is PARIS, France", "paris", 1.0),
        ("contains", "Parisian food", "Paris", 0.0),  # whole words only
        ("contains", "the answer is New York", ["NYC", "new york"], 1.0),
    ],
)
def test_answer_match_acc_types(kind, pred, gold, expected):
    assert AnswerMatchAcc(type=kind).compute_single_item(pred, gold) == expected


def test_answer_match_unwraps_parameters_and_generator_outputs():
    acc = AnswerMatchAcc(type="exact_match")
    assert acc.compute_single_item(Parameter(data="yes"), Parameter(data="yes", requires_opt=False)) == 1.0
    outputs = [GeneratorOutput(data="a"), GeneratorOutput(error="boom")]
    assert acc.compute(outputs, ["a", "b"]).avg_score == 0.5
    with pytest.raises(ValueError, match="type must be one of"):
        AnswerMatchAcc(type="regex")


# --------------------------------------------------------------------------- retrieval metrics
RETRIEVED = [["d1", "d7", "d3"], ["d2", "d9"], ["x", "y"]]
GOLD = [["d3", "d4"], ["d9"], ["d5"]]


def test_recall_precision_mrr_hits_hand_computed():
    assert RetrieverRecall().compute(RETRIEVED, GOLD).per_item_scores == [0.5, 1.0, 0.0]
    assert RetrieverRecall(top_k=1).compute(RETRIEVED, GOLD).per_item_scores == [0.0, 0.0, 0.0]
    assert RetrieverPrecision().compute(RETRIEVED, GOLD).per_item_scores == pytest.approx([1 / 3, 0.5, 0.0])
    assert RetrieverPrecision(top_k=2).compute(RETRIEVED, GOLD).per_item_scores == [0.0, 0.5, 0.0]
    assert RetrieverMRR().compute(RETRIEVED, GOLD).per_item_scores == pytest.approx([1 / 3, 0.5, 0.0])
    assert RetrieverHits(top_k=2).compute(RETRIEVED, GOLD).per_item_scores == [0.0, 1.0, 0.0]
    metrics = retrieval_metrics(RETRIEVED, GOLD, ks=(1, 3))
    assert metrics["recall@3"] == pytest.approx(0.5) and metrics["hits@1"] == 0.0
    assert metrics["mrr"] == pytest.approx((1 / 3 + 0.5) / 3)


def test_recall_over_ids_texts_and_joined_context():
    assert RetrieverRecall().compute_single_item([3, 1], [1, 2, 2]) == 0.5  # duplicate gold once
    joined = "Paris is in France. Rome is in Italy."
    assert RetrieverRecall().compute([joined], [["Rome is in Italy.", "Oslo"]]).avg_score == 0.5
    texts = ["Title A\nThe full passage A.", "Title B\nPassage B."]
    assert RetrieverRecall(match="substring").compute_single_item(texts, ["Passage B."]) == 1.0
    assert RetrieverRecall().compute_single_item(["doc-10"], ["doc-1"]) == 0.0  # ids: exact only
    with pytest.raises(ValueError, match="no gold items"):
        RetrieverRecall().compute_single_item(["a"], [])
    with pytest.raises(ValueError):
        RetrieverRecall(top_k=0)


# ------------------------------------------------------------------------ pairwise LLM judge
def test_judge_cancels_position_bias():
    # a judge that always prefers the first answer it sees has no real preference
    always_first = ScriptedClient(response_fn=lambda p: (
        '{"Comprehensiveness": {"Winner": "Answer 1"}, "Diversity": {"Winner": "Answer 1"},'
        ' "Empowerment": {"Winner": "Answer 1"}, "Overall": {"Winner": "Answer 1"}}'))
    result = PairwiseLLMJudge(model_client=always_first).compute(["q1", "q2"], ["a", "b"], ["c", "d"])
    assert result.per_item_scores == [0.5, 0.5]
    assert result.additional_info["position_consistency"] == 0.0
    assert len(always_first.requests) == 4  # both orders for each pair


def _prefer_longer(prompt: str) -> str:
    first = prompt.split("Answer 1:")[-1].split("Answer 2:")[0]
    second = prompt.split("Answer 2:")[-1]
    winner = "Answer 1" if len(first) > len(second) else "Answer 2"
    verdicts = {"comprehensiveness": winner, "diversity": {"winner": winner},
                "empowerment": "tie", "overall": {"Winner": winner}}
    return "```json\n" + json.dumps(verdicts) + "\n```"


def test_judge_consistent_preference_and_criteria():
    judge = PairwiseLLMJudge(model_client=ScriptedClient(response_fn=_prefer_longer))
    long, short = "a long and detailed answer with many points", "short"
    result = judge.compute(["q", "q"], [long, short], [short, long])
    assert result.per_item_scores == [1.0, 0.0]
    info = result.additional_info
    assert info["position_consistency"] == 1.0 and info["parse_failures"] == 0
    assert info["win_rate"]["Empowerment"] == 0.5 and info["win_rate"]["Diversity"] == 0.5
    assert judge.compute_single_item("q", long, short) == 1.0


def test_judge_parsing_is_tolerant_and_counts_failures():
    criteria = ["Comprehensiveness", "Diversity", "Overall"]
    prose = ("**Comprehensiveness**: Answer 2 is more detailed.\n"
             "Diversity - winner: Answer 1\nOverall: both are equally good")
    assert parse_verdicts(prose, criteria) == {"Comprehensiveness": "2", "Diversity": "1", "Overall": "tie"}
    assert parse_verdicts("no idea", criteria) == dict.fromkeys(criteria)
    judge = PairwiseLLMJudge(model_client=ScriptedClient(response_fn=lambda p: "I cannot decide."))
    result = judge.compute(["q"], ["a"], ["b"])
    assert result.avg_score == 0.5
    assert result.additional_info["parse_failures"] == 8  # 4 criteria x 2 orders


# ------------------------------------------------------- pointwise LLM judge (lightrag 0.1 API)
def _contains_gt(prompt: str) -> str:
    gt = prompt.split("Ground truth answer: ")[1].split("\n")[0]
    pred = prompt.split("Predicted answer: ")[1].split("\n")[0]
    return "True" if gt.lower() in pred.lower() else "False."


def test_pointwise_judge_runs_01_code():
    from lightrag.eval.llm_as_judge import DefaultLLMJudge, LLMasJudge

    client = ScriptedClient(response_fn=_contains_gt)
    questions = ["Is Beijing in China?", "Is Apple founded before Google?", "Is earth flat?"]
    pred_answers = ["Yes", "Yes, Apple is founded before Google", "Yes"]
    gt_answers = ["Yes", "Yes", "No"]
    query = "For the question, does the predicted answer contain the ground truth answer?"
    judge = LLMasJudge(llm_evaluator=DefaultLLMJudge(model_client=client, model_kwargs={}))
    avg_judgement, judgement_list = judge.compute(questions, gt_answers, pred_answers, query)
    assert avg_judgement == pytest.approx(2 / 3)
    assert judgement_list == [True, True, False]
    prompt = client.requests[2]["prompt"]
    assert "Question: Is earth flat?" in prompt and f"Judgement question: {query}" in prompt
    assert DefaultLLMJudge(model_client=client)("q", "a", "a", query) is True


def test_pointwise_judge_failures_are_counted_not_fatal():
    from lightrag.eval import LLMasJudge

    client = ScriptedClient(responses=["yes", "I am not sure", RuntimeError("rate limited"), "NO"])
    result = LLMasJudge(model_client=client).compute(["q"] * 4, ["a"] * 4, ["a"] * 4)
    assert result.per_item_scores == [1.0, 0.0, 0.0, 0.0]
    info = result.additional_info
    assert info["judgements"] == [True, None, None, False] and info["failures"] == 2
    assert "invalid judgement" in info["errors"][1] and "rate limited" in info["errors"][2]


def test_pointwise_judge_custom_evaluator_aliases_and_errors():
    from lightrag.eval import LLMasJudge, parse_judgement

    seen = []

    def evaluator(question, gt_answer, pred_answer, judgement_query):
        seen.append((gt_answer, judgement_query))
        return pred_answer in gt_answer

    judge = LLMasJudge(evaluator, judgement_query="Same?")
    assert judge.compute(["q", "q"], [["NYC", "New York"], ["x"]], ["NYC", "y"]).avg_score == 0.5
    assert seen[0] == (["NYC", "New York"], "Same?")
    with pytest.raises(ValueError, match="not both"):
        LLMasJudge(evaluator, model_client=ScriptedClient())
    with pytest.raises(ValueError, match="same length"):
        judge.compute(["q"], ["a", "b"], ["a"])
    assert [parse_judgement(t) for t in ["True.", "no", "**Yes**", "falsehood?", None]] == [
        True, False, True, None, None]


def test_default_judge_defaults_to_openai_like_01():
    from lightrag.eval import DefaultLLMJudge

    judge = DefaultLLMJudge()
    assert type(judge.llm_evaluator.model_client).__name__ == "OpenAIClient"
    assert judge.model_kwargs == {"model": "gpt-3.5-turbo", "temperature": 0.3}


# ----------------------------------------------------------- retriever relevance, 0.1 paths
def test_retriever_relevance_hand_computed():
    from lightrag.eval import RetrieverRelevance

    class WordCount:  # one token per word, so the expected values are easy to check
        def count_tokens(self, text):
            return len(text.split())

    relevance = RetrieverRelevance(tokenizer=WordCount())
    context = "Paris is in France. Bananas are yellow and long."  # 9 words
    assert relevance.compute_single_item(context, ["Paris is in France.", "Oslo"]) == pytest.approx(4 / 9)
    assert relevance.compute_single_item(context, "Paris is in France.") == pytest.approx(4 / 9)
    assert relevance.compute_single_item(["Paris is in France.", "x y"], ["x y"]) == pytest.approx(2 / 6)
    assert relevance.compute_single_item("", ["a"]) == 0.0
    avg, per_item = relevance.compute([context, "a b"], [["Paris is in France."] * 2, ["a b"]])
    assert per_item == pytest.approx([4 / 9, 1.0]) and avg == pytest.approx((4 / 9 + 1) / 2)
    real = RetrieverRelevance()  # tiktoken cl100k_base: 5 of 10 tokens
    assert real.compute_single_item("Paris is in France. Bananas are yellow.", ["Paris is in France."]) == 0.5


def test_01_import_paths_and_tuple_results():
    from lightrag.eval.answer_match_acc import AnswerMatchAcc as Acc
    from lightrag.eval.base import BaseEvaluator
    from lightrag.eval.retriever_recall import RetrieverRecall as Recall
    from lightrag.eval.retriever_relevance import RetrieverRelevance

    assert issubclass(RetrieverRelevance, BaseEvaluator)
    result = Acc(type="exact_match").compute(["1", "2"], ["1", "3"])
    assert result[0] == 0.5 and result[1] == [1.0, 0.0] and len(result) == 2
    recall = Recall().compute(["Apple is founded before Google."],
                              [["Apple is founded before Google.", "Google is founded in 1998."]])
    assert recall[0] == 0.5
