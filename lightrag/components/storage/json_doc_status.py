"""``JsonDocStatusStorage``: document status records in ``kv_store_doc_status.json``.

Example:
    >>> import tempfile
    >>> from lightrag.components.storage.doc_status import DocProcessingStatus, DocStatus
    >>> store = JsonDocStatusStorage(working_dir=tempfile.mkdtemp())
    >>> store.upsert({"doc-1": DocProcessingStatus(status=DocStatus.PROCESSED, track_id="t1")})
    >>> store.get_status_counts()["processed"], list(store.get_by_track_id("t1"))
    (1, ['doc-1'])
"""

from __future__ import annotations

from typing import Any, Dict, Union

from lightrag.components.storage.doc_status import DocProcessingStatus
from lightrag.components.storage.doc_status_storage import DocStatusStorage
from lightrag.components.storage.json_kv import JsonKVStorage


class JsonDocStatusStorage(JsonKVStorage, DocStatusStorage):
    """Status records as JSON; the queries come from :class:`DocStatusStorage`.

    ``upsert`` takes dicts or :class:`DocProcessingStatus` objects; dict fields merge into the
    existing record (``{"doc-1": {"status": "failed", "error_msg": "..."}}`` updates two fields).
    """

    def __init__(self, namespace: str = "doc_status", workspace: str = "",
                 working_dir: str = "./lightrag_storage") -> None:
        super().__init__(namespace, workspace, working_dir)

    def upsert(self, data: Dict[str, Union[Any, Dict[str, Any]]]) -> None:  # type: ignore[override]
        bad = next((k for k, v in data.items() if not isinstance(v, (dict, DocProcessingStatus))), None)
        if bad is not None:
            raise TypeError(f"status of {bad!r} must be a dict or DocProcessingStatus, "
                            f"got {type(data[bad]).__name__}")
        super().upsert({key: self._to_record(value) for key, value in data.items()})
