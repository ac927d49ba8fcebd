"""JSON key-value and document-status stores: CRUD, persistence, workspaces, atomic flushes."""

import json
import os

import pytest

from lightrag.components.graph_rag.schemas import DocProcessingStatus, DocStatus
from lightrag.components.storage import (
    BaseKVStorage,
    DocStatusStorage,
    JsonDocStatusStorage,
    JsonKVStorage,
    StorageNameSpace,
)


def kv(tmp_path, namespace="docs", workspace=""):
    return JsonKVStorage(namespace=namespace, workspace=workspace, working_dir=str(tmp_path))


def power_cut(src, dst):
    raise OSError("power cut")


# ----------------------------------------------------------------------------- KV
def test_kv_crud_and_merge(tmp_path):
    store = kv(tmp_path)
    assert store.is_empty() and len(store) == 0 and store.get_by_id("a") is None
    store.upsert({"a": {"text": "x", "n": 1}, "b": {"text": "y"}})
    store.upsert({"a": {"n": 2, "extra": [1, 2]}})
    assert store.get_by_id("a") == {"text": "x", "n": 2, "extra": [1, 2]}
    assert store.get_by_ids(["b", "zz", "a"]) == [{"text": "y"}, None, store.get_by_id("a")]
    assert store.filter_keys(["a", "c", "d"]) == {"c", "d"}
    assert sorted(store.keys()) == ["a", "b"] and dict(store.items())["b"] == {"text": "y"}
    store.get_by_id("b")["text"] = "changed outside"
    assert store.get_by_id("b") == {"text": "y"}
    store.delete(["b", "never-there"])
    assert store.keys() == ["a"] and len(store) == 1 and not store.is_empty() and "a" in store
    with pytest.raises(TypeError, match="'bad' must be a dict"):
        store.upsert({"ok": {"v": 1}, "bad": "not a dict"})
    assert store.get_by_id("ok") is None  # the batch was rejected as a whole


def test_kv_persistence_and_drop(tmp_path):
    store = kv(tmp_path)
    store.upsert({"a": {"text": "héllo", "n": 1}})
    assert not store.file_path.exists()  # nothing on disk before the flush
    store.index_done_callback()
    assert store.file_path.name == "kv_store_docs.json"
    again = kv(tmp_path)
    assert again.get_by_id("a") == {"text": "héllo", "n": 1}
    again.drop()
    assert again.is_empty() and not again.file_path.exists() and kv(tmp_path).is_empty()


def test_kv_unserialisable_value_names_the_record(tmp_path):
    store = kv(tmp_path)
    store.upsert({"good": {"v": 1}, "bad": {"v": object()}})
    with pytest.raises(TypeError, match="'bad' is not JSON-serialisable"):
        store.index_done_callback()
    assert not store.file_path.exists()


def test_workspaces_are_isolated_and_names_checked(tmp_path):
    alice, bob = kv(tmp_path, workspace="alice"), kv(tmp_path, workspace="bob")
    alice.upsert({"k": {"v": 1}})
    alice.index_done_callback()
    bob.index_done_callback()
    assert kv(tmp_path, workspace="bob").get_by_id("k") is None
    assert kv(tmp_path, workspace="alice").get_by_id("k") == {"v": 1}
    assert (tmp_path / "alice" / "kv_store_docs.json").exists()
    assert kv(tmp_path).get_by_id("k") is None  # the default workspace is the root folder
    for bad in ["../escape", "a/b", "..", ".", "a b", "x\\y"]:
        with pytest.raises(ValueError, match="workspace"):
            kv(tmp_path, workspace=bad)
    for bad in ["", "../up", "a/b"]:
        with pytest.raises(ValueError, match="namespace"):
            kv(tmp_path, namespace=bad)


def test_repr_shows_namespace_and_workspace(tmp_path):
    expected = "JsonKVStorage(namespace='full_docs', workspace='alice')"
    assert repr(kv(tmp_path, "full_docs", "alice")) == expected
    assert repr(kv(tmp_path, "full_docs")) == "JsonKVStorage(namespace='full_docs')"
    assert isinstance(kv(tmp_path), BaseKVStorage) and isinstance(kv(tmp_path), StorageNameSpace)


def test_crash_during_flush_keeps_previous_file(tmp_path, monkeypatch):
    store = kv(tmp_path)
    store.upsert({"a": {"v": 1}})
    store.index_done_callback()
    store.upsert({"a": {"v": 2}, "b": {"v": 3}})
    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError, match="power cut"):
        store.index_done_callback()
    monkeypatch.undo()
    assert kv(tmp_path).get_by_id("a") == {"v": 1} and kv(tmp_path).get_by_id("b") is None
    assert [p.name for p in tmp_path.iterdir()] == ["kv_store_docs.json"]  # no temp file left
    store.index_done_callback()  # still dirty: the retry writes the new data
    assert kv(tmp_path).get_by_id("b") == {"v": 3}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"a": 5}', "\xff"])
def test_corrupt_file_is_a_clear_error(tmp_path, content):
    (tmp_path / "kv_store_docs.json").write_text(content, encoding="latin-1")
    with pytest.raises(ValueError, match="kv_store_docs.json"):
        kv(tmp_path)


