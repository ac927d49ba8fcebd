"""What kind of answer a question asks for, and whether a sentence holds one.

"When ...?" wants a date, "How many ...?" a number, "Who ...?" and "Where ...?" a name; "Is ...?"
wants yes or no, and "Which is older, A or B?" a choice. A sentence that holds a candidate of
the wanted kind that the question does not already contain is more likely the answer than one
that only repeats the question. Plain rules, no model: fast and predictable.

Example:
    >>> question_type("When was the Eiffel Tower built?")
    'date'
    >>> has_candidate("It was completed in 1889.", "date", {"eiffel", "tower", "built"})
    True
"""

from __future__ import annotations

import re
import unicodedata
from typing import List, Optional, Set, Tuple

from lightrag.components.graph_rag.number_answers import MONTH as _MONTH
from lightrag.components.graph_rag.number_answers import numbers_in

_DATE_Q = re.compile(r"^(?:when\b|(?:in |on |by )?(?:what|which) (?:year|date|month|day|decade|"
                     r"century)\b|what time\b)", re.I)
_NUMBER_Q = re.compile(r"^(?:how (?:many|much|long|old|far|big|large|tall|high)\b|"
                       r"(?:what|which) (?:number|percentage|amount|population)\b)", re.I)
_NAME_Q = re.compile(r"^(?:who|whom|whose|where|(?:in |at |from |to )?(?:what|which) "
                     r"(?:country|city|state|county|place|town|region|continent|person|"
                     r"company|team|band|river|province|language)\b)", re.I)
_YES_NO_Q = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|"
                       r"should)\b", re.I)
