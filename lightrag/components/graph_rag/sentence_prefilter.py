"""Which sentences of a context are worth a vector: a lexical prefilter before any embedding.

Embedding every sentence of the retrieved chunks is the whole cost of an extractive answer: 20
chunks of 1,200 tokens hold about 900 sentences, tens of seconds of MiniLM on two CPU cores,
while most of them share nothing with the question. The answerer first scores each sentence
from its words alone (:class:`Lexical`):

- the idf-weighted share of the question's words it covers (its heading counting half);
- plus a weight times the share of the question's phrases it holds ("lightrag check",
  "knowledge graph": two question words side by side say more than each alone);
- plus a bonus for the first sentence of a chunk (it says what the passage is about);

and :func:`keep_best` keeps the ``limit`` best, less a prior per rank of their chunk (retrieval
ranked the chunks by meaning), in their order in the context; only those are embedded.

Example:
    >>> scored = [Lexical(0.9, 2, 1), Lexical(0.1, 0, 3), Lexical(0.5, 1, 0)]
    >>> keep_best(scored, limit=2, rank_prior=0.01)
    [0, 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence


@dataclass
class Lexical:
    """A sentence's lexical match with the question, and where it sits in the context."""

    match: float
    chunk_index: int
    position: int


def prefilter_score(item: Lexical, rank_prior: float) -> float:
    """The score a sentence is kept by: its match less the prior of its chunk's rank."""
    return item.match - rank_prior * item.chunk_index


def keep_best(items: Sequence[Lexical], limit: Optional[int], rank_prior: float) -> List[int]:
    """Indices of the ``limit`` best sentences (all when ``limit`` is ``None`` or not smaller
    than their number), in their original order; ties go to the earlier chunk and sentence."""
    if limit is not None and limit < 0:
        raise ValueError(f"the prefilter limit must be >= 0 or None, got {limit!r}")
    if limit is None or limit >= len(items):
        return list(range(len(items)))
    ranked = sorted(range(len(items)), key=lambda i: (-prefilter_score(items[i], rank_prior),
                                                       items[i].chunk_index, items[i].position))
    return sorted(ranked[:limit])
