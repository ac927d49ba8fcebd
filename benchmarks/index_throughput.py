"""Real-model indexing throughput per MiniLM backend (torch, onnx, onnx-int8-ffn, onnx-int8) on
MuSiQue-100.

Four measurements, each a subcommand:

- ``embed``: texts/s of ``LocalEmbedderClient.encode`` for each backend on the first N passages
  (``"title\\ntext"``) at several sizes, the backends run alternately in one process (the torch
  backend is the baseline: ratios are against it), with the cosine of each backend's vectors to
  torch's (min and mean over the passages).
- ``index``: passages/s of ``GraphRAG.insert`` of the first N passages (what ``lightrag index``
  runs: chunk, embed chunks, spaCy extraction, merge, entity and relation vectors) with the real
  packaged models, one fresh working directory per backend and size, backends alternated.
- ``profile``: where one ``index`` run of N passages spends its time: spaCy extraction, the
  embedder's tokenising and model runs, and the tokens it ran (real and padded).
- ``quality``: MuSiQue-100 passage Recall@2/@5 per query mode for one backend, the store built by
  ``benchmarks/graph_rag_quality.py``'s own ``build_store`` and scored by its ``evaluate`` (the
  same numbers as that script, which always uses the torch backend), the build time included.
  Results are written as JSON (``--json``) to compare backends.

The machine's cores may be shared: every timing is best of ``--repeat`` runs, and ratios are
taken within one process.

A backend may carry flags: ``:nocache`` (its client remembers no vectors, ``cache_texts=0``)
and ``:oneproc`` (spaCy parses in this process only, ``processes=1``), or ``:today`` for both,
as before round 4: ``torch:today`` is the issue's "today" baseline.

Usage::

    .venv/bin/python benchmarks/index_throughput.py embed --sizes 200 600 1890
    .venv/bin/python benchmarks/index_throughput.py index --sizes 200 600 1890
    .venv/bin/python benchmarks/index_throughput.py profile --sizes 300 --backends onnx
    .venv/bin/python benchmarks/index_throughput.py quality --backend onnx-int8 --json /tmp/q.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import graph_rag_quality as grq  # noqa: E402

from lightrag.components.model_client import LocalEmbedderClient, ScriptedClient  # noqa: E402
from lightrag.components.model_client.local_embedder_client import BACKENDS  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "musique-100"


FLAGS = {"nocache": {"nocache"}, "oneproc": {"oneproc"}, "today": {"nocache", "oneproc"}}


def spec_flags(spec: str) -> set:
    """The backend of a spec and its flags: ``"torch:today"`` -> ``{"nocache", "oneproc"}``."""
    return set().union(*(FLAGS[f] for f in spec.split(":")[1:]))


def cpu_now() -> float:
    """CPU seconds of this process and of its finished children (spaCy's worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def backend_spec(spec: str) -> str:
    """``argparse`` type of a backend: one of ``BACKENDS``, optionally with flags."""
    backend, *flags = spec.split(":")
    if backend not in BACKENDS or any(f not in FLAGS for f in flags):
        raise argparse.ArgumentTypeError(f"{spec!r}: choose one of {', '.join(BACKENDS)}, "
                                         f"optionally followed by :{' :'.join(FLAGS)}")
    return spec


def client_for(spec: str) -> LocalEmbedderClient:
    """The embedder client of a backend spec (see :func:`backend_spec`)."""
    return LocalEmbedderClient(backend=spec.split(":")[0],
                               cache_texts=0 if "nocache" in spec_flags(spec) else 32_768)


def extractor_for(spec: str) -> Any:
    """The spaCy extractor of a backend spec (``:oneproc``: one process)."""
    from lightrag.components.graph_rag import SpacyEntityExtractor

    return SpacyEntityExtractor(processes=1 if "oneproc" in spec_flags(spec) else None)


def passages(data: Path) -> List[str]:
    """The corpus as the quality benchmark indexes it: ``"title\\ntext"`` per passage."""
    corpus, _, _ = grq.load_data(data)
    return [f"{d['title']}\n{d['text']}" for d in corpus]


def bench_embed(texts: List[str], sizes: List[int], backends: List[str], repeat: int) -> Dict[str, Any]:
    clients = {b: client_for(b) for b in backends}
    for client in clients.values():
        client.encode(texts[:8])  # load (and export) outside the timings
    results: Dict[str, Any] = {}
    for size in sizes:
        batch = texts[:size]
        best = {b: float("inf") for b in backends}
        vectors: Dict[str, np.ndarray] = {}
        for _ in range(repeat):
            for backend, client in clients.items():
                client.vector_cache.clear()  # time the model, not the cache
                started = time.perf_counter()
                vectors[backend] = client.encode(batch)
                best[backend] = min(best[backend], time.perf_counter() - started)
        row = {}
        for backend in backends:
            cosine = (vectors[backend] * vectors[backends[0]]).sum(axis=1)
            row[backend] = {"seconds": best[backend], "texts_per_s": size / best[backend],
                            "speedup": best[backends[0]] / best[backend],
                            "cos_min": float(cosine.min()), "cos_mean": float(cosine.mean())}
        results[str(size)] = row
        print(f"[embed] {size} texts: " + ", ".join(
            f"{b} {r['texts_per_s']:.1f}/s (x{r['speedup']:.2f}, cos min {r['cos_min']:.4f} "
            f"mean {r['cos_mean']:.4f})" for b, r in row.items()), flush=True)
    return results


def index_once(texts: List[str], backend: str, workdir: Path) -> Dict[str, Any]:
    """One ``GraphRAG.insert`` of ``texts`` into a fresh folder: seconds and counts."""
    from lightrag.components.graph_rag import GraphRAG, HeuristicKeywordExtractor

    shutil.rmtree(workdir, ignore_errors=True)
    rag = GraphRAG(embedder=Embedder(model_client=client_for(backend)),
                   extractor=extractor_for(backend), keyword_extractor=HeuristicKeywordExtractor(),
                   answer_generator=Generator(model_client=ScriptedClient(responses=["unused"], cycle=True)),
                   working_dir=str(workdir))
    ids = [grq.passage_id(i) for i in range(len(texts))]
    started, cpu_started = time.perf_counter(), cpu_now()
    result = rag.insert(texts, ids=ids, file_paths=[t.split("\n", 1)[0] for t in texts])
    seconds = time.perf_counter() - started
    cpu_seconds = cpu_now() - cpu_started
    status = rag.status()
    shutil.rmtree(workdir, ignore_errors=True)
    return {"seconds": seconds, "cpu_s": round(cpu_seconds, 2), "passages_per_s": len(texts) / seconds,
            "failed": len(result.failed),
            "entities": status["entities"], "relations": status["relations"],
            "load": round(os.getloadavg()[0], 2)}


def bench_index(texts: List[str], sizes: List[int], backends: List[str], repeat: int) -> Dict[str, Any]:
    results: Dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        index_once(texts[:20], backends[0], Path(tmp) / "warm")  # load spaCy and the models
        for backend in backends[1:]:
            client_for(backend).encode(texts[:8])
        for size in sizes:
            runs: Dict[str, Dict[str, Any]] = {}
            for _ in range(repeat):
                for backend in backends:
                    run = index_once(texts[:size], backend, Path(tmp) / f"{backend}-{size}")
                    if backend not in runs or run["seconds"] < runs[backend]["seconds"]:
                        runs[backend] = run
            for backend in backends:
                runs[backend]["speedup"] = runs[backends[0]]["seconds"] / runs[backend]["seconds"]
            results[str(size)] = runs
            print(f"[index] {size} passages: " + ", ".join(
                f"{b} {r['seconds']:.1f} s = {r['passages_per_s']:.2f}/s (x{r['speedup']:.2f}; "
                f"CPU {r['cpu_s']:.1f} s; "
                f"{r['entities']} entities, {r['relations']} relations; load {r['load']})"
                for b, r in runs.items()),
                flush=True)
    return results


def bench_profile(texts: List[str], sizes: List[int], backends: List[str], repeat: int) -> Dict[str, Any]:
    """Wall seconds of one ``index`` run per backend and size, split by stage: spaCy's
    ``extract_many``, the embedder's model runs (``session.run``, or torch's ``encode``) and
    tokenising, with the embedder's real and padded tokens (onnx backends). The model runs
    are summed over the encoder's threads (batches run side by side)."""
    from lightrag.components.graph_rag.spacy_extractor import SpacyEntityExtractor
    from lightrag.components.onnx_encoder import encoder as onnx_encoder

    spent: Dict[str, float] = {}
    counts: Dict[str, int] = {}

    def timed(name: str, fn: Any, cpu: bool = False) -> Any:
        """``fn`` with its wall seconds added up under ``name`` (and, for a stage that runs
        alone, the process's CPU seconds under ``name cpu``)."""
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started, cpu_started = time.perf_counter(), cpu_now()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
                if cpu:
                    spent[f"{name} cpu"] = spent.get(f"{name} cpu", 0.0) + cpu_now() - cpu_started
        return wrapper

    def encode_batch(self: Any, encoded: Any) -> Any:
        widths = [len(ids) for ids, _ in encoded]
        counts["tokens"] = counts.get("tokens", 0) + sum(widths)
        counts["padded"] = counts.get("padded", 0) + max(widths) * len(widths)
        counts["runs"] = counts.get("runs", 0) + 1
        return original_batch(self, encoded)

    original_batch = onnx_encoder.OnnxSentenceEncoder._encode_batch
    original_encode = LocalEmbedderClient.encode
    original_extract = SpacyEntityExtractor.extract_many
    onnx_encoder.OnnxSentenceEncoder._encode_batch = timed("model runs (thread-s)", encode_batch)
    LocalEmbedderClient.encode = timed("embedder encode", original_encode, cpu=True)
    SpacyEntityExtractor.extract_many = timed("spacy", original_extract, cpu=True)
    results: Dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for backend in backends:
                index_once(texts[:20], backend, Path(tmp) / "warm")
                for size in sizes:
                    spent.clear()
                    counts.clear()
                    run = index_once(texts[:size], backend, Path(tmp) / f"{backend}-{size}")
                    row = {**run, **{f"{k} s": round(v, 2) for k, v in spent.items()}, **counts}
                    row["other s"] = round(run["seconds"] - spent.get("spacy", 0.0)
                                           - spent.get("embedder encode", 0.0), 2)
                    row["other cpu s"] = round(run["cpu_s"] - spent.get("spacy cpu", 0.0)
                                               - spent.get("embedder encode cpu", 0.0), 2)
                    results[f"{backend}-{size}"] = row
                    print(f"[profile] {backend} {size} passages: " + ", ".join(
                        f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()),
                        flush=True)
    finally:
        onnx_encoder.OnnxSentenceEncoder._encode_batch = original_batch
        LocalEmbedderClient.encode = original_encode
        SpacyEntityExtractor.extract_many = original_extract
    return results


def bench_quality(data: Path, backend: str, workdir: Path) -> Dict[str, Any]:
    corpus, questions, gold = grq.load_data(data)
    answers = grq.load_answers(data)
    embedder = Embedder(model_client=client_for(backend))
    rag, info = grq.build_store("spacy", extractor_for(backend), embedder, corpus, workdir / backend, False)
    stores, info["synonyms"] = grq.stores_with_synonyms(rag, Path(rag.working_dir))
    rows = grq.variants(grq.MODES, grq.MERGES[:1])
    table = asyncio.run(grq.evaluate(rag.engine, rag.query_defaults, stores, questions, gold, rows,
                                     answers[: len(questions)]))
    for label, row in table.items():
        print(f"[quality {backend}] {label}: " + ", ".join(
            f"{k} {v:.1f}" for k, v in row.items() if k.startswith("R@")), flush=True)
    return {"backend": backend, "info": info, "table": table, "questions": len(questions)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["embed", "index", "profile", "quality"])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--sizes", nargs="+", type=int, default=[200, 600, 1890])
    parser.add_argument("--backends", nargs="+", type=backend_spec, default=list(BACKENDS),
                        help="the first is the baseline of the ratios")
    parser.add_argument("--backend", type=backend_spec, default="onnx-int8", help="quality: the backend")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workdir", default="/tmp/index_throughput", help="quality: store cache")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--json", default="", help="write the results here")
    args = parser.parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    data = Path(args.data)
    if args.what == "quality":
        results = bench_quality(data, args.backend, Path(args.workdir))
    else:
        texts = passages(data)
        sizes = [min(s, len(texts)) for s in args.sizes]
        bench = {"embed": bench_embed, "index": bench_index, "profile": bench_profile}[args.what]
        results = bench(texts, sizes, args.backends, args.repeat)
    results = {"command": " ".join(sys.argv), "cpus": os.cpu_count(), "results": results}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
