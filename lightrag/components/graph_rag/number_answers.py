"""Which numbers of a sentence answer a "how many / how long / how much" question: not a date,
a time of day, an address, a numbered place or a version ("14 May 1868", "6:30 – 21:00",
"Carden Street 12", "Room 204", "Ray 2.60"); for a "how long / old / far / tall / high" question
only a number with a unit of its measure ("three weeks", not "20 items"); for a "how many"
question not a span of time or a price it does not ask for ("ten days ahead", "€25").
:func:`~lightrag.components.graph_rag.question_types.has_candidate` asks it for the numbers of
a sentence. Plain patterns, no model.

Example:
    >>> numbers_in("You can borrow up to 20 items.", {"how", "many", "items"})
    ['20']
    >>> numbers_in("Open 6:30 – 21:00, from Room 204.", {"how", "many", "books"})
    []
"""

from __future__ import annotations

import re
from typing import List, Optional, Set

MONTH = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|"
                   r"November|December)\b")
NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
                    r"eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|"
                    r"billion)\b", re.I)

#: digits that count nothing: times of day ("6:30 – 21:00", "9 am", "8.15 p.m."), dates ("14
#: May 1868", "May 14", "1952-1979", "between 1890 and 1896", ISO dates, a table row's "Built:
#: 1893"), addresses ("Carden Street 12", "12 Carden Street"), numbered things ("No. 4", "Room
#: 204", "bus 42"), versions ("Ray 2.60", "1.4.2") and digit groups joined by hyphens ("a 4-4-0
#: locomotive")
_YEAR_RANGE = r"(?:1[0-9]{3}|20[0-9]{2})s?(?:\s?[-–]\s?\d{2,4})?\b"
_STREET = r"(?:Street|St|Road|Rd|Lane|Avenue|Ave|Square|Row|Way|Place|Drive|Court|Quay)"
_LABEL = (r"(?i:room|platform|gate|floor|level|building|block|bay|berth|pier|unit|suite|door|"
          r"counter|desk|window|exit|junction|terminal|route|line|bus|track|chapter|section|"
          r"article|clause|item|page|table|figure|step|stage|phase|box|locker|ward|court)")
_CLOCK = r"\s?(?:[aApP]\.?[mM]\.?(?!\w)|o'clock\b)"  # "9 am", "8 p.m.", "5 o'clock"
_NOT_COUNTS = re.compile(
    r"\b\d{1,2}:\d{2}(?:" + _CLOCK + r")?|\b\d{1,2}(?:\.\d{2})?" + _CLOCK +
    r"|\b\d{1,2}(?:st|nd|rd|th)? (?:of )?" + MONTH.pattern + r"(?:,? \d{4})?"
    r"|" + MONTH.pattern + r" \d{1,4}\b(?:, \d{4})?"
    r"|\b(?:No|no|Nos|nos|Number|number)\.?:? ?\d+|\b\d+(?:\s?[-–/]\s?\d+)+\b"
    r"|\b" + _LABEL + r" \d+[A-Za-z]?\b"  # a numbered place or part: "Room 204", "Platform 3"
    r"|\b(?:[A-Z][\w-]*|[Vv]ersion|v)\s?\d+(?:\.\d+)+\b|\b\d+\.\d+\.\d+\b"  # "Ray 2.60", "1.4.2"
    r"|\b[A-Z][\w'’-]* " + _STREET + r"\.? \d+[a-z]?\b"  # an address: "Carden Street 12"
    r"|\b\d+[a-z]? [A-Z][\w'’-]* " + _STREET + r"\b"  # "12 Carden Street"
    r"|(?:^|; )[\w .]+: " + _YEAR_RANGE +  # a table row's year cell: "Built: 1893"
    r"|\b(?:in|since|until|by|from|to|during|of|after|before|around|circa|c\.|between|and) "
    + _YEAR_RANGE)


_HEIGHT = r"(?:met(?:re|er)|f(?:oo|ee)t|ft|inch(?:e)?|cm|m|stor(?:ey|y|ie)|floor)"
_TIME = r"(?:second|minute|hour|day|week|fortnight|month|year|decade|centur(?:y|ie))"
#: the units a "how long / old / far / tall / high" question's number comes with
_UNITS = {
    "long": r"(?:" + _TIME + r"|met(?:re|er)|kilomet(?:re|er)|km|mile|f(?:oo|ee)t|ft|yard|"
            r"inch(?:e)?|cm|mm|m)",
    "old": r"(?:year|month|week|day|yr)",
    "far": r"(?:met(?:re|er)|kilomet(?:re|er)|km|mile|f(?:oo|ee)t|ft|yard|m|minute|hour|min)",
    "tall": _HEIGHT,
    "high": _HEIGHT,
}
_AGED = r"|\bage(?:d| of)? (?:" + NUMBER.pattern + ")"  # "aged 41", "at the age of 41"
#: a number of units: "four weeks", "six and a half miles", "half an hour", "1.5 km"
_AMOUNT = (r"(?:(?:" + NUMBER.pattern + r")(?: and (?:a )?(?:half|quarter|third))?|half|quarter)"
           r"(?:\s|-)?(?:a |an |of an? )?")
_MEASURED = {measure: re.compile(_AMOUNT + unit
                                 + r"s?\b" + (_AGED if measure == "old" else ""), re.I)
             for measure, unit in _UNITS.items()}


#: what a "how many" question counts only when it names the unit: a span of time ("ten days
#: ahead" is no number of books) or a price ("€25", "25 euros")
_SPAN = re.compile(_AMOUNT + _TIME + r"s?\b", re.I)
_PRICE = re.compile(r"[€$£]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:euros?|dollars?|pounds?|EUR|USD|GBP)\b")
_TIME_WORD = re.compile(_TIME + r"s?")
_MONEY_WORDS = frozenset("euro euros dollar dollars pound pounds cost costs price fee fees".split())


def _uncounted(counts: str, question_words: Set[str]) -> str:
    """``counts`` without the spans of time and prices a "how many" question does not ask for."""
    if not any(_TIME_WORD.fullmatch(w) for w in question_words):
        counts = _SPAN.sub(" ", counts)
    if not question_words & _MONEY_WORDS:
        counts = _PRICE.sub(" ", counts)
    return counts


def _measure(question_words: Set[str]) -> Optional[str]:
    """The measure a "how long / old / far / tall / high" question asks for, if it is one."""
    if "how" not in question_words:
        return None
    return next((m for m in _UNITS if m in question_words), None)

def numbers_in(sentence: str, question_words: Set[str]) -> List[str]:
    """The numbers of ``sentence`` that may answer the question of ``question_words`` (its
    lower-cased words): see the module docstring."""
    counts = _NOT_COUNTS.sub(" ", sentence)
    if "many" in question_words:
        counts = _uncounted(counts, question_words)
    measure = _measure(question_words)
    if measure:
        return [m.group(0) for m in _MEASURED[measure].finditer(counts)]
    return NUMBER.findall(counts)
