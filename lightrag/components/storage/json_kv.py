"""``JsonKVStorage``: a key-value store kept in memory and written to one JSON file.

Example:
    >>> import tempfile
    >>> kv = JsonKVStorage(namespace="docs", working_dir=tempfile.mkdtemp())
    >>> kv.upsert({"a": {"text": "hello"}})
    >>> kv.upsert({"a": {"lang": "en"}})
    >>> kv.index_done_callback()
    >>> JsonKVStorage(namespace="docs", working_dir=kv.working_dir).get_by_id("a")
    {'text': 'hello', 'lang': 'en'}
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from lightrag.components.storage.base import BaseKVStorage
from lightrag.utils.file_io import atomic_write_text

log = logging.getLogger(__name__)


def load_json_store(path: Path) -> Dict[str, Any]:
    """Read a store file: a missing file is empty, an unreadable one raises ValueError naming it."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read store file {path}: {e}") from e
    if not isinstance(data, dict):
        raise ValueError(f"store file {path} does not hold a JSON object")
    bad = next((k for k, v in data.items() if not isinstance(v, dict)), None)
    if bad is not None:
        raise ValueError(f"store file {path}: record {bad!r} is not a JSON object")
    return data


class JsonKVStorage(BaseKVStorage):
    """Records in a dict, flushed to ``working_dir/workspace/kv_store_<namespace>.json``.

    Reads return copies, so callers cannot change stored records by accident.

    Example:
        >>> import tempfile
        >>> chunks = JsonKVStorage(namespace="text_chunks", working_dir=tempfile.mkdtemp())
        >>> chunks.upsert({"chunk-1": {"content": "Saturn has rings.", "tokens": 4}})
        >>> chunks.filter_keys(["chunk-1", "chunk-2"])
        {'chunk-2'}
    """

    file_prefix = "kv_store_"
    _to_dict_exclude = ("_data", "_dirty")

    def __init__(self, namespace: str, workspace: str = "", working_dir: str = "./lightrag_storage") -> None:
        super().__init__(namespace, workspace, working_dir)
        self._after_from_dict()

    def _after_from_dict(self) -> None:
        """Read the file (a rebuilt store too: the records are not in the saved dict)."""
        self._data: Dict[str, Dict[str, Any]] = load_json_store(self.file_path)
        self._dirty = False
        log.debug("%s %s: loaded %d records", type(self).__name__, self.file_path, len(self._data))

    @property
    def file_path(self) -> Path:
        return self.storage_dir / f"{self.file_prefix}{self.namespace}.json"

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        record = self._data.get(id)
        return dict(record) if record is not None else None

    def get_by_ids(self, ids: Iterable[str]) -> List[Optional[Dict[str, Any]]]:
        return [self.get_by_id(i) for i in ids]

    def filter_keys(self, keys: Iterable[str]) -> Set[str]:
        return {k for k in keys if k not in self._data}

    def upsert(self, data: Dict[str, Dict[str, Any]]) -> None:
        bad = next((k for k, v in data.items() if not isinstance(v, dict)), None)
        if bad is not None:
            raise TypeError(f"record {bad!r} must be a dict, got {type(data[bad]).__name__}")
        for key, record in data.items():
            if not isinstance(key, str):
                raise TypeError(f"keys must be strings, got {key!r}")
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

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def index_done_callback(self) -> None:
        """Write the records atomically; skipped when nothing changed since the last flush."""
        if not self._dirty and self.file_path.exists():
            return
        try:
            text = json.dumps(self._data, ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"cannot write {self.file_path}: record {self._unserialisable_key()!r} "
                            f"is not JSON-serialisable ({e})") from e
        atomic_write_text(self.file_path, text)
        self._dirty = False

    def _unserialisable_key(self) -> Optional[str]:
        for key, record in self._data.items():
            try:
                json.dumps(record)
            except (TypeError, ValueError):
                return key
        return None

    def drop(self) -> None:
        self._data = {}
        self.file_path.unlink(missing_ok=True)
        self._dirty = False
