"""ray_insert on a local Ray cluster with the scripted LLM: the graph equals the single-process
insert, the LLM concurrency stays bounded, failed chunks are retried with cached extractions."""

import asyncio
import json
import os
import pickle
import sys
import time

import pytest
from sample_corpus import space_docs

# Keep the local test cluster on 127.0.0.1: by default Ray picks the address of the interface
# that routes outside; this switch (Ray's own, meant for laptops) makes it use the loopback IP.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray")

import graph_fakes  # noqa: E402
from graph_fakes import extraction_reply, fake_graph_rag  # noqa: E402
from ray import cloudpickle  # noqa: E402

from lightrag.components.graph_rag import EntityExtractor  # noqa: E402
from lightrag.components.graph_rag.distributed import (  # noqa: E402
    dumps_components,
    loads_components,
    ray_insert,
    split_llm_limit,
)
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Generator  # noqa: E402

pytestmark = pytest.mark.ray

DOCS = space_docs(5)


class SlowAsyncClient(ScriptedClient):
    """The scripted extraction LLM taking ``delay`` seconds without blocking the event loop,
    logging each call's start and end time to a file shared by all workers."""

    def __init__(self, log_path="", delay=0.05, **kwargs):
        super().__init__(**kwargs)
        self.log_path = log_path
        self.delay = delay

    async def acall(self, api_kwargs=None, model_type=None):
        started = time.time()
        await asyncio.sleep(self.delay)
        with open(self.log_path, "a") as f:
            f.write(f"{started} {time.time()}\n")
        return await super().acall(api_kwargs, model_type)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False  # in case Ray was imported before the switch was set
    for module in (graph_fakes, sys.modules[__name__]):  # workers cannot import tests/
        cloudpickle.register_pickle_by_value(module)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
    yield
    ray.shutdown()
    for module in (graph_fakes, sys.modules[__name__]):
        cloudpickle.unregister_pickle_by_value(module)


def make_rag(path, client=None, **kwargs):
    return fake_graph_rag(path, chunk_tokens=20, chunk_overlap=3,  # 2 chunks a document
                          extraction_client=client, **kwargs)


def snapshot(rag):
    """Everything an insert writes, without creation times."""
    def strip(data):
        return {k: v for k, v in data.items() if k not in ("created_at", "source", "target")}

    nodes = {n: strip(rag.graph.get_node(n)) for n in rag.graph.get_all_labels()}
    edges = {tuple(sorted((e["source"], e["target"]))): strip(e) for e in rag.graph.get_all_edges()}
    chunk_ids = sorted(rag.text_chunks.keys())
    return {
        "nodes": nodes, "edges": edges,
        "chunks": {c: rag.text_chunks.get_by_id(c) for c in chunk_ids},
        "chunk_vectors": {c: v.round(6).tolist()
                          for c, v in rag.chunks_vdb.get_vectors_by_ids(chunk_ids).items()},
        "entity_vectors": len(rag.entities_vdb), "relation_vectors": len(rag.relations_vdb),
        "extractions": sorted(rag.index.stores.extractions.results.keys()),
        "graph_items": json.loads(json.dumps(dict(rag.index.stores.doc_graph_items.items()))),
        "status": {k: (v["status"], v["chunks_list"]) for k, v in rag.doc_status.items()},
    }


def test_split_and_pickling_helpers(tmp_path):
    assert split_llm_limit(7, 3) == [3, 2, 2]
    with pytest.raises(ValueError, match="must not exceed"):
        split_llm_limit(2, 3)
    extractor = make_rag(tmp_path).extractor
    with pytest.raises(TypeError):
        pickle.dumps(extractor)  # thread locks and compiled templates
    copy = loads_components(dumps_components(extractor))
    prompt = "Input text:\n```\nAda Lovelace met Charles Babbage.\n```\nOutput:"
    assert copy.generator.model_client.call({"prompt": prompt}) == extraction_reply(prompt)
    assert copy.generator.get_prompt(input_str="x") == extractor.generator.get_prompt(input_str="x")


