"""HKU LightRAG's ``initialize_pipeline_status``, which its README has programs call after
``initialize_storages()``. Here a store needs no shared pipeline state (one SQLite file per
working directory, its writer lock in the file), so the call does nothing; it is kept so those
programs run unchanged.

Example:
    >>> import asyncio
    >>> asyncio.run(initialize_pipeline_status())
"""

from __future__ import annotations

from typing import Optional

__all__ = ["initialize_pipeline_status"]


async def initialize_pipeline_status(workspace: Optional[str] = None) -> None:
    """Nothing to set up here (HKU keeps a per-process pipeline status; see the module)."""
    return None
