"""Verdicts of the extractive answerer for yes/no and "A or B" questions, from the quoted context.

A verdict is best effort and never invented: "A or B" is decided only by the years the context
gives each option ("Which came first, X or Y?"), "yes" only when one quoted sentence states every
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
from typing import Dict, List, Optional, Sequence, Set, Tuple

from lightrag.components.graph_rag.answer_words import stem, stems
from lightrag.components.graph_rag.question_types import choice_options, fold, names_in, words, years_in

__all__ = ["choice_verdict", "yes_no_verdict"]

NEGATIONS = frozenset({"not", "never", "no", "none", "neither", "nor", "n't", "cannot"})
EARLIER = re.compile(r"\b(?:first|earlier|earliest|older|oldest|before|sooner|predate)", re.I)
LATER = re.compile(r"\b(?:later|latest|last|younger|youngest|after|newer|recent|more recently)", re.I)


_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
#: stems of the words that date a thing's beginning, which "older" and "first" compare
BEGINNINGS = frozenset(stem(w) for w in (
    "founded established built opened launched created started formed completed began born "
    "incorporated inaugurated commissioned constructed introduced released published").split())
#: stems of the words that date a thing's end: "Which closed first, A or B?" compares closings
ENDINGS = frozenset(stem(w) for w in (
    "closed ended died retired demolished abolished dissolved disbanded shut discontinued "
    "withdrawn scrapped sank collapsed destroyed wrecked replaced stopped ceased").split())


def choice_verdict(query: str, sentences: Sequence[Tuple[str, ...]]) -> Optional[str]:
    """The option of "A or B" the years of the context decide, else ``None`` (see
    :func:`choice_decision`)."""
    return choice_decision(query, sentences)[0]


def choice_decision(query: str, sentences: Sequence[Tuple[str, ...]]) -> Tuple[Optional[str], List[int]]:
    """``(option, deciding)``: the option of "A or B" the years of the context decide (else
    ``None``), and the indices of the sentences whose years decided it, one per option (the
    answer quotes them: "Hubble, according to the dates in the sources:" quoted only Webb's
    launch when Hubble's was in the context but not in the quotes).

    ``sentences``: ``(text, heading)`` or ``(text, heading, passage opening)`` of each context
    sentence. An option's year is the earliest year of the sentences that name it (in their
    text, heading or passage opening), taken first from those under a heading about it that say
    the question's event or a beginning ("founded", "opened", "launched", ...; only the
    question's own when it asks about an end: "Which closed first?" reads closings, each the
    latest year of its sentence), then from any naming it that say one, then from any naming
    it: "Which is older, Corvane Shipworks or the Savings Bank?" reads the yard's "It was
    founded in 1871", not its founder's "She was born in 1839" in a passage that opens "Agathe
    Corvane ... founder of Corvane Shipworks"."""
    options = choice_options(query)
    if options is None:
        return None, []
    asked = stems(query) - set().union(*(stems(o) for o in options)) - _COMPARING
    ending = bool(asked & ENDINGS)
    events = asked if ending else asked | BEGINNINGS
    earliest: Dict[str, Optional[Tuple[int, int]]] = {}
    for option in options:
        named, own_events = _option_parts(option)
        # the event the question or the option names ("launched", "the opening of X") is read
        # first: "Apollo 11 launched ... in 1969", not "the goal that Kennedy had set in 1961"
        # of a sentence that says "mission", nor "She founded the company in 2011"
        dated = _event_years(sentences, named, (asked & (BEGINNINGS | ENDINGS)) | own_events, ending)
        if not dated:
            tiers = _dated(sentences, named, events | own_events, ending, exact=True)
            if not any(tiers):  # "the Bogwatch project" where the passage says "Bogwatch is a ... project"
                tiers = _dated(sentences, named, events | own_events, ending, exact=False)
            dated = next((t for t in tiers if t), [])
        earliest[option] = min(dated) if dated else None
    a, b = options
    year_a, year_b = (earliest[o][0] if earliest[o] else None for o in (a, b))
    if year_a is not None and year_a == year_b:  # the same year: the days may decide
        year_a, year_b = (_date_after(sentences[earliest[o][1]][0], _option_parts(o)[0])  # type: ignore[index]
                          for o in (a, b))
    if year_a is None or year_b is None or year_a == year_b:
        return None, []
    deciding = [earliest[a][1], earliest[b][1]]  # type: ignore[index]
    asking = query.replace(a, " ").replace(b, " ")  # "The Last Ferry" asks nothing about "later"
    if LATER.search(asking):
        return (a if year_a > year_b else b), deciding
    if EARLIER.search(asking):
        return (a if year_a < year_b else b), deciding
    return None, []


_MONTHS = ("january february march april may june july august september october november "
           "december").split()
