"""Answer quality per answerer: gold answer contained, token F1, grounded sentences, latency.

Datasets (MuSiQue's format, see ``benchmarks/data/mini_multihop/README.md``): the small set
shipped in the repo (``benchmarks/data/mini_multihop``, always) and ``--data`` (default
``../shared/data/musique-100``, skipped with a note when absent). Each corpus is indexed once
with the packaged offline pipeline (spaCy graph, MiniLM; stores cached in ``--workdir``, shared
with ``graph_rag_quality.py``), then every question is answered with the query settings of the
packaged config (``--config``, default ``graph_rag_default.yaml``; ``--mode`` overrides) by:

- ``extractive``: :class:`~lightrag.components.graph_rag.ExtractiveAnswerer` (the default);
- ``local``: the packaged SmolLM2-135M through llama.cpp with the settings of
  ``graph_rag_local_llm.yaml`` (slow: ``--local-limit`` questions per dataset);
- ``api``: gpt-4o-mini or llama-3.1-8b-instant when ``OPENAI_API_KEY`` / ``GROQ_API_KEY`` is set.

Metrics per answerer: **contains** — the SQuAD-normalised gold answer (or an alias) appears in
the answer as whole words; **F1** — token F1, best over gold and aliases; **grounded** — the
share of answer sentences found in the retrieved context (verbatim after normalisation, or with
a support score of at least 0.6 for generated text: :mod:`lightrag.components.graph_rag.grounding`);
**p50/p95** — seconds per ``aquery`` once the store is open (retrieval included). MuSiQue's
questions 1-50 were used to choose the answerer's settings, 51-100 are reported apart as held out.

Usage::

    .venv/bin/python benchmarks/answer_quality.py --data ../shared/data/musique-100 \\
        --answerers extractive local --local-limit 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from graph_rag_quality import answer_model, build_store, load_answers, load_data  # noqa: E402

from lightrag.components.graph_rag import ExtractiveAnswerer, SpacyEntityExtractor  # noqa: E402
from lightrag.components.graph_rag.grounding import check_answer  # noqa: E402
from lightrag.components.graph_rag.sentences import continued_runs, joined_text  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402
from lightrag.eval.answer_match_acc import f1_score, normalize_answer  # noqa: E402
from lightrag.utils.config import load_config  # noqa: E402

MINI = ROOT / "benchmarks" / "data" / "mini_multihop"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "musique-100"
DEFAULT_WORKDIR = Path("/tmp/lightrag-bench-quality")
DEFAULT_OUT = ROOT / "docs" / "benchmarks" / "answer_quality.md"
CONFIGS = ROOT / "lightrag" / "configs"
_CITATION = re.compile(r"\s*\[\d+(?:,\s*\d+)*\]")


def contains(answer: str, golds: List[str]) -> float:
    text = f" {normalize_answer(answer)} "
    return float(any(f" {g} " in text for g in map(normalize_answer, golds) if g))


def grounded_share(result: Any) -> float:
    """Share of the answer's sentences found in the context it was given."""
    info = result.raw_data.get("processing_info", {})
    if "answer_sentences" in info:  # quoted: check each quote against the chunks verbatim
        by_file: Dict[str, List[str]] = {}  # neighbour chunks of a file joined as the answerer
        for c in result.raw_data["chunks"]:  # reads them: a quote may span their boundary
            by_file.setdefault(str(c.get("file_path") or c.get("reference_id") or ""), []).append(
                str(c.get("content", "")))
        chunks = " ".join(normalize_answer(joined_text(texts, run))
                          for texts in by_file.values() for run in continued_runs(texts))
        quotes = [normalize_answer(s["text"]) for s in info["answer_sentences"]]
        return statistics.fmean(float(q in chunks) for q in quotes) if quotes else 1.0
    support = info.get("answer_support")
    if support is None:
        context = [c.get("content", "") for c in result.raw_data.get("chunks", [])]
        support = check_answer(result.content or "", context, set()).support
    return statistics.fmean(float(s >= 0.6) for s in support) if support else 0.0


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def answerers(kinds: List[str], config: Dict[str, Any]) -> List[Tuple[str, str, Any, Dict[str, Any]]]:
    """(kind, label, answer component, query settings) per available answerer."""
    found = []
    defaults = config["component_config"].get("query_defaults", {})
    for kind in kinds:
        if kind == "extractive":
            found.append((kind, "ExtractiveAnswerer (offline, no model)", ExtractiveAnswerer(),
                          defaults))
            continue
        generator, label = answer_model(kind)
        if generator is None:
            print(f"skipped {kind}: {label}")
            continue
        local = load_config(CONFIGS / "graph_rag_local_llm.yaml")["component_config"]
        settings = local.get("query_defaults", {}) if kind == "local" else {
            **defaults, "response_type": "One or two sentences"}
        if kind == "local":
            generator = Generator(model_client=generator.model_client,
                                  model_kwargs=local["answer_generator"]["component_config"]["model_kwargs"])
        found.append((kind, label, generator, settings))
    return found


