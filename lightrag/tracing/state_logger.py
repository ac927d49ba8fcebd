"""``GeneratorStateLogger``: the history of each named Generator's prompt, in one JSON file.

The file (``<save_dir>/<project_name>/generator_state_trace.json`` by default) maps a generator
name to its records, oldest first::

    {"qa": [{"prompt_states": {"type": "Prompt", "data": {...}}, "time_stamp": "..."}]}

:meth:`GeneratorStateLogger.log_prompt` appends a record only when the prompt differs from the last
one logged under that name, and rewrites the file atomically. An existing file is loaded when the
logger is created, so running a program twice with the same prompt adds nothing.

Example:
    >>> import tempfile
    >>> from lightrag.components.model_client import ScriptedClient
    >>> from lightrag.core.generator import Generator
    >>> gen = Generator(model_client=ScriptedClient(), template="Q: {{q}}")
    >>> logger = GeneratorStateLogger(save_dir=tempfile.mkdtemp(), project_name="demo")
    >>> logger.log_prompt(gen, "qa"), logger.log_prompt(gen, "qa")
    (True, False)
    >>> gen.prompt.template = "Question: {{q}}"
    >>> logger.log_prompt(gen, "qa")
    True
    >>> [r.prompt_states["data"]["template"] for r in logger.load()["qa"]]
    ['Q: {{q}}', 'Question: {{q}}']
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set

from lightrag.tracing.records import GeneratorStatesRecord
from lightrag.utils.file_io import atomic_write_text
from lightrag.utils.serialization import default

if TYPE_CHECKING:
    from lightrag.core.generator import Generator

__all__ = ["DEFAULT_STATE_FILENAME", "GeneratorStateLogger", "prompt_states"]

log = logging.getLogger(__name__)

DEFAULT_STATE_FILENAME = "generator_state_trace.json"


def prompt_states(generator: Generator) -> Dict[str, Any]:
    """``generator.prompt.to_dict()``, with the current values of the generator's own prompt
    Parameters (those optimizers change) merged into ``data.prompt_kwargs``.

    Raises:
        TypeError: if ``generator`` has no ``prompt`` with a ``to_dict`` method.
    """
    prompt = getattr(generator, "prompt", None)
    if prompt is None or not callable(getattr(prompt, "to_dict", None)):
        raise TypeError(
            f"cannot log the prompt of a {type(generator).__name__}: it has no 'prompt' "
            "component with a to_dict() method (pass a Generator)"
        )
    states = prompt.to_dict()
    named_parameters = getattr(generator, "named_parameters", None)
    if callable(named_parameters) and isinstance(states.get("data"), dict):
        values = {name: param.data for name, param in named_parameters(recursive=False)}
        if values:
            jsonable = json.loads(json.dumps(values, ensure_ascii=False, default=default))
            states["data"]["prompt_kwargs"] = {
                **(states["data"].get("prompt_kwargs") or {}),
                **jsonable,
            }
    return states


def _record_from_json(value: Any, source: str) -> GeneratorStatesRecord:
    if isinstance(value, dict) and set(value) == {"type", "data"}:
        value = value["data"]  # written through lightrag.utils.serialization.serialize
    if not isinstance(value, dict):
        raise ValueError(f"{source}: a record must be a JSON object, got {value!r}")
    return GeneratorStatesRecord.from_dict(value)


class GeneratorStateLogger:
    """Log the prompt states of named Generators to one JSON file, one history per name.

    Args:
        save_dir: the folder for traces; ``"./traces/"`` when None.
        project_name: a sub-folder of ``save_dir`` (none when None).
        filename: the file name; ``"generator_state_trace.json"`` when None.

    Attributes:
        filepath: the trace file's path.
        _trace_map: ``{generator name: [GeneratorStatesRecord, ...]}``, oldest first.
    """

    def __init__(
        self,
        save_dir: Optional[str] = None,
        project_name: Optional[str] = None,
        filename: Optional[str] = None,
    ) -> None:
        directory = Path(save_dir or "./traces/")
        if project_name:
            directory = directory / project_name
        self.project_name = project_name
        self.filename = filename or DEFAULT_STATE_FILENAME
        self.filepath = str(directory / self.filename)
        self._trace_map: Dict[str, List[GeneratorStatesRecord]] = {}
        self._lock = threading.RLock()
        if os.path.exists(self.filepath):
            self.load(self.filepath)

    def get_log_location(self) -> str:
        """The trace file's path."""
        return self.filepath

    @property
    def generator_names(self) -> Set[str]:
        """Names with at least one record (logged here or loaded from the file)."""
        return set(self._trace_map)

    def log_prompt(self, generator: Generator, name: str) -> bool:
        """Record ``generator``'s prompt under ``name`` if it changed since the last record.

        Returns:
            True when a record was appended (and the file rewritten), False when unchanged.

        Raises:
            ValueError: ``name`` is not a non-empty string.
            TypeError: ``generator`` has no prompt to log.
            RuntimeError: the trace file could not be written (the record is not kept).
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"a generator name must be a non-empty string, got {name!r}")
        record = GeneratorStatesRecord(
            prompt_states=prompt_states(generator), time_stamp=datetime.now().isoformat()
        )
        with self._lock:
            history = self._trace_map.setdefault(name, [])
            if history and history[-1] == record:
                return False
            history.append(record)
            try:
                self.save(self.filepath)
            except OSError as e:
                history.pop()
                if not history:
                    del self._trace_map[name]
                raise RuntimeError(
                    f"could not write the prompt state of generator {name!r} to "
                    f"{self.filepath}: {e}"
                ) from e
        log.debug("logged a new prompt state for generator %r in %s", name, self.filepath)
        return True

    def save(self, filepath: Optional[str] = None) -> None:
        """Write every record to ``filepath`` (default: :attr:`filepath`) atomically."""
        with self._lock:
            data = {
                name: [record.to_json_obj() for record in records]
                for name, records in self._trace_map.items()
            }
        text = json.dumps(data, indent=4, ensure_ascii=False, default=default)
        atomic_write_text(filepath or self.filepath, text)

    def load(self, filepath: Optional[str] = None) -> Dict[str, List[GeneratorStatesRecord]]:
        """Replace the records with those in ``filepath`` (default: :attr:`filepath`).

        An empty file loads as no records. Returns a copy of the loaded ``{name: [records]}``.

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: the file is not a trace file (bad JSON or wrong shape).
        """
        path = filepath or self.filepath
        with open(path, encoding="utf-8") as f:
            content = f.read().strip()
        if not content:
            log.info("trace file %s is empty", path)
            trace_map: Dict[str, List[GeneratorStatesRecord]] = {}
        else:
            try:
                raw = json.loads(content)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path} is not a generator state trace: {e}") from e
            if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
                raise ValueError(
                    f"{path} is not a generator state trace: expected {{generator name: [records]}}"
                )
            trace_map = {
                name: [_record_from_json(r, f"{path} ({name!r})") for r in records]
                for name, records in raw.items()
            }
        with self._lock:
            self._trace_map = trace_map
        return {name: list(records) for name, records in trace_map.items()}
