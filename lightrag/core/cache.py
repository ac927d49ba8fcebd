"""A response cache keyed by the full model request.

The key is the SHA-256 of the client class and the complete ``api_kwargs`` (model, messages,
temperature, …) serialised canonically, so a cached answer is only reused for the very same
request. Entries live in memory and, given a path, in an SQLite file (stdlib, safe across
processes and crash-safe), so a re-run of a benchmark costs no model calls.

Example:
    >>> cache = ResponseCache()
    >>> key = cache.key("OpenAIClient", {"model": "m", "messages": []})
    >>> cache.get(key) is None
    True
    >>> cache.set(key, {"text": "hi"})
    >>> cache.get(key)
    {'text': 'hi'}
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Dict, Optional, Union


class ResponseCache:
    """In-memory (and optionally on-disk SQLite) map from request hash to a JSON value."""

    def __init__(self, path: Optional[Union[str, Path]] = None) -> None:
        self.path = Path(path) if path is not None else None
        self._memory: Dict[str, Any] = {}
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None
        self.hits = 0
        self.misses = 0
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT)")
            self._db.commit()

    @staticmethod
    def key(namespace: str, request: Dict[str, Any]) -> str:
        payload = json.dumps([namespace, request], sort_keys=True, default=repr, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def get(self, key: str) -> Optional[Any]:
        with self._lock:
            if key in self._memory:
                self.hits += 1
                return self._memory[key]
            if self._db is not None:
                row = self._db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    value = json.loads(row[0])
                    self._memory[key] = value
                    self.hits += 1
                    return value
            self.misses += 1
            return None

    def set(self, key: str, value: Any) -> None:
        with self._lock:
            self._memory[key] = value
            if self._db is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)",
                    (key, json.dumps(value, ensure_ascii=False)),
                )
                self._db.commit()

    def delete(self, key: str) -> bool:
        """Drop ``key``; True when it was there."""
        with self._lock:
            found = self._memory.pop(key, None) is not None
            if self._db is not None:
                cur = self._db.execute("DELETE FROM cache WHERE key = ?", (key,))
                self._db.commit()
                found = found or cur.rowcount > 0
            return found

    def __len__(self) -> int:
        if self._db is not None:
            return self._db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]
        return len(self._memory)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
