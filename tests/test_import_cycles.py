"""The package has no import cycles (issue 23): every import statement of every module in
``lightrag/`` counts, lazy ones inside functions and ``TYPE_CHECKING`` ones included."""

import networkx as nx
from import_graph import import_graph


def test_the_package_has_no_import_cycles():
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def test_the_checker_finds_a_lazy_cycle(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import f\n")
    (package / "b.py").write_text("def f():\n    from pkg import a\n    return a\n")
    (package / "c.py").write_text("import pkg.a\n")
    graph = import_graph(package)
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [
        ["pkg.a", "pkg.b"]]
