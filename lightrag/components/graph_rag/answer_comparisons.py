"""Yes/no questions that compare two things, each fact found on its own: "Were both founders of A
and B born in Germany?", "Were X and Y born in the same country?", "Are A and B in the same
country?", "Was X born before Y?".

No one sentence states such a claim, so the plain yes/no verdict (one sentence saying every word
of the question) cannot decide it. Each side is asked on its own ("Where was the founder of A
born?") of the same context, and the verdict is drawn from the two answers' quotes only when
both are grounded: the place sentence is about the side's subject (under its heading or passage
opening, or about the person that a quote saying the role of the subject names: "founded in
1898 by Ludo Brannox", then "He was born in Kessfeld, Germany." under "Ludo Brannox"). "No"
needs each place's country (:data:`COUNTRIES`, the last part of the written place: "Kessfeld,
Germany", "northern Norway"): "born in Kessfeld" alone says nothing of Germany, nor "Bergen,
Hordaland" of Norway, and the answer then says the sources do not decide.

Example:
    >>> parse_comparison("Were both founders of Veyra Instruments and Orrin Dynamics born in Germany?").sides
    ('the founder of Veyra Instruments', 'the founder of Orrin Dynamics')
    >>> parse_comparison("Are Tarnholm and Alzwerth in the same country?").same
    'country'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.answer_candidates import Candidate, answer_candidates
from lightrag.components.graph_rag.answer_types import AnswerSentence
from lightrag.components.graph_rag.answer_words import bridge_words, stem
from lightrag.components.graph_rag.question_types import fold, names_in
from lightrag.components.graph_rag.quote_order import with_antecedents

__all__ = ["COUNTRIES", "Comparison", "compared_answer", "comparison_verdict", "country",
           "parse_comparison", "place_of"]

_NAME = r"[A-Z][\w'’.-]*(?: (?:of |the |de |von |van )?[A-Z][\w'’.-]*)*"
_BOTH_ROLE = re.compile(r"^(?:were|are|was|is) both (?:the )?([a-z]+?)s? of (" + _NAME + r") and "
                        r"(?:of )?(?:the )?(" + _NAME + r") ([a-z]+) in (" + _NAME + r")\s*\??$")
_BOTH = re.compile(r"^(?:were|are) (?:both )?(" + _NAME + r") and (" + _NAME + r") (?:both )?([a-z]+) in ("
                   + _NAME + r")\s*\??$")
_SAME = re.compile(r"^(?:were|are|was|is) (" + _NAME + r") and (" + _NAME + r") (?:both )?(?:([a-z]+) )?in "
                   r"the same country\s*\??$")
_ORDER = re.compile(r"^(?:was|were|is) (" + _NAME + r") (born|founded|established|built|opened) "
                    r"(before|after|earlier than|later than) (" + _NAME + r")\s*\??$")
#: verbs a side's place is asked by ("born in"), and the "Where ...?" question that asks it
_WHERE = {"born": "Where was {} born?", "died": "Where did {} die?", "buried": "Where was {} buried?",
          "founded": "Where was {} founded?", "based": "Where is {} based?", "located": "Where is {}?",
          "": "Where is {}?"}
_DIRECTIONS = r"(?:(?:north|south|east|west|central|north-east|north-west|south-east|south-west)(?:ern)?\s+)?"
_IN_PLACE = re.compile(r"\b(?:in|at|near) (?:the )?" + _DIRECTIONS + r"(" + _NAME + r"(?:, " + _NAME + r")*)")


@dataclass(frozen=True)
class Comparison:
    """A yes/no question about two sides: each side's place said with ``verb`` is ``value``
    ("born in Germany"), or both sides' countries are the ``same``, or one side's ``verb`` came
    in the ``order`` asked ("before")."""

    sides: Tuple[str, str]
    verb: str = ""
    value: str = ""
    same: str = ""
    order: str = ""


def parse_comparison(question: str) -> Optional[Comparison]:
    """The comparison a yes/no question asks, ``None`` for any other question."""
    text = question.strip()
    text = text[:1].lower() + text[1:]
    match = _BOTH_ROLE.match(text)
    if match and match.group(4) in _WHERE:
        role, a, b, verb, value = match.groups()
        return Comparison((f"the {role} of {a}", f"the {role} of {b}"), verb, value)
    match = _BOTH.match(text)
    if match and match.group(3) in _WHERE:
        return Comparison((match.group(1), match.group(2)), match.group(3), match.group(4))
    match = _SAME.match(text)
    if match and (match.group(3) or "") in _WHERE:
        return Comparison((match.group(1), match.group(2)), match.group(3) or "", same="country")
    match = _ORDER.match(text)
    if match:
        return Comparison((match.group(1), match.group(4)), match.group(2), order=match.group(3))
    return None


def side_question(comparison: Comparison, side: str) -> str:
    """The question that asks one side's fact: "Where was the founder of A born?", or for an
    order "Who was born first, X or Y?"."""
    if comparison.order:
        first = "later" if comparison.order in ("after", "later than") else "first"
        return f"Which was {comparison.verb} {first}, {comparison.sides[0]} or {comparison.sides[1]}?"
    return _WHERE[comparison.verb].format(side)


#: the sovereign countries (and the UK's four), folded: the rank a "same country" or "born in
#: Germany" verdict compares; a region ("Tuscany", "Hordaland") or a town decides nothing
COUNTRIES = frozenset(fold(c) for c in """afghanistan albania algeria andorra angola argentina armenia
australia austria azerbaijan bahamas bahrain bangladesh barbados belarus belgium belize benin bhutan
bolivia botswana brazil brunei bulgaria burundi cambodia cameroon canada chad chile china colombia
comoros congo croatia cuba cyprus czechia denmark djibouti dominica ecuador egypt eritrea estonia
eswatini ethiopia fiji finland france gabon gambia georgia germany ghana greece grenada guatemala
guinea guyana haiti honduras hungary iceland india indonesia iran iraq ireland israel italy jamaica
japan jordan kazakhstan kenya kiribati kosovo kuwait kyrgyzstan laos latvia lebanon lesotho liberia
libya liechtenstein lithuania luxembourg madagascar malawi malaysia maldives mali malta mauritania
mauritius mexico micronesia moldova monaco mongolia montenegro morocco mozambique myanmar namibia
nauru nepal netherlands nicaragua niger nigeria norway oman pakistan palau panama paraguay peru
philippines poland portugal qatar romania russia rwanda samoa senegal serbia seychelles singapore
slovakia slovenia somalia spain sudan suriname sweden switzerland syria taiwan tajikistan tanzania
thailand togo tonga tunisia turkey türkiye turkmenistan tuvalu uganda ukraine uruguay uzbekistan
vanuatu venezuela vietnam yemen zambia zimbabwe england scotland wales""".split()) | frozenset((
    "bosnia and herzegovina", "burkina faso", "cabo verde", "cape verde", "central african republic",
    "costa rica", "czech republic", "dominican republic", "east timor", "el salvador",
    "equatorial guinea", "guinea-bissau", "ivory coast", "marshall islands", "new zealand",
    "north korea", "north macedonia", "northern ireland", "papua new guinea", "saint lucia",
    "san marino", "saudi arabia", "sierra leone", "solomon islands", "south africa", "south korea",
    "south sudan", "sri lanka", "trinidad and tobago", "united arab emirates", "united kingdom",
    "united states", "vatican city", "great britain", "britain", "holland"))
#: names of one country: its parts, or another name for it
_SAME_COUNTRY = {**dict.fromkeys(("england", "scotland", "wales", "northern ireland", "great britain",
                                  "britain"), "united kingdom"),
                 "holland": "netherlands", "czech republic": "czechia", "türkiye": "turkey",
                 "cape verde": "cabo verde", "east timor": "timor-leste"}


def country(place: str) -> Optional[str]:
    """The country a written place ends with ("Kessfeld, Germany", "southern Sweden"), one name
    for each ("Wexbury, England" -> "united kingdom"), else ``None``."""
    last = fold(place.split(",")[-1].strip())
    return _SAME_COUNTRY.get(last, last) if last in COUNTRIES else None


def place_of(side: str, verb: str, quotes: Sequence[Candidate],
             every: Sequence[Candidate]) -> Optional[Tuple[str, Candidate]]:
    """The place (as written: "Kessfeld, Germany") a grounded sentence gives ``side`` with
    ``verb``, and that sentence, else ``None``: one saying the verb (any, for "where is X")
    about the side's subject (under its heading or naming it), or about the one person that a
    quote of the side's answer saying the side's role names ("founded ... by Ludo Brannox")."""
    role, subject = _role_and_subject(side)
    pool = list(quotes) + [c for c in every if c not in quotes]
    about = _holders(role, subject, pool) if role else [subject]
    verb_stem = stem(verb) if verb else ""
    found: Dict[str, Tuple[str, Candidate]] = {}
    for name in about:
        for c in pool:
            place = _place_for(c, name, bool(verb_stem)) if not verb_stem or verb_stem in c.words else None
            if place:
                found.setdefault(name, (place, c))
                break
    if len({fold(place) for place, _ in found.values()}) > 1:
        return None  # co-founders born in different places: no one place answers for the side
    if found:
        return next(iter(found.values()))
    return None if role or verb_stem else _written_with(subject, every)


def _role_and_subject(side: str) -> Tuple[str, str]:
    """("founder", "Veyra Instruments") of "the founder of Veyra Instruments", ("", side) else."""
    match = re.match(r"^the ([a-z]+) of (.+)$", side)
    return (match.group(1), match.group(2)) if match else ("", side)


def _holders(role: str, subject: str, quotes: Sequence[Candidate]) -> List[str]:
    """The names a quote about ``subject`` that says ``role`` ("founded" for "founder") gives."""
    said, needed = stem(role), bridge_words(subject)
    held: List[str] = []
    for c in quotes:
        if said in c.words and _about(c, subject):
            held += [n for n in names_in(c.sentence.text) if not bridge_words(n) <= needed]
    return held


def _about(c: Candidate, name: str) -> bool:
    """Whether ``c`` is about ``name``: its heading is that name, or its text names it (not as
    part of a longer name: "Karl Mettler Jr." is not Karl Mettler). A passage's opening does not
    count: "..., not to be confused with Ida Kestrel" opens Ida Kessler's passage."""
    if fold(c.sentence.heading).rstrip(". ") == fold(name).rstrip(". "):
        return True
    return re.search(r"\b" + re.escape(fold(name)) + r"\b(?!\.? ?(?:jr|sr)\b)(?! [a-z]*[A-Z])",
                     fold(c.sentence.text)) is not None


