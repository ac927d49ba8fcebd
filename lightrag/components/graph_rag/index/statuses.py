"""Document status records written inside the index's write transactions: whether a document
is still the one being processed (:func:`still_current`) and updating its record
(:func:`set_status`). :class:`GraphIndex` and :mod:`.recording` call them with the stores."""

from __future__ import annotations

import logging
from typing import Any, Optional

from lightrag.components.graph_rag.index.stores import IndexStores
from lightrag.components.graph_rag.schemas import DocStatus, compute_mdhash_id, now_iso

log = logging.getLogger(__name__)


def still_current(stores: IndexStores, doc_id: str, content_hash: Optional[str]) -> bool:
    """Whether ``doc_id`` is still stored (its status) and, given ``content_hash``, still holds
    the text that hashes to it."""
    if stores.doc_status.get_by_id(doc_id) is None:
        return False
    if content_hash is None:
        return True
    doc = stores.full_docs.get_by_id(doc_id)
    return doc is not None and compute_mdhash_id(doc.get("content", "")) == content_hash


def set_status(stores: IndexStores, doc_id: str, **changes: Any) -> bool:
    """Update fields of a stored document's status record; False (nothing written) for a
    document deleted meanwhile (a status is never re-created without its text)."""
    if stores.doc_status.get_by_id(doc_id) is None:
        log.info("status of %s not set: the document was deleted", doc_id)
        return False
    changes = {k: (v.value if isinstance(v, DocStatus) else v) for k, v in changes.items()}
    stores.doc_status.upsert({doc_id: {**changes, "updated_at": now_iso()}})
    return True