_CHOICE = re.compile(r"\b(?:which|who|what)\b.*?,?\s*(.+?)\s+or\s+(.+?)\s*\?*$", re.I)
_YEAR = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b")
_WEEKDAY = re.compile(r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?\b")
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|de|la|von|van|the|and|du)?\s*[A-Z][\w'’-]*)*")

WORD = re.compile(r"\w+", re.UNICODE)


def fold(text: str) -> str:
    """``text`` lower-cased and without accents: "Akashi Kaikyō" and "akashi kaikyo" meet, as
    the question and its source may spell a name either way."""
    if text.isascii():
        return text.lower()
    return "".join(ch for ch in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(ch))


def words(text: str) -> Set[str]:
    """Lower-cased words of ``text``, without accents (:func:`fold`)."""
    return set(WORD.findall(fold(text)))


def question_type(question: str) -> str:
    """``date``, ``number``, ``name``, ``yes_no``, ``choice`` or ``other``."""
    text = question.strip()
    if choice_options(text) is not None:
        return "choice"
    if _DATE_Q.search(text):
        return "date"
    if _NUMBER_Q.search(text):
        return "number"
    if _NAME_Q.search(text):
        return "other" if described_name(text) else "name"
    if _YES_NO_Q.search(text):
        return "yes_no"
    return "other"


_WHO_IS = re.compile(r"^who (?:is|was) (.+?)\s*\?*$", re.I)


def described_name(question: str) -> str:
    """The name a "Who is X?" question asks to describe ("Who is Priya Nair?" -> "Priya
    Nair"; its answer is what X is or does, not another name), else ``""`` ("Who is the head of
    support?", "Who is X's mother?" ask for a name)."""
    match = _WHO_IS.match(question.strip())
    if not match:
        return ""
    asked = match.group(1)
    return asked if names_in(" " + asked) == [asked] and "'" not in asked and "’" not in asked else ""


def choice_options(question: str) -> Optional[Tuple[str, str]]:
    """The two options of "Which ..., A or B?" (``None`` for other questions)."""
    match = _CHOICE.search(question.strip())
    if not match or not re.match(r"^(?:which|who|what)\b", question.strip(), re.I):
        return None
    first = re.split(r",\s*|:\s*", match.group(1))[-1].strip()
    second = match.group(2).strip().rstrip("?").strip()
    if not first or not second or len(first.split()) > 8 or len(second.split()) > 8:
        return None
    return first, second


def _new(found: str, question_words: Set[str]) -> bool:
    return not words(found) <= question_words


#: capitalised words that name nothing: a sentence's "It", "Its", "The", "After", ...
_NOT_NAMES = frozenset(
    "a an the it its he his she her they their them this these that those there here in on at "
    "of for from by with as after before during since until when while then thus however also "
    "both each every all some many most no not we our you your i my one january february march "
    "april may june july august september october november december monday tuesday wednesday "
    "thursday friday saturday sunday".split())
def has_candidate(sentence: str, kind: str, question_words: Set[str]) -> bool:
    """Whether ``sentence`` names a ``kind`` of answer the question does not already contain:
    a year or month for a date (a weekday too when it asks "what day"); a number that counts
    (not a day, a year after "in", "No. 4" or "4-4-0", nor a span of time or a price a "how
    many" question does not ask for) for a number, with a unit of the measure a "how long /
    old / far / tall / high" question asks for ("three weeks" for "How long may I keep a
    book?", not "20 items"); a capitalised name that is not a function word ("It", "Its") for
    a name."""
    if kind == "date":
        found = _YEAR.findall(sentence) + _MONTH.findall(sentence)
        if "day" in question_words:  # "On what day ...?": a weekday answers it
            found += _WEEKDAY.findall(sentence)
    elif kind == "number":
        found = numbers_in(sentence, question_words)
    elif kind == "name":
        found = [m.group(0) for m in _NAME.finditer(sentence)
                 if not set(m.group(0).lower().split()) <= _NOT_NAMES]
    else:
        return False
    return any(_new(f, question_words) for f in found)


def gives_month(sentence: str) -> bool:
    """Whether ``sentence`` dates something to its month (or day), not only its year."""
    return bool(_MONTH.search(sentence))


def names_in(sentence: str) -> List[str]:
    """Capitalised names in a sentence, in order (its first word only when followed by another
    name)."""
    found: List[str] = []
    for match in _NAME.finditer(sentence):
        name = match.group(0).strip()
        if (match.start() > 0 or " " in name) and name not in found:
            found.append(name)
    return found


def years_in(text: str) -> list:
    """The years a text mentions, in order (``1969``, ``1990s`` -> 1990)."""
    return [int(y.rstrip("s")) for y in _YEAR.findall(text)]


_AUXILIARY = frozenset(
    "is are was were be been do does did has have had can could will would should shall may might "
    "must of the a an".split())
#: nouns too general to say what is asked ("What is the name of ...", "Which one ...")
_GENERIC = frozenset(
    "name names title one ones kind type sort thing things part term word person people place "
    "year date day month time number way".split()) | frozenset(
    # the nouns of questions whose answer is a name: the answer says "Dutch", not "language"
    "country city state county town region continent company team band river province language "
    "district territory entity area municipality island nationality citizenship body".split())
_AUX = r"(?:is|are|was|were|did|does|do|has|have|had|can|could|will|would)"
_WHICH_NOUN = re.compile(r"^(?:(?:in|at|from|to|on|for|with|by) )?(?:what|which) "
                         r"(?:kind of |type of |sort of )?([a-z][a-z-]*)(?: ([a-z][a-z-]*))? " + _AUX + r"\b")
_WHAT_IS_NOUN = re.compile(r"^(?:what|which) (?:is|was|are|were) (?:the |a |an )?"
                           r"(?:(?:[A-Z][\w-]* )*[A-Z][\w-]*(?:'s|’s) |(?:his|her|its|their) )?"
                           r"([a-z][a-z -]*?)(?: (?:of|in|for|at|that|which|did|does|do)\b| ?\?|$)")


def asked_nouns(question: str) -> List[str]:
    """The noun a "what"/"which" question asks for, with the word before it when it is a
    compound ("What is Mirela Dunstan's annual salary?" -> ``["annual", "salary"]``, "Which
    telescope does the station use?" -> ``["telescope"]``); empty when the question's kind says
    what is asked (a date, a number, a name: "Which country ...") or the noun says nothing
    ("What is the name of ...")."""
    text = question.strip()
    if question_type(text) != "other":
        return []
    text = text[:1].lower() + text[1:]  # the nouns are matched lower-case: names are not nouns
    found: List[str] = []
    match = _WHAT_IS_NOUN.match(text)
    if match:
        found = match.group(1).split()[-2:]
    else:
        match = _WHICH_NOUN.match(text)
        if match and match.group(1) not in _AUXILIARY:
            found = [match.group(1)]
            if match.group(2) and match.group(2) not in _AUXILIARY:
                found.append(match.group(2))
    found = [w for w in found if w not in _AUXILIARY]
    return [] if not found or _GENERIC.intersection(found) else found


#: words between a subject and its verb ("When was the festival first held?")
_ADVERBS = frozenset("first last finally actually also ever officially originally initially "
                     "eventually still really there here".split())
#: verbs that say little by themselves ("When did she become director?": "became", "was
#: appointed", "had been" all answer it; "When did the hall catch fire?": "a fire in 1917")
_LIGHT_VERBS = frozenset("become get come make take have give put catch".split())
_EVENT_Q = re.compile(r"^(?:when|(?:in|on) (?:what|which) (?:year|date|month|day)) "
                      r"(?:did|does|do|was|were|is|are|has|have|had) ", re.I)
#: "Where was X born?", "In which town did X die?": a place asked of a life event, which every
#: biography of the context says for its own person (another's birthplace does not answer it)
_PLACE_EVENT_Q = re.compile(r"^(?:where|(?:in|at) (?:what|which) (?:" + "|".join(sorted(
    "town city country county state region place village province island".split())) + r")) "
                            r"(?:did|was|were) ", re.I)
#: the life events a place question asks of one person
_PLACE_EVENTS = frozenset("born die died buried marry married study studied educated".split())


def asked_event(question: str) -> Optional[Tuple[str, str]]:
    """``(subject, verb)`` of a "When did X <verb> ...?" / "When was X <verb>ed?" question whose
    subject is a name: that name and the first lower-case word after it ("In which year did
    Henrik Sæther retire?" -> ``("Henrik Sæther", "retire")``), else ``None``; also of "Where
    was X born?" / "In which town did X die?" for a life event (born, died, buried, married,
    studied: "Where was Paul Arnesen born?" -> ``("Paul Arnesen", "born")``)."""
    text = question.strip()
    match = _EVENT_Q.match(text)
    place = None if match else _PLACE_EVENT_Q.match(text)
    if not match and not place:
        return None
    match = match or place
    rest = re.sub(r"^(?:the|a|an) ", "", text[match.end():])
    names = names_in(" " + rest)
    if not names or not rest.startswith(names[0]):
        return None  # "When was the company that owns the Grey Pelican founded?": not its event
    after = rest[len(names[0]):]
    verb = next((w for w in re.findall(r"[A-Za-z]+", after) if w.islower()
                 and w not in _AUXILIARY and w not in _ADVERBS and len(w) > 2), None)
    if place and verb not in _PLACE_EVENTS:
        return None  # "Where is X located?": sources say "a town in Y", not the verb
    return (names[0], verb) if verb and verb not in _LIGHT_VERBS else None


#: "How many people does X employ?", "How much did X cost?", "How many X were sold?"
_COUNT_Q = re.compile(r"^how (?:much|many)\b(.*?)\b(did|does|do|was|were|is|are|has|have|had) (.+?)\??$",
                      re.I)
_PREPOSITIONS = frozenset("in at on by for from during to of with into over under after before".split())


def asked_count_event(question: str) -> Optional[Tuple[str, str]]:
    """``(subject, verb)`` of a "How many/much ...?" question whose subject is a name: the name
    and the verb that says what is counted ("How much did the Webb telescope cost?" ->
    ``("Webb", "cost")``, "How many Brewmaster 300 machines were sold?" -> ``("Brewmaster 300",
    "sold")``), else ``None``: a number said of X with another verb ("recalled 4,000 machines")
    does not answer it. Light verbs ("How many arches does it have?") say nothing alone."""
    match = _COUNT_Q.match(question.strip())
    if not match:
        return None
    clause = match.group(3)
    names = names_in(" " + clause) or names_in(" " + match.group(1))
    if match.group(2).lower() in ("was", "were", "is", "are"):  # "were sold", "were killed in X"
        verb = clause.split(" ", 1)[0]
    else:  # "did the Webb telescope cost", "does the tank of X hold": the verb ends the clause
        rest = clause[clause.rfind(names[-1]) + len(names[-1]):] if names else clause
        after = re.findall(r"[A-Za-z]+", rest)
        head = after[: next((i for i, w in enumerate(after) if w in _PREPOSITIONS), len(after))]
        verb = head[-1] if head else ""
    if not names or not verb.islower() or verb in _AUXILIARY or verb in _ADVERBS \
            or verb in _LIGHT_VERBS or len(verb) < 3:
        return None
    return names[0], verb


#: "Who was the (first) captain of X?", "Who is X's director?": the role, then its subject
_WHO_ROLE_OF = re.compile(r"^who (?:is|was|are|were|has been|had been) (?:the |an? )?"
                          r"(?:[a-z-]+ ){0,2}?([a-z]+) (?:of|at|for) (?:the )?(.+?)\??$")
#: "Who runs/designed/founded X?": the verb, then its object
_WHO_VERB = re.compile(r"^who ([a-z]+) (?:the )?(.+?)\??$")
#: role nouns that say little by themselves ("Who is the subject of ...")
_LIGHT_ROLES = frozenset("one member part subject son daughter child father mother parent brother "
                         "sister sibling grandfather grandmother grandson granddaughter grandparent "
                         "uncle aunt nephew niece cousin".split()) | _GENERIC


def asked_role(question: str) -> Optional[Tuple[str, str]]:
    """``(subject, role)`` of a "Who was the <role> of X?" or "Who <verb>s X?" question whose
    subject is a name ("Who was the captain of the Grey Petrel?" -> ``("Grey Petrel",
    "captain")``, "Who runs Skarvik Marine Works today?" -> ``("Skarvik Marine Works", "runs")``),
    else ``None``: the sentences that answer it say the role for X (a captain of another ship
    does not answer it). Family words and other light nouns ("Who is the son of X?") are left
    out: sources say "his son" or "born to" in too many ways. A spouse is asked as a role: "the
    spouse of X" is answered by a sentence about X that says "married" or "wife"."""
    text = question.strip()
    text = text[:1].lower() + text[1:]
    match = _WHO_ROLE_OF.match(text)
    role, rest = (match.group(1), match.group(2)) if match else (None, None)
    if match is None:
        verb = _WHO_VERB.match(text)
        if verb is None or verb.group(1) in _AUXILIARY or not verb.group(1).endswith(("s", "ed")):
            return None
        role, rest = verb.group(1), verb.group(2)
    names = names_in(" " + rest)
    if not names or not rest.startswith(names[0]) or role in _LIGHT_ROLES or role in _AUXILIARY:
        return None
    return names[0], role


#: "What was the default port of the old Tidepool sync?": the noun asked of one name
_FACT_OF = re.compile(r"^(?i:what|which) (?i:is|was|are|were) the (?:[a-z-]+ ){0,2}?([a-z]+) of "
                      r"(?:the )?(?:[a-z]+ )?([A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*)(?: [a-z]+)?\?$")


def asked_fact_of(question: str) -> Optional[Tuple[str, str]]:
    """``(name, noun)`` of a "What is the <noun> of X?" question asked of one name ("What was
    the default port of the old Tidepool sync?" -> ``("Tidepool", "port")``), else ``None``:
    another thing's port does not answer it. Nouns that say little ("name", "kind") and
    questions through a second "of" are left out."""
    text = question.strip()
    match = _FACT_OF.match(text)
    if not match or text.lower().count(" of ") != 1 or match.group(1) in _GENERIC:
        return None
    return match.group(2), match.group(1)


_ROLE_PHRASE = re.compile(r"^who (?:is|was|are|were|has been|had been) (?:the |an? )?((?:[a-z-]+ ){0,2}?"
                          r"[a-z]+) (?:of|at|for) ")
#: words before a role that say when, not which role ("the first captain", "the current head")
_ROLE_TIMES = frozenset("first second third last current former new old present previous next "
                        "founding acting interim".split())


def role_phrase(question: str) -> Optional[Tuple[str, str]]:
    """``(subject, role with its modifiers)`` of a "Who is the <modifiers> <role> of X?" question
    whose role has modifiers that say which role ("Who is the chief financial officer of X?" ->
    ``("X", "chief financial officer")``: a chief executive officer does not answer it), else
    ``None``; words of time ("first", "current") are left out."""
    found = asked_role(question)
    text = question.strip()
    match = _ROLE_PHRASE.match(text[:1].lower() + text[1:])
    if not found or not match:
        return None
    kept = [w for w in match.group(1).split() if w not in _ROLE_TIMES and w not in _ADVERBS]
    return (found[0], " ".join(kept)) if len(kept) > 1 else None


_KIND_NOUN = re.compile(r"^(?:(?:in|at|from|to|on|for|by) )?(?:what|which) ([a-z]+)\b", re.I)


def kind_word(question: str) -> Optional[str]:
    """The noun that names the kind of answer a typed question asks for ("In which **town** was
    she born?", "What **year** ...", "Which **country** ..."): the answer's sentence says
    "born in Lunde Cove", not the word "town", so no quote needs to say it."""
    if question_type(question) not in ("date", "number", "name"):
        return None
    match = _KIND_NOUN.match(question.strip())
    return match.group(1).lower() if match and match.group(1).lower() not in _AUXILIARY else None


#: nouns of questions asking for a place ("In which town ..."): the answer is a name after "in"
PLACE_NOUNS = frozenset("town city country county state region place village province continent "
                        "island district municipality".split())
_PLACE_NAME = re.compile(r"\b(?:in|at|from|near|to)\s+(?:the\s+)?([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)")


def direct_subject(question: str) -> str:
    """The one name a question asks a fact of directly ("In which town was Agathe Corvane
    born?", "Where did Ottavio Vantelli die?" -> the name), "" when it asks through another
    thing ("... was the architect of the Ellery Lighthouse born?") or names several."""
    names = names_in(question.strip())
    if len(names) != 1:
        return ""
    pattern = r"\b(?:is|was|are|were|did|does|do|has|had)\s+(?:the\s+)?" + re.escape(names[0]) + r"\b"
    return names[0] if re.search(pattern, question) else ""


_HOW_TO = re.compile(r"^(?:how (?:do|can|should|would|could) (?:i|you|we|one)\b|how to\b|"
                     r"(?:what|which) (?:command|option|flag|setting|call|function|method|"
                     r"code|snippet)s?\b)", re.I)


def asks_how_to(question: str) -> bool:
    """Whether a question asks how to do something ("How do I export the graph?", "Which
    command ...?"): a command line of a code block may answer it."""
    return bool(_HOW_TO.match(question.strip()))


def asks_place(question: str) -> bool:
    """Whether the answer is a place: "Where ...?", "In which town/country ...?"."""
    text = question.strip().lower()
    return text.startswith("where ") or kind_word(question) in PLACE_NOUNS


def names_kind(sentence: str, noun: str, question_words: Set[str]) -> bool:
    """Whether ``sentence`` names a thing of the kind ``noun`` asks for (:func:`kind_word`) that
    the question does not name: a place after "in"/"at"/"from" for "town", "country", ...
    ("She was born in Lunde Cove.", not "Mount Kilimanjaro is the highest mountain in
    Africa." for "In which country is the highest mountain in Africa?"); a year for "year";
    a name otherwise."""
    if noun in PLACE_NOUNS:
        return any(_new(m.group(1), question_words) for m in _PLACE_NAME.finditer(sentence))
    if noun in ("year", "decade", "century", "month", "date", "day"):
        return has_candidate(sentence, "date", question_words)
    return has_candidate(sentence, "name", question_words)


#: "... the founder of Orrin Dynamics ...": the role that leads from a name to the one asked about
_ROLE_OF_NAME = re.compile(r"\bthe ([a-z]+) of (?:the |film |novel |book |song )?[A-Z]")


#: "the <noun> of <Name>" phrases that name a place related to the name, not someone holding a
#: role: the next hop is about that place or what contains it ("the birthplace of Jonathan Reid"
#: is Nashville, and the question goes on through "the state that has it as its capital").
#: ("the village of Clonbrook" is the name itself: its noun stays the role it was.)
_PLACE_ROLES = frozenset("birthplace capital headquarters hometown location seat site home".split())


def bridge_role(question: str) -> str:
    """The role word of a "the <role> of <Name>" phrase inside a question asked through it
    ("Where was the founder of Orrin Dynamics born?" -> "founder"), "" when there is none, the
    role says little by itself ("the son of", "the name of") or it names a place ("the
    birthplace of", "the capital of")."""
    match = _ROLE_OF_NAME.search(question)
    if not match or match.group(1) in _LIGHT_ROLES | _AUXILIARY | _PLACE_ROLES:
        return ""
    return match.group(1)


_ROLE_EVENT_Q = re.compile(r"^(?i:where|(?:in|at) (?:what|which) (?:" + "|".join(sorted(PLACE_NOUNS)) + r")) "
                           r"(?:did|was|were) (the [a-z]+ of "
                           r"(?:the |film |novel |book |song )?[A-Z].*?) ([a-z]+)\??$")


def role_event(question: str) -> Optional[Tuple[str, str]]:
    """``(subject, verb)`` of "Where was the <role> of <Name> born?" (a place asked of a life
    event of whoever holds a role: ``("the founder of the Morrow Institute", "born")``), else
    ``None``: the quotes that answer it say the event ("born"); a passage's own place ("The
    Morrow Institute is ... in Vesterhavn") does not answer it."""
    match = _ROLE_EVENT_Q.match(question.strip())
    if not match or match.group(2) not in _PLACE_EVENTS or not bridge_role(match.group(1)):
        return None
    return match.group(1), match.group(2)


_CLAUSE_EVENT_Q = re.compile(r"^(?i:when|(?:in|on) (?:what|which) (?:year|date|month|day|decade)) did "
                             r"(the [a-z]+ (?:that|which|who) [a-z]+ (?:the )?[A-Z][\w'’-]*"
                             r"(?: [A-Z][\w'’-]*)*) ([a-z]+)\b")


def clause_event(question: str) -> Optional[Tuple[str, str]]:
    """``(subject, verb)`` of "When did the <thing> that <verb>s <Name> <verb> ...?" (a date asked
    of an event of something described by a clause: "In which year did the company that built
    the Halvern Telescope change its name?" -> ``("the company that built the Halvern
    Telescope", "change")``), else ``None``: a quote that dates another of its events ("It was
    built ... in 1929") does not answer it."""
    match = _CLAUSE_EVENT_Q.match(question.strip())
    if not match or match.group(2) in _AUXILIARY or match.group(2) in _LIGHT_VERBS:
        return None
    return match.group(1), match.group(2)
