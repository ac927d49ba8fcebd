"""How the store grows: open time, memory, query latency and insert rate at 10k, 100k, 1M chunks.

A synthetic corpus with instant fakes (a hashed bag-of-words embedder, a regex extractor), so
only the store and the query path are measured. Each chunk is a few sentences naming 2-4
entities drawn Zipf-like from a pool of ``chunks / 2`` names: a few names become hubs cited by
thousands of chunks, relations link the names of a sentence (about 2 per chunk). A size's store
is built once through :meth:`GraphIndex.bulk_load` in batches (bounded memory), its documents
registered as an insert registers them (text, status, the items each named:
:func:`register_documents`), then probed in **fresh processes**, the queries on the store
itself, the writes on a copy:

* ``open_s``: ``GraphRAG(...)`` on the store, then ``first_context_s``: the first ``mix`` query
  (``only_need_context``) in that process;
* ``rss_open_mb`` and ``rss_after_queries_mb``: resident memory after open and after 100
  queries per mode (``/proc/self/status`` VmRSS);
* ``p50_ms`` / ``p95_ms`` per mode over the queries (context only, no answer model), and
  ``found``: the share of queries ("Who did NAME meet?") whose context chunks mention NAME (a
  check that the per-query bounds on hubs do not lose the evidence as the store grows);
* ``insert_docs_per_s``: ``rag.insert`` of ``--insert`` new documents (4 chunks each, 100 per
  call) into a copy of the store, through the real pipeline (chunk, embed, extract, merge,
  vectors); beside it the first call's rate and the megabytes the inserts read from the disk
  (a store the page cache did not hold is measured at the disk's speed). The sizes' copies take
  turns, 100 documents each, in one fresh process: their rates are compared over the same
  minutes of the machine;
* ``delete_s``: ``rag.delete_by_doc_id`` of 5 of them, seconds each (their hubs are rebuilt);
* with ``--same-documents``, ``same_documents``: the insert rate of every size's next documents
  into every store. A larger corpus draws its names from a larger pool, so its documents name
  more distinct entities per batch and insert slower into any store; the rate of the same
  documents at two sizes is what the store's size alone costs.

Usage::

    python benchmarks/scale.py --sizes 10000 100000 --workdir /tmp/scale
    python benchmarks/scale.py --sizes 1000000 --workdir /tmp/scale --queries 50
    python benchmarks/scale.py --sizes 100000 --zipf 1.1 --names-per-chunk 0.3 --seed 7  # another corpus
    python benchmarks/scale.py --sizes 10000 1000000 --writes-only --warm-cache --insert 500
    python benchmarks/scale.py --sizes 10000 1000000 --writes-only --warm-cache --hold-cache --insert 500
    python benchmarks/scale.py --sizes 10000 1000000 --writes-only --warm-cache --same-documents --insert 500

Results are printed as a Markdown table (with the growth ratio of each figure between sizes)
and appended to ``docs/benchmarks/scale.md`` when ``--write`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _graph_fakes as F  # noqa: E402

DIM = 64
INSERT_BATCH = 100  # documents per rag.insert call of the write probe
DELETES = 5  # inserted documents deleted again (each names hubs: their rebuild is measured)
MODES = ("naive", "local", "global", "hybrid", "mix", "ppr")
#: the corpus of the documented runs: ``chunks / 2`` names drawn with weights ``1 / rank^0.9``
DEFAULT_SHAPE = {"seed": 11, "zipf": 0.9, "names_per_chunk": 0.5, "dim": DIM}
SENTENCE_VERBS = ("met", "wrote to", "worked with", "visited", "argued with", "founded a firm with")


# ------------------------------------------------------------------------------ the corpus
class Corpus:
    """Deterministic synthetic chunks, batch by batch (the whole corpus is never in memory)."""

    def __init__(self, n_chunks: int, seed: int = DEFAULT_SHAPE["seed"],
                 zipf: float = DEFAULT_SHAPE["zipf"],
                 names_per_chunk: float = DEFAULT_SHAPE["names_per_chunk"],
                 dim: int = DEFAULT_SHAPE["dim"]) -> None:
        self.n_chunks, self.dim = n_chunks, dim
        self.shape = {"n_chunks": n_chunks, "seed": seed, "zipf": zipf,
                      "names_per_chunk": names_per_chunk, "dim": dim}
        self.n_names = max(50, int(n_chunks * names_per_chunk))
        self.names = F.make_names(self.n_names, seed)
        weights = 1.0 / np.arange(1, self.n_names + 1) ** zipf
        self.cdf = np.cumsum(weights / weights.sum())
        self.words = F.make_words(2000, seed + 1)
        self.seed = seed

    def _names(self, rng: np.random.RandomState, k: int) -> List[str]:
        picks = np.searchsorted(self.cdf, rng.random_sample(k))
        return [self.names[min(i, self.n_names - 1)] for i in picks]

    def chunk_text(self, c: int) -> str:
        rng = np.random.RandomState(self.seed * 1_000_003 + c)
        sentences = []
        for _ in range(rng.randint(2, 4)):
            a, b = self._names(rng, 2)
            filler = " ".join(self.words[i] for i in rng.randint(0, len(self.words), size=12))
            verb = SENTENCE_VERBS[rng.randint(len(SENTENCE_VERBS))]
            sentences.append(f"{a} {verb} {b} about the {filler}.")
        return " ".join(sentences)

    @classmethod
    def of_store(cls, workdir: str) -> Corpus:
        """The corpus a store of :func:`build` was built from (``corpus.json``; older stores
        hold only ``n_chunks``: the default shape)."""
        described = Path(workdir, "corpus.json")
        if described.exists():
            return cls(**json.loads(described.read_text()))
        return cls(int(Path(workdir, "n_chunks").read_text()))

    def batches(self, size: int) -> Iterator[Tuple[int, List[str]]]:
        for start in range(0, self.n_chunks, size):
            yield start, [self.chunk_text(c) for c in range(start, min(self.n_chunks, start + size))]


# ----------------------------------------------------------------------------- the system
def make_rag(workdir: str, dim: int = DIM) -> Any:
    from lightrag.components.graph_rag import GraphRAG, HeuristicKeywordExtractor
    from lightrag.components.graph_rag.chunking import Chunker
    from lightrag.components.graph_rag.extractive_answerer import ExtractiveAnswerer
    from lightrag.core.component import Component
    from lightrag.core.embedder import Embedder
    from lightrag.core.types import EmbedderOutput, Embedding

    class HashEmbedder(Component):
        """Instant embeddings: :func:`_graph_fakes.hashed_bow`."""

        def call(self, input: Any, **kwargs: Any) -> EmbedderOutput:
            texts = [input] if isinstance(input, str) else list(input)
            return EmbedderOutput(data=[Embedding(embedding=F.hashed_bow(t, dim).tolist(), index=i)
                                        for i, t in enumerate(texts)])

        async def acall(self, input: Any, **kwargs: Any) -> EmbedderOutput:
            return self.call(input)

    class RegexExtractor(Component):
        """Instant extraction: :func:`_graph_fakes.extract_records`."""

        async def acall(self, text: str, chunk_id: str, file_path: str) -> Any:
            from lightrag.components.graph_rag.entity_extractor import ExtractionResult
            from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord

            entities, relations = F.extract_records(text)
            return ExtractionResult(
                chunk_id=chunk_id,
                entities=[EntityRecord(entity_name=n, entity_type=t, description=d,
                                       source_id=chunk_id, file_path=file_path)
                          for n, t, d in entities],
                relations=[RelationRecord(src_id=s, tgt_id=t, keywords=k, description=d,
                                          source_id=chunk_id, file_path=file_path)
                           for s, t, k, d in relations])

    del Embedder  # the fake needs no model client
    return GraphRAG(embedder=HashEmbedder(), extractor=RegexExtractor(),
                    answer_generator=ExtractiveAnswerer(),
                    keyword_extractor=HeuristicKeywordExtractor(),
                    chunker=Chunker(chunk_token_size=1200), working_dir=workdir,
                    cosine_threshold=0.05)


def composed_vectors(entities: Dict[str, Dict[str, Any]], relations: Dict[Tuple[str, str], Dict[str, Any]],
                     dim: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entity, relation and name vectors composed from their parts as an insert composes them
    (:func:`~lightrag.components.graph_rag.index.vectors.vector_plans`). Embedding whole texts
    instead gave every item other vectors than the pipeline's: the probe's first touch of an
    item then re-embedded it, one more file row per touched entity (~1,000 per 100 documents)."""
    from lightrag.components.graph_rag.index.vectors import compose_vectors, vector_plans
    from lightrag.components.storage.base import unit_rows

    items: Dict[Any, Tuple[str, Dict[str, Any], str]] = {
        ("e", n): ("e", {**d, "entity_id": n}, "") for n, d in entities.items()}
    items.update({("r", s, t): ("r", {**d, "src_id": s, "tgt_id": t}, "") for (s, t), d in relations.items()})
    plans, names = vector_plans(items)
    texts = list(dict.fromkeys([*(t for plan in plans.values() for t, _ in plan), *names]))
    by_text = dict(zip(texts, unit_rows(F.embed_texts(texts, dim))))
    vectors = compose_vectors(plans, by_text)
    return (np.stack([vectors[("e", n)] for n in entities]),
            np.stack([vectors[("r", s, t)] for s, t in relations]),
            np.stack([by_text[n] for n in entities]))


