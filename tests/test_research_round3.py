"""LLM-as-judge through the real OpenAI SDK client against the fake provider on loopback: a
judge that echoes the prompt's options or negates a verdict word is read right, and a judge
call that fails is counted as a failure, not as a verdict."""

from fake_provider_server import FakeProvider, Reply

from lightrag.components.model_client import OpenAIClient
from lightrag.core.retry import RetryPolicy
from lightrag.eval import LLMasJudge

REPLIES = {
    "Paris": "Your judgement (True or False): True",
    "Lyon": "Your judgement (True or False): False",
    "Nice": "That is not true.",
    "Rome": "True/False: False",
}


def test_judge_reads_echoed_options_and_negations_and_counts_failures():
    def reply(prompt):
        predicted = prompt.split("Predicted answer: ")[1].splitlines()[0]
        return REPLIES.get(predicted) or Reply(status=500)

    with FakeProvider(reply) as server:
        client = OpenAIClient(base_url=server.url + "/v1")
        client.retry_policy = RetryPolicy(max_retries=0)
        judge = LLMasJudge(model_client=client, model_kwargs={"model": "m"})
        result = judge.compute(["Capital of France?"] * 5, ["Paris"] * 5,
                               ["Paris", "Lyon", "Nice", "Rome", "Oslo"])
    assert result.additional_info["judgements"] == [True, False, False, False, None]
    assert result.additional_info["failures"] == 1 and "500" in result.additional_info["errors"][4]
    assert result.avg_score == 0.2
