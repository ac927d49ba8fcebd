"""Verdicts of the extractive answerer for yes/no and "A or B" questions, from the quoted context.

A verdict is best effort and never invented: "A or B" is decided only by the years the context
gives each option ("Which came first, X or Y?"), "yes" only when the quoted sentences state every
word of the question's claim without a negation; otherwise the answer says the sources do not
decide (absence of evidence is not a "no").

Example:
    >>> choice_verdict("Which was launched first, Voyager 1 or Cassini?",
    ...                [("Voyager 1 was launched in 1977.", ""), ("Cassini was launched in 1997.", "")])
    'Voyager 1'
    >>> yes_no_verdict("Was Voyager 1 launched by NASA?",
    ...                [("NASA launched Voyager 1.", stems("NASA launched Voyager 1."))], {})
    'Yes'
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Sequence, Set, Tuple

from lightrag.components.graph_rag.answer_words import stems
from lightrag.components.graph_rag.question_types import choice_options, fold, words, years_in

__all__ = ["choice_verdict", "yes_no_verdict"]

NEGATIONS = frozenset({"not", "never", "no", "none", "neither", "nor", "n't", "cannot"})
EARLIER = re.compile(r"\b(?:first|earlier|earliest|older|oldest|before|sooner|predate)", re.I)
LATER = re.compile(r"\b(?:later|latest|last|younger|youngest|after|newer|recent|more recently)", re.I)


_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def choice_verdict(query: str, sentences: Sequence[Tuple[str, str]]) -> Optional[str]:
    """The option of "A or B" the years of the context decide, else ``None``.

    ``sentences``: ``(text, heading)`` of each context sentence; an option's year is the
    earliest year of a sentence that names it (in its text or its heading)."""
    options = choice_options(query)
    if options is None:
        return None
    earliest: Dict[str, Optional[int]] = {}
    for option in options:
        named = _ARTICLE.sub("", fold(option))  # "the Golden Gate Bridge": as "Golden Gate Bridge"
        years = [y for text, heading in sentences if named in fold(text + " " + heading)
                 for y in years_in(text)]
        earliest[option] = min(years) if years else None
    a, b = options
    if earliest[a] is None or earliest[b] is None or earliest[a] == earliest[b]:
        return None
    if LATER.search(query):
        return a if earliest[a] > earliest[b] else b
    if EARLIER.search(query):
        return a if earliest[a] < earliest[b] else b
    return None


def yes_no_verdict(query: str, quoted: Sequence[Tuple[str, Set[str]]],
                   weights: Dict[str, float]) -> Optional[str]:
    """"Yes" when the quoted sentences together state every word of the question's claim
    (90 % of its idf ``weights``) without a negation; "No" when one quoted sentence states it
    with a negation and the question has none ("Was any core lost when the archive flooded in
    2020?" against "The archive was flooded in 2020, but no cores were lost."); otherwise
    ``None`` (undecided).

    ``quoted``: ``(text, stemmed words of the sentence and its heading)`` of each quote."""
    claim = stems(query)
    weight = sum(weights.get(w, 1.0) for w in claim)
    if not claim or not weight:
        return None

    def share(stated: Set[str]) -> float:
        return sum(weights.get(w, 1.0) for w in claim & stated) / weight

    said = set().union(*(stated for _, stated in quoted))
    negated = any(words(text) & NEGATIONS for text, _ in quoted)
    if share(said) >= 0.9 and not negated:
        return "Yes"
    if not words(query) & NEGATIONS and any(
            share(stated) >= 0.9 and words(text) & NEGATIONS for text, stated in quoted):
        return "No"
    return None
