"""``JsonKVStorage``: a key-value store kept in memory and written to one JSON file.

Example:
    >>> import tempfile
    >>> kv = JsonKVStorage(namespace="docs", working_dir=tempfile.mkdtemp())
    >>> kv.upsert({"a": {"text": "hello"}})
    >>> kv.index_done_callback()
    >>> JsonKVStorage(namespace="docs", working_dir=kv.working_dir).get_by_id("a")
    {'text': 'hello'}
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from lightrag.components.storage.base import BaseKVStorage
from lightrag.utils.file_io import atomic_write_text

log = logging.getLogger(__name__)


def load_json_store(path: Path) -> Dict[str, Any]:
    """Read a store file; a missing file is empty, an unreadable one is an error (never silent)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read store file {path}: {e}") from e
    if not isinstance(data, dict):
        raise ValueError(f"store file {path} does not hold a JSON object")
    return data


class JsonKVStorage(BaseKVStorage):
    """Records in a dict, flushed to ``kv_store_<namespace>.json``."""

    file_prefix = "kv_store_"

    def __init__(self, namespace: str, workspace: str = "", working_dir: str = "./lightrag_storage") -> None:
        super().__init__(namespace, workspace, working_dir)
        self._data: Dict[str, Dict[str, Any]] = load_json_store(self.file_path)
        self._dirty = False

    _to_dict_exclude = ("_data",)

    @property
    def file_path(self) -> Path:
        return self.storage_dir / f"{self.file_prefix}{self.namespace}.json"

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        record = self._data.get(id)
        return dict(record) if record is not None else None

    def get_by_ids(self, ids: Iterable[str]) -> List[Optional[Dict[str, Any]]]:
        return [self.get_by_id(i) for i in ids]

    def filter_keys(self, keys: Iterable[str]) -> set:
        return {k for k in keys if k not in self._data}

    def upsert(self, data: Dict[str, Dict[str, Any]]) -> None:
        for key, record in data.items():
            if not isinstance(record, dict):
                raise TypeError(f"record {key!r} must be a dict, got {type(record).__name__}")
            self._data[key] = {**self._data.get(key, {}), **record}
        self._dirty = self._dirty or bool(data)

    def delete(self, ids: Iterable[str]) -> None:
        for key in ids:
            if self._data.pop(key, None) is not None:
                self._dirty = True

    def keys(self) -> List[str]:
        return list(self._data)

    def items(self) -> List[Tuple[str, Dict[str, Any]]]:
        return [(k, dict(v)) for k, v in self._data.items()]

    def __len__(self) -> int:
        return len(self._data)

    def index_done_callback(self) -> None:
        if not self._dirty and self.file_path.exists():
            return
        atomic_write_text(self.file_path, json.dumps(self._data, ensure_ascii=False))
        self._dirty = False

    def drop(self) -> None:
        self._data = {}
        self.file_path.unlink(missing_ok=True)
        self._dirty = False
