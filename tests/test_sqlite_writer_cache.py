"""The embedded store's writer keeps ``writer_cache_mb`` of database pages (SQLite's own default
is 2 MB): set through the store's arguments, the same answers with any size, a bad value
refused by name."""

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.storage import SQLiteDatabase
from lightrag.components.storage.sql_db import DEFAULT_WRITER_CACHE_MB

DOCS = ["Saturn has a moon named Titan. Cassini visited Saturn.",
        "Voyager 1 photographed Titan in 1980. Jupiter has a moon named Io."]


def _writer_cache_kb(rag):
    return -rag.index.db._conn.execute("PRAGMA cache_size").fetchone()[0]


def test_the_writer_cache_is_set_and_answers_do_not_depend_on_it(tmp_path):
    small = fake_graph_rag(tmp_path / "small", embedding_dim=64, storage_kwargs={"writer_cache_mb": 1})
    default = fake_graph_rag(tmp_path / "default", embedding_dim=64)
    assert _writer_cache_kb(small) == 1024
    assert _writer_cache_kb(default) == 1024 * DEFAULT_WRITER_CACHE_MB
    for rag in (small, default):
        rag.insert(DOCS, ids=["d1", "d2"])
    contexts = [[rag.query("Which moon did Voyager photograph?", mode=m, only_need_context=True).content
                 for m in ("naive", "local", "mix")] for rag in (small, default)]
    assert contexts[0] == contexts[1]
    assert "Voyager 1 photographed Titan" in contexts[0][0]


@pytest.mark.parametrize("bad", [0, -5, 1.5, "64MB", True])
def test_a_bad_writer_cache_is_refused_by_name(tmp_path, bad):
    with pytest.raises(ValueError, match="writer_cache_mb"):
        SQLiteDatabase(tmp_path / "s.sqlite3", writer_cache_mb=bad)
