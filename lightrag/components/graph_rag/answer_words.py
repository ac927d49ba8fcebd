"""The words an extractive answer is matched on: content words, light stems, phrases, idf.

The extractive answerer and its prefilter compare a question with the sentences of a context
word by word. Both use the same plain rules, kept here: stopwords and one-letter words carry no
meaning, a light suffix stripper lets "married" meet "marry", two content words that stand side
by side in the question ("lightrag check", "knowledge graph") form a phrase, and a word is worth
more the fewer sentences of the context hold it (idf).

Example:
    >>> sorted(stems("Who married the author of The Hobbit?"))
    ['hobbit', 'marry', 'write']
    >>> sorted(phrases("What does lightrag check do?"))
    [('lightrag', 'check')]
"""

from __future__ import annotations

import math
import re
from typing import Dict, Iterable, List, Set, Tuple

from lightrag.components.graph_rag.question_types import WORD, fold, names_in, words

STOPWORDS = frozenset(
    "a an the of in on at to for from by with about as into over after before between under "
    "and or but nor so yet is are was were be been being am do does did has have had having "
    "what which who whom whose when where why how that this these those it its he she they "
    "them his her their there here than then also not no yes any all some many much more most "
    "can could will would should shall may might must one ones s anyone anybody anything "
    "someone somebody something everyone everybody everything "
    # a user's own questions: "What should I do if my coffee is lukewarm?" asks about coffee
    "if unless whether my me mine your yours our ours we you".split())

Phrase = Tuple[str, str]

_NOT_BRIDGES = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday by as of in on the "
    "mr mrs ms mx dr prof sir dame".split())  # honorifics name no one ("Ms. hooks")


def bridge_words(name: str) -> Set[str]:
    """The words of a name that can carry a hop (months, weekdays, honorifics and stopwords
    cannot)."""
    return {w for w in words(name) if w not in _NOT_BRIDGES and w not in STOPWORDS and len(w) > 1}


def question_names(question: str) -> Set[str]:
    """The stems of the names a question asks about ("Who wrote The Hobbit?" -> {"hobbit"})."""
    return {stem(w) for name in names_in(question) for w in bridge_words(name)}


def content_words(text: str) -> Set[str]:
    """Words of ``text`` that carry meaning (stopwords and one-letter words dropped)."""
    return {w for w in words(text) if w not in STOPWORDS and len(w) > 1}


#: past forms of common irregular verbs, which no suffix stripping joins to their verb ("What did
#: the probe find?" and "it found river channels"; "found" no longer meets "founded" either)
IRREGULAR = {past: verb for verb, forms in {
    "find": "found", "write": "wrote written", "win": "won", "lead": "led", "make": "made",
    "build": "built", "begin": "began begun", "become": "became", "hold": "held", "sell": "sold",
    "teach": "taught", "fight": "fought", "go": "went gone", "give": "gave given",
    "take": "took taken", "see": "saw seen", "know": "knew known", "grow": "grew grown",
    "run": "ran", "say": "said", "tell": "told", "meet": "met", "bring": "brought",
    "buy": "bought", "think": "thought", "speak": "spoke spoken", "choose": "chose chosen",
    "draw": "drew drawn", "fly": "flew flown", "sing": "sang sung", "stand": "stood",
    "send": "sent", "spend": "spent", "lose": "lost", "pay": "paid", "keep": "kept",
    "eat": "ate eaten", "fall": "fell fallen", "catch": "caught", "seek": "sought",
    "drive": "drove driven", "ride": "rode ridden", "strike": "struck stricken",
    "break": "broke broken", "throw": "threw thrown", "rise": "rose risen", "swim": "swam swum",
    "hear": "heard", "feel": "felt", "mean": "meant", "shoot": "shot", "dig": "dug",
    "steal": "stole stolen", "wear": "wore worn", "forget": "forgot forgotten", "hang": "hung",
}.items() for past in forms.split()}


def _final_e(word: str) -> str:
    """``word`` without the final "e" of "-se", "-ve", "-ze", "-ce" or "-ge" (five letters or
    more), which the suffix stripper takes from its other forms: "close", "closed" and "closes"
    meet as "clos", "drive" and "driver" as "driv", "manage" and "manager" as "manag"; and of a
    four-letter "-te" word, whose "-ed" form loses "ed" ("vote", "voted" and "votes" meet as
    "vot", "date" and "dated" as "dat"). Other final "e"s stay: "state" must not meet "States"
    ("United States")."""
    if len(word) == 4 and word.endswith("te"):
        return word[:-1]
    return word[:-1] if len(word) >= 5 and word.endswith(_SOFT_E) else word


_SOFT_E = ("se", "ve", "ze", "ce", "ge")


#: four-letter words whose final "s" is no plural or third person ("this", "plus", "news")
_NOT_PLURAL = ("ss", "us", "is", "os")
_KEEP_S = frozenset({"news", "lens", "does", "goes"})


