"""The seed "Introduction" SimpleQA example: unchanged code, only the model client swapped."""

import asyncio

from lightrag.components.model_client import GroqAPIClient, OpenAIClient, ScriptedClient
from lightrag.core import Component, Generator
from lightrag.utils import build


def make_simple_qa(model_client):
    class SimpleQA(Component):
        def __init__(self):
            super().__init__()
            template = r"""<SYS>
        You are a helpful assistant.
        </SYS>
        User: {{input_str}}
        You:
        """
            self.generator = Generator(
                model_client=model_client,
                model_kwargs={"model": "llama3-8b-8192"},
                template=template,
            )

        def call(self, query):
            return self.generator({"input_str": query})

        async def acall(self, query):
            return await self.generator.acall({"input_str": query})

    return SimpleQA()


SEED_TREE = """SimpleQA(
  (generator): Generator(
    model_kwargs={'model': 'llama3-8b-8192'}, 
    (prompt): Prompt(
      template: <SYS>
              You are a helpful assistant.
              </SYS>
              User: {{input_str}}
              You:
              , prompt_variables: ['input_str']
    )
    (model_client): GroqAPIClient()
  )
)"""


def test_tree_prints_in_seed_format_without_a_key(monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert repr(make_simple_qa(GroqAPIClient())) == SEED_TREE


def test_runs_with_swapped_client_sync_and_async():
    client = ScriptedClient(responses=["LightRAG is a library.", "Async answer."])
    qa = make_simple_qa(client)
    assert qa("What is LightRAG?").data == "LightRAG is a library."
    assert client.requests[0]["prompt"].endswith("User: What is LightRAG?\n        You:")
    assert asyncio.run(qa.acall("And async?")).data == "Async answer."


def test_missing_key_is_an_error_output_not_an_exception(monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    out = make_simple_qa(GroqAPIClient())("hi")
    assert out.data is None and "GROQ_API_KEY" in out.error


def test_one_line_swap_in_yaml(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = make_simple_qa(GroqAPIClient()).generator.to_config()
    assert config["component_config"]["model_client"] == {
        "component_name": "GroqAPIClient", "component_config": {}}
    config["component_config"]["model_client"]["component_name"] = "OpenAIClient"
    swapped = build(config)
    assert isinstance(swapped.model_client, OpenAIClient)
    assert swapped.prompt.template == make_simple_qa(GroqAPIClient()).generator.prompt.template