async def run(rag: Any, answerer: Any, settings: Dict[str, Any], questions: List[str],
              golds: List[List[str]], mode: Optional[str]) -> Dict[str, Any]:
    rag.engine.answer_generator = answerer
    rows = []
    for question, gold in zip(questions, golds):
        overrides = {**settings, **({"mode": mode} if mode else {})}
        started = time.perf_counter()
        result = await rag.aquery(question, **overrides)
        seconds = time.perf_counter() - started
        text = _CITATION.sub("", result.content or "")
        rows.append({"contains": contains(text, gold), "f1": max(f1_score(text, g) for g in gold),
                     "grounded": grounded_share(result), "seconds": seconds,
                     "question": question, "gold": gold[0], "answer": result.content})
    return {"rows": rows, **summarise(rows)}


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, float]:
    if not rows:
        return {}
    return {"n": len(rows), "contains": 100 * statistics.fmean(r["contains"] for r in rows),
            "f1": 100 * statistics.fmean(r["f1"] for r in rows),
            "grounded": 100 * statistics.fmean(r["grounded"] for r in rows),
            "p50": percentile([r["seconds"] for r in rows], 0.5),
            "p95": percentile([r["seconds"] for r in rows], 0.95)}


def dataset_results(name: str, folder: Path, args: argparse.Namespace, config: Dict[str, Any],
                    embedder: Embedder) -> Dict[str, Any]:
    corpus, questions, _ = load_data(folder)
    golds = load_answers(folder)
    if args.limit:
        questions, golds = questions[: args.limit], golds[: args.limit]
    rag, info = build_store("spacy", SpacyEntityExtractor(), embedder, corpus, Path(args.workdir),
                            rebuild=False)
    out: Dict[str, Any] = {"passages": len(corpus), "questions": len(questions), "answerers": {}}
    for kind, label, answerer, settings in answerers(args.answerers, config):
        n = min(len(questions), args.local_limit) if kind != "extractive" else len(questions)
        print(f"[{name}] {label}: {n} questions ...", flush=True)
        result = asyncio.run(run(rag, answerer, settings, questions[:n], golds[:n], args.mode))
        if kind == "extractive" and n > 50:
            result["halves"] = [summarise(result["rows"][:50]), summarise(result["rows"][50:])]
        out["answerers"][label] = result
        print(f"[{name}] {label}: contains {result['contains']:.1f}%  F1 {result['f1']:.1f}  "
              f"grounded {result['grounded']:.1f}%  p50 {result['p50']:.3f} s  "
              f"p95 {result['p95']:.3f} s", flush=True)
    return out


def write_doc(path: Path, command: str, results: Dict[str, Any]) -> None:
    lines = ["# Answer quality per answerer", "", "Generated by:", "", "```bash", command, "```", "",
             "Offline pipeline (spaCy graph, MiniLM), query settings of the packaged config. "
             "contains: gold answer (or alias) in the answer, SQuAD-normalised whole words; F1: "
             "token F1; grounded: answer sentences found in the retrieved context; p50/p95: "
             "seconds per query once the store is open (retrieval included).", ""]
    for name, data in results.items():
        lines += [f"## {name} ({data['passages']} passages, {data['questions']} questions)", "",
                  "| answerer | questions | contains (%) | token F1 | grounded (%) | p50 s | p95 s |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for label, r in data["answerers"].items():
            lines.append(f"| {label} | {r['n']} | {r['contains']:.1f} | {r['f1']:.1f} | "
                         f"{r['grounded']:.1f} | {r['p50']:.3f} | {r['p95']:.3f} |")
            for i, half in enumerate(r.get("halves", [])):
                lines.append(f"| &nbsp;&nbsp;questions {'1-50 (tuning)' if i == 0 else '51-100 (held out)'} "
                             f"| {half['n']} | {half['contains']:.1f} | {half['f1']:.1f} | "
                             f"{half['grounded']:.1f} | {half['p50']:.3f} | {half['p95']:.3f} |")
        lines.append("")
        for label, r in data["answerers"].items():
            lines += [f"First answers of {label}:", ""]
            for row in r["rows"][:5]:
                answer = " ".join(str(row["answer"]).split())
                lines.append(f"- Q: {row['question']} (gold: {row['gold']})  \n  A: {answer[:300]}")
            lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--workdir", default=str(DEFAULT_WORKDIR))
    parser.add_argument("--config", default=str(CONFIGS / "graph_rag_default.yaml"))
    parser.add_argument("--answerers", nargs="+", choices=["extractive", "local", "api"],
                        default=["extractive", "local", "api"])
    parser.add_argument("--local-limit", type=int, default=10,
                        help="questions per dataset for the model answerers (slow on a CPU)")
    parser.add_argument("--limit", type=int, default=0, help="first N questions only (0: all)")
    parser.add_argument("--mode", default=None, help="query mode (default: the config's)")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--json", default=None, help="also write every answer to this file")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)
    from lightrag.components.model_client import LocalEmbedderClient

    config = load_config(Path(args.config))
    embedder = Embedder(model_client=LocalEmbedderClient())
    results = {"mini_multihop (in the repo)": dataset_results("mini", MINI, args, config, embedder)}
    data = Path(args.data)
    if (data / "corpus.json").exists():
        results[data.name] = dataset_results(data.name, data, args, config, embedder)
    else:
        print(f"{data} not found: only the in-repo set was measured")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    if not args.no_write:
        command = ".venv/bin/python benchmarks/answer_quality.py " + " ".join(sys.argv[1:])
        write_doc(Path(args.out), command.strip(), results)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