def _place_for(c: Candidate, name: str, by_verb: bool) -> Optional[str]:
    """The place of ``c`` when it is about ``name``; without a verb, only under its heading
    ("He moved to Tarnholm in 1889" does not place Tarnholm)."""
    owned = fold(c.sentence.heading).rstrip(". ") == fold(name).rstrip(". ")
    if not (owned if not by_verb else _about(c, name)):
        return None
    places = [_cleaned(m.group(1)) for m in _IN_PLACE.finditer(c.sentence.text)
              if not bridge_words(m.group(1)) <= bridge_words(name)]
    return places[0] if places else None


def _cleaned(place: str) -> str:
    """A written place without the full stop its sentence ends with."""
    return ", ".join(part.strip().rstrip(".") for part in place.split(","))


def _written_with(place: str, every: Sequence[Candidate]) -> Optional[Tuple[str, Candidate]]:
    """"Fjordby, Norway" when a sentence writes ``place`` followed by a comma and another place."""
    for c in every:
        for match in _IN_PLACE.finditer(c.sentence.text):
            parts = [p.strip() for p in match.group(1).split(",")]
            if len(parts) > 1 and fold(parts[0]) == fold(place):
                return _cleaned(match.group(1)), c
    return None


def comparison_verdict(comparison: Comparison, places: Sequence[Optional[str]]) -> Optional[str]:
    """"Yes", "No" or ``None`` (undecided) from each side's grounded place: "No" only when a
    side's place is in another country than the one asked (or than the other side's)."""
    lands = [country(p) if p else None for p in places]
    if comparison.same:
        if None in places:
            return None
        if fold(places[0] or "") == fold(places[1] or ""):
            return "Yes"  # born in the same town
        return None if None in lands else "Yes" if lands[0] == lands[1] else "No"
    value = fold(comparison.value)
    if all(p and value in words_of(p) for p in places):
        return "Yes"
    asked = country(comparison.value)  # one side born elsewhere is enough for "not both"
    if asked and any(land and land != asked for land in lands):
        return "No"
    return None


