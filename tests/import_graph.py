"""What a module imports, read from its source (every import statement, lazy and
``TYPE_CHECKING`` ones included): for the tests of the package's import structure."""

import ast
from pathlib import Path

import networkx as nx


def imported_modules(path: Path) -> set:
    """The modules ``path`` imports by absolute name (``import a.b``, ``from a.b import c``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


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
