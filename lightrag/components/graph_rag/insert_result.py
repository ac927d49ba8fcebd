"""What an insert reports: :class:`InsertResult` (per call), :class:`InsertProgress` (per
document, to a ``progress`` callback), and :func:`run_sync`, which runs the async pipeline from
synchronous code."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Coroutine, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from lightrag.components.graph_rag.schemas import compute_mdhash_id
from lightrag.core.base_data_class import DataClass

T = TypeVar("T")

def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when an event loop is already running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: Dict[str, Any] = {}

    def runner() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            result["error"] = e

    thread = threading.Thread(target=runner)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


@dataclass
class InsertResult(DataClass):
    """What one insert did."""

    track_id: str = field(default="", metadata={"desc": "Id of this insert call"})
    doc_ids: List[str] = field(default_factory=list, metadata={"desc": "Ids of the given documents"})
    skipped: List[str] = field(default_factory=list, metadata={"desc": "Already processed"})
    processed: List[str] = field(default_factory=list, metadata={"desc": "Processed now"})
    failed: Dict[str, str] = field(default_factory=dict, metadata={"desc": "Failed: id -> error"})
    chunks: int = field(default=0, metadata={"desc": "Chunks written"})
    entities: int = field(default=0, metadata={"desc": "Entities touched"})
    relations: int = field(default=0, metadata={"desc": "Relations touched"})
    failed_chunks: List[str] = field(default_factory=list, metadata={"desc": "Chunks to retry"})
    usage: Dict[str, Dict[str, int]] = field(
        default_factory=dict,
        metadata={"desc": "Tokens and calls by model: {model: {prompt_tokens, completion_tokens, calls}}"})


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
    texts = [input] if isinstance(input, str) else list(input)
    for i, text in enumerate(texts):
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
    if ids is None:
        doc_ids = [compute_mdhash_id(t.strip(), prefix="doc-") for t in texts]
    else:
        doc_ids = [ids] if isinstance(ids, str) else list(ids)
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} ids for {len(texts)} documents")
        for i, doc_id in enumerate(doc_ids):
            if not isinstance(doc_id, str) or not doc_id.strip():
                raise ValueError(f"document id {i} must be a non-empty string, got {doc_id!r}")
        if len(set(doc_ids)) != len(doc_ids):
            raise ValueError("document ids must be unique")
    if file_paths is None:
        paths = ["unknown_source"] * len(texts)
    else:
        paths = [file_paths] if isinstance(file_paths, str) else list(file_paths)
        if len(paths) != len(texts):
            raise ValueError(f"{len(paths)} file paths for {len(texts)} documents")
        for i, path in enumerate(paths):
            if not isinstance(path, str):
                raise TypeError(f"file path {i} is a {type(path).__name__}, not a str")
    unique: Dict[str, tuple[str, str]] = {}
    for doc_id, text, path in zip(doc_ids, texts, paths):
        unique.setdefault(doc_id, (text, path))  # identical texts share one id
    return [t for t, _ in unique.values()], list(unique), [p for _, p in unique.values()]
