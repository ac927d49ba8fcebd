"""Sentences of a context chunk, verbatim, with the heading they sit under.

An extractive answer quotes sentences exactly as the source wrote them, so splitting never
rewrites text: each :class:`Sentence` is a substring of its chunk (or, read by
:func:`sentences_by_chunk`, of its chunk joined with the neighbours that continue it).
Abbreviations ("Dr.", "U.S.", "e.g.", initials) do not end a sentence; line breaks do (lists,
tables, headings). Code is not quoted as prose: lines inside ``` fences, and lines indented by
four spaces or a tab (CommonMark's indented code; the Markdown loader writes code blocks so,
whatever their own indentation) are quotable only as commands, for how-to questions. A short
first line without a full stop ("Voyager 1", "# Install") is the chunk's heading: it is not an
answer sentence itself, but it tells who "It" is in the sentences below it.

Example:
    >>> [s.text for s in split_sentences("Voyager 1\\nIt was launched by NASA in 1977. Dr. Stone led it.")]
    ['It was launched by NASA in 1977.', 'Dr. Stone led it.']
    >>> split_sentences("Voyager 1\\nIt flew by Jupiter.")[0].heading
    'Voyager 1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Sequence, Tuple

MAX_HEADING_WORDS = 12
MIN_SENTENCE_CHARS = 12
MAX_SENTENCE_CHARS = 600

_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "no", "vs", "etc", "e.g", "i.e",
    "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
    "oct", "nov", "dec", "fig", "vol", "approx", "u.s", "u.k", "a.d", "b.c", "gen", "gov", "rev",
}
_END = re.compile(r"[.!?](?:[\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9])")
#: a full stop after a plain word, then a lower-case word: a sentence that opens with an
#: identifier ("... on the LightRAG paper's criteria. lightrag bench-prompts runs ..."; a
#: Markdown loader drops the inline code's backticks)
_END_BEFORE_LOWER = re.compile(r"(?<=[a-z]{4})\.\s+(?=[a-z])")
_MARKUP_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)")
_LIST_MARKER = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)")
_PREFORMATTED = re.compile(r"^(?: {4}|\t)")


@dataclass
class Sentence:
    """One sentence of a chunk: its exact text and the heading of its chunk ("" if none)."""

    text: str
    heading: str = ""
    code: bool = False  # a line of a code block (quoted only for how-to questions)
    item: bool = False  # the first sentence of a list item ("- Fill in form BP-1. Attach ...")


def _is_abbreviation(text: str, end: int) -> bool:
    """Whether the full stop at ``text[end]`` ends an abbreviation or an initial."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:end].lower().lstrip("(\"'")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _split_line(line: str) -> List[str]:
    pieces, start = [], 0
    ends = sorted([*_END.finditer(line), *_END_BEFORE_LOWER.finditer(line)], key=lambda m: m.start())
    for match in ends:
        if line[match.start()] == "." and _is_abbreviation(line, match.start()):
            continue
        pieces.append(line[start:match.end()].strip())
        start = match.end()
    pieces.append(line[start:].strip())
    return [p for p in pieces if p]


_CLAUSE_BREAK = re.compile(r"(?<=;)\s+")


def _breaks(text: str, anywhere: bool = False) -> List[int]:
    """Where ``text`` may be cut after a semicolon: outside parentheses when there are such
    (anywhere when ``anywhere``)."""
    found = [m.end() for m in _CLAUSE_BREAK.finditer(text)]
    outside = [b for b in found if text.count("(", 0, b) <= text.count(")", 0, b)]
    return found if anywhere else outside or found


def _within_limit(text: str, anywhere: bool = False) -> List[str]:
    """``text`` as verbatim runs of its clauses of at most ``MAX_SENTENCE_CHARS`` each: a long
    sentence (a paragraph-long run-on of the documentation kind) is cut after its semicolons
    outside parentheses where it has such, and a run still too long after its semicolons inside
    them too; a clause still too long is dropped, as are runs with no semicolon (a flattened
    table or list, not prose worth quoting).

    Example:
        >>> [len(p) for p in _within_limit("a" * 400 + "; " + "b" * 400 + ".")]
        [401, 401]
        >>> [len(p) for p in _within_limit("x; (" + "a" * 400 + "; " + "b" * 400 + ").")]
        [2, 402, 402]
    """
    if len(text) <= MAX_SENTENCE_CHARS:
        return [text]
    out: List[str] = []
    start = 0
    ends = _breaks(text, anywhere) + [len(text)]
    for number, end in enumerate(ends):
        following = ends[number + 1] if number + 1 < len(ends) else None
        if following is not None and following - start <= MAX_SENTENCE_CHARS:
            continue  # the next clause still fits in this run
        piece = text[start:end].strip()
        if piece and len(piece) <= MAX_SENTENCE_CHARS:
            out.append(piece)
        elif piece and not anywhere:
            out.extend(_within_limit(piece, anywhere=True))
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


