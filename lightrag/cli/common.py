"""What the ``lightrag`` commands share: finding a config, opening a store, writing output.

:func:`graph_config` is the one place a GraphRAG config is read from the command line's
``--config``, ``--working-dir`` and ``--workspace``; ``lightrag serve`` builds its GraphRAGs
(one per workspace) from it too.

Example:
    >>> import argparse
    >>> args = argparse.Namespace(config=None, working_dir="/tmp/store", workspace="acme")
    >>> graph_config(args)["component_config"]["workspace"]
    'acme'
    >>> args.workspace = "default"  # the default workspace, as the server names it
    >>> "workspace" in graph_config(args)["component_config"]
    False
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Optional

from lightrag.utils.config import build, load_config
from lightrag.utils.secrets import redact_text

DEFAULT_GRAPH_CONFIG = "graph_rag_default.yaml"
DEFAULT_RAG_CONFIG = "numpy_rag.yaml"
DEFAULT_WORKING_DIR = "./lightrag_storage"
DEFAULT_WORKSPACE = "default"  #: the name of the default workspace (the server's too)
#: the workspace names ``lightrag serve`` accepts (``lightrag.server.auth.WORKSPACE_NAME``)
SERVED_WORKSPACE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

__all__ = ["CliError", "graph_config", "load_rag", "open_store", "packaged_config", "out", "stage"]


class CliError(Exception):
    """A user-facing error: printed as ``lightrag: error: ...`` with exit status 2."""


def packaged_config(name: str) -> Path:
    """The path of a config file shipped in ``lightrag/configs``."""
    return Path(str(resources.files("lightrag.configs").joinpath(name)))


# C0/C1 controls, and the bidirectional overrides that reorder what a terminal shows
_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")
_CONTROL_OR_NEWLINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")


def terminal_safe(text: str, one_line: bool = False) -> str:
    """``text`` with its control characters shown as ``\\x1b``-style escapes: documents, file
    names and model output are untrusted, and an escape sequence printed raw can clear the
    screen, retitle the terminal or write the clipboard (OSC 52). ``one_line`` escapes line
    breaks too (a file name with a newline would forge a row of a table)."""
    pattern = _CONTROL_OR_NEWLINE if one_line else _CONTROL
    return pattern.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


class TerminalLogFormatter(logging.Formatter):
    """The command line's log lines with control characters escaped (:func:`terminal_safe`): a
    warning naming a skipped file must not carry the file name's escape sequences to the
    terminal either. Lines and tracebacks pass through
    :func:`~lightrag.utils.secrets.redact_text`: a provider SDK's exception carries what the
    provider echoed of the request (its key, the ``Basic`` value of a base URL's password)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(redact_text(super().format(record)))


def out(text: str = "") -> None:
    """A line on stdout (flushed: the commands' output is read by pipes as it comes), its
    control characters escaped (:func:`terminal_safe`)."""
    sys.stdout.write(terminal_safe(text) + "\n")
    sys.stdout.flush()


def stage(text: str) -> None:
    """A progress line on stderr (stdout keeps only the answer, for pipes)."""
    sys.stderr.write(f"[{text}]\n")
    sys.stderr.flush()


def config_path(name: Optional[str]) -> Path:
    """A config file: the given path, or a packaged config named by its file name
    (``graph_rag_local_llm.yaml``) when no such file exists here."""
    if not name:
        return packaged_config(DEFAULT_GRAPH_CONFIG)
    path = Path(name)
    if not path.exists() and path.name == name and packaged_config(name).is_file():
        return packaged_config(name)
    return path


def graph_config(args: argparse.Namespace) -> Dict[str, Any]:
    """The GraphRAG config of ``--config`` with ``--working-dir`` and ``--workspace`` applied."""
    config = load_config(config_path(getattr(args, "config", None)))
    overrides = config.setdefault("component_config", {})
    if getattr(args, "working_dir", None):
        overrides["working_dir"] = args.working_dir
    workspace = getattr(args, "workspace", None)
    if workspace == DEFAULT_WORKSPACE:
        _refuse_unserved_default(overrides)  # the config's own workspace, as the server's alias
    elif workspace:
        if not SERVED_WORKSPACE.match(workspace):
            logging.getLogger(__name__).warning(
                "workspace %r cannot be served by `lightrag serve`, whose workspace names are 1 to "
                "64 letters, digits, '_' or '-'", workspace)
        overrides["workspace"] = workspace
    return config


def _refuse_unserved_default(settings: Dict[str, Any]) -> None:
    """``--workspace default`` names the default workspace, as the server's ``/w/default`` and
    ``LIGHTRAG-WORKSPACE: default`` do; it used to make a store in ``WORKING_DIR/default/``,
    which no server ever serves (the server reads that name as its default store). Such a
    store is named instead of being left aside silently."""
    working_dir = settings.get("working_dir", DEFAULT_WORKING_DIR)
    if settings.get("storage", "sqlite") != "sqlite" or not isinstance(working_dir, str):
        return
    orphan = Path(working_dir) / DEFAULT_WORKSPACE / "lightrag.sqlite3"
    if orphan.is_file():
        raise CliError(f"--workspace {DEFAULT_WORKSPACE} is the default workspace (the store in "
                       f"{Path(working_dir).resolve()}), but {orphan.parent.resolve()} holds a store "
                       "an older lightrag made for that name, which no server serves: move it to "
                       "another workspace name (a folder of the working dir) or out of the way")


def load_rag(args: argparse.Namespace) -> Any:
    """The GraphRAG of the parsed arguments (its store is created when missing)."""
    return build(graph_config(args))


def index_hint(where: Any) -> str:
    """The message of a command that needs documents run on an empty or missing store."""
    return (f"no documents indexed in {where}: run `lightrag index PATH...` first "
            "(or pass --working-dir / --config to name another store)")


def check_store_exists(config: Dict[str, Any]) -> None:
    """Raise :class:`CliError` when an embedded (SQLite) store's working directory is missing
    (a PostgreSQL store has no folder)."""
    settings = config.get("component_config", {})
    working_dir = settings.get("working_dir", DEFAULT_WORKING_DIR)
    embedded = settings.get("storage", "sqlite") == "sqlite"
    if embedded and isinstance(working_dir, str) and not Path(working_dir).exists():
        raise CliError(index_hint(Path(working_dir).resolve()))


def open_store(args: argparse.Namespace) -> Any:
    """The GraphRAG of an existing, non-empty store, or a CliError with the index hint."""
    config = graph_config(args)
    check_store_exists(config)
    rag = build(config)
    counts = rag.index.doc_status.get_status_counts()
    if not sum(int(v) for v in counts.values()):
        raise CliError(index_hint(rag.index.db.describe()))
    return rag


class StoredPaths:
    """The stored documents' ids by file path, read in one pass over the documents' paths alone
    (``DocStatusStorage.file_paths``): :meth:`ids` finds a path as stored, or the same file by
    its absolute path (indexed from another folder)."""

    def __init__(self, rag: Any) -> None:
        self.by_path: Dict[str, List[str]] = {}
        self.by_absolute: Dict[str, List[str]] = {}
        for doc_id, path in rag.doc_status.file_paths():
            self.by_path.setdefault(path, []).append(doc_id)
            self.by_absolute.setdefault(os.path.abspath(path), []).append(doc_id)

    def ids(self, path: str) -> List[str]:
        """The ids of the documents stored for the file ``path`` (none: an empty list)."""
        return self.by_path.get(path) or self.by_absolute.get(os.path.abspath(path), [])


def references(result: Any) -> List[Dict[str, Any]]:
    """The reference list of a QueryResult (empty when it has none)."""
    return list(result.references or [])


def cited_references(result: Any, answer: str) -> List[Dict[str, Any]]:
    """The references ``answer`` cites (``[n]``); all of them when it cites none (a generated
    answer without citations, a context): the sources a reader checks the answer against."""
    from lightrag.components.graph_rag.grounding import cited_ids

    cited = cited_ids(answer)
    refs = references(result)
    chosen = [r for r in refs if str(r.get("reference_id")) in cited]
    return chosen or refs


def print_insert_summary(rag: Any, result: Any) -> None:
    """Documents processed/skipped/failed and the store's size after an insert."""
    status = rag.status()
    superseded = getattr(result, "superseded", [])
    out(f"documents: {len(result.processed)} processed, {len(result.skipped)} already indexed, "
        f"{len(result.failed)} failed"
        + (f", {len(superseded)} deleted or replaced meanwhile by another request" if superseded else ""))
    out(f"store: {status['chunks']} chunks, {status['entities']} entities, "
        f"{status['relations']} relations  ({rag.index.db.describe()})")
    for doc_id, error in result.failed.items():
        out(f"  FAILED {doc_id}: {error}")
