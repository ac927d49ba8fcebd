"""``ExtractiveAnswerer``: answer by quoting the retrieved context, with citations, no model call.

A small local model asked to write an answer from a 2,000-token context is slow on a CPU (about
a minute and a half for SmolLM2-135M on 2 cores) and invents facts. Quoting is fast and cannot
invent: the answer is the sentence, or the short chain of sentences, of the context that
answers the question, each followed by the ``[n]`` of its reference.

How sentences are chosen (every piece is plain arithmetic over one batch of sentence vectors):

1. the context chunks are split into sentences (:mod:`~lightrag.components.graph_rag.sentences`),
   each remembered with its chunk's heading ("It was launched in 1977" under "Voyager 1");
   only the ``max_embedded`` best by their words get a vector (the question words and phrases
   they hold, their chunk's rank: :mod:`~lightrag.components.graph_rag.sentence_prefilter`), so
   the cost stays flat however long the context (vectors are also cached across queries);
2. each sentence is scored: cosine to the question (the embedder of the store), the question's
   words it covers (weighted by how rare they are in the context) and its phrases, a bonus when it holds the
   kind of answer asked for and the question does not (a year for "When", a name for "Who":
   :mod:`~lightrag.components.graph_rag.question_types`), a bonus when it mentions an entity the
   graph retrieved, a small prior for the chunks retrieval ranked first, and a penalty when it
   only repeats the question;
3. the first quote comes from the sentences about what the question names: those whose text,
   heading or passage opening names the most of the question's names as phrases ("Who designed
   Tower Bridge?" quotes the Tower Bridge passage, not "John A. Roebling designed the bridge" of
   another passage that matches every other word); a hop taken for the question's words alone
   (not through a name a quote brought) stays among them too. Among those, the first quote is
   the best sentence when it names every subject the question names and the
   question asks for no name, date or number ("What did the Voyager missions find on Titan?");
   when it also covers all but one word of the question, only a sentence reached through a
   name it brings may follow it (one that merely shares the last word, "Cassini discovered
   plumes", is about something else). It is the best sentence too when it covers every word of
   the question and holds the kind of answer asked for ("When was Voyager 1 launched?": not an
   Apollo launch whose follower would cover "Voyager"), else the best of the best few that
   does so (its names may stand in its passage's opening: "The station manager is Oona Ferris."
   for "Who manages the Loch Brannagh field station?"); otherwise, among the best few, the one
   whose follower makes the best pair;
4. multi-hop: the best sentence brings names the question lacks (the bridge: "X was written by
   **Y**"); the next sentence is the best one that mentions a bridge name and covers the words
   of the question left uncovered ("**Y** was born in 1950"). Up to ``max_sentences`` hops;
5. the answer opens with the first quote (after the sentence that says who its "it" is), the
   other quotes grouped by source in the source's order, each "She ..." quote after the
   sentence that names her and a bare "Yes." of an FAQ before the sentence that says how
   (:mod:`~lightrag.components.graph_rag.quote_order`);
6. a context none of whose sentences (nor their headings) shares a word with the question is
   about something else, however close in meaning its best sentence: the answer says the
   context does not answer ("What is the capital of France?" over articles on space missions);
   so is one none of whose sentences, headings or passage openings names the one name the
   question asks about, accents aside ("When did the Forth Bridge open?" over the Brooklyn
   Bridge's passage);
7. yes/no and "A or B" questions get a best-effort verdict (the years given each option, a
   sentence stating the claim, each side of "Were both ...?" asked alone: answer_comparisons),
   or say plainly that the context does not decide, followed by the evidence;
8. a "what"/"which" question whose noun (the thing asked for: "What is her annual **salary**?")
   no sentence of the context says is answered with that said first ("The retrieved context
   does not mention "salary"; the closest evidence: ..."): the quotes may still answer in other
   words ("What award ...?" and "the Veltmoor Innovation Medal"); so is a "When did X <verb>?"
   question none of whose sentences about X says the verb ("In which year did Henrik Sæther
   retire?" over passages that say he became managing director), and so is a question asking for
   a date, number or name whose quotes hold none ("The quoted sentences do not give the name
   asked for; the closest evidence: ...").

Example:
    >>> answerer = ExtractiveAnswerer()
    >>> chunks = [{"content": "Voyager 1\\nIt was launched by NASA in 1977. It carries a golden record.",
    ...            "reference_id": "1"}]
    >>> answerer("When was Voyager 1 launched?", chunks).text
    'It was launched by NASA in 1977. [1]'
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence

import numpy as np

from lightrag.components.graph_rag.answer_both import both_chain
from lightrag.components.graph_rag.answer_candidates import (
    Candidate,
    about_passage,
    about_the_subject,
    answer_candidates,
    embedded_text,
    favour_descriptions,
    heading_holds,
    unmentioned,
    unmentioned_event,
    unmentioned_role,
    unnamed_subject,
)
from lightrag.components.graph_rag.answer_comparisons import compared_answer
from lightrag.components.graph_rag.answer_hops import (
    TYPED_KINDS,
    answers_alone,
    bridges_of,
    complete,
    link,
    own_answers,
    through_holder,
    with_additions,
)
from lightrag.components.graph_rag.answer_namesakes import sink_namesakes, unsaid_numbered
from lightrag.components.graph_rag.answer_periods import fit_periods
from lightrag.components.graph_rag.answer_text import answer_text, choice_chain, choice_of
from lightrag.components.graph_rag.answer_types import AnswerSentence, ExtractiveAnswer
from lightrag.components.graph_rag.answer_words import (
    STOPWORDS,
    content_words,
    coverage,
    idf,
    phrase_share,
    phrases,
    question_names,
    stem,
    stems,
)
from lightrag.components.graph_rag.question_types import (
    asked_count_event,
    asked_event,
    asked_fact_of,
    asked_nouns,
    asked_role,
    asks_how_to,
    asks_place,
    bridge_role,
    direct_subject,
    gives_month,
    has_candidate,
    kind_word,
    names_kind,
    question_type,
    role_phrase,
    words,
)
from lightrag.components.graph_rag.quote_order import reading_order, with_antecedents, with_explanations
from lightrag.components.graph_rag.sentence_prefilter import Lexical, keep_best
from lightrag.core.component import Component

__all__ = ["AnswerSentence", "ExtractiveAnswer", "ExtractiveAnswerer", "content_words", "stems"]

log = logging.getLogger(__name__)

EmbedFn = Callable[[List[str]], Awaitable[Any]]

NOT_FOUND = "The retrieved context does not contain a sentence that answers this question."
CACHE_SIZE = 50_000
FIRST_HOP_MARGIN = 0.6  # a first hop other than the best sentence must score this share of it


class ExtractiveAnswerer(Component):
    """Answer from the retrieved context by quoting its best sentences, with ``[n]`` citations.

    Args:
        max_sentences: most sentences quoted (one per hop of a multi-hop question).
        follow_ratio: a further hop is quoted when its score reaches this share of the first's.
        type_bonus: added to a sentence holding the kind of answer asked for.
        entity_bonus: added to a sentence naming an entity the graph retrieved.
        bridge_bonus: added to a later hop naming a name the previous hop brought.
        rank_prior: subtracted per rank of the sentence's chunk (retrieval order matters).
        residual_weight: weight of a later hop's cosine to what the question still asks.
        left_weight: weight of a later hop's share of the question words still uncovered.
        first_hop_pool: best sentences tried as the first hop, each with its best follower.
        lead_bonus: added to the first sentence of a chunk (it says what the passage is about).
        max_embedded: most sentences embedded per answer, the best by their words
            (:mod:`~lightrag.components.graph_rag.sentence_prefilter`); ``None`` embeds them all.
        phrase_weight: added per share of the question's phrases ("lightrag check") a sentence
            holds, to the share of the question's words it covers.
        prefilter_rank_prior: subtracted per rank of the chunk from the prefilter's score.
        embed_chars: the longest text embedded per sentence (cut at a word end); ``None``
            embeds sentences whole.

    Used by the packaged offline config as the ``answer_generator`` of ``GraphRAG``; it reads
    the store's embedder for sentence vectors, so it needs no model of its own.
    """

    _to_dict_exclude = ("_vectors",)

    def __init__(self, max_sentences: int = 4, follow_ratio: float = 0.6,
                 type_bonus: float = 0.12, entity_bonus: float = 0.04,
                 bridge_bonus: float = 0.3, rank_prior: float = 0.01,
                 residual_weight: float = 0.5, left_weight: float = 0.3,
                 first_hop_pool: int = 5, lead_bonus: float = 0.1,
                 max_embedded: Optional[int] = 48, phrase_weight: float = 0.1,
                 prefilter_rank_prior: float = 0.005, embed_chars: Optional[int] = 300) -> None:
        super().__init__()
        if not isinstance(max_sentences, int) or max_sentences < 1:
            raise ValueError(f"max_sentences must be a positive integer, got {max_sentences!r}")
        for name, value in (("max_embedded", max_embedded), ("embed_chars", embed_chars)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        self.max_sentences = max_sentences
        self.follow_ratio = follow_ratio
        self.type_bonus = type_bonus
        self.entity_bonus = entity_bonus
        self.bridge_bonus = bridge_bonus
        self.rank_prior = rank_prior
        self.residual_weight = residual_weight
        self.left_weight = left_weight
        self.first_hop_pool = first_hop_pool
        self.lead_bonus = lead_bonus
        self.max_embedded = max_embedded
        self.phrase_weight = phrase_weight
        self.prefilter_rank_prior = prefilter_rank_prior
        self.embed_chars = embed_chars
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    # ------------------------------------------------------------------ vectors
    async def _sentence_vectors(self, texts: List[str], embed: Optional[EmbedFn]) -> Optional[np.ndarray]:
        """Unit vectors of ``texts`` (remembered: the same sentences come back query after
        query); ``None`` without an embedder."""
        if embed is None or not texts:
            return None
        cache = self.__dict__.setdefault("_vectors", OrderedDict())
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing:
            fresh = np.asarray(await embed(missing), dtype=np.float32)
            norms = np.linalg.norm(fresh, axis=1, keepdims=True)
            fresh = fresh / np.where(norms > 0, norms, 1.0)
            for text, vector in zip(missing, fresh):
                cache[text] = vector
            while len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
        return np.stack([cache[t] for t in texts])

    # ------------------------------------------------------------------ scoring
    @staticmethod
    def _idf(candidates: List[Candidate]) -> Dict[str, float]:
        return idf(c.words | c.heading_words for c in candidates)

    @staticmethod
    def _coverage(candidate: Candidate, targets: set, weights: Dict[str, float]) -> float:
        """Share of the target words (idf-weighted) the sentence covers; its heading counts half."""
        return coverage(candidate.words, candidate.heading_words, targets, weights)

    def _lexical(self, candidates: List[Candidate], query: str, weights: Dict[str, float]) -> None:
        """Each sentence's match by words alone: the question words it covers and its phrases.
        The words of the question's names that its passage's opening sentence says count as its
        heading's do (half): a plain-text passage names its subject there ("The Loch Brannagh
        field station is ..." for "The station manager is Oona Ferris.")."""
        q_words, q_phrases, q_names = stems(query), phrases(query), question_names(query)
        for c in candidates:
            named = c.heading_words | (c.passage_words & q_names)
            c.lexical = (coverage(c.words, named, q_words, weights)
                         + self.phrase_weight * phrase_share(c.phrases, q_phrases))

    def _prefilter(self, candidates: List[Candidate]) -> List[Candidate]:
        """The sentences worth a vector: the ``max_embedded`` best by their words."""
        items = [Lexical(c.lexical + (self.lead_bonus if c.opens_passage else 0.0), c.chunk_index,
                         c.position) for c in candidates]
        return [candidates[i] for i in keep_best(items, self.max_embedded, self.prefilter_rank_prior)]

    def _base_scores(self, candidates: List[Candidate], cosines: Optional[np.ndarray],
                     query: str, kind: str, entity_names: List[str]) -> None:
        q_words = stems(query)
        q_all = words(query)
        lowered_entities = [n.lower() for n in entity_names if len(n) > 2]
        place = asks_place(query)  # "Where did she die?": a place after "in", not "Italian"
        for i, c in enumerate(candidates):
            cosine = float(cosines[i]) if cosines is not None else 0.0
            score = (0.5 * cosine + 0.5 * c.lexical) if cosines is not None else c.lexical
            c.typed = kind in TYPED_KINDS and (names_kind(c.sentence.text, "place", q_all) if place
                                               else has_candidate(c.sentence.text, kind, q_all))
            c.heading_answers = not place and heading_holds(c.sentence.heading, c.sentence.text,
                                                            kind, query, q_all)
            c.typed = c.typed or c.heading_answers
            if c.typed:
                score += self.type_bonus
            text = c.sentence.text.lower()
            if any(n in text for n in lowered_entities):
                score += self.entity_bonus
            if c.opens_passage:
                score += self.lead_bonus  # a passage's first sentence says what it is about
            if not (c.words - q_words):
                score -= 0.3  # repeats the question, adds nothing
            c.score = score - self.rank_prior * c.chunk_index

    async def _chain(self, candidates: List[Candidate], vectors: Optional[np.ndarray], query: str,
                     kind: str, weights: Dict[str, float], embed: Optional[EmbedFn]) -> List[Candidate]:
        """The best sentence, then each next hop through the names the previous one brought.

        A next hop is scored against what the question still asks: the question without the
        words the quoted sentences already cover, plus the bridge names ("Who led the country
        where X was born?" after "X was born in Y." asks "who led ... Y").
        """
        if not candidates:
            return []
        q_words = stems(query)
        q_all = words(query)
        noun = kind_word(query) or ""  # "town" of "In which town ...": said by the answer's name
        q_names = question_names(query)
        about_subject = about_the_subject(candidates, query, q_names)
        subject = direct_subject(query) if kind in TYPED_KINDS else ""
        if subject:
            # a fact asked of one name directly ("In which town was Agathe Corvane born?") starts
            # from the passages about it, when one holds the kind of answer asked: "She was born
            # in 1839 in Hålvik" under "Agathe Corvane", not "He was born in Skarvik, the elder
            # child of Piet and Agathe Corvane" under "Matthias Corvane"
            own = [c for c in about_passage(about_subject, subject) if c.typed]
            about_subject = own or about_subject
        role = stem(bridge_role(query))  # "the founder of X": its first quote covers X ("born" is left)
        best = self._first_hop(candidates, about_subject, q_words, q_all, kind, weights, q_names, noun, role)
        chain = [best]
        covered = best.words | (best.heading_words & q_names if role and role in best.words else set())
        # a first quote that answers alone (it names every subject of the question) and, with
        # its heading, leaves at most one question word unsaid: a sentence of another passage
        # that only shares that word ("discovered") is about something else (another mission);
        # only a hop through a name a quote brought, or one of its own passage that says that
        # word ("it found river channels"), may follow it
        unsaid = q_words - best.words - best.heading_words
        linked_only = answers_alone(best, q_words, q_names, kind) and len(unsaid) <= 1
        # a hop taken for the question's words alone (not through a name a quote brought) stays
        # with what the question names when some such sentence says those words: "designed"
        # after "Tower Bridge is a ... bridge" is Tower Bridge's designer, not another bridge's
        about = {id(c) for c in about_subject}
        direct = bool(subject)
        while len(chain) < self.max_sentences:
            if complete(chain, q_words, q_all, kind, noun):
                break
            last = chain[-1]
            bridges, tokens = bridges_of(last, q_all)
            left = q_words - covered
            links = {id(c): link(c, bridges, tokens, last) for c in candidates}
            pool = [(i, c) for i, c in enumerate(candidates) if c not in chain and (
                links[id(c)] > 0 or (left and c.words & left and (not linked_only or (
                    c.chunk_index == best.chunk_index and c.words & unsaid))))]
            pool = own_answers(pool, candidates, chain, about) if direct else pool
            pool = through_holder(pool, links, chain) if role else pool  # "the founder of X"
            if len(about) < len(candidates) and any(
                    id(c) in about and not links[id(c)] for _, c in pool):
                pool = [(i, c) for i, c in pool if links[id(c)] > 0 or id(c) in about]
            if not pool:
                break
            residual = [w for w in re.findall(r"\w+", query) if stem(w.lower()) in left
                        or w.lower() in STOPWORDS]
            residual_cos = None
            if vectors is not None and embed is not None:
                focus = " ".join(residual + bridges[:3]) or query
                r = np.asarray((await embed([focus]))[0], dtype=np.float32)
                residual_cos = vectors[[i for i, _ in pool]] @ (r / (float(np.linalg.norm(r)) or 1.0))
            typed_already = any(x.typed for x in chain)
            best_next, best_score = None, -math.inf
            for j, (_, c) in enumerate(pool):
                score = self._follow_score(c, links[id(c)], left, weights, typed_already)
                if residual_cos is not None:
                    score += self.residual_weight * float(residual_cos[j])
                if score > best_score:
                    best_next, best_score = c, score
            if best_next is None or best_score < self.follow_ratio * (best.score + self.bridge_bonus):
                break
            chain.append(best_next)
            covered |= best_next.words
        return chain

    def _first_hop(self, candidates: List[Candidate], about_subject: List[Candidate], q_words: set,
                   q_all: set, kind: str, weights: Dict[str, float], q_names: set,
                   noun: str = "", role: str = "") -> Candidate:
        """The sentence to start from: the best one when it answers alone or already covers the
        whole question; else, among the ``FIRST_HOP_POOL`` best, the one whose best linked
        follower makes the best pair (a first hop that leads on to the answer beats one that
        only resembles the whole question). It is chosen among the sentences about what the
        question names (``about_subject``: :func:`~.answer_candidates.about_the_subject`)."""
        ranked = sorted(about_subject, key=lambda c: -c.score)
        if kind == "date" and len(ranked) > 1 and not gives_month(ranked[0].sentence.text) \
                and complete(ranked[:1], q_words, q_all, kind, noun):
            # two sentences answer "When was X founded?": the one that gives the month too
            # ("It was founded in March 2009"), not only the year ("... founded X in 2009")
            fuller = [c for c in ranked[1: self.first_hop_pool] if gives_month(c.sentence.text)
                      and c.score >= FIRST_HOP_MARGIN * ranked[0].score
                      and complete([c], q_words, q_all, kind, noun)]
            if fuller:
                return fuller[0]
        if self.first_hop_pool <= 1 or self.max_sentences <= 1 or len(ranked) < 2 \
                or answers_alone(ranked[0], q_words, q_names, kind) \
                or complete(ranked[:1], q_words, q_all, kind, noun):
            return ranked[0]
        pool = [c for c in ranked[: self.first_hop_pool] if c.score >= FIRST_HOP_MARGIN * ranked[0].score]
        # "the founder of X": a first hop saying the role leads on to its holder (not X's own place)
        pool = [c for c in pool if role in c.words] or pool if role else pool
        kind_noun = {stem(noun)} if noun else set()  # "town": said by "born in Hålvik" (complete())
        answering = [c for c in pool if (kind not in TYPED_KINDS or c.typed) and q_words - kind_noun <= (
            c.words | c.heading_words | (c.passage_words & q_names))]
        if answering:
            # says every word of the question (the names through its passage's opening) and
            # holds what is asked: "The station manager is Oona Ferris." for "Who manages the
            # Loch Brannagh field station?", over "He led the Institute through the opening of
            # the Loch Brannagh field station." that misses only "manages"
            return answering[0]
        best, best_pair = ranked[0], -math.inf
        for first in pool:
            bridges, tokens = bridges_of(first, q_all)
            left = q_words - first.words
            follow = 0.0
            for c in candidates:
                strength = link(c, bridges, tokens, first) if c is not first else 0.0
                if strength > 0:
                    follow = max(follow, self._follow_score(c, strength, left, weights, first.typed))
            if first.score + follow > best_pair:
                best, best_pair = first, first.score + follow
        return best

    def _follow_score(self, c: Candidate, link: float, left: set, weights: Dict[str, float],
                      typed_already: bool) -> float:
        """How well ``c`` continues a chain: its own score, how strongly it links to the
        previous quote, the uncovered question words it covers, and the answer kind asked for
        when no quote holds one yet."""
        score = c.score + self.bridge_bonus * link
        score += self.left_weight * self._coverage(c, left, weights) if left else 0.0
        return score + (self.type_bonus if c.typed and not typed_already else 0.0)

    # ------------------------------------------------------------------ answer
    async def acall(self, query: str, chunks: Sequence[Dict[str, Any]],
                    entities: Sequence[Dict[str, Any]] = (), relations: Sequence[Dict[str, Any]] = (),
                    embed: Optional[EmbedFn] = None,
                    query_vector: Optional[np.ndarray] = None) -> ExtractiveAnswer:
        """Quote the sentences of ``chunks`` (each with ``content`` and ``reference_id``) that
        answer ``query``. ``embed`` (async, texts -> vectors) ranks sentences by meaning; without
        it they are ranked by the words they share with the question."""
        started = time.perf_counter()
        kind = question_type(query)
        compared = await compared_answer(query, chunks, lambda asked: self.acall(
            asked, chunks, entities, relations, embed)) if kind == "yes_no" else None
        if compared:  # "Were both founders of A and B born in Germany?": each side asked alone
            return ExtractiveAnswer(text=compared[0], sentences=compared[1], question_type=kind, decided=True,
                                    milliseconds=(time.perf_counter() - started) * 1000)
        candidates = answer_candidates(chunks, code=asks_how_to(query))
        if not candidates:
            return ExtractiveAnswer(text=NOT_FOUND, question_type=kind,
                                    milliseconds=(time.perf_counter() - started) * 1000)
        weights = self._idf(candidates)
        self._lexical(candidates, query, weights)
        if stems(query) and not any(c.lexical > 0 for c in candidates):
            # no sentence (nor its heading) shares a word with the question: whatever is most
            # similar in meaning is about something else ("What is the capital of France?"
            # over articles on space missions)
            return ExtractiveAnswer(text=NOT_FOUND, question_type=kind,
                                    milliseconds=(time.perf_counter() - started) * 1000)
        unnamed = unnamed_subject(candidates, query) or unsaid_numbered(candidates, query)
        if unnamed:
            # no sentence names the one thing the question asks about: whatever is closest is
            # about something else (another bridge's opening year for "When did the Forth
            # Bridge open?" when retrieval missed its passage)
            return ExtractiveAnswer(text=f"{NOT_FOUND} None of its sentences names {unnamed}.",
                                    question_type=kind,
                                    milliseconds=(time.perf_counter() - started) * 1000)
        missing = (unmentioned(asked_nouns(query), candidates)
                   or unmentioned_event(asked_event(query) or asked_role(query)
                                        or asked_count_event(query), candidates)
                   or unmentioned_role(role_phrase(query), candidates)
                   or unmentioned_event(asked_fact_of(query), candidates))
        every, candidates = candidates, self._prefilter(candidates)
        texts = [embedded_text(c.sentence, self.embed_chars) for c in candidates]
        vectors = await self._sentence_vectors(texts, embed)
        cosines = None
        if vectors is not None:
            if query_vector is None:
                query_vector = (await self._sentence_vectors([query], embed))[0]
            q = np.asarray(query_vector, dtype=np.float32)
            cosines = vectors @ (q / (float(np.linalg.norm(q)) or 1.0))
        names = [str(e.get("entity_name", "")) for e in entities]
        names += [str(r.get(k, "")) for r in relations for k in ("src_id", "tgt_id")]
        self._base_scores(candidates, cosines, query, kind, names)
        fit_periods(candidates, query, kind, every)  # "Who was director in 1950?"
        favour_descriptions(candidates, query)  # "Who is X?": "X joined the team as ..."
        sink_namesakes(candidates, query, every)  # "Voyager 2 ..." for "... Voyager 1 ...?"
        chain = await self._chain(candidates, vectors, query, kind, weights, embed)
        lead = chain[0]
        chain = with_explanations(with_antecedents(with_additions(query, kind, chain, every), every), every)
        chain = reading_order(chain, lead)
        q_names = question_names(query)
        if q_names and not any(q_names & (c.words | c.heading_words) for c in chain):
            # quotes about none of the names the question asks about answer another question
            # ("In which city was the author of The Hobbit born?" without Tolkien's passages
            # quoted Marie Curie's birth in Warsaw)
            return ExtractiveAnswer(text=NOT_FOUND, question_type=kind,
                                    milliseconds=(time.perf_counter() - started) * 1000)
        # a choice quotes the dates that decide it; "Which X ... both A and B?" what A's and B's say
        choice = choice_of(query, every) if kind == "choice" else None
        chain = choice_chain(chain, every, choice) if choice else both_chain(query, chain, every)
        text, decided = answer_text(query, kind, chain, every, missing, weights, choice)
        return ExtractiveAnswer(
            text=text, question_type=kind, decided=decided,
            sentences=[AnswerSentence(text=c.sentence.text, reference_id=c.reference_id,
                                      chunk_id=c.chunk_id, score=round(c.score, 4)) for c in chain],
            milliseconds=round((time.perf_counter() - started) * 1000, 3))

    def call(self, query: str, chunks: Sequence[Dict[str, Any]],
             entities: Sequence[Dict[str, Any]] = (), relations: Sequence[Dict[str, Any]] = (),
             embed: Optional[EmbedFn] = None,
             query_vector: Optional[np.ndarray] = None) -> ExtractiveAnswer:
        """Sync :meth:`acall`."""
        from lightrag.components.graph_rag.insert_result import run_sync

        return run_sync(self.acall(query, chunks, entities, relations, embed, query_vector))

    def _extra_repr(self) -> str:
        return f"max_sentences={self.max_sentences}, follow_ratio={self.follow_ratio}"
