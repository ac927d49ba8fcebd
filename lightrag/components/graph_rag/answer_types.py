"""What the quoting answerer returns: :class:`ExtractiveAnswer` and its quoted
:class:`AnswerSentence` items (a module of their own: the answerer's parts build them too,
without importing the answerer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from lightrag.core.base_data_class import DataClass


@dataclass
class AnswerSentence(DataClass):
    """One quoted sentence of an extractive answer."""

    text: str = field(default="", metadata={"desc": "The sentence, verbatim from the context"})
    reference_id: str = field(default="", metadata={"desc": "Reference number of its source"})
    chunk_id: str = field(default="", metadata={"desc": "Chunk it was quoted from"})
    score: float = field(default=0.0, metadata={"desc": "How well it answers (higher is better)"})


@dataclass
class ExtractiveAnswer(DataClass):
    """An answer quoted from the context: its text (sentences and ``[n]`` citations), the quoted
    sentences, and for yes/no and choice questions whether the context decided them."""

    text: str = field(default="", metadata={"desc": "The answer shown to the user"})
    sentences: List[AnswerSentence] = field(default_factory=list, metadata={"desc": "Quotes"})
    question_type: str = field(default="other", metadata={"desc": "Kind of answer asked for"})
    decided: Optional[bool] = field(default=None, metadata={"desc": "yes/no/choice decided?"})
    milliseconds: float = field(default=0.0, metadata={"desc": "Time taken"})
