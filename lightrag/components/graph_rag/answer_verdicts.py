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

from lightrag.components.graph_rag.answer_words import stem, stems
from lightrag.components.graph_rag.question_types import choice_options, fold, words, years_in

__all__ = ["choice_verdict", "yes_no_verdict"]

NEGATIONS = frozenset({"not", "never", "no", "none", "neither", "nor", "n't", "cannot"})
EARLIER = re.compile(r"\b(?:first|earlier|earliest|older|oldest|before|sooner|predate)", re.I)
LATER = re.compile(r"\b(?:later|latest|last|younger|youngest|after|newer|recent|more recently)", re.I)


_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
#: stems of the words that date a thing's beginning, which "older" and "first" compare
BEGINNINGS = frozenset(stem(w) for w in (
    "founded established built opened launched created started formed completed began born "
    "incorporated inaugurated commissioned constructed introduced released published").split())


def choice_verdict(query: str, sentences: Sequence[Tuple[str, ...]]) -> Optional[str]:
    """The option of "A or B" the years of the context decide, else ``None``.

    ``sentences``: ``(text, heading)`` or ``(text, heading, passage opening)`` of each context
    sentence. An option's year is the earliest year of the sentences that name it (in their
    text, heading or passage opening), taken first from those under a heading about it that say
    the question's event or a beginning ("founded", "opened", "launched", ...), then from any
    naming it that say one, then from any naming it: "Which is older, Corvane Shipworks or the
    Savings Bank?" reads the yard's "It was founded in 1871", not its founder's "She was born in
    1839" in a passage that opens "Agathe Corvane ... founder of Corvane Shipworks"."""
    options = choice_options(query)
    if options is None:
        return None
    events = (stems(query) - set().union(*(stems(o) for o in options))) | BEGINNINGS
    earliest: Dict[str, Optional[int]] = {}
    for option in options:
        named = _ARTICLE.sub("", fold(option))  # "the Golden Gate Bridge": as "Golden Gate Bridge"
        tiers: Tuple[list, list, list] = ([], [], [])
        for text, heading, *opening in sentences:
            if named not in fold(" ".join((text, heading, *opening))):
                continue
            says_event = bool(stems(text) & events)
            tier = 0 if says_event and named in fold(heading) else 1 if says_event else 2
            tiers[tier].extend(years_in(text))
        years = next((t for t in tiers if t), [])
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
