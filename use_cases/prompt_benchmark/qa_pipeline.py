"""``MusiqueQA``: retrieve from a question's own passages, then answer with a Generator.

Each MuSiQue-100 question comes with 20 candidate paragraphs (its supporting paragraphs and
distractors). The pipeline ranks them for the question (BM25 by default, or all-MiniLM-L6-v2 with
``retriever="minilm"``), puts the ``top_k`` best in the prompt, and extracts a short answer from
the reply (the text after the last ``Answer:``, else the first line).

The instruction is a trainable :class:`Parameter` (``generator.instruction``), so benchmark
variants and optimisers can change it by name.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> qa = MusiqueQA(model_client=ScriptedClient(response_fn=lambda p: "Answer: Paris."))
    >>> paragraphs = [{"title": "France", "paragraph_text": "Paris is the capital of France."},
    ...               {"title": "Peru", "paragraph_text": "Lima is the capital of Peru."}]
    >>> qa("What is the capital of France?", paragraphs).data
    'Paris'
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from lightrag.components.retriever import BM25Retriever
from lightrag.core import Component, Generator, ModelClient, Parameter, ParameterType
from lightrag.core.types import GeneratorOutput
from lightrag.utils.registry import register

DEFAULT_INSTRUCTION = "Answer the question using the context passages."

PLAIN_TEMPLATE = r"""<SYS>
{{instruction}}
</SYS>
Context:
{% for passage in passages %}
[{{loop.index}}] {{passage}}
{% endfor %}

Question: {{question}}
Answer:"""

_ANSWER = re.compile(r"\banswer\b\s*(?:is|was|[:：])\s*[:：]?", re.IGNORECASE)


@register
class AnswerExtractor(Component):
    """The short answer in a reply: the first line of text after the last "Answer:" / "the
    answer is", else the reply's first line.

    Example:
        >>> AnswerExtractor()("Paris is in France.\\nSo the answer is **Paris**.")
        'Paris'
        >>> AnswerExtractor()("Reasoning...\\nAnswer:\\n  Rome")
        'Rome'
    """

    def call(self, text: Any) -> str:
        text = str(text or "").strip()
        answer = ""
        for match in reversed(list(_ANSWER.finditer(text))):
            rest = text[match.end():]
            answer = next((line for line in rest.splitlines() if line.strip(" *_`\"'.")), "")
            if answer:
                break
        if not answer:
            answer = next((line for line in text.splitlines() if line.strip()), "")
        return answer.strip().strip("*_`\"' .").strip()


def passage_text(paragraph: Dict[str, Any]) -> str:
    return f"{paragraph.get('title', '')}: {paragraph.get('paragraph_text', '')}".strip(": ")


@register
class MusiqueQA(Component):
    """Retrieve the question's best passages and answer from them.

    Args:
        model_client: the LLM client.
        model_kwargs: request arguments (``max_tokens``, ``temperature``…).
        template: the prompt template (variables ``instruction``, ``passages``, ``question``).
        instruction: the initial instruction (a trainable Parameter).
        top_k: passages put in the prompt.
        retriever: ``"bm25"``, ``"minilm"`` (needs the ``local`` extra) or ``"gold"`` (the
            question's supporting paragraphs, in their order: measures the answer model alone).
    """

    def __init__(
        self,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        template: Optional[str] = None,
        instruction: str = DEFAULT_INSTRUCTION,
        top_k: int = 3,
        retriever: str = "bm25",
    ) -> None:
        super().__init__()
        if retriever not in ("bm25", "minilm", "gold"):
            raise ValueError(f"retriever must be 'bm25', 'minilm' or 'gold', got {retriever!r}")
        self.top_k = top_k
        self.retriever_kind = retriever
        self.embedder: Optional[Component] = None
        if retriever == "minilm":
            from lightrag.components.model_client import LocalEmbedderClient
            from lightrag.core import Embedder

            self.embedder = Embedder(model_client=LocalEmbedderClient())
        self.generator = Generator(
            model_client=model_client,
            model_kwargs=model_kwargs,
            template=template or PLAIN_TEMPLATE,
            prompt_kwargs={"instruction": Parameter(
                data=instruction, role_desc="the instruction of a multi-hop QA model",
                param_type=ParameterType.PROMPT)},
            output_processors=AnswerExtractor(),
        )

    def retrieve(self, question: str, paragraphs: List[Dict[str, Any]]) -> List[str]:
        """The ``top_k`` passages (``"title: text"``) of ``paragraphs`` best matching ``question``."""
        if self.retriever_kind == "gold":
            return [passage_text(p) for p in paragraphs if p.get("is_supporting")]
        texts = [passage_text(p) for p in paragraphs]
        if not texts:
            return []
        if self.embedder is not None:
            from lightrag.components.retriever import NumpyRetriever

            retriever: Any = NumpyRetriever(embedder=self.embedder, top_k=self.top_k,
                                            documents=texts)
        else:
            retriever = BM25Retriever(top_k=self.top_k, documents=texts, stopwords="en")
        return [texts[i] for i in retriever(question)[0].doc_indices]

    def call(self, question: str, paragraphs: List[Dict[str, Any]]) -> GeneratorOutput:
        passages = self.retrieve(question, paragraphs)
        return self.generator(prompt_kwargs={"question": question, "passages": passages})
