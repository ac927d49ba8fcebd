"""How the quoting answerer's chain of quotes goes on: the names a quote brings (its bridges),
how strongly a sentence continues from them, when the chain already answers, and the sentences
added to a chain after it is picked (a reason, the sentence after a quote that holds the number
asked, a how-to answer's steps or instruction)
(:class:`~lightrag.components.graph_rag.extractive_answerer.ExtractiveAnswerer` scores and
picks the hops; these are the plain rules it applies).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.graph_rag.answer_candidates import Candidate
from lightrag.components.graph_rag.answer_words import bridge_words, stem, stems
from lightrag.components.graph_rag.question_types import (
    asks_how_to,
    has_candidate,
    names_in,
    names_kind,
    words,
)
from lightrag.components.graph_rag.quote_order import opens_with_pronoun

TYPED_KINDS = ("date", "number", "name")  # question types whose answers a sentence can hold


def answers_alone(c: Candidate, q_words: set, q_names: set, kind: str) -> bool:
    """Whether a sentence (with its heading) answers a question that asks for no name, date
    or number ("What did X find on Y?", "What does X do?") by itself: it names every subject
    the question names, or covers every word of it. No hop through another name needs to
    lead to it then."""
    if kind in TYPED_KINDS:
        return False
    said = c.words | c.heading_words
    return bool(q_names) and q_names <= said or bool(q_words) and q_words <= said


def bridges_of(sentence: Candidate, q_all: set) -> Tuple[List[str], set]:
    """The names a quote brings that the question lacks, in the order it names them (the
    first ones steer the next hop's search), and their words."""
    names = dict.fromkeys(names_in(sentence.sentence.text) + names_in(sentence.sentence.heading))
    bridges = [n for n in names if bridge_words(n) - q_all]
    tokens = set().union(*(bridge_words(b) for b in bridges)) - q_all if bridges else set()
    return bridges, tokens


def complete(chain: List[Candidate], q_words: set, q_all: set, kind: str, noun: str = "") -> bool:
    """Whether the quoted sentences already answer: they cover every word of the question
    and hold the kind of answer it asks for (no further hop is quoted then). The noun that
    names that kind ("town") counts as covered by a sentence that names one
    (:func:`~.question_types.names_kind`: "She was born in Lunde Cove.")."""
    covered = set().union(*(c.words | c.heading_words for c in chain))
    if noun and any(names_kind(c.sentence.text, noun, q_all) for c in chain):
        covered.add(stem(noun))
    if not q_words <= covered:
        return False
    return kind not in TYPED_KINDS or any(c.typed for c in chain)

def link(candidate: Candidate, bridges: List[str], tokens: set, previous: Candidate) -> float:
    """How strongly a sentence continues from the bridge names: 1.5 when its heading (of
    another passage) is about one of them (the passage's topic is the next hop: "Kassel"
    after "French-held Kassel"), 1 when it names one in full, or when it goes on by a pronoun
    about the subject of the previous quote's own passage that the quote brought ("Her
    best-known work is the Ellery Lighthouse." under "Céleste Marchetti", then "She was born
    in Lunde Cove."), 0 otherwise."""
    heading = bridge_words(candidate.sentence.heading)
    # its passage is about a bridge name, or under its other name ("Veyra Instruments, known as
    # Brannox Optical Works until 1931" after "built by Brannox Optical Works")
    about_a_bridge = bool(heading) and heading <= tokens or any(
        bridge_words(name) <= tokens for name in candidate.other_names if bridge_words(name))
    text = candidate.sentence.text
    same_passage = candidate.chunk_index == previous.chunk_index
    if about_a_bridge and not same_passage:
        return 1.5
    if any(b in text for b in bridges):
        return 1.0
    return 1.0 if same_passage and about_a_bridge and opens_with_pronoun(text) else 0.0


def own_answers(pool: List[Any], candidates: List[Candidate], chain: List[Candidate],
                about: set) -> List[Any]:
    """For a fact asked of one name directly, the hops about that name (``about``: their ids)
    that hold the kind of answer asked, while no quote holds one (else ``pool``, a list of
    ``(index, candidate)``): they come before any sentence reached through another name."""
    if len(about) == len(candidates) or any(x.typed for x in chain):
        return pool
    own = [(i, c) for i, c in enumerate(candidates) if c not in chain and c.typed and id(c) in about]
    return own or pool


def through_holder(pool: List[Any], links: Dict[int, float], chain: List[Candidate]) -> List[Any]:
    """The hops of ``pool`` (``(index, candidate)``) that go on from the chain of a question asked
    through a role ("Where was the founder of X born?"): those linked to the last quote
    (``links``: by candidate id) or in a passage already quoted ("In 1905 she founded X." then
    "She was born in Wexbury."); another passage's sentence that only says "born" is about
    someone else ("She was born in Brendstrup" of a director, not the founder)."""
    quoted = {c.chunk_index for c in chain}
    return [(i, c) for i, c in pool if links[id(c)] > 0 or c.chunk_index in quoted]


#: words by which a sentence gives a reason ("because the app needs Wi-Fi", "due to a fault")
REASON_WORDS = frozenset("because due since caused cause causes fault reason so owing after could "
                         "failed failure result".split())


def with_reason(query: str, chain: List[Candidate], every: List[Candidate]) -> List[Candidate]:
    """``chain`` with, right after its first quote, the next sentence of that quote's passage
    when a "Why ...?" question's quotes give no reason: "Brightwell Home recalled 4,000
    Brewmaster 300 machines on 15 January 2024." says what happened, "Their steam wands could
    overheat and crack." why."""
    if not chain or not query.strip().lower().startswith("why "):
        return chain
    if any(REASON_WORDS & set(c.sentence.text.lower().replace(",", " ").split()) for c in chain):
        return chain
    lead = chain[0]
    after = next((c for c in every if c.chunk_index == lead.chunk_index
                  and c.position == lead.position + 1), None)
    if after is None or after in chain:
        return chain
    return [lead, after, *chain[1:]]


def with_continuation(query: str, kind: str, chain: List[Candidate], every: List[Candidate]
                      ) -> List[Candidate]:
    """``chain`` with the sentence after a quote that says the question's words (the next one,
    or a later one of its section: :func:`_section_answer`), when that sentence holds the date
    or number asked and no quote that holds one is as much about the question (shares as many
    of its words, with its heading and passage opening): it goes on with the quote's topic in
    other words ("You can borrow up to 20 items at a time. The loan period is three weeks." for
    "How long may I keep a borrowed library book?", where "loan period" shares no word with the
    question and was never scored). A quote whose
    passage shares one word of several is about something else: the bulky-waste page's "Book
    the pickup online." is not followed for "How many books does the public library have?"."""
    if kind not in ("date", "number"):
        return chain
    asked, q_all = stems(query), words(query)
    answered = max((len(c.in_context & asked) for c in chain if c.typed), default=0)
    about = max(answered + 1, min(2, len(asked)))
    by_place = {(c.chunk_index, c.position): c for c in every}
    for i, quote in enumerate(chain):
        if not quote.words & asked or len(quote.in_context & asked) < about:
            continue
        after = _section_answer(quote, by_place, kind, asked, q_all)
        if after is not None and after not in chain:
            after.typed = True
            return [*chain[: i + 1], after, *chain[i + 1:]]
    return chain


#: how many sentences after a quote its section may give the answer in
SECTION_REACH = 4
_SENTENCE_END = re.compile(r"[.!?:;…)\]\"'”’]\s*$")


def _section_answer(quote: Candidate, by_place: Dict[Tuple[int, int], Candidate], kind: str,
                    asked: set, q_all: set) -> Optional[Candidate]:
    """The sentence after ``quote`` in its section (under the same heading, before the next
    title line) that holds the ``kind`` of answer: the next one, or a later one up to
    :data:`SECTION_REACH` on that says a question word the quote does not ("Skate park on the
    Riverside meadow", a proposal, an objection, then "Vote: 4 in favour, 5 against." for "How
    many councillors voted for the skate park?")."""
    unsaid = asked - quote.words
    for step in range(1, SECTION_REACH + 1):
        c = by_place.get((quote.chunk_index, quote.position + step))
        if c is None or c.sentence.heading != quote.sentence.heading or _title_line(c.sentence.text):
            return None
        if (step == 1 or c.words & unsaid) and has_candidate(c.sentence.text, kind, q_all):
            return c
    return None


def _title_line(text: str) -> bool:
    """A heading left as a line of its own: a few words without a sentence's end ("Kessel
    Bridge")."""
    return len(text.split()) <= 8 and not _SENTENCE_END.search(text)


#: list items quoted as the steps of a how-to answer
STEPS_QUOTED = 4


def with_steps(query: str, chain: List[Candidate], every: List[Candidate]) -> List[Candidate]:
    """For a how-to question ("How do I apply for a building permit?"), ``chain`` with the first
    :data:`STEPS_QUOTED` list items of its first quote's passage after that quote, when that
    passage is about the question (shares two of its words, with its heading and opening) and
    lists at least two items after the quote: "1. Book a pre-application meeting ... 2. Fill in
    form BP-1 ..." are the answer, "You need a building permit for new houses ..." only says
    when one is needed. Other quotes of that passage stay; quotes of other passages give way."""
    if not chain or not asks_how_to(query):
        return chain
    lead, asked = chain[0], stems(query)
    if len(lead.in_context & asked) < min(2, len(asked)):
        return chain
    steps = sorted((c for c in every if c.chunk_index == lead.chunk_index and c.sentence.item
                    and c.position > lead.position and c not in chain), key=lambda c: c.position)
    if len(steps) < 2:
        return chain
    same = [c for c in chain[1:] if c.chunk_index == lead.chunk_index]
    return [lead, *steps[:STEPS_QUOTED], *same]


#: verbs that open an instruction ("Apply in person at ...", "Bring your ID card ...")
INSTRUCTION_VERBS = frozenset(
    "add apply ask attach book bring call check choose click complete contact copy download "
    "email enter fill follow go install log open pay phone press print register remove return "
    "run select send set show sign submit take upload use visit write".split())


def with_instruction(query: str, chain: List[Candidate], every: List[Candidate]) -> List[Candidate]:
    """For a how-to question whose quotes give no instruction, ``chain`` with, after its first
    quote, the instruction (a sentence opening with a verb of :data:`INSTRUCTION_VERBS`) whose
    section says the most of the question's words, two at least: "How do I get a resident
    parking permit?" quoted the Citizens' Office page ("This is where you ... get resident
    parking permits") and its hours; "Apply in person at the Citizens' Office and bring your
    vehicle registration document" under "Resident parking permits" says how. The quotes after
    the first that share no word with the question (the office's hours) give way to it."""
    if not chain or not asks_how_to(query) or any(_instruction(c) for c in chain):
        return chain
    asked = stems(query)
    best, said = None, 1
    for c in every:
        shared = len(c.in_context & asked)
        if shared > said and _instruction(c):
            best, said = c, shared
    if best is None:
        return chain
    return [chain[0], best, *(c for c in chain[1:] if c.words & asked)]


def _instruction(c: Candidate) -> bool:
    """Whether the sentence opens with an instruction's verb ("Apply in person ...")."""
    first = c.sentence.text.split(maxsplit=1)[0].lower() if c.sentence.text.strip() else ""
    return first in INSTRUCTION_VERBS


def with_additions(query: str, kind: str, chain: List[Candidate], every: List[Candidate]
                   ) -> List[Candidate]:
    """``chain`` with the sentences a picked chain may still need, in turn: a "Why" question's
    reason (:func:`with_reason`), the number or date a quote's next sentences give
    (:func:`with_continuation`), a how-to question's steps (:func:`with_steps`) and instruction
    (:func:`with_instruction`)."""
    chain = with_continuation(query, kind, with_reason(query, chain, every), every)
    return with_instruction(query, with_steps(query, chain, every), every)
