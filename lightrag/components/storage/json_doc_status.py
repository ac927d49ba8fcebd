"""``JsonDocStatusStorage``: document status records in ``kv_store_doc_status.json``.

Example:
    >>> import tempfile
    >>> from lightrag.components.graph_rag.schemas import DocProcessingStatus, DocStatus
    >>> store = JsonDocStatusStorage(namespace="doc_status", working_dir=tempfile.mkdtemp())
    >>> store.upsert({"doc-1": DocProcessingStatus(status=DocStatus.PROCESSED).to_dict()})
    >>> store.get_status_counts()["processed"]
    1
"""

from __future__ import annotations

from lightrag.components.storage.base import DocStatusStorage
from lightrag.components.storage.json_kv import JsonKVStorage


class JsonDocStatusStorage(JsonKVStorage, DocStatusStorage):
    """Status records as JSON; queries come from :class:`DocStatusStorage`."""
