"""File helpers: atomic writes (temp file + rename) and JSON / JSON-lines / pickle I/O.

The functions keep lightrag 0.1's names and argument names (``f=``); loading a missing file
returns None (``[]`` for JSON lines) with a warning as in 0.1, or raises with
``missing_ok=False``.

Every write goes to a temporary file in the target's directory, is flushed and fsynced, then
renamed over the target, so a crash leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, List, Optional, Tuple, Union

PathLike = Union[str, Path]

log = logging.getLogger(__name__)


@contextmanager
def atomic_open(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file whose content replaces ``path`` when the block ends without an error.

    It is a temporary file in the target's folder (created with the parents), flushed, fsynced and
    renamed over ``path``; on an error it is removed and ``path`` is left as it was.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, creating parent folders."""
    with atomic_open(path) as f:
        f.write(data)


def atomic_write_text(path: PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _missing(f: PathLike, missing_ok: bool) -> bool:
    if Path(f).exists():
        return False
    if not missing_ok:
        raise FileNotFoundError(f"no such file: {f}")
    log.warning("File %s does not exist.", f)
    return True


def save_json(obj: Any, f: PathLike = "task.json", indent: int = 4) -> None:
    """Write ``obj`` as JSON (components and DataClasses through their ``to_dict``)."""
    from lightrag.utils.serialization import default

    atomic_write_text(f, json.dumps(obj, indent=indent, ensure_ascii=False, default=default))


def load_json(f: PathLike = "task.json", missing_ok: bool = True) -> Optional[Any]:
    """The JSON in ``f``; None (with a warning) when it does not exist, as in 0.1.

    ``missing_ok=False`` raises ``FileNotFoundError`` instead.
    """
    if _missing(f, missing_ok):
        return None
    with open(f, encoding="utf-8") as fh:
        return json.load(fh)


def save_jsonl(rows: Iterable[Any], f: PathLike) -> None:
    """Write one JSON line per row (atomically)."""
    from lightrag.utils.serialization import default

    text = "".join(json.dumps(r, ensure_ascii=False, default=default) + "\n" for r in rows)
    atomic_write_text(f, text)


def write_list_to_jsonl(f: PathLike, data: List[Any]) -> None:
    """0.1's name (and argument order) of :func:`save_jsonl`."""
    save_jsonl(data, f)


def append_jsonl(row: Any, f: PathLike) -> None:
    """Append one JSON line (not atomic across lines; each line is one write)."""
    from lightrag.utils.serialization import default

    Path(f).parent.mkdir(parents=True, exist_ok=True)
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False, default=default) + "\n")


def append_to_jsonl(f: PathLike, data: Any) -> None:
    """0.1's name (and argument order) of :func:`append_jsonl`."""
    append_jsonl(data, f)


def load_jsonl(f: Optional[PathLike] = None, missing_ok: bool = True) -> List[Any]:
    """The rows of a JSON-lines file; ``[]`` (with a warning) when it does not exist."""
    if f is None or _missing(f, missing_ok):
        return []
    with open(f, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def save_pickle(obj: Any, f: PathLike = "task.pickle") -> None:
    """Pickle ``obj`` to ``f`` (atomically)."""
    atomic_write_bytes(f, pickle.dumps(obj))


def load_pickle(f: PathLike = "task.pickle", missing_ok: bool = True) -> Optional[Any]:
    """Unpickle ``f`` (trusted files only); None (with a warning) when it does not exist."""
    if _missing(f, missing_ok):
        return None
    with open(f, "rb") as fh:
        return pickle.load(fh)


def save(obj: Any, f: PathLike = "task") -> None:
    """Save ``obj`` twice, as 0.1 did: ``<f>.json`` (readable) and ``<f>.pickle`` (exact)."""
    save_json(obj, f"{f}.json")
    save_pickle(obj, f"{f}.pickle")


def load(f: PathLike = "task") -> Tuple[Optional[Any], Optional[Any]]:
    """``(json object, pickled object)`` saved by :func:`save`."""
    return load_json(f"{f}.json"), load_pickle(f"{f}.pickle")
