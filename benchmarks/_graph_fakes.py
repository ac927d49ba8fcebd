"""Fakes shared by the graph-RAG benchmarks, for our ``lightrag`` and for HKU LightRAG alike.

This module must stay importable from HKU LightRAG's virtual environment, whose import name is
also ``lightrag``: it imports only the standard library and numpy at module level (our package is
imported lazily, inside :func:`render_ours`, and only our process calls that).

What is here:

* :func:`hashed_bow` / :func:`embed_texts`: the fake embedding, a hashed bag of lower-cased
  ``\\w+`` words (blake2b, 4 bytes, little endian, modulo ``dim``), unit length. It is the same
  function as ``ScriptedClient``'s embeddings, with a per-word bucket cache, so word overlap keeps
  cosine similarity meaningful and vector thresholds keep working.
* :func:`extract_records`: the deterministic extraction rule. Entities are the capitalised names
  of the text (sentence-initial function words dropped); relations link consecutive names of the
  same sentence; each record's description is its sentence. At most ``MAX_ENTITIES`` entities and
  ``MAX_RELATIONS`` relations (between kept entities) per chunk, like HKU's per-response caps.
* :func:`render_ours` / :func:`render_hku`: the records in each system's extraction line format
  (ours ends with ``<|DONE|>``, HKU's with ``<|COMPLETE|>``; both use ``<|#|>`` fields).
* :func:`our_llm_reply` / :func:`hku_llm_reply`: instant fake LLMs answering extraction, gleaning
  and description-summary prompts of each system.
* Synthetic data: :func:`make_documents` (insert benchmark) and :class:`SyntheticStore` (retrieval
  benchmark: chunks, entities, relations, queries), generated from numpy's legacy
  ``RandomState`` (its streams are frozen across numpy versions), so both processes rebuild the
  very same data from the same seed; :meth:`SyntheticStore.fingerprint` checks it.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

# ----------------------------------------------------------------------------- embedding
WORD = re.compile(r"\w+")
_BUCKETS: Dict[str, int] = {}


def word_bucket(word: str) -> int:
    """The blake2b bucket of a lower-cased word (before ``% dim``)."""
    bucket = _BUCKETS.get(word)
    if bucket is None:
        bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
        _BUCKETS[word] = bucket
    return bucket


def hashed_bow(text: str, dim: int) -> np.ndarray:
    """Unit float32 vector: one hashed bucket per lower-cased word (ScriptedClient's embedding)."""
    buckets = [word_bucket(w) % dim for w in WORD.findall(text.lower())]
    vector = np.bincount(buckets, minlength=dim).astype(np.float32) if buckets else np.zeros(
        dim, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        vector[0] = 1.0
        norm = 1.0
    return vector / norm


def embed_texts(texts: Sequence[str], dim: int) -> np.ndarray:
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([hashed_bow(t, dim) for t in texts])


# ---------------------------------------------------------------------- extraction rule
NAME = re.compile(r"\b[A-Z][a-zA-Z0-9]+(?:\s+(?:[A-Z][a-zA-Z0-9]+|\d+\b))*")
SKIP = {"The", "It", "In", "On", "Its", "Each", "A", "An", "Then", "This", "He", "She", "They"}
SENTENCE = re.compile(r"(?<=[.!?])\s+")
MAX_ENTITIES = 40
MAX_RELATIONS = 60
ENTITY_TYPE = "concept"
RELATION_KEYWORDS = "mentioned together"
SUMMARY_REPLY = "A merged description of several mentions in the corpus."

Entity = Tuple[str, str, str]  # name, type, description
Relation = Tuple[str, str, str, str]  # source, target, keywords, description


def names_in(sentence: str) -> List[str]:
    found = []
    for match in NAME.finditer(sentence):
        words = match.group(0).split()
        while words and words[0] in SKIP:
            words = words[1:]
        if words:
            found.append(" ".join(words))
    return list(dict.fromkeys(found))


def extract_records(text: str) -> Tuple[List[Entity], List[Relation]]:
    """The deterministic extraction rule (see the module docstring)."""
    entities: Dict[str, Entity] = {}
    relations: Dict[Tuple[str, str], Relation] = {}
    for sentence in SENTENCE.split(text):
        sentence = " ".join(sentence.split())
        names = names_in(sentence)
        for name in names:
            if name not in entities and len(entities) < MAX_ENTITIES:
                entities[name] = (name, ENTITY_TYPE, sentence)
        for a, b in zip(names, names[1:]):
            key = (a, b) if a <= b else (b, a)
            if (a != b and a in entities and b in entities and key not in relations
                    and len(relations) < MAX_RELATIONS):
                relations[key] = (a, b, RELATION_KEYWORDS, sentence)
    return list(entities.values()), list(relations.values())


def render_hku(entities: Iterable[Entity], relations: Iterable[Relation]) -> str:
    d = "<|#|>"
    lines = [f"entity{d}{n}{d}{t}{d}{desc}" for n, t, desc in entities]
    lines += [f"relation{d}{s}{d}{t}{d}{k}{d}{desc}" for s, t, k, desc in relations]
    return "\n".join(lines + ["<|COMPLETE|>"])


def render_ours(entities: Iterable[Entity], relations: Iterable[Relation]) -> str:
    from lightrag.components.graph_rag.extraction_parser import records_to_lines
    from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord

    return records_to_lines(
        [EntityRecord(entity_name=n, entity_type=t, description=desc) for n, t, desc in entities],
        [RelationRecord(src_id=s, tgt_id=t, keywords=k, description=desc)
         for s, t, k, desc in relations])


_OUR_INPUT = re.compile(r"Input text:\s*```\s*(.*?)\s*```\s*Output:", re.S)
_HKU_INPUT = re.compile(r"---Input Text---\s*```\s*(.*?)\s*```\s*---Output---", re.S)


def our_llm_reply(prompt: str) -> str:
    """Our fake LLM: extraction (line format), gleaning (nothing more) and summaries."""
    if "---Follow-up---" in prompt:
        return "<|DONE|>"
    if "Merged description:" in prompt:
        return SUMMARY_REPLY
    matches = _OUR_INPUT.findall(prompt)
    if not matches:
        return "<|DONE|>"
    return render_ours(*extract_records(matches[-1]))  # few-shot examples come first


def hku_llm_reply(prompt: str) -> str:
    """HKU's fake LLM: extraction (its line format), gleaning (nothing more) and summaries."""
    if "Based on the last extraction task" in prompt:
        return "<|COMPLETE|>"
    if "Description List:" in prompt:
        return SUMMARY_REPLY
    matches = _HKU_INPUT.findall(prompt)
    if not matches:
        return "<|COMPLETE|>"
    return render_hku(*extract_records(matches[-1]))


# ------------------------------------------------------------------------ synthetic text
_ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s",
           "st", "t", "tr", "v", "w", "z"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"]
_CODAS = ["", "n", "r", "s", "l", "th", "m", "x"]
FILLER = ("archive river council harbour treaty engine market valley festival railway "
          "library garden mission charter bridge museum province ledger canal quarry orchard "
          "signal tower vessel academy workshop gallery summit harvest station fortress "
          "expedition manuscript observatory cathedral tribunal colony estate mill").split()
VERBS = ("visited founded studied joined funded described opposed advised married painted "
         "designed mapped praised recorded built crossed").split()
PREPS = ("near", "after", "before", "beside", "during", "without", "behind")


def _syllable(rng: np.random.RandomState) -> str:
    return (_ONSETS[rng.randint(len(_ONSETS))] + _VOWELS[rng.randint(len(_VOWELS))]
            + _CODAS[rng.randint(len(_CODAS))])


def make_names(n: int, seed: int) -> List[str]:
    """``n`` distinct two-word capitalised names (``"Brai Tolsen"``)."""
    rng = np.random.RandomState(seed)
    names: Dict[str, None] = {}
    while len(names) < n:
        first = (_syllable(rng) + _syllable(rng)).capitalize()
        last = (_syllable(rng) + _syllable(rng) + _syllable(rng)).capitalize()
        names.setdefault(f"{first} {last}")
    return list(names)


def make_words(n: int, seed: int) -> List[str]:
    """``n`` distinct lower-case pseudo-words (a vocabulary for chunk text)."""
    rng = np.random.RandomState(seed)
    words: Dict[str, None] = dict.fromkeys(FILLER + VERBS + list(PREPS) + ["the", "of", "and"])
    while len(words) < n:
        words.setdefault(_syllable(rng) + _syllable(rng))
    return list(words)


def make_documents(n_docs: int, sentences_per_doc: int, n_names: int, seed: int) -> List[str]:
    """Documents of sentences naming 1-3 people each (``"Brai Tolsen visited the canal of
    Kou Marsten."``), with names drawn from a Zipf-like pool so some recur in many chunks."""
    rng = np.random.RandomState(seed)
    names = make_names(n_names, seed + 1)
    weights = 1.0 / np.arange(1, n_names + 1) ** 0.8
    weights /= weights.sum()
    docs = []
    for _ in range(n_docs):
        sentences = []
        for _ in range(sentences_per_doc):
            who = [names[i] for i in rng.choice(n_names, size=3, p=weights)]
            kind = rng.randint(4)
            a, b = FILLER[rng.randint(len(FILLER))], FILLER[rng.randint(len(FILLER))]
            verb, prep = VERBS[rng.randint(len(VERBS))], PREPS[rng.randint(len(PREPS))]
            if kind == 0:
                sentences.append(f"{who[0]} {verb} the {a} {prep} the {b}.")
            elif kind == 1:
                sentences.append(f"{who[0]} {verb} {who[1]} {prep} the {a} of the {b}.")
            elif kind == 2:
                sentences.append(f"The {a} of {who[0]} was {verb} by {who[1]} and {who[2]}.")
            else:
                sentences.append(f"In the {a} season the {b} was {verb} {prep} the {a} again.")
        docs.append(" ".join(sentences))
    return docs


# --------------------------------------------------------------------- synthetic store
SEP = "<SEP>"


def _tiktoken_counter() -> Callable[[str], int]:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base")
    return lambda text: len(encoding.encode(text, disallowed_special=()))


class SyntheticStore:
    """A synthetic graph-RAG store: chunks, entities, relations and queries, with vectors.

    Chunks are ``chunk_words`` words from a pseudo-word vocabulary plus the names of the
    entities that cite them; entity ``e`` cites 1-4 chunks; relations link entities drawn with a
    Zipf-like preference (a few hubs of high degree, like real graphs) and cite a chunk of one
    endpoint. Entity vectors embed ``"<name>\\n<description>"``, relation vectors
    ``"<keywords>\\t<src>\\n<tgt>\\n<description>"`` and chunk vectors the chunk text, as both
    systems do.
    """

    def __init__(self, n_chunks: int, n_entities: int, n_relations: int, dim: int = 128,
                 chunk_words: int = 200, n_docs: int = 0, seed: int = 7,
                 count_tokens: Optional[Callable[[str], int]] = None) -> None:
        self.dim = dim
        rng = np.random.RandomState(seed)
        n_docs = n_docs or max(1, n_chunks // 4)
        self.vocab, self.names = make_words(4000, seed + 1), make_names(n_entities, seed + 2)
        # entities -> the chunks they are found in
        n_cite = rng.randint(1, 5, size=n_entities)
        cites = [rng.randint(0, n_chunks, size=k) for k in n_cite]
        chunk_names: List[List[int]] = [[] for _ in range(n_chunks)]
        for e, chunks in enumerate(cites):
            for c in chunks:
                chunk_names[c].append(e)
        self.chunk_ids = [f"doc-{c // 4:06d}-chunk-{c % 4:03d}" for c in range(n_chunks)]
        self.chunk_docs = [f"doc-{c // 4:06d}" for c in range(n_chunks)]
        self.chunk_paths = [f"source_{c // 4 % max(1, n_docs):06d}.txt" for c in range(n_chunks)]
        self.chunk_order = [c % 4 for c in range(n_chunks)]
        word_ids = rng.randint(0, len(self.vocab), size=(n_chunks, chunk_words))
        vocab_arr = np.array(self.vocab, dtype=object)
        self._make_chunks(vocab_arr[word_ids], chunk_names)
        self._count_chunk_tokens(word_ids, chunk_names, count_tokens or _tiktoken_counter())
        self._make_entities(rng, vocab_arr, cites)
        weights = 1.0 / np.arange(1, n_entities + 1) ** 0.6
        weights /= weights.sum()
        self._make_relations(rng, vocab_arr, weights, n_relations)
        self._make_queries(np.random.RandomState(seed + 3), weights, cites, chunk_words)

    def _make_chunks(self, words: np.ndarray, chunk_names: List[List[int]]) -> None:
        """Each chunk: half its words, a sentence per entity citing it (8 at most), the rest."""
        half = words.shape[1] // 2
        self.chunks: List[str] = []
        for c, body in enumerate(words):
            text = (" ".join(body[:half]) + "."
                    + "".join(f" {self.names[e]} appears here." for e in chunk_names[c][:8])
                    + " " + " ".join(body[half:]) + ".")
            self.chunks.append(text)

    def _count_chunk_tokens(self, word_ids: np.ndarray, chunk_names: List[List[int]],
                            count: Callable[[str], int]) -> None:
        """Exact cl100k token counts without tokenising every chunk: the pre-tokeniser cuts these
        texts into " word" / "." pieces that are encoded independently, so a chunk's count is the
        sum of its pieces' counts (checked against the real count on a sample)."""
        n_chunks = len(self.chunks)
        spaced = np.array([count(" " + w) for w in self.vocab])
        first = np.array([count(w) for w in self.vocab])
        name_cost = [count(f" {n} appears here.") for n in self.names]
        self.chunk_tokens = (first[word_ids[:, 0]] + spaced[word_ids[:, 1:]].sum(axis=1)
                             + 2 * count(".")).tolist()
        for c in range(n_chunks):
            self.chunk_tokens[c] += sum(name_cost[e] for e in chunk_names[c][:8])
        for c in list(range(min(5, n_chunks))) + list(range(max(0, n_chunks - 5), n_chunks)):
            if count(self.chunks[c]) != self.chunk_tokens[c]:
                raise AssertionError(f"token count of chunk {c} is wrong: "
                                     f"{count(self.chunks[c])} != {self.chunk_tokens[c]}")

    def _make_entities(self, rng: np.random.RandomState, vocab_arr: np.ndarray,
                       cites: List[np.ndarray]) -> None:
        names = self.names
        self.entity_desc = []
        self.entity_sources = []
        for e in range(len(names)):
            w = vocab_arr[rng.randint(0, len(self.vocab), size=12)]
            self.entity_desc.append(f"{names[e]} is a {w[0]} {w[1]} of the {w[2]} {w[3]}; "
                                    f"known for {w[4]} {w[5]} and the {w[6]} {w[7]}.")
            self.entity_sources.append(SEP.join(self.chunk_ids[c] for c in dict.fromkeys(cites[e])))
        self.entity_paths = [SEP.join(dict.fromkeys(self.chunk_paths[c] for c in cites[e]))
                             for e in range(len(names))]

    def _make_relations(self, rng: np.random.RandomState, vocab_arr: np.ndarray,
                        weights: np.ndarray, n_relations: int) -> None:
        """Relations between distinct entities, Zipf-like degrees, no duplicates."""
        names, n_entities = self.names, len(self.names)
        perm = rng.permutation(n_entities)
        pairs: Dict[Tuple[int, int], None] = {}
        while len(pairs) < n_relations:
            need = int((n_relations - len(pairs)) * 1.3) + 16
            a = perm[rng.choice(n_entities, size=need, p=weights)]
            b = rng.randint(0, n_entities, size=need)
            for x, y in zip(a.tolist(), b.tolist()):
                key = (x, y) if names[x] <= names[y] else (y, x)
                if x != y and key not in pairs:
                    pairs[key] = None
                    if len(pairs) == n_relations:
                        break
        self.relations = list(pairs)
        themes = vocab_arr[rng.randint(0, len(self.vocab), size=(n_relations, 6))]
        self.relation_keywords = [f"{t[0]} {t[1]}, {t[2]}" for t in themes]
        self.relation_desc = [f"{names[x]} and {names[y]} share the {t[3]} {t[4]} {t[5]}."
                              for (x, y), t in zip(self.relations, themes)]
        self.relation_sources = [self.entity_sources[x].split(SEP)[0] for x, _ in self.relations]
        self.relation_paths = [self.entity_paths[x].split(SEP)[0] for x, _ in self.relations]
        self.relation_weights = [float(1 + (i % 3)) for i in range(n_relations)]

    def _make_queries(self, qrng: np.random.RandomState, weights: np.ndarray,
                      cites: List[np.ndarray], chunk_words: int) -> None:
        """30 queries: the names of 2-3 entities + words of a chunk they cite."""
        names = self.names
        self.queries: List[Dict[str, object]] = []
        for _ in range(30):
            picks = qrng.choice(len(names), size=3, replace=False, p=weights)
            r = qrng.randint(len(self.relations))
            chunk = self.chunks[int(cites[picks[0]][0])].split()
            start = qrng.randint(0, max(1, chunk_words // 2 - 8))
            words = " ".join(w.strip(".") for w in chunk[start:start + 8])
            ll = [names[p] for p in picks[: 2 + qrng.randint(2)]]
            hl = [k.strip() for k in self.relation_keywords[r].split(",")]
            self.queries.append({"query": f"What links {ll[0]} and {ll[1]} to the {words}?",
                                 "ll_keywords": ll, "hl_keywords": hl})

    # the texts each vector embeds (same formats in both systems)
    def entity_content(self, e: int) -> str:
        return f"{self.names[e]}\n{self.entity_desc[e]}"

    def relation_content(self, r: int) -> str:
        x, y = self.relations[r]
        return (f"{self.relation_keywords[r]}\t{self.names[x]}\n{self.names[y]}\n"
                f"{self.relation_desc[r]}")

    def vectors(self, kind: str) -> np.ndarray:
        if kind == "chunks":
            texts = self.chunks
        elif kind == "entities":
            texts = [self.entity_content(e) for e in range(len(self.names))]
        else:
            texts = [self.relation_content(r) for r in range(len(self.relations))]
        return embed_texts(texts, self.dim)

    def fingerprint(self) -> str:
        h = hashlib.sha1()
        for part in (self.chunks[:50], self.chunks[-50:], self.entity_desc[-50:],
                     self.relation_desc[-50:], self.entity_sources[-50:],
                     [str(q) for q in self.queries], [str(sum(self.chunk_tokens))]):
            h.update("\x1f".join(part).encode())
        h.update(str((len(self.chunks), len(self.names), len(self.relations))).encode())
        return h.hexdigest()[:16]