def _stripped(word: str) -> str:
    if word in IRREGULAR:
        return IRREGULAR[word]
    if len(word) == 5 and word.endswith("ed") and word[2] not in "aeiouy":
        return word[:3]  # a three-letter verb: "ended", "owned", "added" ("speed" stays)
    if len(word) == 4 and word.endswith("s") and not word.endswith(_NOT_PLURAL) \
            and word not in _KEEP_S:
        return word[:-1]  # "runs", "owns", "fees", "bins" meet "run", "own", "fee", "bin"
    if len(word) <= 4:
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    if len(word) >= 6 and word.endswith(("er", "or")):
        word = word[:-2]  # the doer meets the deed: "manager" and "manages", "founder" and "founded"
    return word[:-1] + "y" if word.endswith("i") else word


#: stems that ask and answer the same thing in other words ("Who is the spouse of X?" and "X
#: married Y", "When did X die?" and "X's death in 1990", "the CEO" and "the chief executive")
_SAME_MEANING = {
    **dict.fromkeys(("spouse", "wife", "wive", "husband", "marriage", "wed", "wedd"), "marry"),
    **dict.fromkeys(("died", "dies", "dying", "death", "dead"), "die"),
    **dict.fromkeys(("birth", "birthplace"), "born"),
    # "Who started the Trust?" and "It was founded in 1951 by ..."
    **dict.fromkeys(("establish", "establishment", "start", "starter", "cofound"), "found"),
    # "Who designed the house?" and "The architect was Jonas Pellew."
    "architect": "design",
    "ceo": "executive",
    **dict.fromkeys(("sank", "sunk"), "sink"),
    # "the author of X" and "X was written by Y" ("writes"/"writer" strip to "writ")
    **dict.fromkeys(("auth", "writ"), "write"),
    **dict.fromkeys(("location", "situat"), "locat"),
    # "Who runs X today?" and "Y, the current managing director" / "he still holds the post"
    **dict.fromkeys(("today", "now", "currently", "presently", "still"), "current"),
    # "Who is the father of X?" and "X was the son of Y and Z"
    **dict.fromkeys(("father", "mother", "son", "daughter", "parent"), "parent"),
}
#: the table with its keys as the stripper leaves them ("father" -> "fath", "spouse" -> "spous")
SAME_MEANING: Dict[str, str] = {_final_e(_stripped(k)): _final_e(v) for k, v in _SAME_MEANING.items()}


def stem(word: str) -> str:
    """A light suffix stripper ("married" and "marry", "published" and "publishes", "manager"
    and "manages" meet), with the past forms of common irregular verbs mapped to their verb
    ("found" and "find") and words of the same meaning to one (:data:`SAME_MEANING`); a final
    "-se"/"-ve"/... loses its "e" ("closed" and "close" meet as "clos": :func:`_final_e`).

    Example:
        >>> stem("married"), stem("found"), stem("founded"), stem("written"), stem("closes")
        ('marry', 'find', 'found', 'write', 'clos')
        >>> stem("ended"), stem("owned"), stem("speed")
        ('end', 'own', 'speed')
    """
    stripped = _final_e(_stripped(word))
    return SAME_MEANING.get(stripped, stripped)


_IN_LAW = re.compile(r"-in-law\b", re.I)


def stems(text: str) -> Set[str]:
    """The stemmed content words of ``text`` ("mother-in-law" is one word, not "mother" and
    "law": "studied law" says nothing of in-laws)."""
    return {stem(w) for w in content_words(_IN_LAW.sub("inlaw", text))}


def phrases(text: str) -> Set[Phrase]:
    """Pairs of stemmed content words that stand next to each other in ``text``."""
    tokens: List[str] = WORD.findall(fold(text))
    return {(stem(a), stem(b)) for a, b in zip(tokens, tokens[1:])
            if _content(a) and _content(b)}


def _content(word: str) -> bool:
    return word not in STOPWORDS and len(word) > 1


def idf(word_sets: Iterable[Set[str]]) -> Dict[str, float]:
    """Inverse document frequency of every word of ``word_sets`` (one set per sentence)."""
    df: Dict[str, int] = {}
    n = 0
    for found in word_sets:
        n += 1
        for w in found:
            df[w] = df.get(w, 0) + 1
    return {w: math.log((n + 1) / (d + 0.5)) for w, d in df.items()}


def coverage(sentence_words: Set[str], heading_words: Set[str], targets: Set[str],
             weights: Dict[str, float]) -> float:
    """Share of the ``targets`` (idf-weighted) a sentence covers; its heading counts half."""
    if not targets:
        return 0.0
    total = sum(weights.get(w, 1.0) for w in targets)
    got = sum(weights.get(w, 1.0) * (1.0 if w in sentence_words else 0.5 if w in heading_words else 0.0)
              for w in targets)
    return got / total if total else 0.0


def phrase_share(sentence_phrases: Set[Phrase], question_phrases: Set[Phrase]) -> float:
    """Share of the question's phrases a sentence holds (0 when the question has none)."""
    if not question_phrases:
        return 0.0
    return len(sentence_phrases & question_phrases) / len(question_phrases)

