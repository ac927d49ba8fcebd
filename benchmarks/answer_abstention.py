"""Does the extractive answerer say "not found" when the context lacks the answer?

Each question of a MuSiQue-format set is answered twice with the packaged offline pipeline
(spaCy graph, MiniLM; the store of ``answer_quality.py``, cached in ``--workdir``): once with
the context retrieval gives it, once with the chunks of its gold (supporting) passages taken out
of that context, as SQuAD 2.0 makes questions unanswerable. Reported per condition: answers that
contain the gold answer, answers that are "not found", and, among the questions whose remaining
context does not contain the gold answer at all, how many were answered "not found" (the rest
quote sentences that cannot be the answer).

Usage::

    .venv/bin/python benchmarks/answer_abstention.py --data ../shared/data/musique-100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Set

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from answer_quality import _CITATION, DEFAULT_DATA, MINI, contains  # noqa: E402
from graph_rag_quality import build_store, load_answers, load_data  # noqa: E402

from lightrag.components.graph_rag import ExtractiveAnswerer, SpacyEntityExtractor  # noqa: E402
from lightrag.components.graph_rag.extractive_answerer import NOT_FOUND  # noqa: E402
from lightrag.core import Embedder  # noqa: E402
from lightrag.utils.config import load_config  # noqa: E402

CONDITIONS = ("retrieved context", "gold passages removed")


def _key(text: str) -> str:
    return " ".join(text.split())


class WithoutPassages(ExtractiveAnswerer):
    """The extractive answerer reading the context without the chunks in ``dropped`` (whole
    passages, by their text); ``read`` is what it was given last."""

    dropped: Set[str] = set()
    read: List[Dict[str, Any]] = []

    async def acall(self, query: str, chunks: Sequence[Dict[str, Any]], *args: Any, **kwargs: Any):
        kept = [c for c in chunks if _key(str(c.get("content", ""))) not in self.dropped]
        type(self).read = kept
        return await super().acall(query, kept, *args, **kwargs)


def measure(folder: Path, workdir: Path, settings: Dict[str, Any], embedder: Embedder) -> Dict[str, Any]:
    corpus, questions, gold_passages = load_data(folder)
    golds = load_answers(folder)
    rag, _ = build_store("spacy", SpacyEntityExtractor(), embedder, corpus, workdir, rebuild=False)
    answerer = WithoutPassages()
    rag.engine.answer_generator = answerer
    rows = []
    for question, gold, passages in zip(questions, golds, gold_passages):
        row: Dict[str, Any] = {"question": question, "gold": gold[0]}
        for condition in CONDITIONS:
            WithoutPassages.dropped = set() if condition == CONDITIONS[0] else {
                _key(f"{corpus[i]['title']}\n{corpus[i]['text']}") for i in passages}
            result = asyncio.run(rag.aquery(question, **settings))
            context = " ".join(str(c.get("content", "")) for c in WithoutPassages.read)
            text = result.content or ""
            row[condition] = {"answer": text, "not_found": text.startswith(NOT_FOUND),
                              "contains": bool(contains(_CITATION.sub("", text), gold)),
                              "answerable": bool(contains(context, gold))}
        rows.append(row)
    summary = {}
    for condition in CONDITIONS:
        answers = [r[condition] for r in rows]
        lacking = [a for a in answers if not a["answerable"]]
        summary[condition] = {"questions": len(answers),
                              "contains": sum(a["contains"] for a in answers),
                              "not_found": sum(a["not_found"] for a in answers),
                              "lacking": len(lacking),
                              "not_found_when_lacking": sum(a["not_found"] for a in lacking)}
    return {"summary": summary, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--workdir", default="/tmp/lightrag-bench-quality")
    parser.add_argument("--config", default=str(ROOT / "lightrag" / "configs" / "graph_rag_default.yaml"))
    parser.add_argument("--json", default=None, help="also write every answer to this file")
    args = parser.parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)
    from lightrag.components.model_client import LocalEmbedderClient

    settings = load_config(Path(args.config))["component_config"].get("query_defaults", {})
    embedder = Embedder(model_client=LocalEmbedderClient())
    folders = [MINI] + ([Path(args.data)] if (Path(args.data) / "corpus.json").exists() else [])
    results = {}
    for folder in folders:
        results[folder.name] = measure(folder, Path(args.workdir), settings, embedder)
        print(f"## {folder.name}\n")
        print("| context | questions | contains gold | not found | gold not in context | "
              "of those, not found |")
        print("|---|---:|---:|---:|---:|---:|")
        for condition, s in results[folder.name]["summary"].items():
            print(f"| {condition} | {s['questions']} | {s['contains']} | {s['not_found']} | "
                  f"{s['lacking']} | {s['not_found_when_lacking']} |")
        print(flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