#: what a piece of a sentence cut off at its start opens with (", vectors, status and ..." where
#: a chunk begins inside the sentence its overlap repeats): not quotable alone
_FRAGMENT_START = frozenset(",;:.)]}")
_EMPHASIS = re.compile(r"^(?:\*\*|__|\*|_)(.+?)(?:\*\*|__|\*|_)$")
_FAQ_PREFIX = re.compile(r"^(?:Q|Question)\s*[:.]\s*", re.I)


def _faq_question(lines: List[str], number: int) -> str:
    """The question of line ``number`` when it asks what the lines below it answer, as in a FAQ
    ("**How long is the line?**" above "Our trains run for six and a half miles ..."): a short
    line of its own that ends with "?", opens its paragraph and has text right below it."""
    raw = _FAQ_PREFIX.sub("", lines[number].strip())
    emphasis = _EMPHASIS.match(raw)
    question = (emphasis.group(1) if emphasis else raw).strip()
    below = lines[number + 1].strip() if number + 1 < len(lines) else ""
    opens = number == 0 or not lines[number - 1].strip()
    if (not question.endswith("?") or len(question.split()) > 2 * MAX_HEADING_WORDS or not opens
            or not below or below.endswith("?")):
        return ""
    return question


#: the longest code line quoted (longer ones are data, not a command)
MAX_CODE_CHARS = 200


def _code_line(line: str, heading: str) -> List[Sentence]:
    """``line`` of a code block as a quotable command ("lightrag export kg.graphml"), when it
    is one: short, with a letter, not only a comment or a bracket."""
    text = line.strip()
    if (not text or len(text) > MAX_CODE_CHARS or not re.search(r"[A-Za-z]", text)
            or text.startswith(("#", "//", "--", "/*", "*")) or set(text) <= set("{}[](),;")):
        return []
    return [Sentence(text=text, heading=heading, code=True)]


def split_sentences(chunk_text: str, code: bool = False) -> List[Sentence]:
    """The answerable sentences of a chunk, each a verbatim substring of it.

    Lines of code fences and lines indented by four spaces or a tab (code, preformatted text)
    are skipped, unless ``code`` asks for them (then each command line is a :class:`Sentence`
    with ``code=True``: :func:`_code_line`); table rules are skipped, a heading line is not a
    sentence (the chunk's first line when it reads as a title, and a title standing alone between blank lines
    further down: the sentences after it carry it as their heading), a list item is quoted
    without its marker ("- ", "2. "), a piece opening with ", " or ";" (a chunk cut inside a
    sentence) is not quoted, a FAQ's question line is the heading of the answer below it
    (:func:`_faq_question`), very short pieces ("Yes.") carry too little to quote alone,
    and a sentence longer than ``MAX_SENTENCE_CHARS`` is quoted as runs of its clauses
    (:func:`_within_limit`).

    Example:
        >>> text = "Saturn\\nIt has rings.\\n\\nMoons\\n\\nTitan is one."
        >>> [(s.text, s.heading) for s in split_sentences(text)]
        [('It has rings.', 'Saturn'), ('Titan is one.', 'Moons')]
    """
    heading = outer = heading_of(chunk_text)
    sentences: List[Sentence] = []
    in_code = False
    lines = chunk_text.split("\n")
    for number, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or (_PREFORMATTED.match(raw) and line and not _LIST_MARKER.match(line)):
            # code or preformatted text (a nested list item is still quoted); its commands are
            # quoted when asked for (``code``: "How do I export the graph?")
            sentences.extend(_code_line(line, heading) if code else [])
            continue
        if not line or (number == 0 and heading) or set(line) <= set("|-: =+#*"):
            continue
        inner = _inner_heading(lines, number)
        if inner:
            heading = outer = inner
            continue
        question = _faq_question(lines, number)
        if question:  # the answer below is read under its question (and the page's title)
            heading = f"{outer}: {question}" if outer else question
            continue
        first = bool(_LIST_MARKER.match(line))
        for sentence in _split_line(_MARKUP_PREFIX.sub("", line)):
            for piece in _within_limit(sentence):
                if len(piece) >= MIN_SENTENCE_CHARS and piece[0] not in _FRAGMENT_START:
                    sentences.append(Sentence(text=piece, heading=heading, item=first))
                    first = False
    return sentences


