"""Shared test set-up: the markers of tests that need more than this process, and a PostgreSQL
server for the tests that need one.

Markers (declared in pyproject.toml; ``make test-fast`` deselects all but ``needs_api_key``):

* ``slow``: loads a real local model, or races processes for many seconds;
* ``postgres``: needs the throwaway PostgreSQL server of :func:`postgres_server`;
* ``browser``: drives Chromium through Selenium;
* ``ray``: starts a local Ray cluster;
* ``subprocess``: starts, kills or serves from other processes (crash and lock tests, a Chroma
  server, a CLI run end to end) and takes seconds.

A test file marks its own tests (``pytestmark = pytest.mark.ray``), except that every test using
a PostgreSQL server fixture (``FIXTURE_MARKS``) is marked ``postgres`` here. ``MARKS`` marks tests
in files whose owners have not done it yet; move an entry into its file and drop it here.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Dict, Iterator, Optional, Set

import pytest
from pg_server import PostgresServer, skip_reason

#: file name or node id (``file::test``) -> marker, for the files that do not mark themselves
MARKS: Dict[str, str] = {
    "test_webui_browser.py": "browser",
    "test_sdk_clients_loopback.py::test_cli_index_and_query_with_openai_config": "subprocess",
    "test_server_intake.py::test_acknowledged_documents_survive_sigkill": "subprocess",
}

#: fixture (used directly or through another fixture) -> marker of the tests that use it
FIXTURE_MARKS: Dict[str, str] = {
    "postgres_server": "postgres",
    "pg": "postgres",  # tests/test_postgres_store.py's own server fixture
}


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    for item in items:
        file_name = item.path.name
        test_name = item.name.split("[", 1)[0]
        markers = {MARKS.get(file_name), MARKS.get(f"{file_name}::{test_name}")}
        markers |= {FIXTURE_MARKS.get(name) for name in getattr(item, "fixturenames", ())}
        for marker in sorted(m for m in markers if m):
            item.add_marker(getattr(pytest.mark, marker))


_MODULE_MARK = re.compile(r"^pytestmark = pytest\.mark\.(\w+)\s*$", re.M)
_MARK_WORDS = re.compile(r"\b(?!and\b|or\b|not\b)[A-Za-z_]\w*\b")


def _always_deselected(expression: str, marks: Set[str]) -> bool:
    """True when ``-m expression`` deselects every test carrying ``marks``, whatever other
    markers a test adds (every combination of the expression's other names is tried)."""
    others = sorted(set(_MARK_WORDS.findall(expression)) - marks)
    try:
        from _pytest.mark.expression import Expression  # pytest's own -m parser

        compiled = Expression.compile(expression)
        for values in itertools.product((False, True), repeat=len(others)):
            on = marks | {name for name, value in zip(others, values) if value}
            if compiled.evaluate(lambda name, on=on, **_: name in on):
                return False
    except Exception:  # another pytest, or marker arguments: collect as usual
        return False
    return True


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> Optional[bool]:
    """Do not import a test file that ``-m`` deselects whole (its module-level ``pytestmark`` or
    its ``MARKS`` entry): ``make test-fast`` then skips importing spaCy, Ray, Selenium..."""
    expression = config.getoption("markexpr", default="")
    if not expression or not collection_path.name.startswith("test_") \
            or collection_path.suffix != ".py":
        return None
    marks = set(_MODULE_MARK.findall(collection_path.read_text(encoding="utf-8")))
    marks |= {MARKS[collection_path.name]} if collection_path.name in MARKS else set()
    if marks and _always_deselected(expression, marks):
        return True
    return None


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server for the whole run (``tests/pg_server.py``: loopback only,
    trust authentication, no durability); skips where it cannot start. Tests share it: give
    each its own table, schema or workspace."""
    reason = skip_reason()
    if reason:
        pytest.skip(f"no PostgreSQL server: {reason}")
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def open_graph_db(request, tmp_path, monkeypatch):
    """A function opening the same database again (a new connection each call): one SQLite
    file, or one fresh workspace of the throwaway PostgreSQL server."""
    from lightrag.components.storage.sql_db import SQLiteDatabase

    if request.param == "sqlite":
        path = str(tmp_path / "g.sqlite3")
        return lambda: SQLiteDatabase(path)
    monkeypatch.setenv("LIGHTRAG_TEST_GRAPH_DSN", request.getfixturevalue("postgres_server").dsn)
    import uuid

    from lightrag.components.storage.postgres_db import PostgresDatabase

    workspace = f"t_{uuid.uuid4().hex[:10]}"
    return lambda: PostgresDatabase(dsn_env="LIGHTRAG_TEST_GRAPH_DSN", workspace=workspace)
