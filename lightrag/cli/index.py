"""``lightrag index PATH...``: load files and folders with the document loaders and insert them,
with a progress bar on a terminal and a report of every skipped file and its reason.

Files are read with :func:`lightrag.components.loaders.load_documents` (PDF, DOCX, HTML,
Markdown, text; chosen by content and extension). Each document keeps its path as ``file_path``,
which references show. The progress bar (``rich``, the ``loaders`` extra) counts the text indexed
(so its ETA weighs big files more), with files, chunks and entities; it is drawn on stderr only
when stdout is a terminal, so piped or logged runs print just the summary.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.md").write_text("# Acme\\n\\nAcme builds robots.")
    >>> docs, skipped = load_for_index([str(folder)])
    >>> [(pathlib.Path(p).name, t) for p, t in docs], skipped
    ([('a.md', 'Acme\\n\\nAcme builds robots.')], [])
"""

from __future__ import annotations

import argparse
import inspect
import logging
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from lightrag.cli.common import CliError, StoredPaths, load_rag, out, print_insert_summary
from lightrag.components.loaders import load_documents

log = logging.getLogger(__name__)

__all__ = ["IndexProgress", "add_index_parser", "cmd_index", "document_ids", "index_texts",
           "load_for_index"]


def load_for_index(paths: List[str], encoding: Optional[str] = None
                   ) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str, str]]]:
    """``([(file path, text)], [(file path, reason, message)])`` for files and folders."""
    report = load_documents(paths, encoding=encoding)
    docs = [(str(d.meta_data["file_path"]), d.text or "") for d in report.documents]
    return docs, report.skipped


def document_ids(rag: Any, named_texts: List[Tuple[str, str]]
                 ) -> Tuple[List[Tuple[str, str]], List[str], List[str]]:
    """``(files, ids, notes)``: the id each ``(file path, text)`` is indexed under. A file the
    store holds a document of keeps that document's id, so an edited file replaces its earlier
    text (the index rebuilds what only that text supported) and an unchanged one is skipped;
    without one, a file gets its text's id (``doc-`` + hash, as ``GraphRAG.insert`` gives it).
    Files whose text another file of the run already has are left out, as an insert collapses
    identical texts; ``notes`` name the paths stored as several documents (the first one is
    replaced; ``lightrag delete PATH`` removes them all)."""
    from lightrag.components.graph_rag.schemas import compute_mdhash_id

    stored = StoredPaths(rag)
    files: List[Tuple[str, str]] = []
    ids: List[str] = []
    notes: List[str] = []
    taken: Set[str] = set()
    for path, text in named_texts:
        known = stored.ids(path)
        doc_id = known[0] if known else compute_mdhash_id(text.strip(), prefix="doc-")
        if doc_id in taken:
            continue
        taken.add(doc_id)
        if len(known) > 1:
            notes.append(f"{path} is stored as {len(known)} documents: {known[0]} is replaced, "
                         f"the others ({', '.join(known[1:])}) are kept")
        files.append((path, text))
        ids.append(doc_id)
    return files, ids, notes


class IndexProgress:
    """A rich progress bar over the characters to index, with files, chunks and entities.

    Quiet (draws nothing) when ``enabled`` is false or ``rich`` is not installed.
    """

    def __init__(self, total_chars: int, total_files: int, enabled: bool) -> None:
        self.total_files = total_files
        self.files = self.chunks = self.entities = 0
        self._bar: Any = None
        self._task: Any = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            log.info("no progress bar: rich is not installed (the `loaders` extra)")
            return
        self._bar = Progress(
            TextColumn("[bold]indexing[/bold]"), BarColumn(), TaskProgressColumn(),
            TextColumn("{task.fields[files]}/{task.fields[total_files]} files"),
            TextColumn("{task.fields[chunks]} chunks, {task.fields[entities]} entities"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("[dim]{task.fields[current]}"),
            console=Console(stderr=True), transient=False,
        )
        self._task = self._bar.add_task("index", total=max(total_chars, 1), files=0,
                                        total_files=total_files, chunks=0, entities=0, current="")
        self._bar.start()

    @property
    def active(self) -> bool:
        return self._bar is not None

    def update(self, advance: int = 0, current: Optional[str] = None) -> None:
        if self._bar is None:
            return
        fields: Dict[str, Any] = dict(files=self.files, total_files=self.total_files,
                                      chunks=self.chunks, entities=self.entities)
        if current is not None:
            fields["current"] = current[-40:]
        self._bar.update(self._task, advance=advance, **fields)

    def event(self, event: Any, sizes: Dict[str, int], paths: Dict[str, str]) -> None:
        """An ``InsertProgress`` from ``GraphRAG.insert(progress=...)``: a document finished."""
        get = event.get if isinstance(event, dict) else (lambda k, d=None: getattr(event, k, d))
        doc_id = str(get("doc_id", ""))
        self.files = int(get("docs_done", self.files + 1) or 0)
        self.total_files = int(get("docs_total", self.total_files) or self.total_files)
        self.chunks = int(get("chunks_done", self.chunks) or 0)
        self.entities = int(get("entities", self.entities) or 0)
        self.update(advance=sizes.get(doc_id, 0), current=paths.get(doc_id, ""))

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self._bar.tasks[0].total, current="")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _accepts_progress(insert: Callable[..., Any]) -> bool:
    try:
        return "progress" in inspect.signature(insert).parameters
    except (TypeError, ValueError):
        return False


