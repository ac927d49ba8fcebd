"""An old JSON/GraphML/NumPy working directory is refused with a clear error naming
`lightrag migrate`, and migrate_legacy_store copies everything into the SQLite store."""

import json

import numpy as np
import pytest
from test_graph_rag_system import make_rag

from lightrag.components.graph_rag.index.migrate import migrate_legacy_store
from lightrag.components.storage import (
    JsonDocStatusStorage,
    JsonKVStorage,
    NetworkXGraphStorage,
    NumpyVectorStorage,
)


def write_old_store(folder):
    docs = JsonKVStorage(namespace="full_docs", working_dir=str(folder))
    docs.upsert({"doc-1": {"content": "Voyager 1 flew past Saturn.", "file_path": "v.md"}})
    chunks = JsonKVStorage(namespace="text_chunks", working_dir=str(folder))
    chunks.upsert({"doc-1-chunk-000": {"content": "Voyager 1 flew past Saturn.", "tokens": 6,
                                        "full_doc_id": "doc-1", "chunk_order_index": 0,
                                        "file_path": "v.md"}})
    status = JsonDocStatusStorage(working_dir=str(folder))
    status.upsert({"doc-1": {"status": "processed", "chunks_list": ["doc-1-chunk-000"],
                             "content_hash": "x", "file_path": "v.md"}})
    items = JsonKVStorage(namespace="doc_graph_items", working_dir=str(folder))
    items.upsert({"doc-1": {"entities": ["Saturn", "Voyager 1"], "relations": [["Saturn", "Voyager 1"]]}})
    graph = NetworkXGraphStorage(namespace="chunk_entity_relation", working_dir=str(folder))
    for name in ("Saturn", "Voyager 1"):
        graph.upsert_node(name, {"entity_id": name, "entity_type": "x", "description": "d",
                                 "source_id": "doc-1-chunk-000", "file_path": "v.md",
                                 "context_line_tokens": 5, "context_line_crc": 1})
    graph.upsert_edge("Saturn", "Voyager 1", {"weight": 1.0, "description": "d", "keywords": "k",
                                              "source_id": "doc-1-chunk-000", "file_path": "v.md"})
    vectors = {}
    for ns, ids in (("chunks", ["doc-1-chunk-000"]), ("entities", ["ent-a", "ent-b"]),
                    ("relationships", ["rel-a"])):
        store = NumpyVectorStorage(namespace=ns, working_dir=str(folder), meta_fields=["file_path"])
        matrix = np.random.default_rng(0).normal(size=(len(ids), 256))
        store.upsert({i: {"content": i, "file_path": "v.md"} for i in ids}, vectors=matrix)
        vectors[ns] = store
    for store in (docs, chunks, status, items, graph, *vectors.values()):
        store.index_done_callback()
    (folder / ".kv_store_full_docs.json.abc.tmp").write_text("half-written")


def test_old_store_is_refused_then_migrated(tmp_path):
    write_old_store(tmp_path)
    with pytest.raises(ValueError, match="lightrag migrate"):
        make_rag(tmp_path)
    counts = migrate_legacy_store(str(tmp_path))
    assert counts["documents"] == 1 and counts["entities"] == 2 and counts["vectors"] == 4
    assert counts["stale_tmp_files_removed"] == 1
    rag = make_rag(tmp_path)
    assert rag.doc_status.get_by_id("doc-1")["status"] == "processed"
    assert rag.graph.get_node("Saturn")["description"] == "d"
    assert "context_line_tokens" not in json.dumps(rag.graph.get_all_nodes())
    assert len(rag.chunks_vdb) == 1 and len(rag.entities_vdb) == 2
    assert rag.text_chunks.get_by_id("doc-1-chunk-000")["tokens"] == 6
    with pytest.raises(ValueError, match="migrated"):
        migrate_legacy_store(str(tmp_path))
    rag.insert("Cassini reached Saturn in 2004.")  # the migrated store takes new documents
    assert rag.status()["documents"]["processed"] == 2


def test_nothing_to_migrate_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no old-format stores"):
        migrate_legacy_store(str(tmp_path))
