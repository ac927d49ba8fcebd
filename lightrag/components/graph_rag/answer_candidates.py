"""The quoting answerer's candidates: every sentence of the retrieved chunks with where it
stands (passage, position, heading, the passage's opening sentence) and its words, and the
choice among them of the sentences about what a question names
(:class:`~lightrag.components.graph_rag.extractive_answerer.ExtractiveAnswerer` scores them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.answer_words import STOPWORDS, bridge_words, phrases, stem, stems
from lightrag.components.graph_rag.question_types import (
    described_name,
    fold,
    has_candidate,
    names_in,
    question_type,
    words,
)
from lightrag.components.graph_rag.sentences import Sentence, sentences_by_chunk

#: a label line of notes or a form: "Present: ...", "Date of accident: ..."
_LABEL = re.compile(r"^[A-Z][\w'’-]*(?: [\w'’-]+){0,3}:\s")


@dataclass
class Candidate:
    """One sentence the answerer may quote: where it stands, its words, and its scores."""

    sentence: Sentence
    chunk_index: int
    chunk_id: str
    reference_id: str
    words: set
    heading_words: set
    position: int = 0
    phrases: set = field(default_factory=set)
    lexical: float = 0.0  # the question's words (idf-weighted) and phrases it holds
    score: float = 0.0
    typed: bool = False  # holds the kind of answer the question asks for
    heading_answers: bool = False  # only its heading holds it ("Version 4.1, released 23 May 2023")
    passage_words: set = field(default_factory=set)  # its passage's opening sentence's words
    passage_opening: str = ""  # its passage's opening sentence
    other_names: tuple = ()  # the other names (former, nickname) of what its heading names

    @property
    def opens_passage(self) -> bool:
        """Whether it is its passage's first sentence, which says what the passage is about; a
        label line ("Present: Dana Okafor (chair), Mei Tanaka, Priya Nair.") lists, it does not
        say what the notes are about."""
        return self.position == 0 and not _LABEL.match(self.sentence.text)

    @property
    def in_context(self) -> set:
        """Its words with its heading's and its passage opening's: what it is read as saying."""
        return self.words | self.heading_words | self.passage_words


def embedded_text(sentence: Sentence, limit: Optional[int]) -> str:
    """What is embedded for a sentence: with its heading in front when it does not name it,
    cut to ``limit`` characters at a word end (a long sentence costs the model in proportion
    to its length; its opening says what it is about)."""
    text = sentence.text
    if sentence.heading and sentence.heading.lower() not in text.lower():
        text = f"{sentence.heading}: {text}"
    if limit is None or len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit]


_SUBJECT = re.compile(r"^((?:The |An? )?[A-Z][\w'’-]*(?: [\w'’-]+){0,5}?) (?:is|was|are|were|has been|"
                      r"had been)\b")


def opening_subject(opening: str) -> str:
    """What a passage without a heading is about, from its opening sentence: the words before
    its first "is"/"was" when they start with a capital ("The Northern Waters Trust is a
    charitable foundation ..." -> "The Northern Waters Trust"), else its leading name ("Agnes
    Quillfeather founded ..." -> "Agnes Quillfeather"), else ""."""
    match = _SUBJECT.match(opening)
    leading = names_in(opening)
    found = match.group(1) if match else (
        leading[0] if leading and opening.startswith(leading[0]) and " " in leading[0] else "")
    first = re.sub(r"^(?:The|An?) ", "", found).split(" ", 1)[0].lower()
    return "" if not first or first in STOPWORDS else found  # "It was ...", "In September ..."


def is_asked(sentence: Sentence) -> bool:
    """Whether a source's sentence is a question (a FAQ's "How often should I descale it?"):
    it states nothing, so it is no quote; its words head the sentences that answer it."""
    return not sentence.code and sentence.text.rstrip().endswith("?")


def answer_candidates(chunks: Sequence[Dict[str, Any]], code: bool = False) -> List[Candidate]:
    """Every distinct sentence of ``chunks``, with its passage, heading and words; a passage
    without a heading is headed by what its opening sentence is about (:func:`opening_subject`):
    "It is chaired by Margaret Ellory." is then about the Northern Waters Trust, as a
    sentence under a heading is about what the heading names. A question the source asks (a
    FAQ's) is no candidate: its words count as the heading's of the sentences after it, up to
    the next question (:func:`is_asked`). ``code``: the command lines of code blocks are
    candidates too (a how-to question)."""
    found: List[Candidate] = []
    seen = set()
    texts = [str(chunk.get("content", "")) for chunk in chunks]
    files = [str(chunk.get("file_path") or chunk.get("reference_id") or "") for chunk in chunks]
    for index, (chunk, sentences) in enumerate(zip(chunks, sentences_by_chunk(texts, files, code))):
        opening = stems(sentences[0].text) if sentences else set()
        subject = opening_subject(sentences[0].text) if sentences else ""
        asked: set = set()  # the words of the source's own question ("How often should I ...?")
        for position, sentence in enumerate(sentences):
            if is_asked(sentence):
                asked = stems(sentence.text)
                continue
            if sentence.text in seen:
                continue
            seen.add(sentence.text)
            if not sentence.heading and subject:
                sentence = replace(sentence, heading=subject)
            found.append(Candidate(
                sentence=sentence, chunk_index=index, chunk_id=str(chunk.get("chunk_id", "")),
                reference_id=str(chunk.get("reference_id", "")), position=position,
                words=stems(sentence.text), heading_words=stems(sentence.heading) | asked,
                phrases=phrases(sentence.text), passage_words=opening,
                passage_opening=fold(sentences[0].text)))
    return with_other_names(found)


_NAMED = r"[A-Z][\w'’-]*(?: (?:of |the |de |von |van |and )?[A-Z][\w'’-]*)*"
#: "Veyra Instruments, known as Brannox Optical Works until 1931, ...", "Harriet Calder
#: (1869–1951), nicknamed "the Iron Countess" ...": a name and its other name, as a passage opens
_OTHER_NAME = re.compile(r"^(?:The )?(" + _NAMED + r")(?: \([^)]*\))?, (?:also |better )?(?:known as|called|"
                         r"nicknamed|formerly(?: known as)?)(?: the)? [\"“]?(?:the )?(" + _NAMED + r")")
#: "It was called the Morrow Laboratory until 1946.", "It was founded in 1902 by Karl Mettler as the
#: Mettler Dynamo Company": the other name of what the passage is about (its heading)
_FORMER_NAME = re.compile(r"^(?:It|The company|The firm) was (?:(?:called|known as|named) |(?:founded|"
                          r"established|formed|set up)\b[^.;]{0,80}? as )(?:the )?(" + _NAMED + r")")


def other_names(candidates: Sequence[Candidate]) -> List[Tuple[str, str]]:
    """The pairs (name, its other name), folded, that the context gives: a former name, a
    nickname ("known as", "called", "nicknamed", "founded ... as")."""
    pairs = []
    for c in candidates:
        lead = _OTHER_NAME.match(c.sentence.text)
        former = _FORMER_NAME.match(c.sentence.text)
        if lead:
            pairs.append((fold(lead.group(1)), fold(lead.group(2))))
        elif former and c.sentence.heading and " " in former.group(1):
            pairs.append((fold(c.sentence.heading), fold(former.group(1))))
    return [(a, b) for a, b in pairs if a and b and a != b]


def with_other_names(candidates: List[Candidate]) -> List[Candidate]:
    """``candidates``, each that names one name of a pair of :func:`other_names` (in its text,
    heading or passage opening) read as naming the other too (it is added to its passage
    opening): "He directed the Morrow Institute" answers of the Morrow Laboratory, its old name,
    and "Tobias Wren" is "the Lamplighter"."""
    pairs = other_names(candidates)
    pairs += [(b, a) for a, b in pairs]
    for c in candidates:
        said = " ".join((fold(c.sentence.text), fold(c.sentence.heading), c.passage_opening))
        more = [b for a, b in pairs if re.search(r"\b" + re.escape(a) + r"\b", said) and b not in said]
        if more:
            c.passage_opening = " ; ".join([c.passage_opening, *dict.fromkeys(more)])
            c.passage_words = c.passage_words | stems(" ".join(more))
        c.other_names = tuple(b for a, b in pairs if a == fold(c.sentence.heading))
    return candidates


def unmentioned(nouns: List[str], candidates: List[Candidate]) -> str:
    """The noun a question asks for (the last of ``nouns``: "salary" of "annual salary"),
    quoted, when no candidate's sentence or heading says it, else ``""``."""
    if not nouns or any(stem(nouns[-1]) in (c.words | c.heading_words) for c in candidates):
        return ""
    return f'"{nouns[-1]}"'


_HONORIFICS = frozenset("mr mrs ms mx dr prof sir dame st saint".split())


def name_stems(name: str) -> set:
    """The word stems a sentence must say to name ``name``: what follows a possessive ("NASA's
    Apollo" -> apollo), without honorifics ("Ms. hooks" -> hooks) and, beside longer words,
    without initials ("JRR Tolkien" -> tolkien: sources write "J. R. R. Tolkien")."""
    name = re.split(r"(?:'s|’s)\s+", name)[-1]
    words = [w for w in re.findall(r"[\w'’-]+", name) if fold(w).strip("'’") not in _HONORIFICS]
    long = [w for w in words if not (w.isupper() and len(w) <= 3)]
    return {stem(w) for w in bridge_words(" ".join(long or words))}


#: verbs a price answers without saying them ("How much does the Studio plan cost?")
PRICE_VERBS = frozenset({"cost", "pric", "price", "pay", "charg"})


def unmentioned_event(event: Optional[Tuple[str, str]], candidates: List[Candidate]) -> str:
    """For a "When did X <verb>?" question (``event``: :func:`~.question_types.asked_event`),
    ``'"<verb>" for X'`` when no candidate that names X (its sentence, heading or passage
    opening) says the verb, else ``""``: "In which year did Henrik Sæther retire?" over passages
    that say he became managing director is not answered by their years."""
    if not event:
        return ""
    subject, verb = event
    needed, said = name_stems(subject), stem(fold(verb))
    if not needed:
        return ""
    if any(said in c.words and needed <= c.in_context for c in candidates):
        return ""
    if said in PRICE_VERBS and any(needed <= c.in_context and _MONEY.search(
            f"{c.sentence.text} {c.sentence.heading}") for c in candidates):
        return ""  # "How much does Studio cost?" and "Studio — €18 per user per month"
    return f'"{verb}" for {subject}'


def unmentioned_role(role: Optional[Tuple[str, str]], candidates: List[Candidate]) -> str:
    """For a "Who is the chief financial officer of X?" question (``role``:
    :func:`~.question_types.role_phrase`), ``'"chief financial officer" for X'`` when no
    candidate that names X says every word of the role, else ``""``: "Ilse Vandermolen, chief
    executive officer" does not answer it."""
    if not role:
        return ""
    subject, phrase = role
    needed, said = name_stems(subject), stems(phrase)
    if not needed or any(said <= (c.words | c.heading_words) and needed <= c.in_context
                         for c in candidates):
        return ""
    return f'"{phrase}" for {subject}'


def unnamed_subject(candidates: List[Candidate], query: str) -> str:
    """The one name a question asks about when no candidate's sentence, heading or passage
    opening says all its words (in any order: "the Lantern Festival of Lunde Cove" is in "Lunde
    Cove is a village ... known for its Lantern Festival"; accents aside: "Kaikyo" is "Kaikyō"),
    else ``""``: the context is then about something else ("When did the Forth Bridge open?"
    over the Brooklyn Bridge's passage)."""
    names = [n for n in names_in(query) if bridge_words(n)]
    if len(names) != 1 or question_type(query) in ("yes_no", "choice"):
        return ""  # "Is Tomasz Quillfeather Agnes Quillfeather's brother?" reads as one name
    shown = re.sub(r"(?:'s|’s)$", "", _unquestion(names[0]))
    needed = name_stems(shown)
    if not needed or any(needed <= c.in_context for c in candidates):
        return ""
    return shown


def _unquestion(name: str) -> str:
    """``name`` without the question words it was read with ("Which Trust" -> "Trust")."""
    kept = name.split()
    while len(kept) > 1 and fold(kept[0]) in STOPWORDS:
        kept.pop(0)
    return " ".join(kept)


def about_the_subject(candidates: List[Candidate], query: str, q_names: set) -> List[Candidate]:
    """For a question about one name, the candidates whose sentence, heading or passage
    opening names it as a phrase ("Who designed Tower Bridge?" starts from the passage on
    Tower Bridge, however well "John A. Roebling designed the bridge" of the Brooklyn
    Bridge's passage, or "the two towers" of another bridge's, match its words); when none
    does, those that say the most of its words. All of them when none says any, or when the
    question names several."""
    names = [fold(n) for n in names_in(query) if bridge_words(n)]
    if len(names) != 1:
        # several names: a chain of hops ("the lord of the birthplace of Albert, King of the
        # country where X is a citizen") starts from the innermost, which the multi-hop
        # steps find; gating on how many names a sentence says preferred another Albert
        return candidates

    def named(c: Candidate) -> int:
        texts = (fold(c.sentence.text), fold(c.sentence.heading), c.passage_opening)
        return sum(any(n in t for t in texts) for n in names)

    said = [named(c) for c in candidates]
    if not max(said, default=0) and q_names:
        said = [len(q_names & c.in_context) for c in candidates]
    most = max(said, default=0)
    return [c for c, n in zip(candidates, said) if n == most] if most else candidates


def about_passage(candidates: List[Candidate], name: str) -> List[Candidate]:
    """The candidates whose heading or passage opening names ``name`` (their passage is about
    it), not those that only mention it ("the elder child of Piet and Agathe Corvane")."""
    folded = fold(name)
    return [c for c in candidates if folded in fold(c.sentence.heading) or folded in c.passage_opening]


#: added to a sentence whose subject is the name a "Who is X?" question asks to describe
DESCRIPTION_BONUS = 0.12


def favour_descriptions(candidates: Sequence[Candidate], query: str) -> None:
    """For "Who is X?" (:func:`~.question_types.described_name`), raise the sentences that open
    with X, or with "He"/"She" under X's heading: "Priya Nair joined the team as head of
    support." describes her; "Present: Dana Okafor (chair), Mei Tanaka, Priya Nair." only
    names her."""
    name = described_name(query)
    if not name:
        return
    folded = fold(name)
    for c in candidates:
        text = fold(c.sentence.text)
        if text.startswith(folded) or (re.match(r"(?:he|she) ", text) and folded in fold(c.sentence.heading)):
            c.score += DESCRIPTION_BONUS


#: a version number ("4.1", "3.2.1", "v2.0")
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")
#: "Which release fixed ...?", "In which version ...?": a version is asked for
_ASKS_VERSION = re.compile(r"^(?:in )?(?:which|what) (?:version|release|build|update|patch)\b", re.I)
#: the number of a numbered section ("4. Run the migration", "Step 2:", "Chapter 3 ")
_ENUMERATION = re.compile(r"^(?:(?:step|chapter|part|section|phase|stage|appendix)\s+)?\d+[.):]?\s+", re.I)
#: an amount of money ("€6", "$1,200", "18 euros")
_MONEY = re.compile(r"[€$£¥]\s?\d|\b\d[\d,.]*\s?(?:EUR|USD|GBP|euros?|dollars?|pounds?)\b")


def heading_holds(heading: str, text: str, kind: str, query: str, q_all: set) -> bool:
    """Whether a section's heading holds the answer asked for that its sentence lacks: a date or
    number ("Version 4.1, released 23 May 2023" over "New Canvas view: ...", "Plus — €6 a month"
    over "50 GB of storage" for "How much ...?") of what the question names (a heading naming
    another plan or version answers nothing: "5.1 — August 20, 2024" for "When did 5.0 come
    out?"), or a version a "Which release ...?" question asks for ("3.2.1 (2021-10-02)" over "It
    fixes a crash when importing EPUB files"). Names are left out: every heading has
    capitalised words."""
    if not heading:
        return False
    asked_versions, versions = set(_VERSION.findall(query)), set(_VERSION.findall(heading))
    if _ASKS_VERSION.match(query.strip()):
        return bool(versions - asked_versions) and not set(_VERSION.findall(text)) - asked_versions
    if kind not in ("date", "number") or asked_versions and versions and not asked_versions & versions:
        return False
    named = {w for name in names_in(query) for w in words(name)} | asked_versions
    if named and not named & (words(heading) | versions):
        return False  # about another thing
    if kind == "number" and re.match(r"how much\b", query.strip(), re.I):
        return bool(_MONEY.search(heading)) and not _MONEY.search(text)
    heading = _ENUMERATION.sub("", heading)  # "4. Run the migration" counts nothing
    return has_candidate(heading, kind, q_all) and not has_candidate(text, kind, q_all)