def index_texts(rag: Any, named_texts: List[Tuple[str, str]], show_progress: bool,
                ids: Optional[List[str]] = None) -> Any:
    """Insert ``(file path, text)`` pairs (under ``ids``, one per pair, or their texts' own ids);
    returns the :class:`InsertResult`.

    With a ``GraphRAG.insert`` that reports progress, all documents go in one insert (processed
    concurrently, one event per finished document); otherwise one insert per document.
    """
    bar = IndexProgress(sum(len(t) for _, t in named_texts), len(named_texts), show_progress)
    try:
        if _accepts_progress(rag.insert):
            return _insert_with_events(rag, named_texts, bar, ids)
        return _insert_one_by_one(rag, named_texts, bar, ids)
    finally:
        bar.finish()
        bar.close()


def _insert_with_events(rag: Any, named_texts: List[Tuple[str, str]], bar: IndexProgress,
                        ids: Optional[List[str]]) -> Any:
    texts = [t for _, t in named_texts]
    names = [n for n, _ in named_texts]
    sizes: Dict[str, int] = {}
    paths: Dict[str, str] = {}
    try:
        valid_texts, doc_ids, valid_paths = rag.validate_documents(texts, ids, names)
        sizes = {d: len(t) for d, t in zip(doc_ids, valid_texts)}
        paths = dict(zip(doc_ids, valid_paths))
    except (AttributeError, TypeError, ValueError):
        pass  # the insert below reports what is wrong
    callback = (lambda event: bar.event(event, sizes, paths)) if bar.active else None
    result = rag.insert(texts, ids=ids, file_paths=names, progress=callback)
    if bar.active:  # events count entities touched; show the store's total at the end
        bar.entities = int(rag.status().get("entities", bar.entities))
        bar.update()
    return result


def _insert_one_by_one(rag: Any, named_texts: List[Tuple[str, str]], bar: IndexProgress,
                       ids: Optional[List[str]]) -> Any:
    from lightrag.components.graph_rag.system import InsertResult

    total = InsertResult()
    last_count = 0.0
    for n, (name, text) in enumerate(named_texts):
        bar.update(current=name)
        result = (rag.insert(text, file_paths=name) if ids is None
                  else rag.insert(text, ids=ids[n], file_paths=name))
        total.processed += result.processed
        total.skipped += result.skipped
        total.superseded += result.superseded
        total.failed.update(result.failed)
        total.chunks += result.chunks
        bar.files += 1
        bar.chunks += result.chunks
        if bar.active and time.monotonic() - last_count > 2.0:
            bar.entities = int(rag.status().get("entities", 0))
            last_count = time.monotonic()
        bar.update(advance=len(text))
    return total


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal (the progress bar is drawn only then)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def cmd_index(args: argparse.Namespace) -> int:
    """Index files and folders; exit status 1 when a document failed."""
    docs, skipped = load_for_index(args.paths, encoding=args.encoding)
    for path, reason, message in skipped:
        out(f"skipped {path}: {reason} ({message.strip()})")
    if not docs:
        raise CliError(f"nothing to index in {' '.join(args.paths)}: {len(skipped)} file(s) "
                       "skipped (supported: PDF, DOCX, HTML, Markdown, text)")
    rag = load_rag(args)
    docs, ids, notes = document_ids(rag, docs)
    for note in notes:
        out(note)
    result = index_texts(rag, docs, stdout_is_terminal(), ids)
    print_insert_summary(rag, result)
    if skipped:
        out(f"skipped {len(skipped)} file(s) (listed above)")
    return 1 if result.failed else 0


def add_index_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``index``."""
    index = sub.add_parser("index", parents=[common],
                           help="index PDF, DOCX, HTML, Markdown and text files or folders")
    index.add_argument("paths", nargs="+")
    index.add_argument("--encoding", help="encoding of text files that are not UTF-8 "
                                          "(default: detected with charset-normalizer)")
    index.set_defaults(func=cmd_index)