_DATE = re.compile(r"\b(?:(\d{1,2}) (" + "|".join(_MONTHS) + r")|(" + "|".join(_MONTHS)
                   + r")(?: (\d{1,2}))?,?) ((?:1[0-9]|20)[0-9]{2})\b")


def _date_after(text: str, named: str) -> Optional[Tuple[int, int, int]]:
    """``(year, month, day)`` of the first date after ``named`` in ``text`` (from its start
    when it is not there; a month alone is its first day), else ``None``: "NASA launched
    Voyager 2 on August 20, 1977, and Voyager 1 on September 5, 1977" dates "voyager 1"
    (1977, 9, 5).

    >>> _date_after("It launched on 3 September 2023 and closed in May 2024.", "it")
    (2023, 9, 3)
    """
    folded = fold(text)
    at = folded.find(named)
    found = _DATE.search(folded, max(at, 0) + (len(named) if at >= 0 else 0))
    if not found:
        return None
    day, month = found.group(1) or found.group(4) or "1", found.group(2) or found.group(3)
    return int(found.group(5)), _MONTHS.index(month) + 1, int(day)


def _event_years(sentences: Sequence[Tuple[str, ...]], named: str, events: Set[str],
                 ending: bool) -> list:
    """The ``(year, sentence index)`` of the sentences naming ``named`` that say one of
    ``events`` (under a heading naming it first), else ``[]``."""
    if not events:
        return []
    for exact in (True, False):
        tiers = _dated(sentences, named, events, ending, exact=exact)
        if tiers[0] or tiers[1]:
            return tiers[0] or tiers[1]
    return []


def _dated(sentences: Sequence[Tuple[str, ...]], named: str, events: Set[str], ending: bool,
           exact: bool) -> Tuple[list, list, list]:
    """The ``(year, sentence index)`` of the sentences that name ``named`` (as a phrase, or
    ``exact=False``: all its words), in three tiers: under a heading naming it and saying an
    event, saying an event, the rest (an ending's sentence gives its latest year)."""
    needed = words(named) - {"the", "of", "a", "an", "and"}
    tiers: Tuple[list, list, list] = ([], [], [])
    for index, (text, heading, *opening) in enumerate(sentences):
        context = fold(" ".join((text, heading, *opening)))
        if (named not in context) if exact else not needed <= words(context):
            continue
        says_event = bool(stems(text) & events)
        in_heading = named in fold(heading) if exact else needed <= words(heading)
        tier = 0 if says_event and in_heading else 1 if says_event else 2
        years = _own_years(text, named) if exact else years_in(text)
        lived = _lifespan(text, named, events) if exact else None
        if lived is not None:
            tier, years = 0, [lived]
        if ending and says_event and years:
            years = [max(years)]  # "opened in 1883 and closed in 1931": the end is the later
        tiers[tier].extend((year, index) for year in years)
    return tiers


#: stems of the words that ask for the comparison, not the event: "first" of "Who was born first"
_COMPARING = frozenset(stem(w) for w in "first last earlier later older younger sooner".split())
_LIFESPAN = re.compile(r"^\s*\((?:born |b\. )?((?:1[0-9]{3}|20[0-9]{2}))\s*[-–—]\s*"
                       r"(?:died |d\. )?((?:1[0-9]{3}|20[0-9]{2}))\)")


def _lifespan(text: str, named: str, events: Set[str]) -> Optional[int]:
    """The year of birth (or, when ``events`` ask for a death, of death) that the lifespan right
    after ``named`` gives ("Ida Kestrel (1874–1944) was ..." -> 1874 for "born"), else ``None``:
    a sentence naming another person first ("Ida Kessler (1881–1957) ..., not to be confused
    with Ida Kestrel") does not date ``named``."""
    folded = fold(text)
    at = folded.find(named)
    lived = _LIFESPAN.match(folded[at + len(named):]) if at >= 0 else None
    if lived is None or not events & {"born", "die"}:
        return None
    return int(lived.group(2 if "die" in events and "born" not in events else 1))


_YEAR_AFTER = re.compile(r"^[^.;]{0,4}?\(?\s*((?:1[0-9]{3}|20[0-9]{2}))\b")


def _own_years(text: str, named: str) -> list:
    """The years of ``text`` that are ``named``'s: all of them, unless the sentence lists several
    things each with its year ("... The Glass Orchid (1963), Red Kestrel (1975) ..."): then the
    year right after its name."""
    years = years_in(text)
    if len(years) < 2:
        return years
    folded = fold(text)
    at = folded.find(named)
    if at < 0:
        return years
    right_after = _YEAR_AFTER.match(folded[at + len(named):])
    return [int(right_after.group(1))] if right_after else years


