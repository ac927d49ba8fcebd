"""Indexing with the real offline models: the packaged default config (spaCy extraction,
all-MiniLM-L6-v2 embeddings) on MuSiQue-100's passages, one passage per document.

Reports wall and CPU time, passages per second, where the time goes (spaCy parsing and
extraction, embedding, everything else: chunking, merging, storage) and the peak memory (RSS) of
the process. Times inside the extractor and the embedder are measured around their calls.

Usage::

    .venv/bin/python benchmarks/graph_rag_real_insert.py [--data ../shared/data/musique-100] \\
        [--limit 0] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightrag.components.graph_rag import GraphRAG  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "musique-100"
DEFAULT_CONFIG = ROOT / "lightrag" / "configs" / "graph_rag_default.yaml"
DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Indexing with the real offline models"


class Timed:
    """Wraps an object's ``acall`` and books the seconds spent inside it."""

    def __init__(self, target: Any, name: str = "acall") -> None:
        self.seconds = 0.0
        self.calls = 0
        original = getattr(target, name)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        object.__setattr__(target, name, timed)


def run(data: Path, limit: int, workdir: str) -> Dict[str, Any]:
    corpus = json.loads((data / "corpus.json").read_text())
    if limit:
        corpus = corpus[:limit]
    config = DEFAULT_CONFIG.read_text().replace("./lightrag_storage", workdir)
    started_load = time.perf_counter()
    rag = GraphRAG.from_yaml(config)
    rag.embedder(["load the model before timing"])
    rag.extractor("Load spaCy before timing.", "warm-up")
    load_s = time.perf_counter() - started_load
    extract = Timed(rag.extractor, "aextract_many" if hasattr(rag.extractor, "aextract_many") else "acall")
    embed = Timed(rag.embedder)
    texts = [f"{d['title']}\n{d['text']}" for d in corpus]
    started, cpu = time.perf_counter(), time.process_time()
    result = rag.insert(texts, ids=[f"passage-{i:04d}" for i in range(len(texts))],
                        file_paths=[d["title"] for d in corpus])
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    status = rag.status()
    return {
        "passages": len(texts), "processed": len(result.processed), "failed": len(result.failed),
        "wall_s": wall, "cpu_s": cpu, "load_s": load_s,
        "extract_s": extract.seconds, "embed_s": embed.seconds, "embed_calls": embed.calls,
        "other_s": wall - extract.seconds - embed.seconds,
        "entities": status["entities"], "relations": status["relations"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loadavg": os.getloadavg()[0],
    }


def section(r: Dict[str, Any], command: str) -> str:
    share = {k: 100 * r[f"{k}_s"] / r["wall_s"] for k in ("extract", "embed", "other")}
    return "\n".join([
        SECTION, "",
        "The packaged default config (`lightrag/configs/graph_rag_default.yaml`: spaCy "
        "`SpacyEntityExtractor`, all-MiniLM-L6-v2 on the CPU, SQLite store) indexing MuSiQue-100's "
        "passages, one passage per document, in one `insert` call.", "",
        "```", f"$ {command}", "```", "",
        "| passages | wall | CPU | passages/s | spaCy extraction | embedding | rest (chunking, "
        "merging, storage) | entities | relations | peak RSS | load avg |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {r['passages']:,} | {r['wall_s']:.0f} s | {r['cpu_s']:.0f} s | "
        f"{r['passages'] / r['wall_s']:.1f} | {r['extract_s']:.0f} s ({share['extract']:.0f}%) | "
        f"{r['embed_s']:.0f} s ({share['embed']:.0f}%, {r['embed_calls']} calls) | "
        f"{r['other_s']:.0f} s ({share['other']:.0f}%) | {r['entities']:,} | {r['relations']:,} | "
        f"{r['peak_rss_mb']:.0f} MB | {r['loadavg']:.1f} |", "",
        f"Model loading ({r['load_s']:.0f} s) is not included. Extraction and embedding overlap "
        "little (a batch is embedded, then extracted), so the shares add up to about the wall time; "
        "CPU above wall means both cores worked.", "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--limit", type=int, default=0, help="first N passages only (0: all)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    logging.getLogger("lightrag").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="real_insert_") as workdir:
        r = run(Path(args.data), args.limit, workdir)
    print(json.dumps(r, indent=1))
    command = ".venv/bin/python benchmarks/graph_rag_real_insert.py" + (
        f" --limit {args.limit}" if args.limit else "")
    text = section(r, command)
    print(text)
    if not args.no_write:
        doc = DOC.read_text()
        if SECTION in doc:
            start = doc.index(SECTION)
            end = doc.find("\n## ", start + len(SECTION))
            doc = doc[:start] + text + (doc[end + 1:] if end >= 0 else "")
        else:
            doc = doc.rstrip() + "\n\n" + text
        DOC.write_text(doc)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
