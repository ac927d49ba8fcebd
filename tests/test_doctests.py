"""The docstring examples of every library module run as doctests.

Each module of the ``lightrag`` package is a test case (``test_module_doctests[lightrag.x.y]``),
run in a temporary working directory. Examples that need a network, a key or a long model run say
``# doctest: +SKIP`` in the module itself. A module whose examples are known to be wrong, in a file
another engineer owns, is listed in ``KNOWN_WRONG`` with the fix, as an expected failure, until it
is fixed there (then it shows as XPASS: remove it from the list).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from typing import List

import pytest

import lightrag

#: module -> why its doctests fail today, and the fix (owned by others; remove once fixed).
KNOWN_WRONG: dict = {}


def library_modules() -> List[str]:
    names = ["lightrag"]
    for info in pkgutil.walk_packages(lightrag.__path__, prefix="lightrag."):
        names.append(info.name)
    return sorted(names)


def _params():
    for name in library_modules():
        marks = []
        if name in KNOWN_WRONG:
            marks.append(pytest.mark.xfail(reason=KNOWN_WRONG[name], strict=False))
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("module_name", list(_params()))
def test_module_doctests(module_name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(module_name)  # every extra is installed by make test
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, module_name) if t.examples]
    failures: List[str] = []
    for test in sorted(tests, key=lambda t: t.name):
        report: List[str] = []
        result = runner.run(test, out=report.append, clear_globs=True)
        if result.failed:
            failures.append("".join(report))
    assert not failures, "\n".join(failures)


def test_every_library_module_is_collected():
    names = library_modules()
    assert "lightrag.components.loaders.auto" in names and "lightrag.cli" in names
    assert len(names) > 100
