"""The document-status store's interface: records of each document's processing, queried by
status, insert call (track id), content hash, file path and page (newest first).

The JSON store (``json_doc_status.py``) answers these queries by passing over its records; the
SQL store (``sql_kv.SQLDocStatusStorage``) through indexed columns.
"""

from __future__ import annotations

from dataclasses import fields
from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from lightrag.components.storage.base import BaseKVStorage
from lightrag.components.storage.doc_status import DocProcessingStatus, DocStatus

StatusLike = Union[Enum, str]


class DocStatusStorage(BaseKVStorage):
    """Document status records, queried by status, insert call (track id) and content hash.

    Records are stored as plain dicts (``status`` as its string value); the query methods return
    :class:`DocProcessingStatus` objects. ``upsert`` also accepts DocProcessingStatus values.
    """

    @staticmethod
    def _to_record(value: Any) -> Dict[str, Any]:
        record = value.to_dict() if isinstance(value, DocProcessingStatus) else dict(value)
        if isinstance(record.get("status"), Enum):
            record["status"] = record["status"].value
        return record

    @staticmethod
    def _as_status(record: Dict[str, Any]) -> Any:
        names = {f.name for f in fields(DocProcessingStatus)}
        return DocProcessingStatus.from_dict({k: v for k, v in record.items() if k in names})

    def get_by_statuses(self, statuses: Sequence[StatusLike]) -> Dict[str, Any]:
        wanted = {DocStatus(s).value for s in statuses}
        return {k: self._as_status(v) for k, v in self.items() if v.get("status") in wanted}

    def get_by_status(self, status: StatusLike) -> Dict[str, Any]:
        return self.get_by_statuses([status])

    def get_by_track_id(self, track_id: str) -> Dict[str, Any]:
        return {k: self._as_status(v) for k, v in self.items() if v.get("track_id") == track_id}

    def get_status_counts(self) -> Dict[str, int]:
        """``{status value: count}`` with every :class:`DocStatus` present (zeros included)."""
        counts = {s.value: 0 for s in DocStatus}
        for _, record in self.items():
            status = str(record.get("status", DocStatus.PENDING.value))
            counts[status] = counts.get(status, 0) + 1
        return counts

    def get_doc_by_content_hash(self, content_hash: str) -> Optional[Tuple[str, Any]]:
        """``(doc id, status)`` of the first document with this content hash, or None."""
        for key, record in self.items():
            if record.get("content_hash") == content_hash:
                return key, self._as_status(record)
        return None

    #: the fields of :meth:`listing`'s rows besides ``id``
    LISTING_FIELDS = ("status", "file_path", "chunks_count", "content_length", "updated_at", "error_msg")

    def listing(self, status: Optional[StatusLike] = None) -> List[Dict[str, Any]]:
        """One small dict per document (of ``status``): ``id`` and :data:`LISTING_FIELDS`, in id
        order; what a list of the documents shows, without the chunk ids and metadata."""
        wanted = None if status is None else DocStatus(status).value
        return [{"id": k, **{f: v.get(f) for f in self.LISTING_FIELDS},
                 "status": v.get("status") or DocStatus.PENDING.value,
                 "file_path": v.get("file_path") or "unknown_source"}
                for k, v in sorted(self.items()) if wanted is None or v.get("status") == wanted]

    def file_paths(self) -> List[Tuple[str, str]]:
        """``(doc id, file path)`` of every document (no other field decoded: what finding
        documents by path needs)."""
        return [(k, str(v.get("file_path") or "")) for k, v in self.items()]

    def get_docs_paginated(self, page: int = 1, page_size: int = 50,
                           status: Optional[StatusLike] = None) -> List[Tuple[str, Any]]:
        """One page (1-based) of ``(doc id, status)``, most recently updated first."""
        if page < 1 or page_size < 1:
            raise ValueError("page and page_size must be positive")
        wanted = None if status is None else DocStatus(status).value
        rows = [(k, v) for k, v in self.items() if wanted is None or v.get("status") == wanted]
        rows.sort(key=lambda kv: (kv[1].get("updated_at") or "", kv[0]), reverse=True)
        start = (page - 1) * page_size
        return [(k, self._as_status(v)) for k, v in rows[start:start + page_size]]
