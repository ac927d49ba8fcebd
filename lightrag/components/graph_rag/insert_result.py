"""What an insert reports: :class:`InsertResult` (per call) and :class:`InsertProgress` (per
document, to a ``progress`` callback); and :func:`normalize_documents`, the checks of its input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from lightrag.components.graph_rag.schemas import DocStatus, compute_mdhash_id
from lightrag.core.base_data_class import DataClass
from lightrag.utils.run_sync import run_sync

__all__ = ["InsertProgress", "InsertResult", "ProgressCallback", "normalize_documents", "run_sync"]

SUPERSEDED = "superseded"

@dataclass
class InsertResult(DataClass):
    """What one insert did."""

    track_id: str = field(default="", metadata={"desc": "Id of this insert call"})
    doc_ids: List[str] = field(default_factory=list, metadata={"desc": "Ids of the given documents"})
    skipped: List[str] = field(default_factory=list, metadata={"desc": "Already processed"})
    processed: List[str] = field(default_factory=list, metadata={"desc": "Processed now"})
    failed: Dict[str, str] = field(default_factory=dict, metadata={"desc": "Failed: id -> error"})
    superseded: List[str] = field(default_factory=list, metadata={
        "desc": "Deleted or replaced by another request while this one processed them"})
    chunks: int = field(default=0, metadata={"desc": "Chunks written"})
    entities: int = field(default=0, metadata={"desc": "Entities touched"})
    relations: int = field(default=0, metadata={"desc": "Relations touched"})
    failed_chunks: List[str] = field(default_factory=list, metadata={"desc": "Chunks to retry"})
    usage: Dict[str, Dict[str, int]] = field(
        default_factory=dict,
        metadata={"desc": "Tokens and calls by model: {model: {prompt_tokens, completion_tokens, calls}}"})

    def add(self, recorded: Any) -> None:
        """Count one finished document (a ``RecordResult``: processed, failed or superseded)."""
        doc_id = recorded.doc_id
        if recorded.status == SUPERSEDED:
            if doc_id not in self.superseded:
                self.superseded.append(doc_id)
            return
        if recorded.status == DocStatus.PROCESSED.value:
            self.processed.append(doc_id)
        else:
            self.failed[doc_id] = recorded.error or "failed"
            self.failed_chunks.extend(recorded.failed_chunks)
        self.chunks += recorded.chunks
        self.entities += len(recorded.entities)
        self.relations += len(recorded.relations)

    def add_usage(self, usage: Dict[str, Dict[str, int]]) -> None:
        """Add tokens and calls by model (``{model: {prompt_tokens, ...}}``)."""
        for model, row in usage.items():
            total = self.usage.setdefault(model, dict.fromkeys(row, 0))
            for key, value in row.items():
                total[key] = total.get(key, 0) + value


@dataclass
class InsertProgress(DataClass):
    """One step of an insert, as given to a ``progress`` callback."""

    doc_id: str = field(default="", metadata={"desc": "The document just finished"})
    status: str = field(default="", metadata={"desc": "processed or failed"})
    docs_done: int = field(default=0, metadata={"desc": "Documents finished in this insert"})
    docs_total: int = field(default=0, metadata={"desc": "Documents this insert processes"})
    chunks_done: int = field(default=0, metadata={"desc": "Chunks finished so far"})
    entities: int = field(default=0, metadata={"desc": "Entities touched so far"})
    relations: int = field(default=0, metadata={"desc": "Relations touched so far"})
    elapsed_s: float = field(default=0.0, metadata={"desc": "Seconds since the insert began"})

    def advance(self, recorded: Any, elapsed_s: float) -> None:
        """Count one finished document (a ``RecordResult``)."""
        self.docs_done += 1
        self.doc_id, self.status = recorded.doc_id, recorded.status
        self.chunks_done += recorded.chunks
        self.entities += len(recorded.entities)
        self.relations += len(recorded.relations)
        self.elapsed_s = elapsed_s


ProgressCallback = Callable[[InsertProgress], None]


def normalize_documents(
    input: Union[str, Sequence[str]], ids: Optional[Union[str, Sequence[str]]] = None,
    file_paths: Optional[Union[str, Sequence[str]]] = None,
) -> Tuple[List[str], List[str], List[str]]:
    """The checks of :meth:`GraphRAG.validate_documents`: ``(texts, doc_ids, file_paths)`` of
    equal length, identical texts without explicit ids collapsed into one document.

    Example:
        >>> normalize_documents(["Alice met Bob.", "Alice met Bob."], file_paths=["a", "b"])[2]
        ['a']
    """
    if isinstance(input, (bytes, bytearray)):
        raise TypeError("the document is bytes, not a str: decode it first (data.decode('utf-8')) "
                        "or load the file with lightrag.components.loaders.load_document")
    if not isinstance(input, str) and not hasattr(input, "__iter__"):
        raise TypeError(f"insert takes a str or a list of str, got {type(input).__name__}")
    texts = [input] if isinstance(input, str) else list(input)
    for i, text in enumerate(texts):
        _check_text(i, text)
    doc_ids = _doc_ids(texts, ids)
    paths = _file_paths(texts, file_paths)
    unique: Dict[str, tuple[str, str]] = {}
    for doc_id, text, path in zip(doc_ids, texts, paths):
        unique.setdefault(doc_id, (text, path))  # identical texts share one id
    return [t for t, _ in unique.values()], list(unique), [p for _, p in unique.values()]


def _check_text(i: int, text: Any) -> None:
    if isinstance(text, (bytes, bytearray)):
        raise TypeError(f"document {i} is bytes, not a str: decode it first")
    if not isinstance(text, str):
        raise TypeError(f"document {i} is a {type(text).__name__}, not a str")
    if not text.strip():
        raise ValueError(f"document {i} is empty")
    if "\x00" in text:
        raise ValueError(f"document {i} contains NUL bytes: is it a binary file?")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"document {i} contains a lone surrogate ({text[e.start]!r} at "
                         f"character {e.start}): not valid Unicode text") from None


def _doc_ids(texts: List[str], ids: Optional[Union[str, Sequence[str]]]) -> List[str]:
    if ids is None:
        return [compute_mdhash_id(t.strip(), prefix="doc-") for t in texts]
    doc_ids = [ids] if isinstance(ids, str) else list(ids)
    if len(doc_ids) != len(texts):
        raise ValueError(f"{len(doc_ids)} ids for {len(texts)} documents")
    for i, doc_id in enumerate(doc_ids):
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ValueError(f"document id {i} must be a non-empty string, got {doc_id!r}")
    if len(set(doc_ids)) != len(doc_ids):
        raise ValueError("document ids must be unique")
    return doc_ids


def _file_paths(texts: List[str], file_paths: Optional[Union[str, Sequence[str]]]) -> List[str]:
    if file_paths is None:
        return ["unknown_source"] * len(texts)
    paths = [file_paths] if isinstance(file_paths, str) else list(file_paths)
    if len(paths) != len(texts):
        raise ValueError(f"{len(paths)} file paths for {len(texts)} documents")
    for i, path in enumerate(paths):
        if not isinstance(path, str):
            raise TypeError(f"file path {i} is a {type(path).__name__}, not a str")
    return paths
