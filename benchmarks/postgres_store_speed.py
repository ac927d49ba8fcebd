"""The PostgreSQL store against the embedded SQLite one: insert rate (early and late, to see that
the cost stays flat) and query latency, same documents, same instant fakes.

``--docs`` short synthetic documents (one chunk each, a few capitalised names; all of them
name the hubs "Saturn" and "Titan" unless ``--no-hubs``) go through ``GraphRAG.insert`` one call
per batch of 50, with the fake extraction LLM of the tests (``tests/graph_fakes.py``) and
ScriptedClient's hashed bag-of-words embeddings, into SQLite (a temporary directory) and into
PostgreSQL: the server named by ``--dsn-env`` or, by default, a throwaway one started from
Debian's binaries (``tests/pg_server.py``, loopback). Then ``local`` and ``naive`` queries with
``only_need_context=True`` (no model call), p50 over 20.

Usage::

    .venv/bin/python benchmarks/postgres_store_speed.py --docs 300
    LIGHTRAG_PG_DSN=postgresql://me@db/rag .venv/bin/python benchmarks/postgres_store_speed.py \\
        --dsn-env LIGHTRAG_PG_DSN
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from graph_fakes import extraction_reply, the_answer  # noqa: E402

from lightrag.components.graph_rag import (  # noqa: E402
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402

BATCH = 50


def documents(n: int, hubs: bool = True) -> Dict[str, str]:
    """Synthetic documents; with ``hubs`` every one also names "Saturn" and "Titan" (whose rows
    then grow with the store), without them every name is the document's own."""
    if not hubs:
        return {f"d{i}.md": f"Probe P{i} reached Planet Q{i} in {1900 + i % 100}. Probe P{i} "
                            f"photographed Moon R{i} and Moon M{i}. Station S{i} tracked Probe P{i}."
                for i in range(n)}
    return {f"d{i}.md": f"Probe P{i} reached Saturn in {1900 + i % 100}. Probe P{i} photographed "
                        f"Titan and Moon M{i % 37}. Station S{i % 53} tracked Probe P{i}."
            for i in range(n)}


def make_rag(working_dir: str, storage: str, dsn_env: str, workspace: str) -> GraphRAG:
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(
            generator=Generator(model_client=ScriptedClient(response_fn=extraction_reply)),
            max_gleaning=1),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=200, chunk_overlap_token_size=10),
        working_dir=working_dir, workspace=workspace, storage=storage,
        storage_kwargs={"dsn_env": dsn_env} if storage == "postgres" else {},
        cosine_threshold=0.05)


def measure(rag: GraphRAG, docs: Dict[str, str]) -> Dict[str, float]:
    paths, texts = list(docs), list(docs.values())
    rates: List[float] = []
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        t = time.perf_counter()
        result = rag.insert(texts[start:start + BATCH], file_paths=paths[start:start + BATCH])
        if result.failed:
            raise RuntimeError(f"insert failed: {result.failed}")
        rates.append(len(result.processed) / (time.perf_counter() - t))
    total = time.perf_counter() - started
    problems = rag.index.verify()
    if problems:
        raise RuntimeError(f"store inconsistent: {problems[:3]}")
    latency = {}
    for mode in ("local", "naive"):
        rag.query("Which probe photographed Titan?", mode=mode, only_need_context=True)  # warm
        times = []
        for i in range(20):
            t = time.perf_counter()
            rag.query(f"Which probe P{i} photographed Titan?", mode=mode, only_need_context=True,
                      ll_keywords=[f"Probe P{i}"], hl_keywords=["photographed"])
            times.append(time.perf_counter() - t)
        latency[mode] = statistics.median(times) * 1000
    return {"docs/s": len(texts) / total, "first batch docs/s": rates[0],
            "last batch docs/s": rates[-1], "local p50 ms": latency["local"],
            "naive p50 ms": latency["naive"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--no-hubs", action="store_true",
                        help="documents that share no entity (no growing hub rows)")
    parser.add_argument("--dsn-env", help="use this server (its DSN in this environment variable) "
                        "instead of a throwaway one")
    args = parser.parse_args()
    docs = documents(args.docs, hubs=not args.no_hubs)
    server = None
    dsn_env = args.dsn_env
    if dsn_env is None:
        from pg_server import PostgresServer

        server = PostgresServer.start()
        dsn_env = "LIGHTRAG_BENCH_PG_DSN"
        os.environ[dsn_env] = server.dsn
    try:
        rows = {}
        with tempfile.TemporaryDirectory() as tmp:
            for storage in ("sqlite", "postgres"):
                rag = make_rag(tmp, storage, dsn_env, f"bench_{uuid.uuid4().hex[:8]}")
                rows[storage] = measure(rag, docs)
                rag.index.close()
        columns = list(rows["sqlite"])
        sys.stdout.write(f"{args.docs} documents{' without hubs' if args.no_hubs else ''}, "
                         f"batches of {BATCH}\n")
        sys.stdout.write("| storage | " + " | ".join(columns) + " |\n")
        sys.stdout.write("|---|" + "---:|" * len(columns) + "\n")
        for storage, row in rows.items():
            sys.stdout.write(f"| {storage} | " + " | ".join(f"{row[c]:.1f}" for c in columns) + " |\n")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
