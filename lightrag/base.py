"""HKU LightRAG's ``lightrag.base`` names that programs import: ``DocStatus``, ``QueryParam``
and ``DeletionResult`` (the facade's types; see ``docs/compat.md``, "Coming from HKU LightRAG").

Example:
    >>> from lightrag.base import DocStatus
    >>> DocStatus.PROCESSED == "processed"
    True
"""

from lightrag.components.graph_rag.hku_results import HKUDeletionResult as DeletionResult
from lightrag.components.graph_rag.schemas import DocStatus, QueryParam

__all__ = ["DeletionResult", "DocStatus", "QueryParam"]