def test_ray_insert_equals_single_process_insert(tmp_path):
    texts, paths = list(DOCS.values()), list(DOCS)
    reference = make_rag(tmp_path / "single", insert_batch_size=1)
    expected = reference.insert(texts, file_paths=paths)
    distributed = make_rag(tmp_path / "ray")
    result = ray_insert(distributed, texts, file_paths=paths, num_workers=2, max_llm_concurrency=3)
    assert sorted(result.processed) == sorted(expected.processed) and len(result.processed) == 5
    assert not result.failed and result.chunks == expected.chunks
    ours, theirs = snapshot(distributed), snapshot(reference)
    assert ours["nodes"] == theirs["nodes"]
    assert ours["edges"] == theirs["edges"]
    assert ours["edges"][("Jupiter", "Voyager 1")]["weight"] == 1.0
    assert ours == theirs
    again = ray_insert(distributed, texts[:2], num_workers=1, max_llm_concurrency=1)
    assert len(again.skipped) == 2 and not again.processed
    reloaded = make_rag(tmp_path / "ray")
    assert snapshot(reloaded) == ours
    assert reloaded.query("Who landed on Titan?", mode="mix").content == "The answer."


def peak_concurrency(log_path):
    """Calls logged by SlowAsyncClient, and the most that ran at once."""
    events = []
    for line in log_path.read_text().split("\n"):
        if line:
            start, end = map(float, line.split())
            events += [(start, 1), (end, -1)]
    running = peak = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        running += step
        peak = max(peak, running)
    return len(events) // 2, peak


def test_llm_concurrency_is_bounded_across_workers(tmp_path):
    log_path = tmp_path / "calls.log"
    client = SlowAsyncClient(log_path=str(log_path), response_fn=extraction_reply)
    rag = make_rag(tmp_path / "store", client=client)
    result = ray_insert(rag, list(DOCS.values()), num_workers=2, max_llm_concurrency=3,
                        max_in_flight=5)
    assert len(result.processed) == 5
    calls, peak = peak_concurrency(log_path)
    assert calls >= 2 * rag.status()["chunks"]  # extraction + one gleaning round per chunk
    assert 2 <= peak <= 3, f"peak concurrency {peak}"


def test_failed_chunks_are_retried_with_cached_extractions(tmp_path):
    def flaky(prompt):
        return "garbage without records" if "Apollo" in prompt else extraction_reply(prompt)

    rag = make_rag(tmp_path / "store", client=ScriptedClient(response_fn=flaky))
    first = ray_insert(rag, list(DOCS.values()), file_paths=list(DOCS), num_workers=2,
                       max_llm_concurrency=2)
    apollo = first.doc_ids[2]
    assert apollo in first.failed and first.failed_chunks and len(first.processed) == 4
    assert rag.doc_status.get_by_id(apollo)["status"] == "failed"
    cached_before = set(rag.index.stores.extractions.results.keys())
    assert len(rag.doc_status.get_by_id(apollo)["chunks_list"]) > len(first.failed_chunks)
    log_path = tmp_path / "calls.log"
    rag.extractor = EntityExtractor(generator=Generator(model_client=SlowAsyncClient(
        log_path=str(log_path), delay=0, response_fn=extraction_reply)), max_gleaning=1)
    second = ray_insert(rag, [], num_workers=1, max_llm_concurrency=1)
    assert second.processed == [apollo] and not second.failed
    assert cached_before < set(rag.index.stores.extractions.results.keys())
    calls = len(log_path.read_text().splitlines())
    assert calls == 2 * len(first.failed_chunks), "only failed chunks are extracted again"
    reference = make_rag(tmp_path / "single", insert_batch_size=1)
    reference.insert(list(DOCS.values()), file_paths=list(DOCS))
    assert snapshot(rag)["nodes"].keys() == snapshot(reference)["nodes"].keys()


def test_backpressure_keeps_one_document_in_flight(tmp_path):
    log_path = tmp_path / "calls.log"
    client = SlowAsyncClient(log_path=str(log_path), response_fn=extraction_reply)
    rag = make_rag(tmp_path / "store", client=client)
    texts = list(DOCS.values())[:3]
    with pytest.raises(ValueError, match="max_in_flight must be at least 1"):
        ray_insert(rag, texts, num_workers=2, max_llm_concurrency=4, max_in_flight=0)
    assert not log_path.exists(), "bad arguments are rejected before any work"
    result = ray_insert(rag, texts, num_workers=2, max_llm_concurrency=4, max_in_flight=1)
    assert len(result.processed) == 3
    calls, peak = peak_concurrency(log_path)
    assert calls == 2 * rag.status()["chunks"]
    # one document at a time (the next is sent only after the last one is merged), so at most
    # its chunks are extracted at once, under the pool's limit of 4
    per_doc = max(record["chunks_count"] for _, record in rag.doc_status.items())
    assert 2 <= peak <= per_doc < 4, f"peak concurrency {peak} with max_in_flight=1"
