"""MappedVectorStorage above ``ann_min_rows``: the inverted-file index (vector_ivf), its recall
against exact search, its upkeep per commit, readers in other connections, and its fallbacks."""

import json
import logging
import subprocess
import sys

import numpy as np
import pytest

from lightrag.components.storage import vector_generations, vector_ivf
from lightrag.components.storage.mapped_vector import MappedVectorStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.vector_ivf import IndexFileError, IVFIndex, TailLists

DIM = 16
CENTERS = np.random.default_rng(7).normal(size=(60, DIM)).astype(np.float32)


def clustered(n, seed):
    rng = np.random.default_rng(seed)
    points = CENTERS[rng.integers(0, len(CENTERS), n)] + 0.5 * rng.normal(size=(n, DIM))
    return points.astype(np.float32)


def open_store(tmp_path, **kwargs):
    db = SQLiteDatabase(tmp_path / "store.sqlite3")
    options = {"ann_min_rows": 2000, "ann_nprobe": 6, "cosine_threshold": -1.0, **kwargs}
    return MappedVectorStorage(db, namespace="chunks", meta_fields=["file_path"], **options)


def fill(store, vectors, start=0, batch=1000):
    for first in range(0, len(vectors), batch):
        part = vectors[first:first + batch]
        store.upsert({f"k{start + first + i}": {"content": f"c{start + first + i}", "file_path": "f.md"}
                      for i in range(len(part))}, vectors=part)


def ids(hits):
    return [h["id"] for h in hits]


def files(tmp_path, suffix):
    return sorted(p.name for p in tmp_path.glob(f"vectors-chunks-*.{suffix}"))


@pytest.fixture
def indexed(tmp_path, monkeypatch):
    """An index of 2,000 rows with a tail of 1,000 (retrained only past the index's own size)."""
    monkeypatch.setattr(vector_generations, "ANN_TAIL_RATIO", 1.0)
    store = open_store(tmp_path)
    fill(store, clustered(3000, seed=1))
    return store


def test_the_index_is_retrained_once_its_tail_passes_a_quarter_of_it(tmp_path):
    store = open_store(tmp_path)
    vectors = clustered(2600, seed=1)
    fill(store, vectors[:2000])
    fill(store, vectors[2000:2500], start=2000)
    assert files(tmp_path, "ivf") == ["vectors-chunks-2.ivf"] and store._ann_meta()[2] == 2000
    fill(store, vectors[2500:], start=2500)
    assert files(tmp_path, "ivf")[-1] == "vectors-chunks-3.ivf" and store._ann_meta()[2] == 2600
    assert ids(store.query(vectors[2550], 1)) == ["k2550"]


def test_below_the_size_no_index_and_exact_search(tmp_path):
    store = open_store(tmp_path)
    vectors = clustered(1500, seed=1)
    fill(store, vectors)
    assert files(tmp_path, "ivf") == [] and store._ann_meta() is None
    assert ids(store.query(vectors[10], 1)) == ["k10"]


def test_index_recall_against_exact_and_same_hit_shape(tmp_path, indexed):
    assert files(tmp_path, "ivf") == ["vectors-chunks-2.ivf"]
    exact = open_store(tmp_path, ann_min_rows=None)
    queries = clustered(40, seed=99)
    recall = np.mean([len(set(ids(indexed.query(q, 10))) & set(ids(exact.query(q, 10)))) / 10
                      for q in queries])
    assert recall >= 0.9
    hit, reference = indexed.query(queries[0], 1)[0], exact.query(queries[0], 1)[0]
    assert hit.keys() == reference.keys() == {"id", "score", "content", "file_path"}
    batch = indexed.query_batch(queries[:3], 5)
    assert [len(b) for b in batch] == [5, 5, 5]
    assert [b[0]["id"] for b in batch] == [indexed.query(q, 1)[0]["id"] for q in queries[:3]]
    scores = [h["score"] for h in batch[0]]
    assert scores == sorted(scores, reverse=True)


def test_every_stored_vector_finds_itself(tmp_path, indexed):
    vectors = clustered(3000, seed=1)
    default = open_store(tmp_path, ann_nprobe=None)  # vector_ivf.default_nprobe
    for row in range(0, 3000, 97):
        assert indexed.query(vectors[row], 1)[0]["id"] == f"k{row}"
        assert default.query(vectors[row], 1)[0]["id"] == f"k{row}"


def test_rows_added_after_the_build_are_found_by_another_connection(tmp_path, indexed):
    reader = open_store(tmp_path)
    assert ids(reader.query(clustered(1, seed=5)[0], 1))  # maps generation 2 and its index
    new = clustered(200, seed=2)
    fill(indexed, new, start=3000, batch=50)
    assert files(tmp_path, "ivf") == ["vectors-chunks-2.ivf"]  # the tail, not a rebuild
    assert (tmp_path / "vectors-chunks-2.lst").stat().st_size == 4 * (1000 + 200)  # a list per row
    for row in (0, 77, 199):
        assert reader.query(new[row], 1)[0]["id"] == f"k{3000 + row}"
    assert indexed.query(new[5], 1)[0]["id"] == "k3005"


def test_retrained_when_the_tail_outgrows_the_indexed_rows(tmp_path, indexed):
    assert indexed._ann_meta() == (2, vector_ivf.lists_for(2000), 2000)  # built at 2000 rows
    fill(indexed, clustered(3100, seed=3), start=3000)
    # at 5000 rows the 3000 appended since outnumber the 2000 indexed: a new generation
    assert indexed._ann_meta() == (3, vector_ivf.lists_for(5000), 5000)
    assert "vectors-chunks-3.ivf" in files(tmp_path, "ivf")
    assert indexed.query(clustered(3100, seed=3)[3000], 1)[0]["id"] == "k6000"


