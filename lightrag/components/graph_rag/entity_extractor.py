"""``EntityExtractor``: one LLM extraction per chunk, plus gleaning rounds, into graph records.

The first call sends the extraction prompt of :mod:`~lightrag.components.graph_rag.prompts`
(line format, or JSON with ``use_json=True``). Each gleaning round replays the conversation so
far (the first request and every answer) and asks for missed or badly formatted records only;
it stops after ``max_gleaning`` rounds or as soon as a round adds nothing new. Records found more
than once (in one answer or across rounds) merge by key, keeping the longer description.

Failures are data, never silent. An answer with no parseable record that is not an explicit
"nothing to extract" (``<|DONE|>`` alone, or empty JSON lists), or an answer that is truncated
(records but no ``<|DONE|>``, or JSON with unclosed brackets), is dropped from the generator's
response cache (``generator.forget``; a generator without it is called with ``use_cache=False``
for the retry) and the same request is sent again, up to ``max_retries`` times. When the first
pass still fails, or the model call itself fails, ``ExtractionResult.error`` says why, so the
system records the chunk FAILED and retries it on the next insert. A gleaning round that still
fails is ignored (listed in ``problems``); the records already accepted are kept.

Example:
    >>> from lightrag.core.generator import Generator
    >>> from lightrag.components.model_client.scripted_client import ScriptedClient
    >>> reply = "entity<|#|>Ada Lovelace<|#|>person<|#|>A mathematician.\\n<|DONE|>"
    >>> gen = Generator(model_client=ScriptedClient(responses=[reply]))
    >>> result = EntityExtractor(gen, max_gleaning=0)("Ada Lovelace wrote notes.", "chunk-1")
    >>> [e.entity_name for e in result.entities], result.error
    (['Ada Lovelace'], None)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from lightrag.components.graph_rag.extraction_parser import (
    is_explicit_empty,
    parse_extraction_output,
    truncation_reason,
)
from lightrag.components.graph_rag.prompts import (
    COMPLETION_MARKER,
    DEFAULT_ENTITY_TYPES,
    ENTITY_EXTRACTION_JSON_SYSTEM_PROMPT,
    ENTITY_EXTRACTION_SYSTEM_PROMPT,
    ENTITY_EXTRACTION_USER_PROMPT,
    ENTITY_GLEANING_USER_PROMPT,
    EXTRACTION_JSON_SCHEMA,
    TUPLE_DELIMITER,
    check_generator_template,
    fill_generator_prompt,
    json_mode_model_kwargs,
    render_prompt,
)
from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord, relation_key
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.text_extract import excerpt
from lightrag.core.types import GeneratorOutput

log = logging.getLogger(__name__)

Record = Union[EntityRecord, RelationRecord]


def _d(text: str) -> Dict[str, str]:
    return {"desc": text}


@dataclass
class ExtractionResult(DataClass):
    """The entities and relations extracted from one chunk, or why extraction failed.

    Example:
        >>> ExtractionResult(chunk_id="c1", error="model error: timeout").ok
        False
    """

    chunk_id: str = field(default="", metadata=_d("Id of the chunk"))
    entities: List[EntityRecord] = field(default_factory=list, metadata=_d("Extracted entities"))
    relations: List[RelationRecord] = field(
        default_factory=list, metadata=_d("Extracted relations")
    )
    error: Optional[str] = field(default=None, metadata=_d("Why extraction failed; None if ok"))
    raw_outputs: List[str] = field(
        default_factory=list,
        metadata=_d("Model answers in order: first pass, then gleaning rounds, retries included"),
    )
    gleaning_rounds: int = field(default=0, metadata=_d("Gleaning rounds answered"))
    retries: int = field(
        default=0, metadata=_d("Requests sent again after an unparseable or truncated answer")
    )
    problems: List[str] = field(
        default_factory=list, metadata=_d("What the parser repaired or dropped")
    )

    @property
    def ok(self) -> bool:
        return self.error is None


def output_text(output: GeneratorOutput) -> str:
    """The reply text of a generator output (the raw reply when output processors ran)."""
    for value in (output.raw_response, output.data):
        if isinstance(value, str):
            return value
    return "" if output.data is None else str(output.data)


class RecordMerger:
    """Collect records by key (entity name; sorted relation endpoints), keeping the longer
    description; :meth:`add` returns how many keys were new."""

    def __init__(self) -> None:
        self.entities: Dict[str, EntityRecord] = {}
        self.relations: Dict[tuple, RelationRecord] = {}

    def add(self, entities: List[EntityRecord], relations: List[RelationRecord]) -> int:
        new = 0
        for entity in entities:
            new += self._keep(self.entities, entity.entity_name, entity)
        for relation in relations:
            new += self._keep(self.relations, relation_key(relation.src_id, relation.tgt_id), relation)
        return new

    @staticmethod
    def _keep(store: Dict[Any, Any], key: Any, record: Record) -> int:
        old = store.get(key)
        if old is None:
            store[key] = record
            return 1
        if len(record.description) > len(old.description):
            store[key] = record
        return 0


class _Run:
    """The state of one chunk's extraction: which request to send next and what came back.

    :meth:`feed` takes each answer and returns the next request: a gleaning round, the same
    request again (a retry: the answer failed to parse or was cut off; ``reject_last`` is then
    set so the caller drops that answer from the response cache), or None when done."""

    def __init__(self, owner: EntityExtractor, text: str, chunk_id: str, file_path: str) -> None:
        self.owner = owner
        self.chunk_id = chunk_id
        self.file_path = file_path
        self.user_prompt = render_prompt(ENTITY_EXTRACTION_USER_PROMPT, input_text=text)
        self.merger = RecordMerger()
        self.result = ExtractionResult(chunk_id=chunk_id)
        self.accepted: List[str] = []  # the answers the gleaning conversation replays
        self.request: Optional[Dict[str, Any]] = None
        self.attempt = 0  # sends of the current request
        self.reject_last = False

    def first_request(self) -> Dict[str, Any]:
        self.request = fill_generator_prompt(
            self.owner.generator, self.owner.system_prompt, self.user_prompt
        )
        return self.request

    def _gleaning_request(self) -> Dict[str, Any]:
        user = render_prompt(
            ENTITY_GLEANING_USER_PROMPT,
            first_prompt=self.user_prompt,
            previous_answers=[answer.strip() for answer in self.accepted],
            json_mode=self.owner.use_json,
            tuple_delimiter=TUPLE_DELIMITER,
            completion_marker=COMPLETION_MARKER,
        )
        return fill_generator_prompt(self.owner.generator, self.owner.system_prompt, user)

    def _next(self, request: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        self.request, self.attempt = request, 0
        return request

    def _failure(self, text: str, empty_answer: bool, records: bool) -> Optional[str]:
        if not records and not empty_answer:
            return f"no entity or relation could be parsed from the model output: {excerpt(text)!r}"
        if records and self.owner.require_completion_marker:
            reason = truncation_reason(text)
            if reason is not None:
                return f"the model output looks truncated ({reason}): {excerpt(text)!r}"
        return None

    def feed(self, output: GeneratorOutput) -> Optional[Dict[str, Any]]:
        """Take one model answer; return the next request, or None when done."""
        text = output_text(output)
        first = not self.accepted
        self.attempt += 1
        self.reject_last = False
        self.result.raw_outputs.append(text)
        label = "first pass" if first else f"gleaning round {self.result.gleaning_rounds + 1}"
        if output.error is not None:
            if first:
                self.result.error = f"model error: {output.error}"
            else:
                self.result.gleaning_rounds += 1
                self.result.problems.append(f"{label} failed: {output.error}")
            return None
        entities, relations, problems = parse_extraction_output(text, self.chunk_id, self.file_path)
        empty_answer = is_explicit_empty(text)
        failure = self._failure(text, empty_answer, bool(entities or relations))
        if failure is not None:
            self.reject_last = True  # never replayed from the response cache
            if self.attempt <= self.owner.max_retries:
                self.result.retries += 1
                self.result.problems.append(f"{label} attempt {self.attempt}: {failure}; retried")
                return self.request
            attempts = f"{self.attempt} attempt{'s' if self.attempt > 1 else ''}"
            if first:
                self.result.error = f"{failure} (after {attempts})"
            else:
                self.result.gleaning_rounds += 1
                self.result.problems.append(f"{label}: {failure} (after {attempts}); ignored")
            return None
        if not first:
            self.result.gleaning_rounds += 1
        self.accepted.append(text)
        self.result.problems.extend(f"{label}: {p}" for p in problems)
        added = self.merger.add(entities, relations)
        if empty_answer and first:
            return None  # nothing in the text: gleaning would only invite inventions
        if (not first and added == 0) or self.result.gleaning_rounds >= self.owner.max_gleaning:
            return None
        return self._next(self._gleaning_request())

    def finish(self) -> ExtractionResult:
        if self.result.error is None:
            self.result.entities = list(self.merger.entities.values())
            self.result.relations = list(self.merger.relations.values())
        else:
            log.warning("extraction of chunk %s failed: %s", self.chunk_id, self.result.error)
        return self.result


class EntityExtractor(Component):
    """Extract entities and relations from text chunks with an LLM (with gleaning).

    Args:
        generator: the Generator to call. Its template must use ``input_str`` (and, like the
            library default, ``task_desc_str`` for the instructions); leave it unset.
        entity_types: the allowed entity types (``DEFAULT_ENTITY_TYPES`` when None).
        max_gleaning: follow-up rounds asking for missed records (0: one call per chunk).
        language: the language of names and descriptions.
        use_json: ask for the JSON format instead of the line format.
        examples: few-shot example text replacing the prompt's built-in example.
        json_mode_kwargs: request arguments for JSON mode; by default a ``json_schema`` for
            ``LocalLLMClient`` (constrained decoding) and ``response_format={"type":
            "json_object"}`` for other clients. Pass ``{}`` for servers that reject both.
        max_retries: how many times a request is sent again when its answer cannot be parsed
            or is truncated (before the chunk fails, or the gleaning round is ignored).
        require_completion_marker: a line-format answer with records but no ``<|DONE|>`` counts
            as truncated (set False for a model that never writes the marker).

    Example:
        >>> from lightrag.core.generator import Generator
        >>> from lightrag.components.model_client.scripted_client import ScriptedClient
        >>> client = ScriptedClient(responses=[
        ...     '{"entities": [{"name": "Oslo", "type": "location", "description": "A city."}],'
        ...     ' "relationships": []}'])
        >>> extractor = EntityExtractor(Generator(model_client=client), use_json=True, max_gleaning=0)
        >>> extractor("Oslo is a city.", "c1").entities[0].entity_name
        'Oslo'
        >>> client.requests[0]["response_format"]
        {'type': 'json_object'}
    """

    def __init__(
        self,
        generator: Generator,
        entity_types: Optional[List[str]] = None,
        max_gleaning: int = 1,
        language: str = "English",
        use_json: bool = False,
        examples: Optional[str] = None,
        json_mode_kwargs: Optional[Dict[str, Any]] = None,
        max_retries: int = 2,
        require_completion_marker: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(generator, Generator):
            raise TypeError(f"generator must be a Generator, got {type(generator).__name__}")
        if max_gleaning < 0:
            raise ValueError(f"max_gleaning must be >= 0, got {max_gleaning}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        check_generator_template(generator)
        self.generator = generator
        self.entity_types = list(entity_types or DEFAULT_ENTITY_TYPES)
        self.max_gleaning = max_gleaning
        self.max_retries = max_retries
        self.require_completion_marker = require_completion_marker
        self.language = language
        self.use_json = use_json
        self.examples = examples
        if json_mode_kwargs is None and use_json:
            json_mode_kwargs = json_mode_model_kwargs(generator, EXTRACTION_JSON_SCHEMA)
        self.json_mode_kwargs = dict(json_mode_kwargs or {})
        template = ENTITY_EXTRACTION_JSON_SYSTEM_PROMPT if use_json else ENTITY_EXTRACTION_SYSTEM_PROMPT
        self.system_prompt = render_prompt(
            template,
            entity_types=self.entity_types,
            language=language,
            examples=examples,
            tuple_delimiter=TUPLE_DELIMITER,
            completion_marker=COMPLETION_MARKER,
        )

    def _model_kwargs(self) -> Dict[str, Any]:
        kwargs = dict(self.json_mode_kwargs) if self.use_json else {}
        if self.generator.model_kwargs.get("stream"):
            kwargs["stream"] = False
        return kwargs

    def _forget(self, request: Dict[str, Any], model_kwargs: Dict[str, Any]) -> bool:
        """Drop a rejected answer from the generator's response cache; False when the
        generator cannot (the retry then bypasses the cache)."""
        forget = getattr(self.generator, "forget", None)
        if not callable(forget):
            return False
        try:
            forget(prompt_kwargs=request, model_kwargs=model_kwargs)
        except Exception as e:  # a cache that cannot forget must not fail the extraction
            log.warning("could not drop a rejected answer from the response cache: %s", e)
            return False
        return True

    def _cache_choice(self, run: _Run, request: Dict[str, Any], model_kwargs: Dict[str, Any]) -> Any:
        """After each answer: forget a rejected one; ``use_cache`` for the next call."""
        if not run.reject_last:
            return None
        forgotten = self._forget(request, model_kwargs)
        return None if forgotten else False

    def call(
        self, chunk_text: str, chunk_id: str, file_path: str = "unknown_source"
    ) -> ExtractionResult:
        """Extract from one chunk; never raises on model failure (see ``error``)."""
        run = _Run(self, chunk_text, chunk_id, file_path)
        request: Optional[Dict[str, Any]] = run.first_request()
        use_cache = None
        while request is not None:
            model_kwargs = self._model_kwargs()
            output = self.generator(
                prompt_kwargs=request, model_kwargs=model_kwargs, use_cache=use_cache
            )
            sent = request
            request = run.feed(output)
            use_cache = self._cache_choice(run, sent, model_kwargs)
        return run.finish()

    async def acall(
        self, chunk_text: str, chunk_id: str, file_path: str = "unknown_source"
    ) -> ExtractionResult:
        """Async :meth:`call`, through ``generator.acall``."""
        run = _Run(self, chunk_text, chunk_id, file_path)
        request: Optional[Dict[str, Any]] = run.first_request()
        use_cache = None
        while request is not None:
            model_kwargs = self._model_kwargs()
            output = await self.generator.acall(
                prompt_kwargs=request, model_kwargs=model_kwargs, use_cache=use_cache
            )
            sent = request
            request = run.feed(output)
            use_cache = self._cache_choice(run, sent, model_kwargs)
        return run.finish()

    def _extra_repr(self) -> str:
        return (
            f"entity_types={self.entity_types}, max_gleaning={self.max_gleaning}, "
            f"language={self.language!r}, use_json={self.use_json}"
        )