#: characters of a chunk's opening looked for at the end of another chunk (:func:`overlap_length`;
#: the chunker's overlap of 100 tokens is ~400 characters)
OVERLAP_PROBE = 32


def overlap_length(first: str, second: str) -> int:
    """How many characters at the end of ``first`` open ``second``: the overlap of two chunks
    cut one after the other from a document (0 when ``second`` does not continue ``first``;
    at least :data:`OVERLAP_PROBE` characters must match).

    Example:
        >>> a = "Titan has lakes of methane. Its thick nitrogen atmosphere hides"
        >>> b = "Its thick nitrogen atmosphere hides the surface from cameras. Huygens landed."
        >>> overlap_length(a, b), overlap_length(b, a)
        (35, 0)
    """
    head = second[:OVERLAP_PROBE]
    if len(head) < OVERLAP_PROBE or len(head) > len(first):
        return 0
    start = first.rfind(head)
    while start >= 0:
        if second.startswith(first[start:]):
            return len(first) - start
        start = first.rfind(head, 0, start)
    return 0


def continued_runs(texts: Sequence[str]) -> List[List[int]]:
    """The indices of ``texts`` grouped into runs, each in document order, where each text
    continues the one before it (:func:`overlap_length`); a text no other continues or is
    continued by is a run of its own. Chunks retrieved together are often neighbours: joined,
    a sentence the chunker cut at a chunk's end is whole again.

    Example:
        >>> a = "Titan has lakes of methane. Its thick nitrogen atmosphere hides"
        >>> b = "Its thick nitrogen atmosphere hides the surface from cameras. Huygens landed."
        >>> continued_runs([b, "Voyager 1 flew past Jupiter.", a])
        [[2, 0], [1]]
    """
    following: dict = {}  # i -> the text that continues it (each continues at most one)
    continued: set = set()
    for i, first in enumerate(texts):
        for j, second in enumerate(texts):
            if i != j and j not in continued and overlap_length(first, second):
                following[i] = j
                continued.add(j)
                break
    runs: List[List[int]] = []
    placed: set = set()
    # runs start where nothing continues into them; what is left is a cycle (identical texts)
    for start in [i for i in range(len(texts)) if i not in continued] + list(range(len(texts))):
        if start in placed:
            continue
        run = [start]
        placed.add(start)
        while following.get(run[-1]) is not None and following[run[-1]] not in placed:
            run.append(following[run[-1]])
            placed.add(run[-1])
        runs.append(run)
    return sorted(runs, key=min)


def joined_text(texts: Sequence[str], run: Sequence[int]) -> str:
    """The text of a run of :func:`continued_runs`: each text after the first without the
    overlap it opens with."""
    return _joined(texts, run)[0]


def _joined(texts: Sequence[str], run: Sequence[int]) -> Tuple[str, List[int]]:
    """:func:`joined_text` and where each text's own part starts in it."""
    out, starts = texts[run[0]], [0]
    for before, after in zip(run, run[1:]):
        starts.append(len(out))
        out += texts[after][overlap_length(texts[before], texts[after]):]
    return out, starts


def sentences_by_chunk(texts: Sequence[str], groups: Sequence[str],
                       code: bool = False) -> List[List[Sentence]]:
    """The sentences of each of ``texts`` (:func:`split_sentences`), where texts of one group
    (one source file) that continue one another are read as one text: a sentence belongs to
    the text it starts in, whole even where the chunker cut it at that text's end, and the
    piece that opens the next text is not a sentence of its own. ``code``: also the command
    lines of code blocks (:func:`split_sentences`).

    Example:
        >>> a = "Titan has lakes of methane. Its thick nitrogen atmosphere hides"
        >>> b = "Its thick nitrogen atmosphere hides the surface from cameras. Huygens landed there."
        >>> first, second = sentences_by_chunk([a, b], ["f", "f"])
        >>> [s.text for s in first]
        ['Titan has lakes of methane.', 'Its thick nitrogen atmosphere hides the surface from cameras.']
        >>> [s.text for s in second]
        ['Huygens landed there.']
    """
    found: List[List[Sentence]] = [[] for _ in texts]
    by_group: dict = {}
    for number, group in enumerate(groups):
        by_group.setdefault(group, []).append(number)
    for members in by_group.values():
        for run in continued_runs([texts[m] for m in members]):
            numbers = [members[i] for i in run]
            joined, starts = _joined(texts, numbers)
            cursor = 0
            for sentence in split_sentences(joined, code):
                at = joined.find(sentence.text, cursor)
                cursor = at + len(sentence.text) if at >= 0 else cursor
                owner = max(k for k, start in enumerate(starts) if start <= max(at, 0))
                found[numbers[owner]].append(sentence)
    return found