def test_a_retrain_moves_no_row_and_readers_of_either_generation_find_every_id(tmp_path, indexed):
    vectors = clustered(3000, seed=1)
    indexed.upsert({"k5": {"content": "again", "file_path": "f.md"}}, vectors=vectors[6:7])  # garbage row 5
    before = dict(indexed.db.query("SELECT id, row FROM vectors WHERE row IS NOT NULL"))
    reader = open_store(tmp_path)
    assert ids(reader.query(vectors[1], 1)) == ["k1"]  # maps generation 2 and its index
    new = clustered(3100, seed=3)
    fill(indexed, new, start=3000)
    # retrained at 4,001 file rows (2,001 appended since the build at 2,000), 4,000 of them live
    assert indexed._ann_meta() == (3, vector_ivf.lists_for(4000), 4001)
    after = dict(indexed.db.query("SELECT id, row FROM vectors WHERE row IS NOT NULL"))
    assert {k: after[k] for k in before} == before  # the retrain rewrote no entry
    assert (tmp_path / "vectors-chunks-3.f32").samefile(tmp_path / "vectors-chunks-2.f32")
    fresh = open_store(tmp_path)
    for store in (reader, indexed, fresh):
        for row in (0, 1500, 2999):
            assert ids(store.query(vectors[row], 1)) == [f"k{row}"]
        assert ids(store.query(new[3000], 1)) == ["k6000"]
        assert len(set(ids(store.query(vectors[5], 3)))) == 3  # the replaced row is no hit
    assert files(tmp_path, "f32") == ["vectors-chunks-2.f32", "vectors-chunks-3.f32"]


def test_an_index_of_an_older_store_is_searched_then_replaced(tmp_path, indexed):
    """A store indexed before version 2 had its file rewritten in list order and an index file
    without a copy of the vectors: it is searched as it is, and the next build replaces it."""
    vectors = clustered(3000, seed=1)
    index = IVFIndex.read(tmp_path / "vectors-chunks-2.ivf", DIM, *indexed._ann_meta()[1:])
    matrix = np.array(indexed._matrix())
    (tmp_path / "vectors-chunks-2.f32").unlink()  # lay generation 2 out as version 1 did
    tail = matrix[index.indexed_rows:]  # rows appended after the build stay after the lists
    (tmp_path / "vectors-chunks-2.f32").write_bytes(matrix[index.rowids].tobytes() + tail.tobytes())
    position = {int(row): n for n, row in enumerate(index.rowids.tolist())}
    rows = indexed.db.query("SELECT id, row FROM vectors WHERE row IS NOT NULL")
    with indexed.db.transaction():
        indexed.db.executemany("UPDATE vectors SET row = ? WHERE ns = 'chunks' AND id = ?",
                               [(position.get(row, row), key) for key, row in rows])
    (tmp_path / "vectors-chunks-2.ivf").write_bytes(
        vector_ivf.MAGIC + np.array([DIM, index.lists, 2000], dtype=np.int64).tobytes()
        + np.ascontiguousarray(index.centroids).tobytes() + np.asarray(index.offsets).tobytes())
    older = open_store(tmp_path)
    assert older._index(2, DIM)[0].rowids is None  # read as version 1
    for row in range(0, 3000, 151):
        assert ids(older.query(vectors[row], 1)) == [f"k{row}"]
    assert [h[0]["id"] for h in older.query_batch(vectors[[4, 40, 400]], 2)] == ["k4", "k40", "k400"]
    fill(older, clustered(3100, seed=3), start=3000)  # outgrows it: a version-2 index
    assert older._index(3, DIM)[0].rowids is not None
    for row in range(0, 3000, 151):
        assert ids(older.query(vectors[row], 1)) == [f"k{row}"]


def test_deleted_and_replaced_rows_are_never_hits_and_top_k_is_filled(tmp_path, indexed):
    vectors = clustered(3000, seed=1)
    target = vectors[0]
    exact = open_store(tmp_path, ann_min_rows=None)
    nearest = ids(exact.query(target, 60))
    indexed.delete(nearest[:40])
    indexed.upsert({nearest[40]: {"content": "moved"}}, vectors=-target[None, :])
    hits = indexed.query(target, 10)
    assert len(hits) == 10 and not set(ids(hits)) & set(nearest[:41])
    assert ids(hits) == ids(exact.query(target, 10))
    assert indexed.get_by_id(nearest[40])["content"] == "moved"
    assert indexed.query(-target, 1)[0]["id"] == nearest[40]


def test_rolled_back_rows_are_not_found(tmp_path, indexed):
    ghost = np.full((1, DIM), 3.0, dtype=np.float32)
    with pytest.raises(RuntimeError):
        with indexed.db.transaction():
            indexed.upsert({"ghost": {"content": "g"}}, vectors=ghost)
            raise RuntimeError("crash before commit")
    assert indexed.query(ghost[0], 1)[0]["id"] != "ghost"
    indexed.upsert({"real": {"content": "r"}}, vectors=ghost)
    assert ids(indexed.query(ghost[0], 2))[0] == "real"
    assert "ghost" not in ids(indexed.query(ghost[0], 5))


@pytest.mark.parametrize("damage", ["truncate", "delete", "garbage"])
def test_a_damaged_index_falls_back_to_exact_and_is_rebuilt(tmp_path, indexed, caplog, damage):
    path = tmp_path / "vectors-chunks-2.ivf"
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "delete":
        path.unlink()
    else:
        path.write_bytes(b"not an index at all" * 10)
    reader = open_store(tmp_path)
    vectors = clustered(3000, seed=1)
    with caplog.at_level(logging.WARNING):
        assert reader.query(vectors[42], 1)[0]["id"] == "k42"
    assert "searching exactly" in caplog.text
    exact = open_store(tmp_path, ann_min_rows=None)
    assert ids(reader.query(vectors[7], 10)) == ids(exact.query(vectors[7], 10))
    indexed.upsert({"new": {"content": "n"}}, vectors=vectors[:1] * -1)  # the writer rebuilds
    assert indexed._ann_meta()[0] == 3 and "vectors-chunks-3.ivf" in files(tmp_path, "ivf")
    assert reader.query(vectors[42], 1)[0]["id"] == "k42"
    assert reader._ivf[1] is not None  # searched by the rebuilt index


