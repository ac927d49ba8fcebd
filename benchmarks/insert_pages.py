"""Which tables and indexes an insert writes: the write-ahead-log frames of one batch of
documents inserted into a copy of a scale store, mapped to their B-trees.

An insert's cost at 1M chunks is mostly the B-tree pages it writes: each row it adds or changes
lands on a leaf of its own in a multi-million-row index, where at 10k chunks many rows share a
leaf. Counting the frames per B-tree says which table or index an optimisation should remove or
shrink (``docs/benchmarks.md``, twenty-first session: the ``doc_items`` item index was the largest).

The store (one built by ``benchmarks/scale.py``) is copied to a temporary folder next to it; the
copy's background checkpoints are held off so that every frame the batch writes stays in the
log; after the insert, each frame's page number is mapped to its table or index through SQLite's
``dbstat`` table (a pass over the whole file: seconds at 1M chunks). The copy is deleted.

Usage::

    python benchmarks/insert_pages.py /tmp/scale/n1000000 [--documents 100] [--offset 0]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402

from lightrag.components.storage import wal_checkpointer  # noqa: E402

WAL_HEADER, FRAME_HEADER = 32, 24


def wal_pages(wal: Path) -> List[int]:
    """The page number of each frame of a write-ahead log, in log order."""
    data = wal.read_bytes()
    if len(data) < WAL_HEADER:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    pages, offset = [], WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(data):
        pages.append(struct.unpack(">I", data[offset:offset + 4])[0])
        offset += FRAME_HEADER + page_size
    return pages


def insert_batch(store: Path, documents: int, offset: int) -> List[int]:
    """Insert ``documents`` new documents of the store's corpus into ``store`` (a copy) with its
    checkpoints held off; returns the log's page numbers."""
    database = store / "lightrag.sqlite3"
    with sqlite3.connect(database) as conn:  # the log starts empty
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    corpus = scale.Corpus.of_store(str(store))
    rag = scale.make_rag(str(store), corpus.dim)
    rag.query("Who did anyone meet?", mode="naive", only_need_context=True)  # files mapped
    checkpointer = rag.index.db._checkpointer  # a diagnostic: no pass may copy the log away
    if checkpointer is not None:
        checkpointer.every = 10**9
    wal_checkpointer.BIG_COMMIT_ROWS = 10**12
    with sqlite3.connect(database) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    base = corpus.n_chunks + 4 * offset
    docs = [" ".join(corpus.chunk_text(base + 4 * d + k) for k in range(4)) for d in range(documents)]
    result = rag.insert(docs, ids=[f"pages-{base}-{d}" for d in range(documents)])
    if result.failed:
        raise RuntimeError(f"insert failed: {list(result.failed.items())[:2]}")
    return wal_pages(database.with_name("lightrag.sqlite3-wal"))


def by_btree(database: Path, pages: List[int]) -> List[Tuple[str, int, int]]:
    """``(table or index, frames, distinct pages)``, most frames first (pages the database file
    did not hold yet are ``(new pages)``)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        owner: Dict[int, str] = dict(conn.execute("SELECT pageno, name FROM dbstat"))
    frames = collections.Counter(owner.get(p, "(new pages)") for p in pages)
    distinct = collections.Counter(owner.get(p, "(new pages)") for p in set(pages))
    return sorted(((name, n, distinct[name]) for name, n in frames.items()), key=lambda r: -r[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a store folder built by benchmarks/scale.py")
    parser.add_argument("--documents", type=int, default=scale.INSERT_BATCH)
    parser.add_argument("--offset", type=int, default=0, help="documents of the corpus to skip")
    args = parser.parse_args()
    source = Path(args.store)
    if not (source / "n_chunks").exists():
        parser.error(f"{source} is not a store built by benchmarks/scale.py")
    folder = Path(tempfile.mkdtemp(prefix="insert-pages-", dir=source.parent))
    copy = folder / source.name
    try:
        subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
        pages = insert_batch(copy, args.documents, args.offset)
        rows = by_btree(copy / "lightrag.sqlite3", pages)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.documents} documents into a copy of {source}: {len(pages):,} log frames, "
          f"{len(set(pages)):,} distinct pages")
    print("| table or index | frames | distinct pages |\n|---|---:|---:|")
    for name, frames, distinct in rows:
        print(f"| {name} | {frames:,} | {distinct:,} |")


if __name__ == "__main__":
    main()
