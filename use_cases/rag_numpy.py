"""The seed "Simple RAG with NumPy & Hugging Face" on this library, offline.

Documents about the planets are embedded with all-MiniLM-L6-v2, the question is matched by a
normalised dot product (NumPy, ``argpartition`` top-k), the top-2 documents become the CONTEXT of
a ``CONTEXT: … QUESTION: … ANSWER:`` prompt, and the packaged SmolLM2 model answers. Each step
is a Component, so the whole pipeline prints as one tree.

    python use_cases/rag_numpy.py ["which planet is the biggest?"]

Set OPENAI_API_KEY or GROQ_API_KEY to answer with that provider instead of the local model.
"""

from __future__ import annotations

import os
import sys
from typing import List

from lightrag.components.model_client import LocalEmbedderClient, LocalLLMClient
from lightrag.components.retriever import NumpyRetriever
from lightrag.core import Component, Embedder, Generator, GeneratorOutput, ModelClient
from lightrag.core.types import RetrieverOutput
from lightrag.data import load_sample_corpus

PLANETS: List[str] = load_sample_corpus("planets")

#: a small model told to answer "using only the context" still answered "Jupiter has rings."
#: from a passage on Saturn's rings; told to copy the sentence that answers, it quotes it
RAG_TEMPLATE = (
    "<SYS>Answer with the sentence of the context that answers the question, copied word for "
    "word.</SYS>\nCONTEXT: {{context}}\nQUESTION: {{question}}\nANSWER:"
)


class NumpyRAG(Component):
    """Retrieve the top-k documents with NumPy, then answer from them."""

    def __init__(self, documents: List[str], llm_client: ModelClient, llm_kwargs: dict,
                 top_k: int = 2):
        super().__init__()
        embedder = Embedder(model_client=LocalEmbedderClient())
        self.retriever = NumpyRetriever(embedder=embedder, top_k=top_k, documents=documents)
        self.generator = Generator(model_client=llm_client, model_kwargs=llm_kwargs,
                                   template=RAG_TEMPLATE)

    def retrieve(self, question: str) -> RetrieverOutput:
        return self.retriever(question)[0]

    def call(self, question: str) -> tuple[RetrieverOutput, GeneratorOutput]:
        hits = self.retrieve(question)
        context = " ".join(hits.documents)
        return hits, self.generator({"context": context, "question": question})


def pick_llm() -> tuple[ModelClient, dict]:
    if os.environ.get("GROQ_API_KEY"):
        from lightrag.components.model_client import GroqAPIClient

        return GroqAPIClient(), {"model": "llama-3.1-8b-instant", "temperature": 0.0}
    if os.environ.get("OPENAI_API_KEY"):
        from lightrag.components.model_client import OpenAIClient

        return OpenAIClient(), {"model": "gpt-4o-mini", "temperature": 0.0}
    return LocalLLMClient(), {"max_tokens": 48, "temperature": 0.0}


def run(question: str) -> tuple[RetrieverOutput, GeneratorOutput]:
    """Run the pipeline and write each step to stdout, as the seed does."""
    out = sys.stdout.write
    client, kwargs = pick_llm()
    rag = NumpyRAG(PLANETS, client, kwargs)
    out(f"== Pipeline ==\n{rag}\n\n== Documents ({len(PLANETS)}) ==\n")
    for i, doc in enumerate(PLANETS):
        out(f"[{i}] {doc}\n")
    hits, answer = rag(question)
    out(f"\n== Query ==\n{question}\n\n== Top-{len(hits.doc_indices)} retrieved ==\n")
    for rank, (idx, score) in enumerate(zip(hits.doc_indices, hits.doc_scores), start=1):
        out(f"{rank}. score={score:.4f}  [{idx}] {PLANETS[idx]}\n")
    prompt = rag.generator.get_prompt(context=" ".join(hits.documents), question=question)
    out(f"\n== Prompt ==\n{prompt}\n\n== Answer ==\n")
    out(f"{answer.data if answer.error is None else 'ERROR: ' + answer.error}\n")
    return hits, answer


if __name__ == "__main__":
    run(" ".join(sys.argv[1:]) or "which planet is the biggest?")
