"""Load test of ``lightrag serve``'s app: concurrent inserts and queries over loopback HTTP.

A server process (this script with ``--serve-only``: ``create_app`` on uvicorn, one worker, the
instant fake LLM and hashed bag-of-words embeddings of :mod:`_graph_fakes`) listens on a free
127.0.0.1 port. The driver sends a fixed number of requests with httpx: ``--insert-clients``
clients insert ``--docs`` synthetic documents one per request (202, processed in the background)
while ``--query-clients`` clients send ``--queries`` questions cycling through the five retrieval
modes (each answered by the fake LLM); once every document is PROCESSED the same questions run
again on the full store, alone. It reports queries per second and p50/p95 latencies of both
phases, stops the server with SIGTERM (graceful shutdown), then reloads the stores from disk and
checks that no acknowledged document was lost. The load is bounded by ``--time-limit`` seconds
(numbers so far are reported if it runs out) and the graceful stop by as much again; nothing
leaves the loopback interface. The server bounds its queue (``--max-pending``): an insert over the
bound gets 429 and the client retries after ``Retry-After``; the report counts those.

``--crash`` measures durability instead: the clients insert the documents as fast as they are
acknowledged, the server is SIGKILLed right after the last 202, the store is opened offline to
count acknowledged documents missing from it, and a restarted server (same working directory)
must bring every one to PROCESSED.

Usage::

    .venv/bin/python benchmarks/server_load.py                     # 200 docs, 400 queries
    .venv/bin/python benchmarks/server_load.py --docs 50 --queries 100
    .venv/bin/python benchmarks/server_load.py --crash --docs 600   # kill -9 after the 202s
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import _graph_fakes as F  # noqa: E402

from lightrag.components.graph_rag import (  # noqa: E402
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402

MODES = ["naive", "local", "global", "hybrid", "mix"]
DIM = 128


def make_rag(working_dir: str) -> GraphRAG:
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=DIM)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=F.our_llm_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=lambda p: "ok")),
        keyword_extractor=HeuristicKeywordExtractor(),
        working_dir=working_dir, cosine_threshold=0.05)


def serve_only(args: argparse.Namespace) -> None:
    """The server process: bind a free loopback port, print it, serve until SIGTERM."""
    import uvicorn

    from lightrag.server.app import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_app(make_rag(args.working_dir), api_keys=[], max_pending=args.max_pending)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=args.time_limit)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def percentiles(times: List[float]) -> Dict[str, float]:
    if not times:
        return {"n": 0}
    return {"n": len(times), "p50_ms": round(float(np.percentile(times, 50)), 2),
            "p95_ms": round(float(np.percentile(times, 95)), 2),
            "max_ms": round(max(times), 2)}


async def drive(url: str, docs: List[str], questions: List[str], args: argparse.Namespace,
                state: Dict[str, Any]) -> None:
    """Send the load; ``state`` fills up as it goes (so a timeout still leaves numbers)."""
    import httpx

    statuses: Dict[str, int] = state.setdefault("statuses", {})

    def count(kind: str, response: Any) -> None:
        key = f"{kind} {response.status_code}"
        statuses[key] = statuses.get(key, 0) + 1

    async def insert_all(client: Any) -> None:
        await insert_documents(client, docs, args, state, count)

    async def query_all(client: Any, phase: str) -> None:
        queue = list(enumerate(questions))

        async def querier() -> None:
            while queue:
                i, question = queue.pop()
                started = time.perf_counter()
                response = await client.post("/query", json={"query": question,
                                                             "mode": MODES[i % len(MODES)]})
                state[phase].append((time.perf_counter() - started) * 1000)
                state[phase + "_s"] = time.perf_counter() - phase_started
                count("query", response)

        phase_started = time.perf_counter()
        await asyncio.gather(*(querier() for _ in range(args.query_clients)))

    for key in ("insert_ms", "acknowledged", "mixed_ms", "alone_ms"):
        state[key] = []
    limits = httpx.Limits(max_connections=args.insert_clients + args.query_clients + 2)
    async with httpx.AsyncClient(base_url=url, timeout=args.time_limit, limits=limits) as client:
        started = time.perf_counter()
        inserting = asyncio.ensure_future(insert_all(client))
        await query_all(client, "mixed_ms")
        await inserting
        await wait_processed(client, len(docs))
        state["all_processed_s"] = time.perf_counter() - started
        await query_all(client, "alone_ms")


async def wait_processed(client: Any, n_docs: int) -> float:
    """Poll until ``n_docs`` documents are PROCESSED; the seconds it took."""
    started = time.perf_counter()
    while True:
        counts = (await client.get("/documents", params={"page_size": 1})).json()["counts"]
        if counts.get("failed"):
            raise RuntimeError(f"{counts['failed']} documents failed")
        if counts.get("processed", 0) >= n_docs:
            return time.perf_counter() - started
        await asyncio.sleep(0.05)


async def insert_documents(client: Any, docs: List[str], args: argparse.Namespace,
                           state: Dict[str, Any], count: Any) -> None:
    """``--insert-clients`` clients insert ``docs`` one per request; 429s wait and retry."""
    queue = list(enumerate(docs))

    async def inserter() -> None:
        while queue:
            i, text = queue.pop()
            while True:
                started = time.perf_counter()
                response = await client.post("/documents", json={
                    "texts": text, "ids": f"doc-{i:05d}", "file_paths": f"doc{i}.txt"})
                state["insert_ms"].append((time.perf_counter() - started) * 1000)
                count("insert", response)
                if response.status_code != 429:
                    break
                await asyncio.sleep(min(float(response.headers.get("Retry-After", 1)), 2.0))
            if response.status_code == 202:
                state["acknowledged"].extend(response.json().get("doc_ids", []))

    await asyncio.gather(*(inserter() for _ in range(args.insert_clients)))


def summarize(state: Dict[str, Any], n_docs: int) -> Dict[str, Any]:
    out: Dict[str, Any] = {"insert_requests": percentiles(state.get("insert_ms", []))}
    for phase, name in (("mixed_ms", "queries_during_ingestion"), ("alone_ms", "queries_alone")):
        times = state.get(phase, [])
        out[name] = {**percentiles(times),
                     "qps": round(len(times) / state[phase + "_s"], 1) if times else None}
    if "all_processed_s" in state:
        out["all_processed_s"] = round(state["all_processed_s"], 2)
        out["docs_per_s"] = round(n_docs / state["all_processed_s"], 1)
    out["statuses"] = state.get("statuses", {})
    return out


def run(args: argparse.Namespace) -> Dict[str, Any]:
    docs = F.make_documents(args.docs, args.sentences, n_names=max(50, args.docs), seed=args.seed)
    names = F.make_names(max(50, args.docs), args.seed + 1)
    questions = [f"What did {names[i % len(names)]} do near the harbour?" for i in range(args.queries)]
    state: Dict[str, Any] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="lightrag-load-") as workdir:
        server, port = start_server(workdir, args)
        try:
            try:
                asyncio.run(asyncio.wait_for(
                    drive(f"http://127.0.0.1:{port}", docs, questions, args, state), args.time_limit))
                error = None
            except asyncio.TimeoutError:
                error = f"time limit of {args.time_limit} s exceeded"
            result = summarize(state, len(docs))
            stop_started = time.perf_counter()
            server.send_signal(signal.SIGTERM)  # graceful: finishes the accepted inserts
            try:
                server.wait(timeout=args.time_limit)
                result["graceful_stop_s"] = round(time.perf_counter() - stop_started, 2)
            except subprocess.TimeoutExpired:
                result["graceful_stop_s"] = f"killed after {args.time_limit} s"
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        reloaded = make_rag(workdir)
        stored = {k: v.get("status") for k, v in reloaded.doc_status.items()}
        acknowledged = state.get("acknowledged", [])
        result["acknowledged"] = len(acknowledged)
        result["lost_documents"] = sorted(set(acknowledged) - set(stored))
        result["unfinished_retryable"] = sorted(d for d in acknowledged
                                                if d in stored and stored[d] != "processed")
        result["graph"] = {k: v for k, v in reloaded.status().items()
                           if k in ("chunks", "entities", "relations")}
    if error:
        result["error"] = error
    result["config"] = {k: v for k, v in vars(args).items() if k not in ("serve_only", "working_dir")}
    result["machine"] = (f"{platform.machine()}, {os.cpu_count()} cpus, Python "
                         f"{platform.python_version()}, load average {load_before:.1f} before, "
                         f"{os.getloadavg()[0]:.1f} after")
    return result


def start_server(workdir: str, args: argparse.Namespace) -> Any:
    """A server process on ``workdir``; ``(process, port)`` once it accepts connections."""
    server = subprocess.Popen([sys.executable, __file__, "--serve-only", "--working-dir", workdir,
                               "--time-limit", str(args.time_limit),
                               "--max-pending", str(args.max_pending)],
                              stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline().split()[1])  # type: ignore[union-attr]
    _wait_ready(port, deadline=time.monotonic() + 30)
    return server, port


def crash_run(args: argparse.Namespace) -> Dict[str, Any]:
    """Insert, SIGKILL right after the last 202, count what the store lost, restart, finish."""
    import httpx

    docs = F.make_documents(args.docs, args.sentences, n_names=max(50, args.docs), seed=args.seed)
    state: Dict[str, Any] = {"insert_ms": [], "acknowledged": [], "statuses": {}}

    def count(kind: str, response: Any) -> None:
        key = f"{kind} {response.status_code}"
        state["statuses"][key] = state["statuses"].get(key, 0) + 1

    async def insert(url: str) -> None:
        limits = httpx.Limits(max_connections=args.insert_clients + 2)
        async with httpx.AsyncClient(base_url=url, timeout=args.time_limit, limits=limits) as client:
            await insert_documents(client, docs, args, state, count)

    async def finish(url: str) -> float:
        async with httpx.AsyncClient(base_url=url, timeout=args.time_limit) as client:
            return await wait_processed(client, len(docs))

    result: Dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lightrag-crash-") as workdir:
        server, port = start_server(workdir, args)
        started = time.perf_counter()
        try:
            asyncio.run(insert(f"http://127.0.0.1:{port}"))
        finally:
            server.kill()  # SIGKILL, right after the last 202
            server.wait()
        result["insert_s"] = round(time.perf_counter() - started, 2)
        result["insert_requests"] = percentiles(state["insert_ms"])
        stored = {k: v.get("status") for k, v in make_rag(workdir).doc_status.items()}
        acknowledged = state["acknowledged"]
        result["acknowledged"] = len(acknowledged)
        result["at_kill"] = {s: sum(1 for d in acknowledged if stored.get(d) == s)
                             for s in ("pending", "processing", "processed", "failed")}
        result["lost_documents"] = sorted(set(acknowledged) - set(stored))
        server, port = start_server(workdir, args)
        try:
            result["resumed_all_processed_s"] = round(asyncio.run(asyncio.wait_for(
                finish(f"http://127.0.0.1:{port}"), args.time_limit)), 2)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=args.time_limit)
        stored = {k: v.get("status") for k, v in make_rag(workdir).doc_status.items()}
        result["unfinished_after_restart"] = sorted(d for d in acknowledged
                                                    if stored.get(d) != "processed")
    result["statuses"] = state["statuses"]
    result["config"] = {k: v for k, v in vars(args).items() if k not in ("serve_only", "working_dir")}
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}"
    return result


def _wait_ready(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--sentences", type=int, default=12, help="sentences per document")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--insert-clients", type=int, default=4)
    parser.add_argument("--query-clients", type=int, default=8)
    parser.add_argument("--time-limit", type=float, default=180.0, help="seconds for everything")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-pending", type=int, default=1000,
                        help="the server's bound on unfinished documents (429 beyond)")
    parser.add_argument("--crash", action="store_true",
                        help="SIGKILL the server after the 202s, restart it, check nothing is lost")
    parser.add_argument("--serve-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--working-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_only:
        serve_only(args)
        return 0
    if args.crash:
        result = crash_run(args)
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        ok = not result["lost_documents"] and not result["unfinished_after_restart"] and \
            result["acknowledged"] == args.docs
        sys.stdout.write("OK: no acknowledged document lost\n" if ok else "FAILED\n")
        return 0 if ok else 1
    result = run(args)
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
    ok = "error" not in result and not result["lost_documents"] and \
        not result["unfinished_retryable"] and result["acknowledged"] == args.docs and all(
            key.endswith(("200", "202", "429")) for key in result["statuses"])
    sys.stdout.write("OK: no document lost\n" if ok else "FAILED\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
