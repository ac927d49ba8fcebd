"""A reader's remembered ``id -> row`` answers never outlive a change of the writer's rows:
replaced, deleted, dropped and compacted vectors are read as they are now."""

import numpy as np
import pytest

from lightrag.components.storage import mapped_vector
from lightrag.components.storage.mapped_vector import MappedVectorStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.vector_row_cache import RowCache

DIM = 8


def unit(seed):
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def store_at(path):
    return MappedVectorStorage(SQLiteDatabase(path / "s.sqlite3"), namespace="chunks")


@pytest.fixture
def pair(tmp_path):
    """A writer and a reader on their own connections (as two processes are)."""
    writer = store_at(tmp_path)
    writer.upsert({f"k{i}": {"content": f"c{i}"} for i in range(20)},
                  vectors=np.stack([unit(i) for i in range(20)]))
    reader = store_at(tmp_path)
    assert np.allclose(reader.get_vectors_by_ids(["k3"])["k3"], unit(3))  # now remembered
    return writer, reader


def test_a_replaced_vector_is_read_anew(pair):
    writer, reader = pair
    writer.upsert({"k3": {"content": "new"}}, vectors=unit(99)[None, :])
    assert np.allclose(reader.get_vectors_by_ids(["k3"])["k3"], unit(99))


def test_a_deleted_vector_is_gone_and_new_ids_are_found(pair):
    writer, reader = pair
    writer.delete(["k3"])
    writer.upsert({"new": {"content": "n"}}, vectors=unit(50)[None, :])
    got = reader.get_vectors_by_ids(["k3", "k4", "new"])
    assert set(got) == {"k4", "new"} and np.allclose(got["new"], unit(50))


def test_a_dropped_store_filled_again_reads_the_new_vectors(pair):
    writer, reader = pair
    writer.drop()
    writer.upsert({"k3": {"content": "again"}, "k4": {"content": "again"}},
                  vectors=np.stack([unit(70), unit(71)]))
    got = reader.get_vectors_by_ids(["k3", "k4", "k5"])
    assert set(got) == {"k3", "k4"}
    assert np.allclose(got["k3"], unit(70)) and np.allclose(got["k4"], unit(71))


def test_a_compaction_renumbering_rows_is_followed(pair, monkeypatch):
    writer, reader = pair
    reader.get_vectors_by_ids([f"k{i}" for i in range(20)])
    monkeypatch.setattr(mapped_vector, "MIN_COMPACT_ROWS", 0)
    generation = writer._file_meta()[0]
    for seed in (200, 100):  # 30 garbage rows of 50: compacted into a new generation
        writer.upsert({f"k{i}": {"content": "x"} for i in range(15)},
                      vectors=np.stack([unit(seed + i) for i in range(15)]))
    assert writer._file_meta()[0] > generation
    got = reader.get_vectors_by_ids([f"k{i}" for i in range(20)])
    assert all(np.allclose(got[f"k{i}"], unit(100 + i)) for i in range(15))
    assert all(np.allclose(got[f"k{i}"], unit(i)) for i in range(15, 20))


def test_a_writer_sees_its_own_transaction_not_the_cache(pair):
    writer, _ = pair
    writer.get_vectors_by_ids(["k3"])
    with writer.db.transaction():
        writer.upsert({"k3": {"content": "tx"}}, vectors=unit(5)[None, :])
        assert np.allclose(writer.get_vectors_by_ids(["k3"])["k3"], unit(5))
        writer.delete(["k4"])
        assert "k4" not in writer.get_vectors_by_ids(["k4"])
    assert np.allclose(writer.get_vectors_by_ids(["k3"])["k3"], unit(5))


def test_the_cache_answers_repeats_without_a_lookup_and_starts_over_past_capacity():
    asked = []

    def lookup(ids):
        asked.append(list(ids))
        return {i: int(i[1:]) for i in ids if i != "x9"}

    cache = RowCache(capacity=3)
    assert cache.rows("t", ["x1", "x2", "x9"], lookup) == [("x1", 1), ("x2", 2)]
    assert cache.rows("t", ["x2", "x1"], lookup) == [("x2", 2), ("x1", 1)]
    assert asked == [["x1", "x2", "x9"]]
    assert cache.rows("t", ["x1", "x3", "x4"], lookup) == [("x1", 1), ("x3", 3), ("x4", 4)]
    assert cache.rows("t", ["x9"], lookup) == []  # absence is asked again, never remembered
    assert asked[-1] == ["x9"]
