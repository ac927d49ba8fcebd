"""The text of an extractive answer: its quotes with their ``[n]``, opened by a verdict ("Yes:",
"X, according to the dates in the sources:") or by what the context lacks ("The retrieved
context does not mention ...; the closest evidence: ...").
"""

from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from lightrag.components.graph_rag.answer_candidates import Candidate, name_stems
from lightrag.components.graph_rag.answer_choices import claim_decision
from lightrag.components.graph_rag.answer_hops import TYPED_KINDS
from lightrag.components.graph_rag.answer_namesakes import namesake_quotes, numbered
from lightrag.components.graph_rag.answer_verdicts import choice_decision, yes_no_verdict
from lightrag.components.graph_rag.answer_words import question_names, stem, stems
from lightrag.components.graph_rag.question_types import asks_place, clause_event, direct_subject, role_event
from lightrag.components.graph_rag.quote_order import opens_with_pronoun, with_antecedents

__all__ = ["ChoiceDecision", "answer_text", "choice_chain", "choice_of", "shown", "stated"]


def shown(c: Candidate) -> str:
    """A quote as the answer shows it: a command line of a code block in backticks."""
    return f"`{c.sentence.text}`" if c.sentence.code else c.sentence.text


def with_headings(chain: List[Candidate]) -> str:
    """The quotes with their ``[n]``; a quote whose heading alone holds the answer asked for
    (``Candidate.heading_answers``) after that heading, quoted once: "Version 4.1, released 23
    May 2023 [1] New Canvas view: arrange notes as cards ... [1]"."""
    parts: List[str] = []
    shown_headings = set()
    for c in chain:
        cited = f" [{c.reference_id}]" if c.reference_id else ""
        heading = c.sentence.heading if c.heading_answers else ""
        if heading and (c.reference_id, heading) not in shown_headings:
            shown_headings.add((c.reference_id, heading))
            parts.append(f"{heading}{cited}")
        parts.append(f"{shown(c)}{cited}")
    return " ".join(parts)


def _gives_kind(chain: List[Candidate], query: str) -> bool:
    """Whether a quote holds the kind of answer asked for (``typed``) in a passage about the
    one name the question asks a fact of directly: one of the passage's quotes (its sentence,
    heading or passage opening) names it. Any passage counts when the question asks through
    another thing ("Where was the architect of X born?": the answer is about the architect).
    A passage none of whose quotes shares a word with the question (with its heading and
    opening) was quoted as a bridge, not an answer: "Brackenfold has two town bus lines." gives
    no number of the library's books; "Priya Lindqvist is the Institute's electronics
    engineer." says who "She designed the Bogwatch sensor", which does share words."""
    needed = name_stems(direct_subject(query))
    asked = stems(query)
    about = {c.chunk_index for c in chain if not needed or needed <= c.in_context}
    relevant = {c.chunk_index for c in chain if c.in_context & asked}
    return any(c.typed and c.chunk_index in about & relevant for c in chain)


def _stating(query: str, chain: List[Candidate], every: List[Candidate], namesakes: Sequence[Candidate],
             weights: Dict[str, float]) -> Optional[Candidate]:
    """A sentence of a quoted passage, not quoted, that states a yes/no question's whole claim
    without a negation (:func:`~.answer_verdicts.yes_no_verdict` says "Yes" of it alone): "Is
    Larkhill House a hotel?" quoted "..., but the hotel lets non-residents in" and left "It has
    been a hotel since 1988." of the same passage."""
    passages = {c.chunk_index for c in chain}
    for c in every:
        if c.chunk_index in passages and c not in chain and c not in namesakes and \
                yes_no_verdict(query, [(c.sentence.text, stated(c, query))], weights) == "Yes":
            return c
    return None