def test_without_faiss_the_search_stays_exact(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(vector_ivf, "faiss_available", lambda: False)
    store = open_store(tmp_path)
    with caplog.at_level(logging.WARNING):
        fill(store, clustered(2500, seed=1))
    assert files(tmp_path, "ivf") == [] and caplog.text.count("install faiss") == 1  # not per commit
    assert store.query(clustered(2500, seed=1)[9], 1)[0]["id"] == "k9"


def test_reindex_and_drop(tmp_path):
    store = open_store(tmp_path, ann_min_rows=500)
    vectors = clustered(400, seed=4)
    fill(store, vectors)
    assert store._ann_meta() is None
    store.ann_min_rows = 300
    store.reindex()
    assert store._ann_meta() == (2, vector_ivf.lists_for(400), 400)
    assert store.query(vectors[123], 1)[0]["id"] == "k123"
    store.drop()
    assert store._ann_meta() is None and store.query(vectors[0], 1) == []
    store.upsert({"a": {"content": "x"}}, vectors=vectors[:1])
    assert ids(store.query(vectors[0], 3)) == ["a"]  # generation 2's old index is not used


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(ValueError, match="ann_min_rows"):
        open_store(tmp_path, ann_min_rows=0)
    with pytest.raises(ValueError, match="ann_nprobe"):
        open_store(tmp_path, ann_nprobe=0)


def test_index_file_round_trip_and_mismatches(tmp_path):
    vectors = clustered(500, seed=6)
    live = np.setdiff1d(np.arange(500), [3, 77, 499])  # garbage rows are not listed
    index = IVFIndex.build(vectors, live, lists=10)
    assert sorted(index.rowids.tolist()) == live.tolist() and index.indexed_rows == 500
    path = tmp_path / "x.ivf"
    index.write(path, vectors)
    again = IVFIndex.read(path, DIM, 10, 500)
    np.testing.assert_array_equal(again.centroids, index.centroids)
    np.testing.assert_array_equal(again.rowids, index.rowids)
    for part in range(again.lists):  # each list is its rows (copied) nearest its centroid
        rows, block = again.listed(part, vectors)
        np.testing.assert_array_equal(block, vectors[rows])
        assert (np.argmax(block @ again.centroids.T, axis=1) == part).all()
    with pytest.raises(IndexFileError, match="describes"):
        IVFIndex.read(path, DIM, 10, 499)
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(IndexFileError, match="truncated"):
        IVFIndex.read(path, DIM, 10, 500)
    with pytest.raises(IndexFileError, match="cannot be read"):
        IVFIndex.read(tmp_path / "missing.ivf", DIM, 10, 500)


def test_tail_lists_after_a_crashed_writer(tmp_path):
    path = tmp_path / "t.lst"
    vector_ivf.append_lists(path, 0, np.array([1, 2]))
    vector_ivf.append_lists(path, 4, np.array([3]))  # rows 2 and 3: a crashed writer's, unlisted
    tail = TailLists(path, indexed_rows=100, lists=5)
    tail.refresh()
    assert tail.entries.tolist() == [1, 2, -1, -1, 3]
    assert sorted(tail.rows_in(np.array([2]), rows=107).tolist()) == [101, 102, 103, 105, 106]
    assert sorted(tail.rows_in(np.array([3]), rows=103).tolist()) == [102]  # beyond the mapped rows
    vector_ivf.append_lists(path, 2, np.array([4]))  # overwrites a garbage entry in place
    tail.refresh()
    assert tail.entries.tolist() == [1, 2, 4, -1, 3]


def test_tail_lists_refreshed_at_each_append_match_a_fresh_reading(tmp_path):
    path = tmp_path / "t.lst"
    kept = TailLists(path, indexed_rows=100, lists=5)
    appends = [(0, [1, 2]), (2, [4]), (5, [0, 9]), (7, [3, 3, 1]), (12, [2]), (10, [1])]
    # rows 3, 4, 10, 11: a crashed writer's (no entry, or NO_LIST); 10 is rewritten at the end
    for position, lists in appends:
        vector_ivf.append_lists(path, position, np.array(lists))
        kept.refresh()  # a writer's refresh after each commit scans only what was appended
        fresh = TailLists(path, indexed_rows=100, lists=5)
        fresh.refresh()
        rows = 100 + position + len(lists) + 1
        for wanted in ([0], [1], [2, 3], [4]):
            assert (sorted(kept.rows_in(np.array(wanted), rows=rows).tolist())
                    == sorted(fresh.rows_in(np.array(wanted), rows=rows).tolist())), (position, wanted)
        assert ({k: v.tolist() for k, v in kept.rows_by_list(rows=rows).items()}
                == {k: v.tolist() for k, v in fresh.rows_by_list(rows=rows).items()})


def test_a_search_racing_a_compaction_returns_the_right_ids(tmp_path, monkeypatch):
    writer = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(600, seed=8)
    fill(writer, vectors, batch=200)
    writer.delete([f"k{i}" for i in range(0, 300)])  # the rows after them move down at compaction
    reader = open_store(tmp_path, ann_min_rows=None)
    assert reader.query(vectors[450], 1)[0]["id"] == "k450"
    real = reader._records_at
    compacted = []

    def compaction_meanwhile(rows):
        if not compacted:
            compacted.append(writer.reindex())  # commits generation 2 between scoring and look-up
        return real(rows)

    monkeypatch.setattr(reader, "_records_at", compaction_meanwhile)
    assert [h["id"] for h in reader.query(vectors[450], 3)][0] == "k450"
    assert compacted and writer._file_meta()[0] == 2


def test_a_store_with_vectors_only_in_its_table_is_indexed_at_open(tmp_path):
    store = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(2500, seed=9)
    fill(store, vectors)
    with store.db.transaction():  # as a store copied from PostgreSQL: no file, no rows
        store.db.execute("UPDATE vectors SET row = NULL")
        store.db.execute("DELETE FROM meta WHERE name LIKE 'vector_%'")
    store.db.close()
    for path in tmp_path.glob("vectors-*"):
        path.unlink()
    reopened = open_store(tmp_path)
    assert reopened._ann_meta() == (1, vector_ivf.lists_for(2500), 2500)
    assert reopened.query(vectors[1234], 1)[0]["id"] == "k1234"


READER = """
import json, sys
import numpy as np
from lightrag.components.storage.mapped_vector import MappedVectorStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
store = MappedVectorStorage(SQLiteDatabase(sys.argv[1]), namespace="chunks", ann_min_rows=2000,
                            ann_nprobe=6, cosine_threshold=-1.0)
for line in sys.stdin:
    hits = store.query(np.array(json.loads(line), dtype=np.float32), 1)
    print(json.dumps([hits[0]["id"] if hits else None, store._metas()[1]]), flush=True)
"""


def test_a_reader_process_sees_each_commit_across_tail_appends_and_rebuilds(tmp_path, indexed):
    reader = subprocess.Popen([sys.executable, "-c", READER, str(tmp_path / "store.sqlite3")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(vector):
        reader.stdin.write(json.dumps(vector.tolist()) + "\n")
        reader.stdin.flush()
        return json.loads(reader.stdout.readline())

    try:
        old = clustered(3000, seed=1)
        assert ask(old[17])[0] == "k17"  # the reader maps generation 2 and its index
        new = clustered(3100, seed=4)
        fill(indexed, new[:100], start=3000)  # appended to the tail
        assert ask(new[42]) == ["k3042", [2, vector_ivf.lists_for(2000), 2000]]
        fill(indexed, new[100:], start=3100)  # the tail outgrows the index: generation 3
        assert indexed._ann_meta() == (3, vector_ivf.lists_for(4100), 4100)  # rebuilt at 4100 rows
        assert ask(new[2500]) == ["k5500", [3, vector_ivf.lists_for(4100), 4100]]
        indexed.delete(["k17"])
        assert ask(old[17])[0] != "k17"
    finally:
        reader.stdin.close()
        reader.wait(30)


@pytest.mark.parametrize("nprobe", [None, 1, 3])
def test_a_batch_of_searches_finds_what_each_search_finds(tmp_path, indexed, nprobe):
    vectors = clustered(3000, seed=1)
    fill(indexed, clustered(300, seed=4), start=3000, batch=100)  # tail rows after the build
    indexed.delete([f"k{i}" for i in range(0, 3000, 7)])  # garbage rows among the best
    indexed.upsert({"k5": {"content": "moved"}}, vectors=-vectors[5][None, :])
    queries = np.concatenate([vectors[:40], clustered(40, seed=8), -vectors[5][None, :]])
    batch = indexed.query_batch(queries, 6, nprobe=nprobe)
    one_by_one = [indexed._search(indexed._matrix(indexed._file_meta()), indexed._ann_meta(),
                                  q[None, :] / np.linalg.norm(q), 6, nprobe)[0] for q in queries]
    assert [ids(b) for b in batch] == [ids(o) for o in one_by_one]
    assert np.allclose([h["score"] for b in batch for h in b],
                       [h["score"] for o in one_by_one for h in o], atol=1e-5)
    assert batch[-1][0]["id"] == "k5" and batch[-1][0]["content"] == "moved"
    assert all(len(b) == 6 for b in batch)


def test_tail_rows_grouped_by_list(tmp_path):
    path = tmp_path / "t.lst"
    vector_ivf.append_lists(path, 0, np.array([1, 2, 1]))
    vector_ivf.append_lists(path, 5, np.array([7, 2]))  # rows 3, 4 crashed; list 7 is no list
    tail = TailLists(path, indexed_rows=100, lists=5)
    tail.refresh()
    grouped = {k: sorted(v.tolist()) for k, v in tail.rows_by_list(rows=109).items()}
    assert grouped == {1: [100, 102], 2: [101, 106], None: [103, 104, 105, 107, 108]}
    for lists in ([1], [2], [1, 2], [3]):
        expected = sorted(tail.rows_in(np.array(lists), rows=109).tolist())
        got = sorted(r for k in [*lists, None] for r in grouped.get(k, []))
        assert got == expected


@pytest.mark.parametrize("shared", [True, False])
def test_a_batch_of_searches_scores_the_same_candidates_as_searches_one_by_one(tmp_path, shared):
    """Queries sharing their lists (scored together) or not (scored one by one), with rows
    appended after the index was built (in lists, and a crashed writer's of no list)."""
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(600, 8)).astype(np.float32)
    IVFIndex.build(matrix, np.arange(500), lists=40, file_rows=500).write(tmp_path / "x.ivf", matrix)
    index = IVFIndex.read(tmp_path / "x.ivf", 8, 40, 500)
    path = tmp_path / "t.lst"
    vector_ivf.append_lists(path, 0, vector_ivf.assign(index.centroids, matrix[500:590]))
    tail = TailLists(path, indexed_rows=500, lists=40)  # rows 590-599: no entry (crashed writer)
    tail.refresh()
    if shared:  # four near queries: the same three best lists
        queries = (rng.normal(size=8) + 0.01 * rng.normal(size=(4, 8))).astype(np.float32)
    else:  # four centroids: each its own best list
        queries = np.array(index.centroids[[0, 10, 20, 30]], dtype=np.float32)
    probed = index.probe(queries, 3 if shared else 1)
    assert (len(set(probed.ravel().tolist())) > vector_ivf.SHARED_LISTS_SPLIT * probed.size) is not shared
    batch = index.candidates_batch(matrix, tail, queries, probed)
    for query, probes, (rows, scores) in zip(queries, probed, batch):
        alone_rows, alone_scores = index.candidates(matrix, tail, query, probes)
        assert sorted(rows.tolist()) == sorted(alone_rows.tolist())
        assert set(range(590, 600)) <= set(rows.tolist())
        by_row = dict(zip(rows.tolist(), scores.tolist()))
        assert np.allclose([by_row[r] for r in alone_rows.tolist()], alone_scores, atol=1e-5)
        assert np.allclose(scores, matrix[rows] @ query, atol=1e-5)


@pytest.mark.parametrize("clustered_by_id", [True, False])
def test_an_older_stores_vector_rows_table_is_folded_into_vectors_at_open(tmp_path, clustered_by_id):
    """Stores of earlier versions kept the file rows in a table ``vector_rows`` (clustered by id,
    or before that a rowid table): opening moves them into ``vectors.row`` once."""
    store = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(300, seed=12)
    fill(store, vectors, batch=100)
    store.upsert({"k5": {"content": "again", "file_path": "f.md"}}, vectors=vectors[6:7])  # garbage
    store.delete(["k7"])
    db = store.db
    before = sorted(db.query("SELECT ns, id, row FROM vectors WHERE row IS NOT NULL"))
    with db.transaction():  # the layout of the earlier versions
        db.execute("CREATE TABLE vector_rows (ns TEXT NOT NULL, id TEXT NOT NULL, row INTEGER NOT NULL, "
                   f"PRIMARY KEY (ns, id)){' WITHOUT ROWID' if clustered_by_id else ''}")
        db.execute("INSERT INTO vector_rows SELECT ns, id, row FROM vectors WHERE row IS NOT NULL")
        db.execute("CREATE INDEX vector_rows_by_row ON vector_rows (ns, row)")
        db.execute("DROP INDEX vectors_by_row")
        db.execute("ALTER TABLE vectors DROP COLUMN row")
    db.close()
    reopened = open_store(tmp_path, ann_min_rows=None)
    assert not reopened.db.query("SELECT name FROM sqlite_master WHERE name LIKE 'vector_rows%'")
    assert sorted(reopened.db.query("SELECT ns, id, row FROM vectors WHERE row IS NOT NULL")) == before
    assert reopened.query(vectors[123], 1)[0]["id"] == "k123"
    assert reopened.get_by_id("k7") is None and "k8" in reopened.get_vectors_by_ids(["k8"])
    assert reopened._garbage() == 2  # k5's first row and k7's row
    fill(reopened, clustered(50, seed=13), start=300)  # writes go on in the new layout
    assert reopened.query(clustered(50, seed=13)[10], 1)[0]["id"] == "k310"
    assert open_store(tmp_path, ann_min_rows=None).query(vectors[6], 1)[0]["id"] in ("k5", "k6")


def test_a_large_rebuild_rewrites_its_rows_with_the_row_index_rebuilt(indexed, monkeypatch):
    """A rebuild of most of the table drops the index by row and builds it again; every id still
    finds its vector and every searched row its id, in this and another connection."""
    from lightrag.components.storage import vector_generations

    monkeypatch.setattr(vector_generations, "REINDEX_ROWS_FROM", 100)
    vectors = clustered(3000, seed=1)
    indexed.upsert({"late": {"content": "late", "file_path": "f.md"}}, vectors=vectors[7:8] * 1.01)
    indexed.reindex()
    db = indexed.db
    assert db.query("SELECT name FROM sqlite_master WHERE name = 'vectors_by_row'")
    for key in ("k0", "k1234", "k2999", "late"):
        row = indexed.get_vectors_by_ids([key])[key]
        expected = vectors[7] if key == "late" else vectors[int(key[1:])]
        assert np.allclose(row, expected / np.linalg.norm(expected), atol=1e-5)
    other = open_store(db.path.parent)
    assert ids(other.query(vectors[1234], 1)) == ["k1234"]
    assert other.get_by_id("k2999")["file_path"] == "f.md"


def test_a_failed_large_rebuild_keeps_the_row_index(indexed, monkeypatch):
    from lightrag.components.storage import vector_generations

    monkeypatch.setattr(vector_generations, "REINDEX_ROWS_FROM", 100)

    def broken(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(indexed, "_append", broken)
    with pytest.raises(OSError, match="disk gone"):
        indexed.reindex()
    monkeypatch.undo()
    assert indexed.db.query("SELECT name FROM sqlite_master WHERE name = 'vectors_by_row'")
    assert ids(open_store(indexed.db.path.parent).query(clustered(3000, seed=1)[42], 1)) == ["k42"]


@pytest.fixture
def gated_builds(monkeypatch):
    """Index builds of any size run in a thread that waits for ``gate`` before training."""
    import threading
    from types import SimpleNamespace

    from lightrag.components.storage import vector_index_build

    gate = threading.Event()

    def build(*args, **kwargs):
        assert gate.wait(30)
        return IVFIndex.build(*args, **kwargs)

    monkeypatch.setattr(vector_index_build, "BACKGROUND_BUILD_ROWS", 1)
    monkeypatch.setattr(vector_index_build, "IVFIndex", SimpleNamespace(build=build))
    return gate


def test_a_large_retrain_runs_beside_the_writer_and_a_later_commit_takes_it(tmp_path, indexed, gated_builds):
    vectors, more = clustered(3000, seed=1), clustered(1200, seed=3)
    before = dict(indexed.db.query("SELECT id, row FROM vectors WHERE row IS NOT NULL"))
    fill(indexed, more[:1100], start=3000)  # at 4,100 rows the tail outgrows the index of 2,000
    build = indexed._build
    assert build is not None and not build.done and build.file_rows == 4000
    fill(indexed, more[1100:], start=4100, batch=50)  # the writer goes on with the old index
    indexed.delete(["k10"])
    indexed.upsert({"k20": {"content": "moved", "file_path": "f.md"}}, vectors=-vectors[7:8])
    assert indexed._ann_meta()[0] == 2 and ids(indexed.query(more[1150], 1)) == ["k4150"]
    gated_builds.set()
    build.join(30)
    assert build.index is not None and files(tmp_path, "ivf.build") == ["vectors-chunks-2.ivf.build"]
    indexed.upsert({"last": {"content": "last", "file_path": "f.md"}}, vectors=vectors[:1] * -1)
    assert indexed._build is None and indexed._ann_meta() == (3, build.index.lists, 4000)
    assert files(tmp_path, "ivf.build") == [] and files(tmp_path, "ivf") == ["vectors-chunks-2.ivf",
                                                                             "vectors-chunks-3.ivf"]
    after = dict(indexed.db.query("SELECT id, row FROM vectors WHERE row IS NOT NULL"))
    assert {k: after[k] for k in before if k not in ("k10", "k20")} == {
        k: v for k, v in before.items() if k not in ("k10", "k20")}
    for store in (indexed, open_store(tmp_path)):
        for row in (0, 1234, 2999):
            assert ids(store.query(vectors[row], 1)) == [f"k{row}"]
        for row in (0, 1099, 1100, 1150):  # before and after the build's snapshot
            assert ids(store.query(more[row], 1)) == [f"k{3000 + row}"]
        assert "k10" not in ids(store.query(vectors[10], 5))
        assert ids(store.query(-vectors[7], 1)) == ["k20"] and store.get_by_id("k20")["content"] == "moved"
        assert ids(store.query(-vectors[0], 1)) == ["last"]


def test_a_writer_that_finishes_its_build_leaves_the_next_writer_nothing_to_build(
        tmp_path, indexed, gated_builds):
    more = clustered(1100, seed=3)
    fill(indexed, more, start=3000)  # the index of 2,000 rows is outgrown: a build starts
    assert indexed._build is not None and indexed._ann_meta()[0] == 2
    gated_builds.set()
    assert indexed.finish_index_build() is True  # what GraphIndex.close runs
    assert indexed._build is None and indexed._ann_meta() == (3, indexed._ann_meta()[1], 4000)
    assert files(tmp_path, "ivf.build") == [] and indexed.finish_index_build() is False
    reopened = open_store(tmp_path)
    fill(reopened, clustered(10, seed=4), start=4100)  # the next writer's first commit
    assert reopened._build is None and reopened._ann_meta()[0] == 3
    assert ids(reopened.query(more[700], 1)) == ["k3700"]


def test_a_build_overtaken_by_a_compaction_is_dropped(tmp_path, indexed, gated_builds):
    fill(indexed, clustered(1100, seed=3), start=3000)
    build = indexed._build
    assert build is not None
    gated_builds.set()
    indexed.reindex()  # a compaction renumbers the rows: it waits for the build and drops it
    assert indexed._build is None and files(tmp_path, "ivf.build") == []
    fill(indexed, clustered(10, seed=4), start=4100)
    assert indexed._ann_meta()[0] == 3 and indexed._build is None
    assert ids(indexed.query(clustered(1100, seed=3)[500], 1)) == ["k3500"]


def test_a_failed_background_build_is_done_inline(tmp_path, indexed, monkeypatch, caplog):
    from types import SimpleNamespace

    from lightrag.components.storage import vector_index_build

    def broken(*args, **kwargs):
        raise MemoryError("no room for k-means")

    monkeypatch.setattr(vector_index_build, "BACKGROUND_BUILD_ROWS", 1)
    monkeypatch.setattr(vector_index_build, "IVFIndex", SimpleNamespace(build=broken))
    with caplog.at_level(logging.WARNING):
        fill(indexed, clustered(1100, seed=3), start=3000)
        indexed._build.join(30)
        fill(indexed, clustered(10, seed=4), start=4100)
    assert "no room for k-means" in caplog.text
    assert indexed._build is None and indexed._ann_meta()[0] == 3  # built in the commit instead
    assert ids(open_store(tmp_path).query(clustered(10, seed=4)[3], 1)) == ["k4103"]


KILLED_WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
import test_storage_mapped_ann as t
from lightrag.components.storage import vector_index_build, vector_ivf
from pathlib import Path

real = vector_ivf.IVFIndex.build

class Slow:
    @staticmethod
    def build(*args, **kwargs):
        index = real(*args, **kwargs)
        Path(sys.argv[1], "built").write_text("x")
        time.sleep(60)  # killed here, before the index file is written

vector_index_build.BACKGROUND_BUILD_ROWS = 1
vector_index_build.IVFIndex = Slow
store = t.open_store(Path(sys.argv[1]))
t.fill(store, t.clustered(1100, seed=3), start=3000)
print("building", flush=True)
time.sleep(60)
"""


def test_a_writer_killed_mid_build_leaves_a_store_that_reloads_and_builds_again(tmp_path, indexed):
    import os
    import signal
    import time

    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(tmp_path), os.path.dirname(__file__)],
                              stdout=subprocess.PIPE, text=True)
    try:  # wait (bounded) for the build to be trained, then kill the writer mid-build
        for _ in range(600):
            if (tmp_path / "built").exists() or writer.poll() is not None:
                break
            time.sleep(0.1)
        assert writer.poll() is None and (tmp_path / "built").exists(), "the writer never reached its build"
        writer.send_signal(signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait(30)
    assert writer.stdout.read().strip() == "building"
    cut = vector_ivf.MAGIC_COPY + bytes(99)  # as if the build's file was cut mid-write
    (tmp_path / "vectors-chunks-2.ivf.build").write_bytes(cut)
    reopened = open_store(tmp_path)
    assert reopened._ann_meta() == (2, vector_ivf.lists_for(2000), 2000)  # the old index serves
    more = clustered(1100, seed=3)
    for row in (0, 777, 1099):  # the killed writer's commits, found through the old index's tail
        assert ids(reopened.query(more[row], 1)) == [f"k{3000 + row}"]
    fill(reopened, clustered(10, seed=4), start=4100)  # still outgrown: built again, inline here
    assert reopened._ann_meta()[0] == 3 and files(tmp_path, "ivf.build") == []
    assert ids(open_store(tmp_path).query(more[500], 1)) == ["k3500"]


def test_the_file_check_names_a_damaged_index_copy_and_rows_past_the_file(tmp_path, indexed):
    assert indexed.verify_files() == []
    path = tmp_path / "vectors-chunks-2.ivf"
    data = bytearray(path.read_bytes())
    data[-4 * DIM * 500:] = bytes(4 * DIM * 500)  # the last 500 copied vectors zeroed
    path.write_bytes(bytes(data))
    problems = open_store(tmp_path).verify_files()
    assert len(problems) == 1 and "sampled index rows differ from the file" in problems[0]
    path.write_bytes(bytes(data[:-8]))
    assert "truncated" in open_store(tmp_path).verify_files()[0]
    with indexed.db.transaction():
        indexed.db.execute("UPDATE vectors SET row = 99999 WHERE ns = 'chunks' AND id = 'k3'")
    assert any("1 ids point past the end of its file" in p for p in open_store(tmp_path).verify_files())


def test_replaced_and_deleted_vectors_are_counted_as_garbage_once(tmp_path):
    """Every file row no id points to any more is garbage (what triggers a compaction): a
    replaced vector's old row, a deleted one's row, counted once however the writes interleave
    in a transaction; a rolled-back transaction counts nothing."""
    store = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(20, seed=4)
    fill(store, vectors[:10])
    db = store.db
    with db.transaction():
        store.upsert({"k1": {"content": "again"}}, vectors=vectors[10:11])  # k1's row 1: garbage
        store.delete(["k1"])  # its new vector was never written: nothing more
        store.delete(["k2"])  # row 2
        store.upsert({"k2": {"content": "back"}}, vectors=vectors[11:12])  # a new id again
        store.upsert({"new": {"content": "new"}}, vectors=vectors[12:13])
        store.delete(["new", "never-stored"])
    assert store._garbage() == 2
    with pytest.raises(RuntimeError):
        with db.transaction():
            store.delete(["k3"])
            store.upsert({"k4": {"content": "x"}}, vectors=vectors[13:14])
            raise RuntimeError("abort")
    with db.transaction():
        store.upsert({"k5": {"content": "x"}}, vectors=vectors[14:15])
    assert store._garbage() == 3  # the rolled-back delete and replacement counted nothing
    reader = open_store(tmp_path, ann_min_rows=None)
    assert reader.get_by_id("k1") is None and reader.get_by_id("k2")["content"] == "back"
    live = dict(zip(*reader.rows()))
    assert sorted(live) == sorted([f"k{i}" for i in range(10) if i != 1])
    assert np.allclose(live["k2"], vectors[11] / np.linalg.norm(vectors[11]), atol=1e-5)
    assert len(db.query("SELECT row FROM vectors WHERE row IS NOT NULL")) == 9


def test_an_upsert_that_keeps_the_vector_keeps_the_file_row(tmp_path):
    """Re-embedding an entity whose text did not change yields the same vector: its record is
    rewritten, but the file gains no row and no garbage (a different vector still moves)."""
    store = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(10, seed=5)
    fill(store, vectors)
    rows = dict(store.db.query("SELECT id, row FROM vectors"))
    size = store._matrix().shape[0]
    store.upsert({"k3": {"content": "k3 again", "file_path": "g.md"},
                  "k4": {"content": "k4 moved", "file_path": "g.md"}},
                 vectors=np.stack([vectors[3], vectors[6]]))
    after = dict(store.db.query("SELECT id, row FROM vectors"))
    assert after["k3"] == rows["k3"] and after["k4"] == size
    assert store._matrix().shape[0] == size + 1 and store._garbage() == 1
    reader = open_store(tmp_path, ann_min_rows=None)
    hit = reader.query(vectors[3], 1)[0]
    assert (hit["id"], hit["content"], hit["file_path"]) == ("k3", "k3 again", "g.md")
    assert np.allclose(reader.get_vectors_by_ids(["k4"])["k4"], vectors[6] / np.linalg.norm(vectors[6]),
                       atol=1e-6)


def test_a_vector_equal_but_for_its_last_bits_keeps_the_row_and_its_bytes(tmp_path):
    """A unit vector normalised again (or composed from a stored, normalised part) differs in
    its last bits: the same vector for the file, whose bytes the record keeps too."""
    store = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(5, seed=8)
    fill(store, vectors)
    stored = store.get_vectors_by_ids(["k2"])["k2"]
    nudged = stored + np.float32(2e-7) * np.sign(stored)
    assert not np.array_equal(nudged, stored)
    row = dict(store.db.query("SELECT id, row FROM vectors"))["k2"]
    store.upsert({"k2": {"content": "k2 again"}}, vectors=nudged[None, :])
    assert dict(store.db.query("SELECT id, row FROM vectors"))["k2"] == row and store._garbage() == 0
    blob = store.db.query("SELECT vector FROM vectors WHERE id = 'k2'")[0][0]
    assert np.frombuffer(bytes(blob), dtype=np.float32).tobytes() == stored.tobytes()
    far = stored.copy()
    far[0] += 1e-3
    store.upsert({"k2": {"content": "k2 moved"}}, vectors=far[None, :])
    assert dict(store.db.query("SELECT id, row FROM vectors"))["k2"] != row and store._garbage() == 1


def test_tail_rows_of_a_growing_tail_match_a_direct_reading(tmp_path):
    """A search's tail rows (grouped by list once, appended entries matched one by one until
    they are many) are those a direct reading of the entries gives, across regroupings."""
    path = tmp_path / "t.lst"
    rng = np.random.default_rng(3)
    tail = TailLists(path, indexed_rows=1000, lists=40)
    position = 0
    for size in (3000, 2000, 5000, 900, 12000):
        lists = rng.integers(0, 40, size)
        lists[rng.random(size) < 0.01] = vector_ivf.NO_LIST
        vector_ivf.append_lists(path, position, lists)
        position += size
        tail.refresh()
        entries = np.fromfile(path, dtype=np.int32)
        for wanted in ([0], [5, 17, 39], list(range(40))):
            rows = 1000 + position - 7  # a reader whose matrix is a little shorter
            seen = entries[:position - 7]
            expected = 1000 + np.flatnonzero(np.isin(seen, wanted) | (seen < 0))
            assert tail.rows_in(np.array(wanted), rows=rows).tolist() == expected.tolist()
            grouped = tail.rows_by_list(rows=rows, lists=wanted)
            assert sorted(r for k in [*wanted, None] for r in grouped.get(k, np.zeros(0)).tolist()) \
                == expected.tolist()


def test_an_upsert_of_the_stored_record_and_vector_writes_nothing(tmp_path):
    store = open_store(tmp_path, ann_min_rows=None)
    vectors = clustered(6, seed=4)
    fill(store, vectors)
    conn = store.db._conn
    before = conn.total_changes
    store.upsert({"k1": {"content": "c1", "file_path": "f.md"}, "k2": {"content": "c2", "file_path": "f.md"}},
                 vectors=vectors[1:3] * 1.5)  # the same direction: the same unit vector
    assert conn.total_changes - before <= 1  # the commit counter every transaction bumps
    before = conn.total_changes
    store.upsert({"k1": {"content": "c1", "file_path": "g.md"},  # a new record
                  "k2": {"content": "c2", "file_path": "f.md"}}, vectors=vectors[[1, 3]])  # a new vector
    assert conn.total_changes - before >= 3  # two records, their rows, the counter
    assert store.get_by_id("k1")["file_path"] == "g.md"
    assert ids(store.query(vectors[3], 2)) == ["k3", "k2"] and store.query(vectors[1], 1)[0]["id"] == "k1"
    reopened = open_store(tmp_path, ann_min_rows=None)
    unit = vectors[3] / np.linalg.norm(vectors[3])
    assert np.allclose(reopened.get_vectors_by_ids(["k2"])["k2"], unit, atol=1e-6)


def test_a_transaction_reads_its_own_writes_and_ends_as_separate_transactions_would(tmp_path):
    """Within one write transaction the store answers from what it read and wrote (each stored
    record read once): reads see the transaction's upserts and deletes, a compaction in the
    middle moves the rows it knew, and the end state is that of the same writes committed one
    by one."""
    vectors = clustered(40, seed=11)
    steps = [("upsert", {"k1": "one"}, 20), ("get", ["k1", "k2", "zz"]), ("delete", ["k2"]),
             ("upsert", {"k2": "two back", "k3": "three"}, 22), ("reindex",),
             ("upsert", {"k1": "one again", "k4": "four"}, 24), ("get", ["k1", "k2", "k4"]),
             ("delete", ["k4", "never"]), ("upsert", {"k5": "five"}, 5), ("get", ["k5", "k4"])]

    def run(store, one_transaction):
        seen = []
        db = store.db
        with db.transaction() if one_transaction else _nothing():
            for step in steps:
                if step[0] == "upsert":
                    records, first = step[1], step[2]
                    store.upsert({k: {"content": v, "file_path": "f.md"} for k, v in records.items()},
                                 vectors=vectors[first:first + len(records)])
                elif step[0] == "delete":
                    store.delete(step[1])
                elif step[0] == "reindex":
                    store.reindex()
                else:
                    seen.append([r and r["content"] for r in store.get_by_ids(step[1])])
        return seen

    results = []
    for one_transaction, folder in ((True, tmp_path / "one"), (False, tmp_path / "many")):
        store = open_store(folder, ann_min_rows=None)
        fill(store, vectors[:10])
        seen = run(store, one_transaction)
        reader = open_store(folder, ann_min_rows=None)
        live = dict(zip(*reader.rows()))
        assert reader._garbage() == reader._matrix().shape[0] - len(live)  # every dead row counted
        assert reader.verify_files() == []
        results.append((seen, {k: np.round(v, 5).tolist() for k, v in live.items()},
                        [r and r["content"] for r in reader.get_by_ids(sorted(live))]))
    assert results[0][0] == [["one", "c2", None], ["one again", "two back", "four"], ["five", None]]
    assert results[0] == results[1]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_vectors_read_as_one_matrix_are_the_vectors_read_by_id(tmp_path):
    """``get_vector_matrix`` (a query's 2-4k chunk vectors in one gather) returns what
    ``get_vectors_by_ids`` returns, in the ids' order: committed rows, a writer's own pending
    and deleted ids, unknown ids left out; the base class's version agrees on another store."""
    from lightrag.components.storage.base import BaseVectorStorage

    store = open_store(tmp_path)
    vectors = clustered(50, seed=21)
    fill(store, vectors)

    def agree(asked):
        found, matrix = store.get_vector_matrix(asked)
        by_id = store.get_vectors_by_ids(asked)
        assert found == [i for i in dict.fromkeys(asked) if i in by_id]
        if found:
            assert np.array_equal(matrix, np.stack([by_id[i] for i in found]))
        else:
            assert matrix.size == 0
        assert BaseVectorStorage.get_vector_matrix(store, asked)[0] == found
        return found, matrix

    found, matrix = agree(["k7", "gone", "k3", "k7"])
    assert found == ["k7", "k3"]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(matrix, unit[[7, 3]], atol=1e-6)
    assert agree(["gone"])[0] == []
    with store.db.transaction():
        store.upsert({"k3": {"content": "new", "file_path": "f.md"},
                      "k60": {"content": "x", "file_path": "f.md"}}, vectors=vectors[[10, 11]])
        store.delete(["k7"])
        found, matrix = agree(["k60", "k7", "k3", "k1"])
        assert found == ["k60", "k3", "k1"]
        assert np.allclose(matrix[1], unit[10], atol=1e-6)
