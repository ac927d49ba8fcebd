"""The database of a working directory: embedded SQLite by default, PostgreSQL for several
machines (:func:`open_database`), and the refusal of old file-store directories.

Example:
    >>> import tempfile
    >>> open_database("sqlite", tempfile.mkdtemp()).describe()  # doctest: +ELLIPSIS
    'the store .../lightrag.sqlite3'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lightrag.components.storage.base import check_name
from lightrag.components.storage.sql_db import SQLDatabase, SQLiteDatabase

__all__ = ["DB_FILE", "WorkspaceCaseConflict", "open_database"]

DB_FILE = "lightrag.sqlite3"
LEGACY_FILES = ("kv_store_full_docs.json", "kv_store_doc_status.json",
                "graph_chunk_entity_relation.graphml", "vdb_chunks.npz")


class WorkspaceCaseConflict(ValueError):
    """A workspace name differs only in case from a folder already in the working directory."""


def open_database(storage: str, working_dir: str, workspace: str = "",
                  lock_timeout: float = 120.0, **kwargs: Any) -> SQLDatabase:
    """The database of a working directory: ``"sqlite"`` (``working_dir/workspace/
    lightrag.sqlite3``) or ``"postgres"`` (extra ``postgres``; ``kwargs`` go to
    :class:`~lightrag.components.storage.postgres_db.PostgresDatabase`). A workspace that is not
    a plain file-name part (``"../x"``), or one differing only in case from a folder already
    there (:class:`WorkspaceCaseConflict`), is refused before anything is created."""
    check_name("workspace", workspace)
    if storage == "sqlite":
        folder = Path(working_dir) / workspace if workspace else Path(working_dir)
        _refuse_case_twin(Path(working_dir), workspace)
        _refuse_legacy(folder)
        return SQLiteDatabase(folder / DB_FILE, lock_timeout=lock_timeout, **kwargs)
    if storage == "postgres":
        try:
            from lightrag.components.storage.postgres_db import PostgresDatabase
        except ImportError as e:
            raise ImportError("storage 'postgres' needs psycopg: pip install -e '.[postgres]'") from e
        return PostgresDatabase(workspace=workspace, lock_timeout=lock_timeout, **kwargs)
    raise ValueError(f"unknown storage {storage!r}; use 'sqlite' or 'postgres'")


def _refuse_case_twin(working_dir: Path, workspace: str) -> None:
    """``Acme`` next to a stored ``acme``: on a case-insensitive file system (macOS, Windows) the
    two are one folder, so two API keys each limited to one name would reach the same data.
    Refused on every file system, so that a store behaves the same wherever it is copied."""
    if not workspace or not working_dir.is_dir():
        return
    twins = sorted(name for name in os.listdir(working_dir)
                   if name != workspace and name.casefold() == workspace.casefold())
    if twins:
        raise WorkspaceCaseConflict(
            f"workspace {workspace!r} differs only in case from {twins[0]!r}, already in "
            f"{working_dir}: on a case-insensitive file system they would be one store; use "
            f"{twins[0]!r} or another name")


def _refuse_legacy(folder: Path) -> None:
    """A working directory of the JSON/GraphML stores (lightrag 0.2) needs ``lightrag migrate``."""
    if (folder / DB_FILE).exists():
        return
    found = [name for name in LEGACY_FILES if (folder / name).exists()]
    if found:
        raise ValueError(
            f"{folder} holds stores in the old JSON/GraphML format ({', '.join(found)}); convert "
            f"them once with `lightrag migrate --working-dir {folder}` (the old files are kept)")
