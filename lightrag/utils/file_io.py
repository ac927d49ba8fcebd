"""File helpers: atomic writes (temp file + rename) and JSON / JSON-lines / pickle I/O.

Every write goes to a temporary file in the target's directory, is flushed and fsynced, then
renamed over the target, so a crash leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Iterable, List, Union

PathLike = Union[str, Path]


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, creating parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def save_json(obj: Any, path: PathLike, indent: int = 2) -> None:
    from lightrag.utils.serialization import default

    atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False, default=default))


def load_json(path: PathLike) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save_jsonl(rows: Iterable[Any], path: PathLike) -> None:
    from lightrag.utils.serialization import default

    text = "".join(json.dumps(r, ensure_ascii=False, default=default) + "\n" for r in rows)
    atomic_write_text(path, text)


def append_jsonl(row: Any, path: PathLike) -> None:
    """Append one JSON line (not atomic across lines; each line is one write)."""
    from lightrag.utils.serialization import default

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False, default=default) + "\n")


def load_jsonl(path: PathLike) -> List[Any]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def save_pickle(obj: Any, path: PathLike) -> None:
    atomic_write_bytes(path, pickle.dumps(obj))


def load_pickle(path: PathLike) -> Any:
    with open(path, "rb") as f:
        return pickle.load(f)
