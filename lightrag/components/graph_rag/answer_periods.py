"""Who held a post at a given time: the year a question asks about, and whether a sentence's
periods ("from 1921 to 1934", a table row's "From: 1938; To: 1961", "1920–1938") include it.

"Who was the director of the Morrow Institute in 1950?" is not answered by "Director: Ida
Kessler; From: 1920; To: 1938", although it says every word of the question: its period ends
before 1950, so its name is not the answer. A sentence whose periods all miss the year holds no
answer (it is not ``typed``) and sinks; one whose period holds it rises. The year is the one the
question names, or that of the event it names ("... when the Halvern Telescope was completed?"
is dated by "It was ... completed in 1929.").

Example:
    >>> period_fit("He was chief engineer from 1921 to 1934.", 1929)
    True
    >>> period_fit("Chief engineer: Emil Sandqvist; From: 1921; To: 1934", 1940)
    False
    >>> period_fit("Emil Sandqvist (1885–1962) was a Swedish physicist.", 1940) is None
    True
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Sequence, Set, Tuple

from lightrag.components.graph_rag.answer_words import stems

if TYPE_CHECKING:  # pragma: no cover
    from lightrag.components.graph_rag.answer_candidates import Candidate

__all__ = ["asked_year", "fit_periods", "period_fit", "periods"]

_Y = r"((?:1[0-9]{3}|20[0-9]{2}))"
#: "from 1921 to 1934", "between 1890 and 1896", "1920–1938", a table row's "From: 1938; To: 1961"
_PERIOD = re.compile(r"\bfrom " + _Y + r" (?:to|until|till) " + _Y + r"\b"
                     r"|\bbetween " + _Y + r" and " + _Y + r"\b"
                     r"|\b" + _Y + r"\s?[-–—]\s?" + _Y + r"\b"
                     r"|\bFrom: " + _Y + r"; To: " + _Y + r"\b", re.I)
#: a lifespan right after the name a sentence opens with: "Ida Kessler (1881–1957) was ..."
_LIFESPAN = re.compile(r"^[^(.;]{0,60}\((?:born |b\. )?" + _Y + r"\s?[-–—]\s?" + _Y + r"\)")
#: "... in 1950?", "... during 1925?": the year a question asks about, at its end (not "when the
#: locomotive that returned to steam in 1992 was built", which dates another event)
_IN_YEAR = re.compile(r"\b(?:in|during) " + _Y + r"\s*\??\s*$", re.I)
#: "... when the Halvern Telescope was completed?": the event that dates the question
_WHEN_CLAUSE = re.compile(r"\b(?:when|at the time) (.+?)\??$", re.I)
#: how much a sentence whose period holds the year rises, and one whose periods all miss it sinks
IN_PERIOD_BONUS = 0.2
OUT_OF_PERIOD_PENALTY = 0.5


def periods(text: str) -> List[Tuple[int, int]]:
    """The periods (first year, last year) a sentence gives, without the lifespan of the
    person it opens with (a lifespan is not a term of office)."""
    lifespan = _LIFESPAN.match(text)
    rest = text[lifespan.end():] if lifespan else text
    found = []
    for match in _PERIOD.finditer(rest):
        first, last = (int(y) for y in match.groups() if y is not None)
        if first <= last:
            found.append((first, last))
    return found


def period_fit(text: str, year: int) -> Optional[bool]:
    """``True`` when a period of ``text`` holds ``year``, ``False`` when it gives periods that
    all miss it, ``None`` when it gives none."""
    found = periods(text)
    if not found:
        return None
    return any(first <= year <= last for first, last in found)


def asked_year(query: str, candidates: Sequence[Candidate]) -> Optional[int]:
    """The year a "Who was <role> ... in 1950?" question asks about, or that of the event of
    its "when ..." clause: the one year the sentences saying every word of the clause give
    (with their headings and passage openings: "It was ... completed in 1929." under "Halvern
    Telescope"), ``None`` when they give none or several."""
    clause = _WHEN_CLAUSE.search(query)
    named = _IN_YEAR.search(query)
    if named and not clause:
        return int(named.group(1))
    needed = stems(clause.group(1)) if clause else set()
    if len(needed) < 2:
        return None
    years: Set[int] = set()
    for c in candidates:
        if needed <= c.in_context and needed & c.words:
            years |= set(_event_years(c.sentence.text))
    return years.pop() if len(years) == 1 else None


_YEAR_AT = re.compile(r"\b(?:in|on) (?:(?:[0-9]{1,2} )?[a-z]+ )?" + _Y + r"\b", re.I)


def _event_years(text: str) -> List[int]:
    """The years a sentence dates its event by ("completed in 1929"), when it gives no period
    (a period dates a term, not an event)."""
    return [] if periods(text) else [int(y) for y in _YEAR_AT.findall(text)]


def fit_periods(candidates: Sequence[Candidate], query: str, kind: str,
                every: Sequence[Candidate]) -> None:
    """For a question asking who held a post at a time (a name asked, a year named or dated by
    an event of ``every`` sentence of the context), raise the ``candidates`` whose period holds
    that year and sink (and strip of their answer) those whose periods all miss it (a sentence
    without a period may still answer: "In 2017 the board appointed X as director")."""
    if kind != "name":
        return
    year = asked_year(query, every)
    if year is None:
        return
    for c in candidates:
        fit = period_fit(c.sentence.text, year)
        if fit:
            c.score += IN_PERIOD_BONUS
        elif fit is False:
            c.score -= OUT_OF_PERIOD_PENALTY
            c.typed = False
