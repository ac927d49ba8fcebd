"""A deterministic fake extraction LLM for graph-RAG tests, and a GraphRAG built on the fakes.

Entities are the capitalised names of the chunk (sentence-initial function words excluded);
relations link names that appear in the same sentence. The answer is in the line format the
EntityExtractor's prompt asks for, so the real parser and merger run on it. :func:`fake_graph_rag`
puts it together with ScriptedClient's hashed bag-of-words embeddings and a fixed answer.
"""

import re

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.extraction_parser import records_to_lines
from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator
from lightrag.utils.registry import register

NAME = re.compile(r"\b[A-Z][a-zA-Z0-9]+(?:\s+(?:[A-Z][a-zA-Z0-9]+|\d+\b))*")
SKIP = {"The", "It", "In", "On", "Its", "Each", "A", "An", "Then", "This", "He", "She", "They"}
INPUT = re.compile(r"Input text:\s*```\s*(.*?)\s*```\s*Output:", re.S)


def names_in(sentence):
    found = []
    for match in NAME.finditer(sentence):
        words = match.group(0).split()
        while words and words[0] in SKIP:
            words = words[1:]
        if words:
            found.append(" ".join(words))
    return list(dict.fromkeys(found))


@register
def the_answer(prompt: str) -> str:
    """The fake answer model: always the same sentence."""
    return "The answer."


@register
def extraction_reply(prompt: str) -> str:
    """The fake model's reply to an extraction (or gleaning) prompt."""
    if "---Follow-up---" in prompt:
        return "<|DONE|>"
    matches = INPUT.findall(prompt)
    if not matches:
        return "I cannot help with that."
    text = matches[-1]  # the prompt's few-shot examples come first
    entities, relations = {}, []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        names = names_in(sentence)
        for name in names:
            entities.setdefault(name, EntityRecord(entity_name=name, entity_type="concept",
                                                   description=sentence.strip()))
        for a, b in zip(names, names[1:]):
            relations.append(RelationRecord(src_id=a, tgt_id=b, keywords="mentioned together",
                                            description=sentence.strip()))
    return records_to_lines(entities.values(), relations)


def fake_graph_rag(working_dir, *, chunk_tokens=40, chunk_overlap=5, embedding_dim=256,
                   max_gleaning=1, extraction_client=None, embedder_client=None,
                   answers=the_answer, **kwargs):
    """A GraphRAG in ``working_dir`` on the fakes: :func:`extraction_reply` (or
    ``extraction_client``), ScriptedClient embeddings of ``embedding_dim``, the answer
    ``answers(prompt)``, heuristic keywords, small chunks and a low cosine threshold (0.05).
    Other keyword arguments go to GraphRAG."""
    kwargs.setdefault("cosine_threshold", 0.05)
    extraction = extraction_client or ScriptedClient(response_fn=extraction_reply)
    return GraphRAG(
        embedder=Embedder(model_client=embedder_client or ScriptedClient(embedding_dim=embedding_dim)),
        extractor=EntityExtractor(generator=Generator(model_client=extraction),
                                  max_gleaning=max_gleaning),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=answers)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=chunk_tokens, chunk_overlap_token_size=chunk_overlap),
        working_dir=str(working_dir),
        **kwargs,
    )


def with_pipeline(rag, **attributes):
    """``rag`` whose insert pipelines get ``attributes`` set (e.g. ``part_chunks=4``,
    ``commit_seconds=0``) each time one is made; returns ``rag``."""
    original = rag.insert_pipeline

    def pipeline():
        made = original()
        for name, value in attributes.items():
            setattr(made, name, value)
        return made

    rag.insert_pipeline = pipeline
    return rag


@register
def the_cited_answer(prompt: str) -> str:
    """The fake answer model citing the first reference."""
    return "The answer. [1]"