def words_of(place: str) -> set:
    """The folded parts of a written place ("Kessfeld, Germany" -> {"kessfeld", "germany"})."""
    return {fold(p.strip()) for p in place.split(",")} | {fold(place)}


def order_verdict(comparison: Comparison, pick: Optional[str]) -> Optional[str]:
    """"Yes" when the choice question's pick is the first side ("Was X born before Y?" and X was
    born first), "No" when it is the other, ``None`` when undecided."""
    if pick is None:
        return None
    return "Yes" if fold(pick) == fold(comparison.sides[0]) else "No"


def quoted(sentences: Sequence[Any]) -> str:
    """The quotes (each with ``text`` and ``reference_id``) as an answer shows them, each once."""
    seen, parts = set(), []
    for s in sentences:
        if s.text not in seen:
            seen.add(s.text)
            parts.append(f"{s.text} [{s.reference_id}]" if s.reference_id else s.text)
    return " ".join(parts)


Ask = Callable[[str], Awaitable[Any]]


async def compared_answer(query: str, chunks: Sequence[Dict[str, Any]],
                          ask: Ask) -> Optional[Tuple[str, list]]:
    """``(text, quotes)`` of a comparing yes/no question decided from each side's own answer
    (``ask``: the answerer on the same chunks), ``None`` when the question compares nothing or
    the sides' answers do not decide it (the plain yes/no answer is given then)."""
    comparison = parse_comparison(query)
    if comparison is None:
        return None
    if comparison.order:
        answer = await ask(side_question(comparison, ""))
        pick = answer.text.split(", according to", 1)[0] if answer.decided else None
        verdict = order_verdict(comparison, pick)
        return (f"{verdict}: {quoted(answer.sentences)}", list(answer.sentences)) if verdict else None
    every = answer_candidates(chunks)
    by_text = {c.sentence.text: c for c in every}
    places, quotes = [], []
    for side in comparison.sides:
        answer = await ask(side_question(comparison, side))
        said = [by_text[s.text] for s in answer.sentences if s.text in by_text]
        found = place_of(side, comparison.verb, said, every)
        places.append(found[0] if found else None)
        quotes += list(answer.sentences)
        if found and not any(s.text == found[1].sentence.text for s in answer.sentences):
            # the sentence that decides is quoted too, after the one saying who its "He" is
            quotes += [_quote_of(c) for c in with_antecedents([found[1]], every)]
    verdict = comparison_verdict(comparison, places)
    return (f"{verdict}: {quoted(quotes)}", quotes) if verdict else None


def _quote_of(c: Candidate) -> Any:
    """A candidate as a quote of the answer (its text and ``reference_id``)."""
    return AnswerSentence(text=c.sentence.text, reference_id=c.reference_id, chunk_id=c.chunk_id)

