"""Ray ingestion writing into PostgreSQL with pgvector, on loopback: a local Ray cluster prepares
the documents, the driver commits them into the shared server, and another instance searches
them. Skipped, saying why, without Ray or without a PostgreSQL server with pgvector."""

import os
import sys
import uuid

import pytest

# the local test cluster stays on 127.0.0.1 (see tests/test_ray_ingest.py)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray")

import graph_fakes  # noqa: E402
from graph_fakes import fake_graph_rag  # noqa: E402
from pg_server import PostgresServer, vector_skip_reason  # noqa: E402
from ray import cloudpickle  # noqa: E402
from sample_corpus import space_docs  # noqa: E402
from store_state import store_state  # noqa: E402

from lightrag.components.graph_rag.distributed import ray_insert  # noqa: E402
from lightrag.components.storage.pg_vector import PgVectorStorage  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.postgres]

DSN_ENV = "LIGHTRAG_TEST_PGVECTOR_RAY_DSN"
SKIP = vector_skip_reason()


@pytest.fixture(scope="module")
def pgv_ray():
    """A server with pgvector and a local Ray cluster, both on loopback."""
    if SKIP is not None:
        pytest.skip(f"no PostgreSQL server with pgvector: {SKIP}")
    from ray._private import ray_constants

    server = PostgresServer.start(pgvector=True)
    os.environ[DSN_ENV] = server.dsn
    ray_constants.ENABLE_RAY_CLUSTER = False
    for module in (graph_fakes, sys.modules[__name__]):  # workers cannot import tests/
        cloudpickle.register_pickle_by_value(module)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        yield server
    finally:
        ray.shutdown()
        for module in (graph_fakes, sys.modules[__name__]):
            cloudpickle.unregister_pickle_by_value(module)
        os.environ.pop(DSN_ENV, None)
        server.stop()


def make_rag(path, **kwargs):
    return fake_graph_rag(path, chunk_tokens=20, chunk_overlap=3, **kwargs)


def test_ray_insert_into_postgres_with_pgvector(pgv_ray, tmp_path):
    docs = space_docs(5)
    texts, paths = list(docs.values()), list(docs)
    workspace = f"ray_{uuid.uuid4().hex[:8]}"
    shared = {"storage": "postgres", "workspace": workspace, "storage_kwargs": {"dsn_env": DSN_ENV}}
    driver = make_rag(tmp_path, **shared)
    assert isinstance(driver.index.stores.chunks_vdb, PgVectorStorage)
    reader = make_rag(tmp_path, **shared)  # another instance, open before the insert
    result = ray_insert(driver, texts, file_paths=paths, num_workers=2, max_llm_concurrency=2)
    assert len(result.processed) == 5 and not result.failed
    reference = make_rag(tmp_path / "single", insert_batch_size=1)
    reference.insert(texts, file_paths=paths)
    assert store_state(driver) == store_state(reference)  # the graph a single process builds
    hits = reader.chunks_vdb.query(texts[2], top_k=1)
    assert hits and hits[0]["file_path"] == paths[2]
    assert reader.query("Who landed on Titan?", mode="mix").content == "The answer."
