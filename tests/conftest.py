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

from typing import Dict, Iterator

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