def answer_text(query: str, kind: str, chain: List[Candidate], every: List[Candidate], missing: str,
                weights: Dict[str, float], choice: Optional[ChoiceDecision] = None
                ) -> Tuple[str, Optional[bool]]:
    """``(text, decided)``: the quotes of ``chain``, opened by the verdict of a yes/no or "A or
    B" question (``decided``: whether one was reached; ``choice``: :func:`choice_of`, read here
    when not given) or by what the context does not say."""
    quoted = with_headings(chain)
    missing = missing or unsaid_event(query, chain)
    if kind == "choice":
        pick, _, by_dates = choice or choice_of(query, every)
        if pick is None:
            return f"The sources do not settle which one; the closest evidence: {quoted}", False
        source = "the dates in the sources" if by_dates else "the sources"
        return f"{pick}, according to {source}: {quoted}", True
    if missing:
        # the thing asked for is named nowhere in the context ("What is her annual salary?"
        # over passages that give her job, not her pay): say so, and show what is closest
        # (an answer may still be there in other words: "What award ...?" and "the Medal")
        return f"The retrieved context does not mention {missing}; the closest evidence: {quoted}", None
    if kind in TYPED_KINDS and not _gives_kind(chain, query):
        # "Who designed Oskerby station?" answered by "Its first chief engineer designed its
        # largest structure": the quotes hold no name (date, number) at all, so they are
        # evidence, not the answer; nor when only a quote from a passage about another thing
        # holds one ("How many rooms does Ashgrove House have?" and Castlebrook Hall's "Rooms:
        # 42"), where no quote names what the question asks about
        asked = "place" if asks_place(query) else kind
        return f"The quoted sentences do not give the {asked} asked for; the closest evidence: {quoted}", None
    if kind == "yes_no":
        namesakes = namesake_quotes(chain, numbered(query), every)  # "Voyager 2 ..." for Voyager 1
        verdict = yes_no_verdict(query, [(c.sentence.text, stated(c, query)) for c in chain
                                         if c not in namesakes], weights)
        if verdict is None:  # a sentence of a quoted passage may state it ("It has been a hotel")
            found = _stating(query, chain, every, namesakes, weights)
            if found is not None:
                cited = f" [{found.reference_id}]" if found.reference_id else ""
                verdict, quoted = "Yes", f"{shown(found)}{cited} {quoted}"
        return (f"{verdict}: {quoted}" if verdict else
                f"The sources do not say yes or no directly; the closest evidence: {quoted}"), \
            verdict is not None
    return quoted, None


def stated(c: Candidate, query: str) -> set:
    """What a quote states, for a yes/no verdict: its words and its heading's, the years of its
    passage's opening that the question asks about (when the passage's event was: "the collision
    at Pellow Junction in 1894") and, for a sentence opening with a pronoun, the question's
    names its passage's opening says (who "it" is), for a table row the question's words its
    passage's opening says (what the row is about). The opening's other words are another
    sentence's claim: "Was Hubble launched aboard the Space Shuttle Endeavour?" is not stated by
    "astronauts on the Space Shuttle Endeavour installed corrective optics" under an opening that
    says Hubble "was launched ... aboard the Space Shuttle Discovery", nor "Did NASA build the
    Huygens probe?" by "The Huygens probe, built by the European Space Agency, ..." under one
    that names NASA."""
    said = {w for w in stems(query) if w.isdigit()}
    if opens_with_pronoun(c.sentence.text):
        said |= question_names(query)
    if _TABLE_ROW.match(c.sentence.text):
        said |= stems(query)  # a row's subject is its passage's: "Day: Monday; ..." of the pool
    return c.words | c.heading_words | (c.passage_words & said)


#: a table row as the chunker writes it: "Day: Monday; Public swimming: —; Notes: Closed"
_TABLE_ROW = re.compile(r"^[^:;]{1,40}: [^;]*(?:; [^:;]{1,40}: [^;]*)+$")


def _context_rows(every: List[Candidate]) -> List[Tuple[str, str, str]]:
    return [(c.sentence.text, c.sentence.heading, c.passage_opening) for c in every]


class ChoiceDecision(NamedTuple):
    """How an "A or B" question is decided: the option picked (None: not decided), the indices
    of the context sentences that decide it, and whether by dates."""

    pick: Optional[str]
    deciding: List[int]
    by_dates: bool


def choice_of(query: str, every: List[Candidate]) -> ChoiceDecision:
    """The decision of an "A or B" question over the context ``every``: by the options' dates
    (:func:`~.answer_verdicts.choice_decision`; a passage names its subject in its heading or
    opening: "It opened on 19 March 1932." under "The Sydney Harbour Bridge is ..." gives that
    bridge's year), else by the one option a sentence states the claim of ("Which has X, A or
    B?": :func:`~.answer_choices.claim_decision`)."""
    rows = _context_rows(every)
    pick, deciding = choice_decision(query, rows)
    if pick is not None:
        return ChoiceDecision(pick, deciding, True)
    pick, deciding = claim_decision(query, rows)
    return ChoiceDecision(pick, deciding, False)


def choice_chain(chain: List[Candidate], every: List[Candidate], choice: ChoiceDecision) -> List[Candidate]:
    """The quotes of a decided "A or B" question: the sentences that decide it (``choice``), in
    the order of the options, each after the sentence saying who its pronoun means. A verdict
    "according to the dates in the sources" shows the dates it read (the context gave
    Hubble's launch year, the quotes only Webb's); undecided, ``chain`` as it is."""
    if choice.pick is None:
        return chain
    return with_antecedents([every[i] for i in dict.fromkeys(choice.deciding)], every)


def unsaid_event(query: str, chain: List[Candidate]) -> str:
    """``'"born" for the founder of X'`` when a "Where was the founder of X born?" question's
    quotes do not say the event (none says "born"), nor those of "When did the company that
    built X change its name?" ("change"), else ``""``."""
    event = role_event(query) or clause_event(query)
    if not event or any(stem(event[1]) in c.words for c in chain):
        return ""
    return f'"{event[1]}" for {event[0]}'