def build(corpus: Corpus, workdir: str, batch: int = 5000) -> Dict[str, Any]:
    """Bulk-load a store of the chunks of ``corpus`` into ``workdir``."""
    from lightrag.components.graph_rag.schemas import relation_key

    n_chunks = corpus.n_chunks
    rag = make_rag(workdir, corpus.dim)
    started = time.perf_counter()
    for start, texts in corpus.batches(batch):
        chunks, entities, relations = {}, {}, {}
        documents: Dict[str, Dict[str, Any]] = {}
        for offset, text in enumerate(texts):
            c = start + offset
            doc = f"doc-{c // 4:07d}"
            cid = f"{doc}-chunk-{c % 4}"
            chunks[cid] = {"tokens": len(text.split()), "content": text, "full_doc_id": doc,
                           "chunk_order_index": c % 4, "file_path": f"{doc}.txt"}
            found_e, found_r = F.extract_records(text)
            named = documents.setdefault(doc, {"texts": [], "chunks": [], "entities": {}, "relations": {}})
            named["texts"].append(text)
            named["chunks"].append(cid)
            named["entities"].update(dict.fromkeys(name for name, _, _ in found_e))
            named["relations"].update(dict.fromkeys(relation_key(s, t) for s, t, _, _ in found_r))
            for name, kind, desc in found_e:
                node = entities.setdefault(name, {"entity_type": kind, "description": desc,
                                                  "source_id": cid, "file_path": f"{doc}.txt"})
                if node["source_id"] != cid:
                    node["source_id"] += "<SEP>" + cid
            for s, t, k, desc in found_r:
                key = relation_key(s, t)
                edge = relations.setdefault(key, {"weight": 0.0, "keywords": k,
                                                  "description": desc, "source_id": cid,
                                                  "file_path": f"{doc}.txt"})
                edge["weight"] += 1.0
        entity_vectors, relation_vectors, name_vectors = composed_vectors(entities, relations, corpus.dim)
        rag.index.bulk_load(
            chunks, entities, relations,
            chunk_vectors=F.embed_texts([c["content"] for c in chunks.values()], corpus.dim),
            entity_vectors=entity_vectors, relation_vectors=relation_vectors,
            name_vectors=name_vectors)
        register_documents(rag, documents)
        print(f"  built {start + len(texts):,}/{n_chunks:,} chunks "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    status = rag.status()
    rag.index.close()
    return {"build_s": round(time.perf_counter() - started, 1), "chunks": status["chunks"],
            "entities": status["entities"], "relations": status["relations"],
            "documents_registered": True}


def register_documents(rag: Any, documents: Dict[str, Dict[str, Any]]) -> None:
    """Register the bulk-loaded chunks' documents as an insert would have: their text, a
    PROCESSED status with their chunks, and the entities and relations each named (the
    ``full_docs``, ``doc_status`` and ``doc_items`` rows, with their indexes). Without them the
    store's tables of documents stayed empty whatever its size, so the write probe inserted
    into small tables at 1M chunks, where a store indexed document by document has 250k
    statuses and ~5M item rows (the per-chunk extraction records are still not written)."""
    from lightrag.components.graph_rag.schemas import DocStatus, compute_mdhash_id
    from lightrag.components.storage.doc_status import DocProcessingStatus

    stores = rag.index.stores
    texts = {doc: " ".join(d["texts"]) for doc, d in documents.items()}
    with rag.index.writing_sync():
        stores.full_docs.replace({doc: {"content": text, "file_path": f"{doc}.txt"}
                                  for doc, text in texts.items()})
        stores.doc_status.replace({doc: DocProcessingStatus(
            content_summary=texts[doc][:100], content_length=len(texts[doc]), file_path=f"{doc}.txt",
            status=DocStatus.PROCESSED, track_id="scale-build", content_hash=compute_mdhash_id(texts[doc]),
            chunks_count=len(d["chunks"]), chunks_list=d["chunks"],
            metadata={"entities": len(d["entities"]), "relations": len(d["relations"])}).to_dict()
            for doc, d in documents.items()})
        for doc, d in documents.items():
            stores.doc_graph_items.add(doc, d["entities"], d["relations"])


# --------------------------------------------------------------------------------- probes
def rss_mb() -> float:
    text = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024


def probe_queries(workdir: str, n_queries: int) -> Dict[str, Any]:
    """Run in a fresh process on the built store (queries write nothing): open, first context,
    queries per mode."""
    corpus = Corpus.of_store(workdir)
    started = time.perf_counter()
    rag = make_rag(workdir, corpus.dim)
    open_s = time.perf_counter() - started
    rss_open = rss_mb()
    rng = np.random.RandomState(5)
    names = [corpus.names[i] for i in np.searchsorted(corpus.cdf, rng.random_sample(n_queries))]
    queries = [f"Who did {name} meet?" for name in names]
    del corpus  # the generator's name list (500k strings at 1M) is not the store's: while it is
    # alive every full collection of the queries' process walks it (~50 ms each at 1M)
    started = time.perf_counter()
    rag.query(queries[0], mode="mix", only_need_context=True)
    first_s = time.perf_counter() - started
    latency: Dict[str, Dict[str, float]] = {}
    for mode in MODES:
        times, found = [], 0
        for name, q in zip(names, queries):
            t0 = time.perf_counter()
            context = rag.query(q, mode=mode, only_need_context=True)
            times.append((time.perf_counter() - t0) * 1000)
            found += name in str(context).split("Document Chunks", 1)[-1]
        latency[mode] = {"p50_ms": round(float(np.percentile(times, 50)), 1),
                         "p95_ms": round(float(np.percentile(times, 95)), 1),
                         "found": round(found / len(queries), 2)}
    return {"open_s": round(open_s, 2), "first_context_s": round(first_s, 2),
            "rss_open_mb": round(rss_open), "rss_after_queries_mb": round(rss_mb()),
            "latency": latency}


class _WriteProbe:
    """Inserts into (a copy of) one store, ``INSERT_BATCH`` documents per ``rag.insert`` call,
    then deletes a few of them again (see :func:`probe_writes`).

    ``sources`` are the corpora whose next documents go in: the store's own (always first: the
    natural continuation of its corpus) and, for the same-documents probe, the other sizes'
    corpora, so that every store also takes the very documents the other stores take."""

    def __init__(self, workdir: str, n_insert: int, sources: Sequence[Corpus] = ()) -> None:
        own = Corpus.of_store(workdir)
        self.rag = make_rag(workdir, own.dim)
        self.rag.query("Who did anyone meet?", mode="naive", only_need_context=True)  # files mapped
        self.sources = [own, *(c for c in sources if c.shape != own.shape)]
        self.docs = {c.n_chunks: [" ".join(c.chunk_text(c.n_chunks + 4 * d + k) for k in range(4))
                                  for d in range(n_insert)] for c in self.sources}
        self.ids = {c.n_chunks: [f"new-{c.n_chunks}-{d}" for d in range(n_insert)]
                    for c in self.sources}
        self.own = own.n_chunks
        self.seconds: Dict[int, List[float]] = {c.n_chunks: [] for c in self.sources}
        self.cpu_seconds: Dict[int, List[float]] = {c.n_chunks: [] for c in self.sources}

    def insert_batch(self, number: int, source: int) -> None:
        part = slice(number * INSERT_BATCH, (number + 1) * INSERT_BATCH)
        started, cpu = time.perf_counter(), time.process_time()
        result = self.rag.insert(self.docs[source][part], ids=self.ids[source][part])
        self.seconds[source].append(time.perf_counter() - started)
        self.cpu_seconds[source].append(time.process_time() - cpu)
        if result.failed:
            raise RuntimeError(f"insert failed: {list(result.failed.items())[:2]}")

    def _rates(self, source: int) -> Dict[str, Any]:
        ids, seconds = self.ids[source], self.seconds[source]
        return {"insert_docs_per_s": round(len(ids) / sum(seconds), 1),
                "insert_cpu_docs_per_s": round(len(ids) / max(sum(self.cpu_seconds[source]), 1e-9), 1),
                "batch_docs_per_s": [round(min(INSERT_BATCH, len(ids) - INSERT_BATCH * b) / t, 1)
                                     for b, t in enumerate(seconds)]}

    def result(self) -> Dict[str, Any]:
        own_ids = self.ids[self.own]
        deleted = min(DELETES, len(own_ids))
        started = time.perf_counter()
        for d in range(deleted):
            self.rag.delete_by_doc_id(own_ids[d])
        delete_s = (time.perf_counter() - started) / max(deleted, 1)
        own = self._rates(self.own)
        row = {**own, "first_batch_docs_per_s": own["batch_docs_per_s"][0],
               "delete_s": round(delete_s, 2)}
        if len(self.sources) > 1:
            row["same_documents"] = {str(c.n_chunks): self._rates(c.n_chunks) for c in self.sources}
        return row


class HeldFiles:
    """The files of store folders held in memory while the probe runs: each mapped and locked
    (``mlock``), so the kernel cannot evict their pages however long they sit unread.

    A page cache that keeps a store is what ``--warm-cache`` reads the files for, but a machine
    may take idle pages back on its own: the virtual machines these figures come from run DAMON
    reclaim (``/sys/kernel/mm/damon/admin``: pages not read for ~60 s are paged out, up to
    128 MB/s), which at 1M chunks evicts the random B-tree leaves an insert needs next and leaves
    the 10k store, read all the time, cached. ``--hold-cache`` measures the store as a machine
    that keeps its page cache serves it; without it, the figures include what this machine
    reads back from its disk (``insert_disk_reads_mb``)."""

    def __init__(self, workdirs: Sequence[str]) -> None:
        import ctypes
        import mmap

        self._maps: List[Any] = []
        self._views: List[np.ndarray] = []
        self.locked_mb = 0.0
        libc = ctypes.CDLL(None, use_errno=True)
        for workdir in workdirs:
            for path in store_files(workdir):
                size = path.stat().st_size
                if not size:
                    continue
                with path.open("rb") as f:
                    mapped = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
                view = np.frombuffer(mapped, dtype=np.uint8)
                if libc.mlock(ctypes.c_void_p(view.ctypes.data), ctypes.c_size_t(size)) != 0:
                    raise OSError(ctypes.get_errno(), f"cannot lock {path} in memory (mlock; "
                                  "RLIMIT_MEMLOCK, or not enough memory)")
                self._maps.append(mapped)
                self._views.append(view)
                self.locked_mb += size / 2**20

    def release(self) -> None:
        self._views = []  # (a map with a view of it cannot close)
        for mapped in self._maps:
            mapped.close()
        self._maps = []


def probe_writes(workdirs: Sequence[str], n_insert: int, hold_cache: bool = False,
                 same_documents: bool = False) -> List[Dict[str, Any]]:
    """Run in a fresh process on copies of the stores: insert rate, then delete time, of each.

    The documents go in as ``rag.insert`` calls of ``INSERT_BATCH`` each (a sustained insert,
    as a user's indexing run is), **the stores taking turns batch by batch**, so that each
    size's rate is measured over the same minutes of the machine (its speed drifts by +-15 %
    from one minute to the next here; sizes probed one after the other compared two moments as
    much as two sizes). Per store: ``insert_docs_per_s`` over all its documents,
    ``first_batch_docs_per_s`` the first call's alone (it also reads the B-trees the process has
    not touched yet), ``batch_docs_per_s`` each call's; and ``insert_disk_reads_mb``, what the
    inserts of all stores read from the disk rather than the page cache (above a few MB: a store
    was not cached, and its rate is the disk's); ``insert_cpu_docs_per_s``, the documents per
    second of the process's CPU time (``time.process_time``: what the machine's other tenants
    take from it does not count, so two code versions compare with less noise than by wall
    time; it includes the checkpoint thread's copying, and the worker thread that has written
    each insert since the twenty-seventh session: the inserting thread's own time no longer
    holds the write). With ``hold_cache`` the
    stores' files are locked in memory first (:class:`HeldFiles`).

    With ``same_documents`` every store also takes the next documents of the other sizes'
    corpora (``same_documents``: the rates per corpus the documents came from). A larger
    corpus draws its names from a larger pool, so its documents name more distinct entities
    per batch (1M's ~1,560 per 100 documents against 10k's ~960) and cost more to insert into
    *any* store; the same documents into both sizes separate what the store's size costs from
    what the documents bring."""
    import resource

    held = HeldFiles(workdirs) if hold_cache else None
    try:
        corpora = [Corpus.of_store(w) for w in workdirs] if same_documents else []
        probes = [_WriteProbe(w, n_insert, corpora) for w in workdirs]
        reads_before = resource.getrusage(resource.RUSAGE_SELF).ru_inblock
        for number in range(-(-n_insert // INSERT_BATCH)):
            for source in probes[0].docs:
                for probe in probes:
                    probe.insert_batch(number, source if source in probe.docs else probe.own)
        disk_reads_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_inblock - reads_before) * 512 / 2**20
        return [{**probe.result(), "insert_disk_reads_mb": round(disk_reads_mb, 1),
                 "cache_held": held is not None} for probe in probes]
    finally:
        if held is not None:
            held.release()


def _fresh_process(flag: str, *args: str) -> Any:
    out = subprocess.run([sys.executable, __file__, flag, *args],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{flag} {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def store_files(workdir: str) -> List[Path]:
    """The files of a store folder, in name order."""
    return [path for path in sorted(Path(workdir).iterdir()) if path.is_file()]


def read_files(workdir: str) -> None:
    """Read every file of the store once, so that the OS page cache holds it (the state of a
    machine that serves the store; a store just built or copied is only partly cached)."""
    for path in store_files(workdir):
        with path.open("rb") as f:
            while f.read(1 << 24):
                pass


def drop_cached(workdir: str) -> None:
    """Ask the OS to drop the page-cache pages of the store's files (``POSIX_FADV_DONTNEED``;
    clean pages only, nothing is lost). The write probe copies each store and writes the copy:
    left cached, the source took as much of the page cache as the copy (a 1M store's 9.3 GB
    twice on a 24 GB machine) and the copy's pages were evicted and read back from the disk
    during the inserts (up to 27 MB read in one 100-document batch, 102-124 docs/s against
    133-154 once the source was dropped), which a machine serving one store does not do."""
    if not hasattr(os, "posix_fadvise"):  # not Linux: the probe keeps both cached
        return
    for path in store_files(workdir):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def chunks_stored(workdir: str) -> int:
    """How many chunks the store holds (its ``text_chunks`` rows), read-only."""
    import sqlite3

    database = Path(workdir, "lightrag.sqlite3")
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM kv WHERE ns = 'text_chunks'").fetchone()[0])


def ensure_store(n: int, root: str, rebuild: bool,
                 shape: Optional[Dict[str, Any]] = None) -> Tuple[str, Dict[str, Any]]:
    """The folder of the store of ``n`` chunks of this corpus shape (built when missing or
    ``rebuild``), and its row's first figures (size, build time)."""
    shape = {**DEFAULT_SHAPE, **(shape or {})}
    differs = {k: v for k, v in shape.items() if v != DEFAULT_SHAPE[k]}
    workdir = str(Path(root) / ("n" + str(n) + "".join(f"-{k}{v}" for k, v in sorted(differs.items()))))
    record = Path(workdir, "built.json")
    built: Dict[str, Any] = json.loads(record.read_text()) if record.exists() else {}
    stale = record.exists() and not built.get("documents_registered")
    if stale:
        print(f"{workdir} was built without its documents registered: rebuilding it",
              file=sys.stderr, flush=True)
    if rebuild or stale or not Path(workdir, "n_chunks").exists():
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
        corpus = Corpus(n, **shape)
        built = build(corpus, workdir)
        Path(workdir, "corpus.json").write_text(json.dumps(corpus.shape))
        del corpus
        Path(workdir, "n_chunks").write_text(str(n))
        record.write_text(json.dumps(built))
    elif (stored := chunks_stored(workdir)) != n:
        # documents inserted by hand into a probe's store make it bigger than its size says:
        # a "10k" store that had taken 14k more chunks inserted 30 % slower, and the ratio of
        # the 1M rate to it read 0.76-0.83x where the stores as built give 0.67-0.70x
        # (docs/benchmarks.md, twenty-fourth session)
        raise SystemExit(f"{workdir} holds {stored:,} chunks, not {n:,}: documents were inserted "
                         "into it after it was built. Probe a store as built: --rebuild (or "
                         "another --workdir)")
    return workdir, {"n_chunks": n, **shape, **built}


def run_sizes(sizes: Sequence[int], root: str, n_queries: int, n_insert: int, rebuild: bool,
              shape: Optional[Dict[str, Any]] = None, warm_cache: bool = False,
              writes_only: bool = False, hold_cache: bool = False,
              same_documents: bool = False) -> List[Dict[str, Any]]:
    """One row per size: the query probe on each store itself (they write nothing), then one
    write probe over copies of all of them (so the next run starts from the same stores)."""
    rows, workdirs = [], []
    for n in sizes:
        workdir, row = ensure_store(n, root, rebuild, shape)
        if not writes_only:
            # (queried on a fresh copy, a 1M store's 9.4 GB were in the page cache twice on a
            # 24 GB machine, and its queries read evicted pages: mix p95 182-211 ms against
            # 132-136 ms on the store itself)
            if warm_cache:
                read_files(workdir)
            row.update(_fresh_process("--probe-queries", workdir, "--queries", str(n_queries)))
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
        workdirs.append(workdir)
    if n_insert <= 0:  # the query probe alone
        return rows
    copies = [w + "-probe" for w in workdirs]
    for workdir, copy in zip(workdirs, copies):
        subprocess.run(["rm", "-rf", copy], check=True)
        # -a keeps the hard links of a file's generations (``cp -r`` doubled them: a 1M copy
        # took 14 GB of the page cache instead of 9 GB, and the cached stores no longer fit)
        subprocess.run(["cp", "-a", workdir, copy], check=True)
    # the copies' gigabytes are still being written back to the disk: the insert's checkpoint
    # syncs would wait behind them (1M: 36 docs/s in the first insert into a fresh copy, 50-56
    # once written back), which is the benchmark's own copy, not the store's writer
    os.sync()
    for workdir in workdirs:  # the probe writes the copies; their sources are not read
        drop_cached(workdir)
    if warm_cache:
        for copy in copies:
            read_files(copy)
    try:
        held = (["--hold-cache"] if hold_cache else []) + (["--same-documents"] if same_documents else [])
        for row, measured in zip(rows, _fresh_process("--probe-writes", *copies, "--insert",
                                                      str(n_insert), *held)):
            row.update(measured)
    finally:
        for copy in copies:
            subprocess.run(["rm", "-rf", copy], check=True)
    return rows


def _insert_cell(r: Dict[str, Any]) -> str:
    """``rate (first batch, disk MB read)``: see :func:`probe_writes`."""
    if "insert_docs_per_s" not in r:  # no write probe (--insert 0)
        return "-"
    if "first_batch_docs_per_s" not in r:  # rows of runs before the batched probe
        return str(r["insert_docs_per_s"])
    held = ", cache held" if r.get("cache_held") else ""
    return f"{r['insert_docs_per_s']} ({r['first_batch_docs_per_s']}, {r['insert_disk_reads_mb']}{held})"


def table(rows: Sequence[Dict[str, Any]]) -> str:
    head = ["chunks", "entities", "relations", "open s", "first ctx s", "RSS open MB",
            "RSS +queries MB", "insert docs/s (first 100, disk MB)", "delete s",
            *(f"{m} p50/p95 ms (found)" for m in MODES)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        other = ", ".join(f"{k} {r[k]}" for k, v in DEFAULT_SHAPE.items() if r.get(k, v) != v)
        cells = [f"{r['n_chunks']:,}" + (f" ({other})" if other else ""),
                 f"{r['entities']:,}", f"{r['relations']:,}",
                 str(r.get("open_s", "-")), str(r.get("first_context_s", "-")),
                 str(r.get("rss_open_mb", "-")), str(r.get("rss_after_queries_mb", "-")),
                 _insert_cell(r), str(r.get("delete_s", "-")),
                 *(f"{r['latency'][m]['p50_ms']} / {r['latency'][m]['p95_ms']}"
                   f" ({r['latency'][m].get('found', '-')})" if "latency" in r else "-"
                   for m in MODES)]
        lines.append("| " + " | ".join(cells) + " |")
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        growth = b["n_chunks"] / a["n_chunks"]
        figures = ([f"insert rate {b['insert_docs_per_s'] / max(a['insert_docs_per_s'], 1e-3):.2f}x"]
                   if "insert_docs_per_s" in a and "insert_docs_per_s" in b else [])
        if figures and a.get("batch_docs_per_s") and b.get("batch_docs_per_s"):
            turns = sorted(y / max(x, 1e-3) for x, y in zip(a["batch_docs_per_s"], b["batch_docs_per_s"]))
            figures[0] += (f" (batch by batch {turns[0]:.2f}-{turns[-1]:.2f}x, "
                           f"median {float(np.median(turns)):.2f}x)")
        if figures and a.get("insert_cpu_docs_per_s") and b.get("insert_cpu_docs_per_s"):
            figures[0] += (", per second of the process's CPU "
                           f"{b['insert_cpu_docs_per_s'] / a['insert_cpu_docs_per_s']:.2f}x "
                           f"({a['insert_cpu_docs_per_s']} / {b['insert_cpu_docs_per_s']} docs/s)")
        for source in (b.get("same_documents") or {}):
            x, y = (r.get("same_documents", {}).get(source) for r in (a, b))
            if x and y:
                figures.append(f"the same documents (the {int(source):,}-chunk corpus's) "
                               f"{y['insert_docs_per_s'] / max(x['insert_docs_per_s'], 1e-3):.2f}x "
                               f"({x['insert_docs_per_s']} / {y['insert_docs_per_s']} docs/s)")
        if "latency" in a and "latency" in b:
            figures = [f"open {b['open_s'] / max(a['open_s'], 1e-3):.1f}x",
                       f"RSS after open {b['rss_open_mb'] / max(a['rss_open_mb'], 1):.1f}x", *figures,
                       *(f"{m} p95 {b['latency'][m]['p95_ms'] / max(a['latency'][m]['p95_ms'], 1e-3):.1f}x"
                         for m in MODES)]
        lines.append("")
        lines.append(f"From {a['n_chunks']:,} to {b['n_chunks']:,} chunks ({growth:.0f}x): "
                     + ", ".join(figures) + ".")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workdir", default="/tmp/lightrag-scale")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--insert", type=int, default=200)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--zipf", type=float, default=DEFAULT_SHAPE["zipf"],
                        help="exponent of the names' weights (larger: bigger hubs)")
    parser.add_argument("--names-per-chunk", type=float, default=DEFAULT_SHAPE["names_per_chunk"],
                        help="distinct names per chunk of the corpus (the entity pool)")
    parser.add_argument("--dim", type=int, default=DIM,
                        help="vector size of the fake embedder (384: MiniLM's, for the cost of the searches)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SHAPE["seed"],
                        help="another seed: other names, words and sentences")
    parser.add_argument("--warm-cache", action="store_true",
                        help="read the store's files before the query probe (a serving machine's page cache)")
    parser.add_argument("--hold-cache", action="store_true",
                        help="lock the copies' files in memory during the write probe (HeldFiles)")
    parser.add_argument("--same-documents", action="store_true",
                        help="every store also takes the other sizes' next documents (probe_writes)")
    parser.add_argument("--writes-only", action="store_true",
                        help="only the write probe (insert and delete on a copy), not the queries")
    parser.add_argument("--write", action="store_true", help="append to docs/benchmarks/scale.md")
    parser.add_argument("--probe-queries", help=argparse.SUPPRESS)
    parser.add_argument("--probe-writes", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_queries:
        print(json.dumps(probe_queries(args.probe_queries, args.queries)))
        return
    if args.probe_writes:
        print(json.dumps(probe_writes(args.probe_writes, args.insert, args.hold_cache,
                                      args.same_documents)))
        return
    rows = run_sizes(args.sizes, args.workdir, args.queries, args.insert, args.rebuild,
                     {"seed": args.seed, "zipf": args.zipf, "dim": args.dim,
                      "names_per_chunk": args.names_per_chunk}, args.warm_cache, args.writes_only,
                     args.hold_cache, args.same_documents)
    text = table(rows)
    print(text)
    if args.write:
        target = HERE.parent / "docs" / "benchmarks" / "scale.md"
        command = "python benchmarks/scale.py " + " ".join(sys.argv[1:])
        with target.open("a", encoding="utf-8") as f:
            f.write(f"\n## {time.strftime('%Y-%m-%d')}: `{command}`\n\n{text}\n")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
