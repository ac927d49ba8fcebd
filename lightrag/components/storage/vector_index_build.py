"""``IndexBuild``: an inverted-file index of a large vector namespace trained in a thread beside
the writer, and swapped in by a later commit.

Retraining the index of 2.15M relation vectors (k-means, every row assigned to its list, the
copy written) took 7.7 s at 1M chunks, inside the commit that found the index outgrown: every
writer of the store waited. From :data:`BACKGROUND_BUILD_ROWS` rows the writer instead starts a
build of the rows committed so far (file rows below ``file_rows``, read through a read-only
connection of its own, so it never touches the writer's) and goes on committing with the old
index, whose tail lists keep covering the rows it appends. The first commit of that namespace
after the build has finished swaps it in
(:meth:`~lightrag.components.storage.vector_generations.VectorGenerations._swap_in`): the rows
appended meanwhile are assigned to the new lists, which takes milliseconds.

The build writes ``<index file>.build`` only; a process that ends mid-build leaves that file,
which the next build replaces. A compaction in the meantime renumbers the rows: the finished
build is then for a generation that is gone, and is dropped.
"""

from __future__ import annotations

import logging
import mmap
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from lightrag.components.storage import vector_ivf
from lightrag.components.storage.vector_ivf import IVFIndex

log = logging.getLogger(__name__)

BACKGROUND_BUILD_ROWS = 100_000
"""Live rows from which a retrain runs in a thread: every index at the default ``ann_min_rows``
(an inline retrain of 237k rows took 0.5 s with 64-d vectors but 3.4 s with MiniLM's 384)."""


@dataclass
class IndexBuild:
    """One index build running (or run) in a thread: of file ``generation`` of ``namespace``,
    rows below ``file_rows``. ``index`` is set when it has finished well, ``error`` when not."""

    database: Path
    namespace: str
    generation: int
    vector_file: Path
    dim: int
    file_rows: int
    target: Path
    durable: bool = False
    index: Optional[IVFIndex] = None
    error: Optional[BaseException] = None
    thread: threading.Thread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.target.unlink(missing_ok=True)
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"vector-index-{self.namespace}")
        self.thread.start()

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def join(self, timeout: Optional[float] = None) -> None:
        self.thread.join(timeout)

    def discard(self) -> None:
        """Forget the build's file (a finished build that will not be swapped in)."""
        self.target.unlink(missing_ok=True)

    def _run(self) -> None:
        try:
            rows = self._live_rows()
            with open(self.vector_file, "rb") as f:
                mapped = mmap.mmap(f.fileno(), self.file_rows * 4 * self.dim, access=mmap.ACCESS_READ)
            matrix = np.frombuffer(mapped, dtype=np.float32).reshape(self.file_rows, self.dim)
            index = IVFIndex.build(matrix, rows, vector_ivf.lists_for(len(rows)), file_rows=self.file_rows)
            index.write(self.target, matrix, durable=self.durable)
            self.index = index
            log.info("vectors %s: index of %d rows built beside the writer", self.namespace, len(rows))
        except BaseException as e:  # noqa: BLE001 - reported to the writer, which builds inline
            self.error = e
            log.warning("vectors %s: building the index beside the writer failed: %s", self.namespace, e)

    def _live_rows(self) -> np.ndarray:
        """The committed live rows below ``file_rows``, in row order."""
        conn = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=30)
        try:
            found = conn.execute("SELECT row FROM vectors WHERE ns = ? AND row < ? ORDER BY row",
                                 (self.namespace, self.file_rows)).fetchall()
        finally:
            conn.close()
        return np.fromiter((r for (r,) in found), dtype=np.int64, count=len(found))
