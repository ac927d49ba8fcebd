"""Setting up a store's tables without writing when they are in shape: a mixin of
:class:`~lightrag.components.storage.sql_db.SQLDatabase`, whose statements, transactions and
dialect it uses.

Every store runs its ``CREATE TABLE/INDEX IF NOT EXISTS`` and layout migrations when it opens.
Run in a write transaction each time, opening a store waited for another process's writer lock
(a reader stopped behind a writer paused with Ctrl-Z). :meth:`SchemaSetup.ensure_schema` runs the
set-up first with writes forbidden, skipping schema statements with nothing to do, and only when
something must change runs it again in a write transaction.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable, Optional

#: schema statements that change nothing when their object exists (or, for DROP, does not)
_CREATE_IF_NOT_EXISTS = re.compile(
    r"\s*CREATE\s+(?:UNIQUE\s+)?(TABLE|INDEX)\s+IF\s+NOT\s+EXISTS\s+(\w+)", re.I)
_DROP_IF_EXISTS = re.compile(r"\s*DROP\s+(TABLE|INDEX)\s+IF\s+EXISTS\s+(\w+)", re.I)


class WriteNeeded(Exception):
    """Raised inside an :meth:`SchemaSetup.ensure_schema` probe by the first statement that
    would write."""


class SchemaSetup:
    """``ensure_schema`` and the check that lets ``execute`` skip a schema statement with
    nothing to do (a mixin)."""

    # provided by SQLDatabase
    _mutex: Any
    _probing: Optional[int]
    in_transaction: bool
    transaction: Callable[[], Any]
    has_table: Callable[[str], bool]
    has_index: Callable[[str], bool]

    def _exists_already(self, sql: str) -> bool:
        """Whether ``sql`` is a schema statement with nothing to do: ``CREATE ... IF NOT
        EXISTS`` of an object there, or ``DROP ... IF EXISTS`` of one that is not."""
        found = _CREATE_IF_NOT_EXISTS.match(sql) or _DROP_IF_EXISTS.match(sql)
        if found is None:
            return False
        kind, name = found.group(1).upper(), found.group(2)
        there = self.has_table(name) if kind == "TABLE" else self.has_index(name)
        return there if found.re is _CREATE_IF_NOT_EXISTS else not there

    def ensure_schema(self, setup: Callable[[], None]) -> None:
        """Run ``setup`` (tables created, layouts migrated: idempotent, it checks before it
        changes) so that a store already in shape is not written at all. ``setup`` first runs
        with writes forbidden: schema statements with nothing to do are skipped, and the first
        real write stops it; then it runs again in a write transaction. Opening a store so
        never waits for another process's writer lock, while a store that needs a change gets
        it atomically, its checks made under the lock."""
        if self.in_transaction or self._probing == threading.get_ident():
            setup()  # (a nested call: the outer probe or transaction decides)
            return
        with self._mutex:
            self._probing = threading.get_ident()
            try:
                setup()
                return
            except WriteNeeded:
                pass
            finally:
                self._probing = None
        with self.transaction():
            setup()
