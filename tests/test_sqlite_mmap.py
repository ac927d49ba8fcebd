"""The embedded store can read its database through a memory map (``mmap_size``): the same
answers and the same file with it or without it, and a bad value is refused by name."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.storage import SQLiteDatabase

DOCS = ["Saturn has a moon named Titan. Cassini visited Saturn.",
        "Voyager 1 photographed Titan in 1980. Jupiter has a moon named Io."]
MAPPED = {"mmap_size": 2**31}


def _contexts(rag):
    return [rag.query(q, mode=m, only_need_context=True).content
            for q in ("Which moon did Voyager photograph?", "What orbits Saturn?")
            for m in ("naive", "local", "mix")]


def test_a_store_answers_the_same_with_and_without_the_memory_map(tmp_path):
    mapped = fake_graph_rag(tmp_path / "mapped", embedding_dim=64, storage_kwargs=MAPPED)
    plain = fake_graph_rag(tmp_path / "plain", embedding_dim=64)
    for rag in (mapped, plain):
        rag.insert(DOCS, ids=["d1", "d2"])
    assert _contexts(mapped) == _contexts(plain)
    assert "Titan" in str(_contexts(mapped)[0])
    # a store written through the map reopens without it, unchanged
    before = _contexts(mapped)
    mapped.close()
    reopened = fake_graph_rag(tmp_path / "mapped", embedding_dim=64)
    assert _contexts(reopened) == before
    assert reopened.index.verify() == []


def test_another_process_reads_a_commit_made_through_the_map(tmp_path):
    rag = fake_graph_rag(tmp_path, embedding_dim=64, storage_kwargs=MAPPED)
    rag.insert(DOCS[:1], ids=["d1"])
    rag.query("What orbits Saturn?", mode="local", only_need_context=True)  # maps the file here
    writer = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from graph_fakes import fake_graph_rag
        rag = fake_graph_rag({str(tmp_path)!r}, embedding_dim=64, storage_kwargs={MAPPED!r})
        rag.insert({DOCS[1:]!r}, ids=["d2"])
    """)
    subprocess.run([sys.executable, "-c", writer], check=True, timeout=120)
    context = rag.query("Which moon did Voyager photograph?", mode="naive", only_need_context=True)
    assert "Voyager 1 photographed Titan" in context.content
    assert rag.index.verify() == []


@pytest.mark.parametrize("bad", [-1, 1.5, "2GB", True])
def test_a_bad_mmap_size_is_refused_by_name(tmp_path, bad):
    with pytest.raises(ValueError, match="mmap_size"):
        SQLiteDatabase(tmp_path / "s.sqlite3", mmap_size=bad)
