"""The package has no import cycles (issue 23): every import statement of every module in
``lightrag/`` counts, lazy ones inside functions and ``TYPE_CHECKING`` ones included."""

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent / "lightrag"


def module_name(path: Path, root: Path = ROOT) -> str:
    name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def import_graph(root: Path = ROOT) -> nx.DiGraph:
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


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
