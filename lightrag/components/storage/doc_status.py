"""The status record of a document in the insert pipeline: :class:`DocStatus` and
:class:`DocProcessingStatus` (the ``doc_status`` store's values).

They live with the storages, which read and write them; the graph-RAG data models
(:mod:`lightrag.components.graph_rag.schemas`) re-export them.

Example:
    >>> DocProcessingStatus(status=DocStatus.PROCESSED).status.value
    'processed'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Dict, List, Optional

from lightrag.core.base_data_class import DataClass


def now_iso() -> str:
    """The current UTC time as an ISO-8601 string."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _d(text: str) -> Dict[str, str]:
    return {"desc": text}


class DocStatus(str, Enum):
    """Where a document is in the insert pipeline."""

    PENDING = "pending"
    PROCESSING = "processing"
    PROCESSED = "processed"
    FAILED = "failed"


@dataclass
class DocProcessingStatus(DataClass):
    """The status record of one document (the ``doc_status`` store)."""

    content_summary: str = field(default="", metadata=_d("First 100 characters of the document"))
    content_length: int = field(default=0, metadata=_d("Length of the document in characters"))
    file_path: str = field(default="unknown_source", metadata=_d("Source file name"))
    status: DocStatus = field(default=DocStatus.PENDING, metadata=_d("Pipeline status"))
    created_at: str = field(default_factory=now_iso, metadata=_d("ISO time of enqueueing"))
    updated_at: str = field(default_factory=now_iso, metadata=_d("ISO time of the last change"))
    track_id: Optional[str] = field(default=None, metadata=_d("Id of the insert call"))
    chunks_count: Optional[int] = field(default=None, metadata=_d("Number of chunks"))
    chunks_list: List[str] = field(default_factory=list, metadata=_d("Ids of the chunks"))
    error_msg: Optional[str] = field(default=None, metadata=_d("Why processing failed"))
    metadata: Dict[str, Any] = field(default_factory=dict, metadata=_d("Timings and counts"))
    content_hash: str = field(default="", metadata=_d("MD5 of the content, for deduplication"))