# -------------------------------------------------------------------- doc status
def status_store(tmp_path):
    store = JsonDocStatusStorage(working_dir=str(tmp_path))
    store.upsert({
        "d1": DocProcessingStatus(status=DocStatus.PROCESSED, track_id="t1", content_hash="h1",
                                  updated_at="2026-01-03T00:00:00+00:00", chunks_list=["c1", "c2"]),
        "d2": DocProcessingStatus(status=DocStatus.FAILED, track_id="t1", error_msg="boom",
                                  updated_at="2026-01-02T00:00:00+00:00").to_dict(),
        "d3": {**DocProcessingStatus(track_id="t2", updated_at="2026-01-01T00:00:00+00:00").to_dict(),
               "status": "pending"},
    })
    return store


def test_doc_status_queries_and_counts(tmp_path):
    store = status_store(tmp_path)
    assert isinstance(store, DocStatusStorage) and store.file_path.name == "kv_store_doc_status.json"
    assert store.get_status_counts() == {"pending": 1, "processing": 0, "processed": 1, "failed": 1}
    failed = store.get_by_status(DocStatus.FAILED)
    assert list(failed) == ["d2"] and isinstance(failed["d2"], DocProcessingStatus)
    assert failed["d2"].error_msg == "boom" and failed["d2"].status == DocStatus.FAILED
    assert store.get_by_status("processed")["d1"].chunks_list == ["c1", "c2"]
    assert set(store.get_by_track_id("t1")) == {"d1", "d2"} and store.get_by_track_id("zz") == {}
    assert set(store.get_by_statuses([DocStatus.PENDING, DocStatus.FAILED])) == {"d2", "d3"}
    doc_id, status = store.get_doc_by_content_hash("h1")
    assert doc_id == "d1" and status.track_id == "t1" and store.get_doc_by_content_hash("nope") is None
    assert store.get_by_id("d1")["status"] == "processed"  # stored as plain JSON values
    with pytest.raises(ValueError):
        store.get_by_status("sideways")


def test_doc_status_pagination_updates_and_persistence(tmp_path):
    store = status_store(tmp_path)
    page1 = store.get_docs_paginated(page=1, page_size=2)
    assert [k for k, _ in page1] == ["d1", "d2"]  # most recently updated first
    assert [k for k, _ in store.get_docs_paginated(page=2, page_size=2)] == ["d3"]
    assert [k for k, _ in store.get_docs_paginated(status=DocStatus.FAILED)] == ["d2"]
    with pytest.raises(ValueError, match="positive"):
        store.get_docs_paginated(page=0)
    store.upsert({"d2": {"status": DocStatus.PROCESSING, "error_msg": None, "retries": 1}})
    assert store.get_status_counts()["processing"] == 1
    assert store.get_by_status(DocStatus.PROCESSING)["d2"].track_id == "t1"  # extra keys ignored
    with pytest.raises(TypeError, match="DocProcessingStatus"):
        store.upsert({"d4": "processed"})
    store.index_done_callback()
    assert json.loads(store.file_path.read_text())["d2"]["status"] == "processing"
    again = JsonDocStatusStorage(working_dir=str(tmp_path))
    assert again.get_status_counts() == store.get_status_counts()
    assert again.get_by_id("d2")["retries"] == 1


@pytest.mark.parametrize("backend", ["json", "sqlite"])
def test_doc_status_pages_newest_first_and_paths_without_decoding(tmp_path, backend):
    from lightrag.components.storage.sql_db import SQLiteDatabase
    from lightrag.components.storage.sql_kv import SQLDocStatusStorage

    store = (JsonDocStatusStorage(working_dir=str(tmp_path)) if backend == "json"
             else SQLDocStatusStorage(SQLiteDatabase(tmp_path / "s.sqlite3")))
    store.upsert({f"d{i}": DocProcessingStatus(
        status=DocStatus.FAILED if i % 3 == 0 else DocStatus.PROCESSED, file_path=f"notes/{i % 4}.md",
        updated_at=f"2026-01-{10 + i:02d}T00:00:00+00:00") for i in range(9)})
    pages = [[k for k, _ in store.get_docs_paginated(page=p, page_size=4)] for p in (1, 2, 3)]
    assert pages == [["d8", "d7", "d6", "d5"], ["d4", "d3", "d2", "d1"], ["d0"]]
    failed = store.get_docs_paginated(page=1, page_size=5, status="failed")
    assert [k for k, _ in failed] == ["d6", "d3", "d0"]
    assert sorted(store.file_paths()) == sorted((f"d{i}", f"notes/{i % 4}.md") for i in range(9))
    assert list(store.get_by_status("failed")) == ["d0", "d3", "d6"]  # by id
    listed = store.listing()
    assert [r["id"] for r in listed] == sorted(f"d{i}" for i in range(9))
    assert listed[3] == {"id": "d3", "status": "failed", "file_path": "notes/3.md", "chunks_count": None,
                         "content_length": 0, "updated_at": "2026-01-13T00:00:00+00:00", "error_msg": None}
    assert [r["id"] for r in store.listing("failed")] == ["d0", "d3", "d6"]
