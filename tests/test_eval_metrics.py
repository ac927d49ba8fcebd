"""lightrag.eval: answer matching, retrieval metrics and the pairwise LLM judge, on hand-checked
examples."""

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
    LLMasJudge,
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
    assert acc.compute([GeneratorOutput(data="a"), GeneratorOutput(error="boom")], ["a", "b"]).avg_score == 0.5
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


# ------------------------------------------------------------------------------- LLM as judge
def test_judge_cancels_position_bias():
    # a judge that always prefers the first answer it sees has no real preference
    always_first = ScriptedClient(response_fn=lambda p: (
        '{"Comprehensiveness": {"Winner": "Answer 1"}, "Diversity": {"Winner": "Answer 1"},'
        ' "Empowerment": {"Winner": "Answer 1"}, "Overall": {"Winner": "Answer 1"}}'))
    result = LLMasJudge(model_client=always_first).compute(["q1", "q2"], ["a", "b"], ["c", "d"])
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
    judge = LLMasJudge(model_client=ScriptedClient(response_fn=_prefer_longer))
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
    judge = LLMasJudge(model_client=ScriptedClient(response_fn=lambda p: "I cannot decide."))
    result = judge.compute(["q"], ["a"], ["b"])
    assert result.avg_score == 0.5
    assert result.additional_info["parse_failures"] == 8  # 4 criteria x 2 orders
