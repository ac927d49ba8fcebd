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

from lightrag.components.graph_rag.answer_verdicts import EARLIER, LATER, NEGATIONS
from lightrag.components.graph_rag.answer_words import stem, stems
from lightrag.components.graph_rag.question_types import choice_options, words

__all__ = ["claim_decision"]


def claim_decision(query: str, rows: Sequence[Tuple[str, ...]]) -> Tuple[Optional[str], List[int]]:
    """``(option, [index of the sentence stating its claim])``, else ``(None, [])``.

    ``rows``: ``(text, heading, ...)`` of each context sentence. A sentence states an option's
    claim when it (with its heading) names that option and not the other, says every word of
    the question's claim (the question without its options, its kind noun and words that ask
    for a time), and is negated as the question is ("has no batteries")."""
    options = choice_options(query)
    if options is None:
        return None, []
    asking = query.replace(options[0], " ").replace(options[1], " ")
    if EARLIER.search(asking) or LATER.search(asking):
        return None, []
    kind = asking.split()[1:2]  # "Which thermostat ...": the kind noun says no claim
    claim = stems(asking) - {stem(w.lower()) for w in kind}
    needed = [stems(o) for o in options]
    if not claim or not all(needed) or needed[0] == needed[1]:  # "Voyager 1" and "Voyager 2"
        return None, []
    negated = bool(words(query) & NEGATIONS)
    named = [[i for i, (text, heading, *_) in enumerate(rows) if n <= stems(text) | stems(heading)]
             for n in needed]
    own = [[i for i in named[side] if i not in named[1 - side]] for side in (0, 1)]
    stating = [[i for i in own[side] if claim <= stems(rows[i][0])
                and bool(words(rows[i][0]) & NEGATIONS) == negated] for side in (0, 1)]
    if not own[0] or not own[1] or bool(stating[0]) == bool(stating[1]):
        return None, []  # the other option is not described in the context, or both or neither state it
    side = 0 if stating[0] else 1
    return options[side], stating[side][:1]
