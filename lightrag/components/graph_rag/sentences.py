"""Sentences of a context chunk, verbatim, with the heading they sit under.

An extractive answer quotes sentences exactly as the source wrote them, so splitting never
rewrites text: each :class:`Sentence` is a substring of its chunk. Abbreviations ("Dr.", "U.S.",
"e.g.", initials) do not end a sentence; line breaks do (lists, tables, headings). A short first
line without a full stop ("Voyager 1", "# Install") is the chunk's heading: it is not an answer
sentence itself, but it tells who "It" is in the sentences below it.

Example:
    >>> [s.text for s in split_sentences("Voyager 1\\nIt was launched by NASA in 1977. Dr. Stone led it.")]
    ['It was launched by NASA in 1977.', 'Dr. Stone led it.']
    >>> split_sentences("Voyager 1\\nIt flew by Jupiter.")[0].heading
    'Voyager 1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List

MAX_HEADING_WORDS = 12
MIN_SENTENCE_CHARS = 12
MAX_SENTENCE_CHARS = 600

_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "no", "vs", "etc", "e.g", "i.e",
    "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
    "oct", "nov", "dec", "fig", "vol", "approx", "u.s", "u.k", "a.d", "b.c", "gen", "gov", "rev",
}
_END = re.compile(r"[.!?](?:[\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_MARKUP_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)")
_LIST_MARKER = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)")


@dataclass
class Sentence:
    """One sentence of a chunk: its exact text and the heading of its chunk ("" if none)."""

    text: str
    heading: str = ""


def _is_abbreviation(text: str, end: int) -> bool:
    """Whether the full stop at ``text[end]`` ends an abbreviation or an initial."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:end].lower().lstrip("(\"'")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _split_line(line: str) -> List[str]:
    pieces, start = [], 0
    for match in _END.finditer(line):
        if line[match.start()] == "." and _is_abbreviation(line, match.start()):
            continue
        pieces.append(line[start:match.end()].strip())
        start = match.end()
    pieces.append(line[start:].strip())
    return [p for p in pieces if p]


_CLAUSE_BREAK = re.compile(r"(?<=;)\s+")


def _breaks(text: str) -> List[int]:
    """Where ``text`` may be cut after a semicolon: outside parentheses when there are such."""
    found = [m.end() for m in _CLAUSE_BREAK.finditer(text)]
    outside = [b for b in found if text.count("(", 0, b) <= text.count(")", 0, b)]
    return outside or found


def _within_limit(text: str) -> List[str]:
    """``text`` as verbatim runs of its clauses of at most ``MAX_SENTENCE_CHARS`` each: a long
    sentence (a paragraph-long run-on of the documentation kind) is cut after its semicolons
    (outside parentheses where it has such); a clause still too long is dropped, as are runs
    with no semicolon (a flattened table or list, not prose worth quoting).

    Example:
        >>> [len(p) for p in _within_limit("a" * 400 + "; " + "b" * 400 + ".")]
        [401, 401]
    """
    if len(text) <= MAX_SENTENCE_CHARS:
        return [text]
    out: List[str] = []
    start = 0
    ends = _breaks(text) + [len(text)]
    for number, end in enumerate(ends):
        following = ends[number + 1] if number + 1 < len(ends) else None
        if following is not None and following - start <= MAX_SENTENCE_CHARS:
            continue  # the next clause still fits in this run
        piece = text[start:end].strip()
        if piece and len(piece) <= MAX_SENTENCE_CHARS:
            out.append(piece)
        start = end
    return out


def _title(line: str) -> str:
    """``line`` (without a ``#`` or list marker) when it reads as a title: short, no sentence
    end, no semicolon (a table row reads ``header: value; header: value``), else ""."""
    title = _MARKUP_PREFIX.sub("", line.strip()).strip()
    if (not title or len(title.split()) > MAX_HEADING_WORDS or title[-1] in ".!?:;,"
            or ";" in title):
        return ""
    return title


def heading_of(chunk_text: str) -> str:
    """The chunk's first line when it reads as a title (short, no sentence end), else ""."""
    return _title(chunk_text.strip().split("\n", 1)[0])


def _inner_heading(lines: List[str], number: int) -> str:
    """The title of line ``number`` when it is a heading inside the chunk: a ``#`` line, or a
    title standing alone between blank lines (as loaders write a document's headings), not a
    list item."""
    raw = lines[number].strip()
    if raw.startswith("#"):
        return _title(raw)
    alone = ((number == 0 or not lines[number - 1].strip())
             and (number + 1 == len(lines) or not lines[number + 1].strip()))
    if not alone or _LIST_MARKER.match(raw):
        return ""
    return _title(raw)


def split_sentences(chunk_text: str) -> List[Sentence]:
    """The answerable sentences of a chunk, each a verbatim substring of it.

    Lines of code fences and table rules are skipped, a heading line is not a sentence (the
    chunk's first line when it reads as a title, and a title standing alone between blank lines
    further down: the sentences after it carry it as their heading), a list item is quoted
    without its marker ("- ", "2. "), very short pieces ("Yes.") carry too little to quote alone,
    and a sentence longer than ``MAX_SENTENCE_CHARS`` is quoted as runs of its clauses
    (:func:`_within_limit`).

    Example:
        >>> text = "Saturn\\nIt has rings.\\n\\nMoons\\n\\nTitan is one."
        >>> [(s.text, s.heading) for s in split_sentences(text)]
        [('It has rings.', 'Saturn'), ('Titan is one.', 'Moons')]
    """
    heading = heading_of(chunk_text)
    sentences: List[Sentence] = []
    in_code = False
    lines = chunk_text.split("\n")
    for number, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line or (number == 0 and heading) or set(line) <= set("|-: =+#*"):
            continue
        inner = _inner_heading(lines, number)
        if inner:
            heading = inner
            continue
        for sentence in _split_line(_MARKUP_PREFIX.sub("", line)):
            for piece in _within_limit(sentence):
                if len(piece) >= MIN_SENTENCE_CHARS:
                    sentences.append(Sentence(text=piece, heading=heading))
    return sentences
