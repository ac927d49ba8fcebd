"""Checks on a generated answer: markup cleaned, citations validated, sentences scored for support.

A model that writes the answer can copy prompt markup, cite sources that do not exist, or state
what the context never says. :func:`check_answer` returns the cleaned answer with:

- **citations** ``[n]`` kept only when ``n`` is a reference of the context (others removed and
  listed);
- **support** per answer sentence: the share of its content words found in the best matching
  context sentence (a number is only supported by the same number, a name only by a context
  that has it), so "Saturn has a thick
  nitrogen atmosphere" scores low against a context that says it of Titan... unless the context
  says it; sentences under :data:`SUPPORT_THRESHOLD` are listed as unsupported and, on request,
  dropped.

Example:
    >>> checked = check_answer("Titan has a thick nitrogen atmosphere [1]. It is made of cheese [3].",
    ...                        ["Titan, the largest moon of Saturn, has a thick nitrogen atmosphere."],
    ...                        valid_references={"1"})
    >>> checked.invalid_citations, checked.unsupported
    (['3'], ['It is made of cheese.'])
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence, Set

from lightrag.components.graph_rag.answer_words import content_words
from lightrag.components.graph_rag.sentences import sentences_by_chunk, split_sentences

SUPPORT_THRESHOLD = 0.6

# chat and prompt markup a small model copies (<SYS>, <User>, <|im_end|>, <user_id="...">), not
# HTML a real answer may quote in lower case
_TAG = re.compile(r"<\|[^<>|]{1,40}\|>|</?(?:[A-Z][\w:.-]*|user_\w+|sys|system|assistant|user)"
                  r"(?:[\s=][^<>]*)?/?>")
_FENCE = re.compile(r"^\s*```json\s*$\n?|^\s*```\s*$\n?(?=\s*\Z)", re.M)
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\[nt\"]")
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_REFERENCE_SECTION = re.compile(
    r"\n\s*(?:#+\s*)?(?:references|sources|reference document list)\s*:?\s*\n.*\Z", re.I | re.S)
_LEAD_IN = re.compile(r"^\s*(?:the reference document list (?:is|includes)[^\n]*\n|"
                      r"(?:the )?answer(?: is)?\s*:\s*)", re.I)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_WORD = re.compile(r"[^\W\d_][\w'-]*")


@dataclass
class CheckedAnswer:
    """A generated answer after :func:`check_answer`."""

    text: str
    invalid_citations: List[str] = field(default_factory=list)
    support: List[float] = field(default_factory=list)
    sentences: List[str] = field(default_factory=list)
    unsupported: List[str] = field(default_factory=list)


def clean_markup(text: str) -> str:
    """The answer without copied prompt markup: tags, code fences, literal escapes (``\\n``,
    ``\\u2014``), a lead-in naming the prompt's sections and a trailing reference list."""
    text = _ESCAPE.sub(lambda m: codecs.decode(m.group(0), "unicode_escape"), text)
    text = _FENCE.sub("", _TAG.sub("", text))
    text = _REFERENCE_SECTION.sub("", "\n" + text).strip()
    return _LEAD_IN.sub("", text).strip()


def cited_ids(text: str) -> Set[str]:
    """The reference ids ``text`` cites as ``[n]`` or ``[n, m]``."""
    return {n.strip() for group in _CITATION.findall(text or "") for n in group.split(",")}


def validate_citations(text: str, valid_references: Set[str]) -> tuple:
    """``(text, invalid)``: citations of unknown references removed from ``text``."""
    invalid: List[str] = []

    def keep(match: re.Match) -> str:
        ids = [i.strip() for i in match.group(1).split(",")]
        good = [i for i in ids if i in valid_references]
        invalid.extend(i for i in ids if i not in valid_references)
        return f"[{', '.join(good)}]" if good else ""

    return re.sub(r"\s+([.,;])", r"\1", _CITATION.sub(keep, text)).strip(), invalid


def _answer_sentences(text: str) -> List[str]:
    plain = _CITATION.sub("", text)
    return [s.text for s in split_sentences(plain.replace("\n\n", "\n"))] or (
        [plain.strip()] if plain.strip() else [])


def unknown_names(sentence: str, context_vocabulary: Set[str]) -> List[str]:
    """The capitalised words after the first of ``sentence`` (names, as "Mars" in "Kern was
    born on Mars") that no context text contains, in any case."""
    words = _WORD.findall(sentence)
    return [w for w in words[1:] if w[0].isupper() and len(w) > 1
            and w.lower() not in context_vocabulary]


def support_score(sentence: str, context_sentences: Sequence[Set[str]],
                  context_numbers: Set[str], context_vocabulary: Optional[Set[str]] = None) -> float:
    """Share of the sentence's content words found in its best context sentence; 0 when it
    states a number the context never mentions, or (given the context's words in lower case)
    a name it never mentions: one new name makes a sentence false however many of its other
    words the context has ("Kern was born on Mars" against "Tobias Kern was born in Lisk")."""
    words = content_words(sentence)
    if any(n not in context_numbers for n in _NUMBER.findall(sentence)):
        return 0.0
    if context_vocabulary is not None and unknown_names(sentence, context_vocabulary):
        return 0.0
    if not words:
        return 1.0
    return max((len(words & ctx) / len(words) for ctx in context_sentences), default=0.0)


def check_answer(answer: str, context_texts: Iterable[str], valid_references: Set[str],
                 drop_unsupported: bool = False,
                 threshold: float = SUPPORT_THRESHOLD) -> CheckedAnswer:
    """Clean ``answer``, validate its citations against ``valid_references`` and score each of
    its sentences for support by ``context_texts`` (the chunks and graph lines it was given)."""
    texts = list(context_texts)
    long = [t for t in texts if len(t) >= 600]  # chunks: neighbours read as one text
    context_sentences = [content_words(s.text) for found in sentences_by_chunk(long, [""] * len(long))
                         for s in found]
    context_sentences += [content_words(s.text) for t in texts if len(t) < 600 for s in split_sentences(t)]
    context_sentences += [content_words(t) for t in texts if len(t) < 600]
    numbers = {n for t in texts for n in _NUMBER.findall(t)}
    vocabulary = {w.lower() for t in texts for w in _WORD.findall(t)}
    text, invalid = validate_citations(clean_markup(answer), valid_references)
    sentences = _answer_sentences(text)
    scores = [round(support_score(s, context_sentences, numbers, vocabulary), 3) for s in sentences]
    unsupported = [s for s, score in zip(sentences, scores) if score < threshold]
    if drop_unsupported and unsupported:
        for sentence in unsupported:
            text = _drop(text, sentence)
    return CheckedAnswer(text=text.strip(), invalid_citations=invalid, support=scores,
                         sentences=sentences, unsupported=unsupported)


def _drop(text: str, sentence: str) -> str:
    """``text`` without ``sentence`` and the citations right after it."""
    pattern = re.escape(sentence.rstrip(".!?")) + r"[.!?]?(?:\s*\[[\d,\s]+\])*"
    return re.sub(r"\s{2,}", " ", re.sub(pattern, "", text, count=1))
