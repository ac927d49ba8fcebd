"""How an extractive answer's quotes are arranged: the sentence that says who a quote's opening
"It" is comes before it, the sentence that says how comes after a bare "Yes." or a line ending
with a colon, and the quotes read in their sources' order.

Quoted alone, next to a sentence about something else, "Its close look at Titan ..." would read
as a claim about that; the sentence before it in its passage ("Voyager 1 flew past Saturn in
1980.") says who is meant. A sentence that refers to the same thing by a pronoun itself ("Code
written for lightrag 0.1 runs on it.") does not, and is not brought.

Example:
    >>> from types import SimpleNamespace as Quote
    >>> def quote(text, chunk, position):
    ...     return Quote(sentence=Quote(text=text), chunk_index=chunk, position=position)
    >>> passage = [quote("Voyager 1 flew past Saturn in 1980.", 0, 0),
    ...            quote("Its close look at Titan showed a thick atmosphere.", 0, 1)]
    >>> [q.sentence.text for q in with_antecedents([passage[1]], passage)]
    ['Voyager 1 flew past Saturn in 1980.', 'Its close look at Titan showed a thick atmosphere.']
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Protocol, Sequence, Tuple

from lightrag.components.graph_rag.question_types import words

PRONOUNS = frozenset("it its he his she her they their this these them".split())
#: the pronouns by which a sentence itself refers to what a quote's opening pronoun refers to
#: ("Code written for lightrag 0.1 runs on it." before "It runs offline"): such a sentence does
#: not say who "it" is. Possessives are left out: "Mark C. Taylor in his book" names him
SAME_REFERENT = {**dict.fromkeys(("it", "its"), frozenset(("it",))),
                 **dict.fromkeys(("he", "his"), frozenset(("he", "him"))),
                 **dict.fromkeys(("she", "her"), frozenset(("she",))),
                 **dict.fromkeys(("they", "their", "them"), frozenset(("they", "them")))}


class _Text(Protocol):
    text: str


class Placed(Protocol):
    """A candidate quote: its sentence and where it stands (passage, position in it)."""

    sentence: _Text
    chunk_index: int
    position: int


#: a short opening phrase of time or place before a sentence's subject ("In 1966 he directed",
#: "After the war, she moved", "Over the next twenty years he designed")
_INTRO = re.compile(r"^(?:In|On|By|After|Before|During|From|At|Since|Until|Later|Then|Soon|Over|For|"
                    r"Within|Throughout|Around|When|Once)\b"
                    r"[^,.;:]{0,30}?,?\s+(it|its|he|his|she|her|they|their|this|these|them)\b")


def leading_pronoun(text: str) -> str:
    """The pronoun a sentence opens with, lower case, also after a short opening phrase ("In
    1966 he directed ..." -> "he"); "" when it opens otherwise."""
    first = text.split(maxsplit=1)[:1]
    if first and first[0].lower() in PRONOUNS:
        return first[0].lower()
    intro = _INTRO.match(text)
    return intro.group(1) if intro and intro.group(1) in PRONOUNS else ""


def leans_back(text: str) -> bool:
    """Whether a sentence needs the one before it to say what it is about: it opens with a
    pronoun or with "the" and a common noun ("The works closed in 1959.", "The mission was run
    by NASA")."""
    return opens_with_pronoun(text) or bool(re.match(r"(?:The|This|These|That|Those) [a-z]", text))


def opens_with_pronoun(text: str) -> bool:
    """Whether ``text`` opens with a pronoun ("She designed ...", "Its close look ...", "In 1966
    he directed ...")."""
    return bool(leading_pronoun(text))


#: sentences walked back over to find who a quote's opening pronoun means
ANTECEDENT_REACH = 4


def with_antecedents(chain: Sequence[Placed], candidates: Sequence[Placed]) -> List[Placed]:
    """``chain`` with, before each quote that opens with a pronoun, the nearest earlier sentence
    of its passage (one of ``candidates``, at most :data:`ANTECEDENT_REACH` back) that says who
    is meant: over sentences that only say the same pronoun again, or open with one ("Priya
    Lindqvist is the engineer. Her lab is in the cellar. She designed the sensor." quotes the
    first before the third). When every sentence within reach opens with a pronoun (a
    biography's "She ... She ... She died in 1899."), the passage's opening sentence, which
    names its subject: quoted bare after a sentence about another person, "She died in 1899."
    read as that person's death."""
    by_place: Dict[Tuple[int, int], Placed] = {(c.chunk_index, c.position): c for c in candidates}
    out: List[Placed] = []
    for c in chain:
        first_word = leading_pronoun(c.sentence.text)
        if first_word:
            before = _antecedent(c, first_word, by_place, [*chain, *out])
            if before is not None:
                out.append(before)
        out.append(c)
    return out


def _antecedent(quote: Placed, pronoun: str, by_place: Dict[Tuple[int, int], Placed],
                taken: Sequence[Placed]) -> Optional[Placed]:
    """The sentence that says who ``quote``'s opening ``pronoun`` means (see
    :func:`with_antecedents`), or None when one is quoted already or none is found."""
    same = SAME_REFERENT.get(pronoun, frozenset())
    for back in range(1, ANTECEDENT_REACH + 1):
        before = by_place.get((quote.chunk_index, quote.position - back))
        if before is None or before in taken:
            return None
        # one opening with a pronoun ("Her best-known work ...") does not say who either
        if not (same & words(before.sentence.text)) and not opens_with_pronoun(before.sentence.text):
            return before
    opening = by_place.get((quote.chunk_index, 0))
    if opening is None or opening in taken or opens_with_pronoun(opening.sentence.text):
        return None
    return opening


#: a sentence that only answers yes or no, after an FAQ's run-in question ("Can I get a refund
#: — Yes.", "No, sorry.")
_BARE_REPLY = re.compile(r"^(?:[^—]{1,160} — )?(?:Yes|No)(?:,\s[^.;]{0,30})?[.!]?$")


def with_explanations(chain: Sequence[Placed], candidates: Sequence[Placed]) -> List[Placed]:
    """``chain`` with, after each quote that only says yes or no ("Can I get a refund —
    Yes.") or that announces what follows ("Quit Quillmate and rebuild it from a terminal:"),
    the next sentence of its passage, which says how ("To cancel a booking, email the bookings
    office at least 48 hours before your visit ...", the command line ``quillmate --reindex``;
    a command is among the candidates of a how-to question), and before a quote that goes on
    from a command line the command ("quillmate migrate --from 4" before "The tool converts the
    vault in place.")."""
    by_place: Dict[Tuple[int, int], Placed] = {(c.chunk_index, c.position): c for c in candidates}
    out: List[Placed] = []
    for c in chain:
        before = by_place.get((c.chunk_index, c.position - 1))
        if before is not None and getattr(before.sentence, "code", False) and before not in chain \
                and before not in out:
            out.append(before)  # the command a quote goes on from ("The tool converts the vault")
        out.append(c)
        text = c.sentence.text.strip()
        if _BARE_REPLY.match(text) or text.endswith(":"):
            after = by_place.get((c.chunk_index, c.position + 1))
            if after is not None and after not in chain and after not in out:
                out.append(after)
    return out


def reading_order(chain: Sequence[Placed], lead: Placed) -> List[Placed]:
    """The quotes grouped by source and in the source's order ("Apollo 11 was ... Its commander
    was ..."), sources in the order the chain reached them; the answer opens with ``lead``, the
    best quote (after the sentence that says who its "it" or "the mission" is: :func:`leans_back`),
    even where its source holds a quoted sentence before it; a lead that names what it is about
    opens the answer itself ("On July 20, 1969, Neil Armstrong and Buzz Aldrin landed the lunar
    module Eagle ..." before "The crew were ...")."""
    first_seen: Dict[int, int] = {}
    for i, c in enumerate(chain):
        first_seen.setdefault(c.chunk_index, i)
    opening = {lead.position}
    if leans_back(lead.sentence.text):
        opening.add(lead.position - 1)
        # its antecedent, however far back: the nearest earlier quote of its passage that names
        # what it is about (brought by with_antecedents, or quoted for itself)
        earlier = sorted((c for c in chain if c.chunk_index == lead.chunk_index
                          and c.position < lead.position), key=lambda c: -c.position)
        naming = [c for c in earlier if not opens_with_pronoun(c.sentence.text)]
        if naming or earlier:
            opening.add((naming or earlier)[0].position)
    return sorted(chain, key=lambda c: (first_seen[c.chunk_index], c.chunk_index != lead.chunk_index
                                        or c.position not in opening, c.position))