_EVENT_OF = re.compile(r"^(?:the |a |an )?([a-z]+) of (?:the |a |an )?(.+)$")


def _option_parts(option: str) -> Tuple[str, Set[str]]:
    """What an option names (folded, without its article) and the stems of the event it names
    with it: "the opening of the Loch Brannagh field station" -> ("loch brannagh field station",
    {"open"}), "Priya Lindqvist joining the Institute" -> ("priya lindqvist", {"join",
    "institut"}), "the Golden Gate Bridge" -> ("golden gate bridge", set())."""
    text = option.strip()
    event_of = _EVENT_OF.match(text)
    if event_of and event_of.group(1).endswith(("ing", "ion", "ment", "start", "end", "death",
                                                "birth", "launch", "foundation", "close", "closure")):
        return _ARTICLE.sub("", fold(event_of.group(2))), {stem(event_of.group(1))}
    names = names_in(" " + text)
    if names and _ARTICLE.sub("", text).startswith(names[0]) and len(names[0]) < len(_ARTICLE.sub("", text)):
        rest = _ARTICLE.sub("", text)[len(names[0]):]
        if re.match(r"\s+[a-z]+ing\b", rest):
            return fold(names[0]), stems(rest)
    bare = _ARTICLE.sub("", text)
    if re.fullmatch(r"[a-z]+", bare):  # "the recall": an event named alone ("recalled in 2024")
        return bare, {stem(bare)}
    return _ARTICLE.sub("", fold(text)), set()


def yes_no_verdict(query: str, quoted: Sequence[Tuple[str, Set[str]]],
                   weights: Dict[str, float]) -> Optional[str]:
    """"Yes" when one quoted sentence (with its heading) states every word of the question's
    claim (90 % of its idf ``weights``) without a negation (words pooled from several sentences
    say nothing together: "Margery Quaile", "designed" and "the Anvil Viaduct" in three of them
    do not say she designed it); "No" when one quoted sentence states it
    with a negation and the question has none ("Was any core lost when the archive flooded in
    2020?" against "The archive was flooded in 2020, but no cores were lost."), or with the
    opposite of a claim word ("Closed all day" for "Is the pool open on Mondays?"); otherwise
    ``None`` (undecided).

    ``quoted``: ``(text, stemmed words of the sentence, its heading and its passage's opening)``
    of each quote."""
    claim = stems(query)
    weight = sum(weights.get(w, 1.0) for w in claim)
    if not claim or not weight:
        return None

    def share(stated: Set[str]) -> float:
        return sum(weights.get(w, 1.0) for w in claim & stated) / weight

    if any(share(stated) >= 0.9 and not words(text) & NEGATIONS for text, stated in quoted):
        return "Yes"
    if not words(query) & NEGATIONS and any(share(stated | opposed) >= 0.9 for stated, opposed in (
            (stated, _opposed(text, claim)) for text, stated in quoted) if opposed):
        return "No"
    names = {stem(w) for name in names_in(query) for w in words(name)}
    if not words(query) & NEGATIONS and any(
            share(stated) >= 0.9 and _negated_clause(text, stated, claim, names) for text, stated in quoted):
        return "No"
    return None


#: claim words and the words that deny them without a negation: "Closed all day" answers "Is
#: the pool open on Mondays?"
_OPPOSITES = {stem(word): frozenset(opposites.split()) for word, opposites in (
    ("open", "closed shut"), ("allowed", "forbidden prohibited banned"),
    ("permitted", "forbidden prohibited banned"), ("alive", "dead"))}


def _opposed(text: str, claim: Set[str]) -> Set[str]:
    """The claim words ``text`` denies by an opposite ("closed" for "open"), unless it negates
    that opposite too ("never closed")."""
    said = words(text)
    if said & NEGATIONS:
        return set()
    return {w for w in claim if _OPPOSITES.get(w, frozenset()) & said}


#: where a sentence's clauses part ("..., but the hotel lets ...", "; although ...")
_CLAUSES = re.compile(r"[;:]|,?\s+(?:but|although|though|while|whereas|yet)\s+"
                      r"|,\s+and\s+(?=\w+\s+(?:is|was|are|were|has|had)\b)")


def _negated_clause(text: str, stated: Set[str], claim: Set[str], names: Set[str]) -> bool:
    """Whether the negation of ``text`` stands in a clause that says what the claim says of its
    subject (a claim word besides the names and the heading's words): "The house is privately
    owned and is not cared for by the Trust, but the hotel lets visitors in" does not deny that
    the house is a hotel; "The archive was flooded in 2020, but no cores were lost" denies that
    cores were lost."""
    around = stated - stems(text)  # the heading's and passage opening's words
    key = claim - around - names or claim
    return any(words(clause) & NEGATIONS and stems(clause) & key for clause in _CLAUSES.split(text))
