"""An "A or B?" question that is not about time: "Which thermostat has a humidity sensor, the T2
or the T3?" is decided by the one option a sentence of the context states the claim of (under
the T3's heading: "It connects over ... and it has a built-in humidity sensor."), when the other
option is described in the context too (a sentence naming it alone) and none of its sentences
states it. Questions asking
which came first or later are decided by dates (:func:`~.answer_verdicts.choice_decision`).

Example:
    >>> rows = [("It has a built-in humidity sensor.", "Heatwise T3 thermostat"),
    ...         ("It runs on two AA batteries.", "Heatwise T2 thermostat")]
    >>> claim_decision("Which thermostat has a humidity sensor, the T2 or the T3?", rows)
    ('the T3', [0])
    >>> claim_decision("Which thermostat has a screen, the T2 or the T3?", rows)
    (None, [])
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from lightrag.components.graph_rag.answer_namesakes import about_namesake, numbered
from lightrag.components.graph_rag.answer_verdicts import EARLIER, LATER, NEGATIONS
from lightrag.components.graph_rag.answer_words import STOPWORDS, stem, stems
from lightrag.components.graph_rag.question_types import choice_options, words
from lightrag.components.graph_rag.quote_order import opens_with_pronoun

__all__ = ["claim_decision"]


def claim_decision(query: str, rows: Sequence[Tuple[str, ...]]) -> Tuple[Optional[str], List[int]]:
    """``(option, [index of the sentence stating its claim])``, else ``(None, [])``.

    ``rows``: ``(text, heading, ...)`` of each context sentence. A sentence states an option's
    claim when it (with its heading) names that option and not the other, says every word of
    the question's claim (the question without its options, its kind noun and words that ask
    for a time), and is negated as the question is ("has no batteries"); a sentence about a
    numbered namesake ("Voyager 2 ...") names no "Voyager 1"."""
    options = choice_options(query)
    if options is None:
        return None, []
    asking = query.replace(options[0], " ").replace(options[1], " ")
    if EARLIER.search(asking) or LATER.search(asking):
        return None, []
    claim = stems(asking) - {stem(_kind_noun(asking))}  # "Which thermostat ...": no claim
    needed = [stems(o) for o in options]
    if not claim or not all(needed) or needed[0] == needed[1]:  # "Voyager 1" and "Voyager 2"
        return None, []
    negated = bool(words(query) & NEGATIONS)
    named = [[i for i, (text, heading, *_) in enumerate(rows) if n <= stems(text) | stems(heading)
              and not about_namesake(_read(rows, i), numbered(o))]  # "Voyager 2" is not Voyager 1
             for n, o in zip(needed, options)]
    own = [[i for i in named[side] if i not in named[1 - side]] for side in (0, 1)]
    stating = [[i for i in own[side] if claim <= stems(rows[i][0])
                and bool(words(rows[i][0]) & NEGATIONS) == negated] for side in (0, 1)]
    if not own[0] or not own[1] or bool(stating[0]) == bool(stating[1]):
        return None, []  # the other option is not described in the context, or both or neither state it
    side = 0 if stating[0] else 1
    return options[side], stating[side][:1]


def _kind_noun(asking: str) -> str:
    """The noun after "Which" ("Which thermostat has ...": "thermostat"), not a verb ("Which
    visited Uranus ...": ""), lower case."""
    found = asking.split()[1:2]
    word = found[0].lower().strip(",?") if found else ""
    return "" if not word or word.endswith("ed") or word in STOPWORDS else word


def _read(rows: Sequence[Tuple[str, ...]], i: int) -> str:
    """Row ``i``'s heading and text, a pronoun sentence after the sentence before it under the
    same heading (which says who "it" is: "Voyager 2 is ... It passed Uranus ...")."""
    text, heading = rows[i][0], rows[i][1]
    if i and opens_with_pronoun(text) and rows[i - 1][1] == heading:
        text = f"{rows[i - 1][0]} {text}"
    return f"{heading} {text}"
