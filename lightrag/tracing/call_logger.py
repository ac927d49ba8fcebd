"""``GeneratorCallLogger``: one JSON-lines file of calls per named Generator.

Files live in ``<save_dir>/<project_name>/`` (``./traces/`` by default): ``<name>_call.jsonl``
for each registered generator, one :class:`GeneratorCallRecord` per line, and
``logger_metadata.json``, which maps each name to its file so a new logger on the same folder
(say, in a notebook after the run) can :meth:`~GeneratorCallLogger.load` the calls.

Lines are appended (``mode="at"``, UTF-8), one write per call, under a lock. A streamed reply is
logged without its text (the stream has not been read when the call returns), with
``metadata["streamed"] = True``.

Example:
    >>> import tempfile
    >>> from lightrag.core.types import GeneratorOutput
    >>> logger = GeneratorCallLogger(save_dir=tempfile.mkdtemp(), project_name="demo")
    >>> logger.register_generator("qa")
    >>> _ = logger.log_call(
    ...     "qa", model_kwargs={}, prompt_kwargs={"q": "2+2?"}, output=GeneratorOutput(data="4")
    ... )
    >>> [(r.prompt_kwargs, r.output.data) for r in logger.load("qa")]
    [({'q': '2+2?'}, '4')]
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import weakref
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from lightrag.core.types import GeneratorOutput
from lightrag.tracing.records import GeneratorCallRecord
from lightrag.utils.file_io import append_jsonl, atomic_write_text

if TYPE_CHECKING:
    from lightrag.core.generator import Generator

__all__ = ["GeneratorCallLogger", "METADATA_FILENAME"]

log = logging.getLogger(__name__)

METADATA_FILENAME = "logger_metadata.json"


def _loggable(output: GeneratorOutput) -> GeneratorOutput:
    """``output``, or a copy without the unread stream when the reply is streamed."""
    if isinstance(output.data, (Iterator, AsyncIterator)) or isinstance(
        output.raw_response, (Iterator, AsyncIterator)
    ):
        metadata = {**(output.metadata or {}), "streamed": True}
        return dataclasses.replace(output, data=None, raw_response=None, metadata=metadata)
    return output


class GeneratorCallLogger:
    """Log calls of named Generators, each name to its own JSON-lines file.

    Args:
        save_dir: the folder for traces; ``"./traces/"`` when None.
        project_name: a sub-folder of ``save_dir`` (none when None).

    Attributes:
        filepath: the folder holding the call files and ``logger_metadata.json``.
    """

    def __init__(self, save_dir: Optional[str] = None, project_name: Optional[str] = None) -> None:
        directory = Path(save_dir or "./traces/")
        if project_name:
            directory = directory / project_name
        self.project_name = project_name
        self.filepath = str(directory)
        self._metadata_filepath = str(directory / METADATA_FILENAME)
        self._generator_names_to_files: Dict[str, str] = {}
        self._attached: Dict[str, weakref.WeakSet[Any]] = {}
        self._lock = threading.Lock()
        if os.path.exists(self._metadata_filepath):
            self.load_meta_data(self._metadata_filepath)

    @property
    def generator_names_to_files(self) -> Dict[str, str]:
        """``{generator name: path of its .jsonl file}`` (a copy)."""
        return dict(self._generator_names_to_files)

    def get_log_location(self, name: str) -> Optional[str]:
        """The file logging ``name``'s calls, or None if ``name`` is not registered."""
        return self._generator_names_to_files.get(name)

    # ------------------------------------------------------------------ registration
    def register_generator(self, name: str, filename: Optional[str] = None) -> None:
        """Log calls of the generator ``name`` to ``filename`` (default ``<name>_call.jsonl``).

        Registering a name twice logs an "already registered" warning and changes nothing.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"a generator name must be a non-empty string, got {name!r}")
        with self._lock:
            existing = self._generator_names_to_files.get(name)
            if existing is not None:
                log.warning(
                    "Generator %r is already registered; its calls are logged to %s",
                    name,
                    existing,
                )
                return
            path = str(Path(self.filepath) / (filename or f"{name}_call.jsonl"))
            self._generator_names_to_files[name] = path
            self.save_meta_data(self._metadata_filepath)
        log.debug("generator %r: calls are logged to %s", name, path)

    def attach(self, generator: Generator, name: str, error_only: bool = True) -> None:
        """Log ``generator``'s calls (sync and async) under ``name`` from now on.

        ``name`` is registered if it is not yet. The calls are logged by a Generator callback:
        ``on_failure`` when ``error_only`` (only outputs with an ``error``), else ``on_complete``.
        Attaching the same generator under the same name again does nothing.
        """
        register_callback = getattr(generator, "register_callback", None)
        if not callable(register_callback):
            raise TypeError(
                f"cannot trace the calls of a {type(generator).__name__}: it has no "
                "register_callback() (pass a Generator)"
            )
        if name not in self._generator_names_to_files:
            self.register_generator(name)
        attached = self._attached.setdefault(name, weakref.WeakSet())
        if generator in attached:
            return

        def log_generator_call(
            output: GeneratorOutput, input: Any = None, model_kwargs: Any = None
        ) -> None:
            self.log_call(name=name, model_kwargs=model_kwargs, prompt_kwargs=input, output=output)

        register_callback("on_failure" if error_only else "on_complete", log_generator_call)
        attached.add(generator)

    # ----------------------------------------------------------------------- logging
    def log_call(
        self,
        name: str,
        model_kwargs: Optional[Dict[str, Any]],
        prompt_kwargs: Optional[Dict[str, Any]],
        output: GeneratorOutput,
    ) -> GeneratorCallRecord:
        """Append one call of the generator ``name`` to its file; returns the record.

        Raises:
            ValueError: ``name`` is not registered.
            TypeError: ``output`` is not a GeneratorOutput.
        """
        path = self._generator_names_to_files.get(name)
        if path is None:
            raise ValueError(
                f"Generator {name!r} is not registered with the GeneratorCallLogger at "
                f"{self.filepath}; call register_generator({name!r}) first"
            )
        if not isinstance(output, GeneratorOutput):
            raise TypeError(f"output must be a GeneratorOutput, got {type(output).__name__}")
        record = GeneratorCallRecord(
            prompt_kwargs=dict(prompt_kwargs or {}),
            model_kwargs=dict(model_kwargs or {}),
            output=_loggable(output),
            time_stamp=datetime.now().isoformat(),
        )
        row = record.to_json_obj()
        with self._lock:
            append_jsonl(row, path)
        return record

    def load(self, name: str) -> List[GeneratorCallRecord]:
        """The calls logged for ``name``, oldest first (empty before the first call).

        Raises:
            FileNotFoundError: ``name`` is not registered (the error lightrag 0.1 raised).
            ValueError: a line of the file is not a call record.
        """
        path = self._generator_names_to_files.get(name)
        if path is None:
            known = sorted(self._generator_names_to_files)
            raise FileNotFoundError(
                f"Generator {name!r} is not registered with the GeneratorCallLogger at "
                f"{self.filepath} (registered: {known})"
            )
        if not os.path.exists(path):
            return []
        records: List[GeneratorCallRecord] = []
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    records.append(GeneratorCallRecord.from_dict(json.loads(line)))
                except ValueError as e:  # JSONDecodeError is a ValueError too
                    raise ValueError(f"{path}, line {line_no}: not a call record: {e}") from e
        return records

    get_calls = load

    # ---------------------------------------------------------------------- metadata
    def save_meta_data(self, file_path: Optional[str] = None) -> None:
        """Write ``{name: file}`` (merged with what the file already lists) atomically.

        Files inside the logger's folder are stored relative to it, so the folder can move.
        """
        path = file_path or self._metadata_filepath
        merged = self._read_meta_data(path) if os.path.exists(path) else {}
        merged.update(self._generator_names_to_files)
        folder = os.path.abspath(self.filepath)
        stored = {}
        for name, file in merged.items():
            absolute = os.path.abspath(file)
            inside = os.path.commonpath([folder, absolute]) == folder
            stored[name] = os.path.relpath(absolute, folder) if inside else absolute
        atomic_write_text(path, json.dumps(stored, indent=4, ensure_ascii=False))

    def load_meta_data(self, file_path: Optional[str] = None) -> None:
        """Add the ``{name: file}`` entries of a metadata file to this logger's names.

        Raises:
            ValueError: the file is not a JSON object of strings.
        """
        self._generator_names_to_files.update(
            self._read_meta_data(file_path or self._metadata_filepath)
        )

    def _read_meta_data(self, path: str) -> Dict[str, str]:
        """The entries of a metadata file; a missing or empty file has none (0.1 starts fresh)."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            log.warning("call logger metadata %s does not exist; starting with no entries", path)
            return {}
        if not text.strip():
            log.warning("call logger metadata %s is empty; starting with no entries", path)
            return {}
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} is not a call logger metadata file: {e}") from e
        if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
            raise ValueError(f"{path} is not a call logger metadata file: expected {{name: file}}")
        return {name: str(Path(self.filepath) / file) for name, file in raw.items()}
