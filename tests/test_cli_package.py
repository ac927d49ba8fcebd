"""The ``lightrag`` command is one package (issue 23): ``python -m lightrag.cli`` runs it, every
command group registers from its own module, and the server never imports the CLI (the CLI's
``serve`` builds the server, not the other way round)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from import_graph import imported_modules

import lightrag
from lightrag.cli import main, make_parser

PACKAGE = Path(lightrag.__file__).parent
COMMANDS = {"demo", "demo-rag", "index", "query", "docs", "status", "delete", "export",
            "print-config", "version", "serve", "bench-prompts", "migrate", "check", "import-kg"}


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "lightrag.cli", "--version"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == f"lightrag {lightrag.__version__}"


def test_every_command_is_registered():
    parser = make_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(commands) == COMMANDS
    for name in COMMANDS - {"index", "query", "delete", "export", "bench-prompts", "import-kg"}:
        assert callable(parser.parse_args([name]).func)
    assert main(["version"]) == 0




def test_the_server_never_imports_the_cli():
    for path in (PACKAGE / "server").rglob("*.py"):
        assert not {m for m in imported_modules(path) if m.startswith("lightrag.cli")}, path
    assert not (PACKAGE / "cli.py").exists() and not list(PACKAGE.glob("cli_*.py"))


def test_bench_cli_holds_no_command_line_code():
    assert "argparse" not in imported_modules(PACKAGE / "optim" / "bench_cli.py")
