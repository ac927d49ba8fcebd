"""The quotes of a "Which X ... both A and B?" question: the answer is what one sentence about A
and one about B both name, so those two sentences lead ("Which institute operates both Hubble
and Webb?" opened with "Webb observes in infrared light ..., much larger than the mirror of
Hubble.", a sentence naming both but stating nothing shared, while "The Space Telescope Science
Institute in Baltimore also operates Webb." and "... runs the science operations of Hubble" came
later). The kind the question asks for ("institute", "agency") is said by the name itself: "the
Space Telescope Science Institute" is an institute.

Example:
    >>> both_options("Which institute operates both Hubble and Webb?")
    ('Hubble', 'Webb')
    >>> asked_kind("Which agency took part in both Cassini–Huygens and Webb?")
    'agency'
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.answer_candidates import Candidate, name_stems
from lightrag.components.graph_rag.answer_words import stem
from lightrag.components.graph_rag.question_types import fold, names_in, question_type
from lightrag.components.graph_rag.quote_order import with_antecedents

__all__ = ["asked_kind", "both_chain", "both_options"]

_BOTH = re.compile(r"\bboth (?:the )?(.+?) and (?:the )?(.+?)\s*\??$", re.I)
_KIND = re.compile(r"^(?:which|what) ([a-z]+)\b", re.I)


def both_options(question: str) -> Optional[Tuple[str, str]]:
    """The two things a "Which X ... both A and B?" question asks about, else ``None`` (a
    yes/no "Were both ...?" is asked side by side: answer_comparisons)."""
    match = _BOTH.search(question.strip())
    if not match or question_type(question) in ("yes_no", "choice"):
        return None
    return match.group(1), match.group(2)


def asked_kind(question: str) -> str:
    """The noun of "Which <noun> ...?" ("institute"), else ``""``."""
    match = _KIND.match(question.strip())
    return match.group(1).lower() if match else ""


def _kind_names(text: str, kind: str, options: Sequence[str]) -> List[str]:
    """The names of ``text`` that say the ``kind`` (its last word: "Space Telescope Science
    Institute" for "institute"), the options themselves left out."""
    own = {fold(o) for o in options}
    return [fold(n) for n in names_in(text) if fold(n) not in own
            and (not kind or stem(fold(n).split()[-1]) == stem(kind))]


def _about(c: Candidate, option: str) -> bool:
    needed = name_stems(option)
    return bool(needed) and needed <= c.in_context


def both_chain(query: str, chain: List[Candidate], every: List[Candidate],
               limit: int = 4) -> List[Candidate]:
    """``chain`` led by the best sentence about A and the best about B that name one same
    thing of the kind asked (each after the sentence saying who its pronoun means); ``chain``
    as it is when no such name is found."""
    options = both_options(query)
    if not options:
        return chain
    kind = asked_kind(query)
    holders: Dict[str, List[List[Candidate]]] = {}
    for c in every:
        for name in dict.fromkeys(_kind_names(c.sentence.text, kind, options)):
            sides = holders.setdefault(name, [[], []])
            for side, option in enumerate(options):
                if _about(c, option):
                    sides[side].append(c)
    shared = [(name, sides) for name, sides in holders.items() if sides[0] and sides[1]]
    if not shared:
        return chain
    name, sides = max(shared, key=lambda item: max(c.lexical for c in item[1][0] + item[1][1]))
    firsts = [max(side, key=_strength(options[i])) for i, side in enumerate(sides)]
    if firsts[0] is firsts[1]:
        return chain
    lead = with_antecedents(firsts, every)
    return (lead + [c for c in chain if c not in lead])[: max(limit, len(lead))]


def _strength(option: str):
    """A sentence's claim to state the relation for ``option``: naming it in its own words
    first, then its match to the question."""
    needed = name_stems(option)
    return lambda c: (needed <= c.words, c.lexical)
