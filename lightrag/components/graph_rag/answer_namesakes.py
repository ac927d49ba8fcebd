"""Numbered namesakes: "Voyager 1" and "Voyager 2", "Apollo 11" and "Apollo 13", "Henry VII"
and "Henry VIII" share every word but their number, so a question about one matched the
other's sentences word for word ("Which moon did Voyager 1 photograph?" opened with "Voyager 2
is the only spacecraft that has visited Uranus and Neptune. It passed Uranus ..., where it
photographed the Great Dark Spot."). A sentence that names the question's name with another
number, and not with its own, is about the namesake: :func:`sink_namesakes` lowers it (a pronoun
sentence is read with the sentence before it, which says who "it" is). A model code ("T2", "E4")
is a numbered name too: "What does error E4 mean on the T2?" is not answered by "Error E4 on the
T3 means ...". A numbered name no sentence says is not in the context at all, however much its
namesake is (:func:`unsaid_numbered`: "Who was the commander of Apollo 13?" over Apollo 11's crew).

Example:
    >>> numbered("Which moon did Voyager 1 photograph?")
    {'voyager': '1'}
    >>> about_namesake("Voyager 2 is the only spacecraft that has visited Uranus.", {"voyager": "1"})
    True
    >>> about_namesake("Voyager 1 flew past Jupiter, after Voyager 2 was launched.", {"voyager": "1"})
    False
"""

from __future__ import annotations

import re
from typing import Dict, List, Sequence

from lightrag.components.graph_rag.answer_candidates import Candidate
from lightrag.components.graph_rag.answer_words import STOPWORDS
from lightrag.components.graph_rag.question_types import fold
from lightrag.components.graph_rag.quote_order import leading_pronoun

#: score taken from a sentence about a numbered namesake of the question's name
NAMESAKE_PENALTY = 0.5
#: a capitalised name and its number: 1-3 digits (not a year), or a Roman numeral
_NUMBERED = re.compile(r"\b([A-Z][\w'’-]*)\s+(\d{1,3}|[IVX]{1,4})\b(?![.,:]\d)")
#: a model code: capitals and digits as one word ("T2", "E4", "BM3")
_CODE = re.compile(r"\b([A-Z]{1,3})(\d{1,4})\b")
_MONTHS = frozenset("january february march april may june july august september october "
                    "november december".split())


def _said(text: str) -> Dict[str, set]:
    """``{name: numbers}`` of the numbered names and model codes of ``text``."""
    said: Dict[str, set] = {}
    for match in [*_NUMBERED.finditer(text), *_CODE.finditer(text)]:
        name = fold(match.group(1))
        if name not in _MONTHS and name not in STOPWORDS:  # "Can I ...?" names nothing
            said.setdefault(name, set()).add(match.group(2))
    return said


def numbered(text: str) -> Dict[str, str]:
    """``{name: number}`` of the numbered names in ``text`` (folded name, its number as written;
    a month with its day is no numbered name); a name the text numbers twice ("Voyager 1 or
    Voyager 2?") has no namesake there.

    >>> numbered("What does error E4 mean on the T2?")
    {'e': '4', 't': '2'}
    """
    return {name: next(iter(numbers)) for name, numbers in _said(text).items() if len(numbers) == 1}


def about_namesake(text: str, asked: Dict[str, str]) -> bool:
    """Whether ``text`` names one of the ``asked`` names with another number and never with
    the asked one."""
    said = _said(text)
    return any(name in said and number not in said[name] for name, number in asked.items())


def unsaid_numbered(candidates: Sequence[Candidate], query: str) -> str:
    """The numbered name of ``query`` ("Apollo 13") that no candidate's sentence, heading or
    passage opening says with its number, else ``""``: the context is about its namesakes.

    >>> from lightrag.components.graph_rag.answer_candidates import answer_candidates
    >>> unsaid_numbered(answer_candidates([{"content": "Apollo 11\\nThe crew were three."}]),
    ...                 "Who was the commander of Apollo 13?")
    'Apollo 13'
    """
    said: Dict[str, set] = {}
    for c in candidates:
        for text in (c.sentence.text, c.sentence.heading, c.passage_opening):
            for name, numbers in _said(text).items():
                said.setdefault(name, set()).update(numbers)
    for match in [*_NUMBERED.finditer(query), *_CODE.finditer(query)]:
        name, number = fold(match.group(1)), match.group(2)
        if name in numbered(query) and number not in said.get(name, set()):
            return match.group(0)
    return ""


def sink_namesakes(candidates: Sequence[Candidate], query: str, every: Sequence[Candidate]) -> None:
    """Lower the score of the ``candidates`` about a numbered namesake of a name the question
    numbers (see the module doc); ``every`` gives a pronoun sentence its previous sentence."""
    asked = numbered(query)
    if not asked:
        return
    for c in namesake_quotes(candidates, asked, every):
        c.score -= NAMESAKE_PENALTY
        c.typed = False


def namesake_quotes(candidates: Sequence[Candidate], asked: Dict[str, str],
                    every: Sequence[Candidate]) -> List[Candidate]:
    """The ``candidates`` about a namesake of the ``asked`` numbered names (:func:`numbered`),
    a pronoun sentence read with the sentence before it in ``every``."""
    if not asked:
        return []
    by_place = {(c.chunk_index, c.position): c for c in every}
    found = []
    for c in candidates:
        text = c.sentence.text
        if leading_pronoun(text) and not numbered(text):
            before = by_place.get((c.chunk_index, c.position - 1))
            text = f"{before.sentence.text} {text}" if before is not None else text
        if about_namesake(text, asked):
            found.append(c)
    return found
