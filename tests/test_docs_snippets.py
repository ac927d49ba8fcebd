"""Every shell and Python snippet of README.md and docs/*.md runs as written.

A snippet is a fenced block whose language is ``python`` or ``bash``/``sh``/``shell`` (blocks
without a language, ``text``, ``yaml`` ... are output or config, not run). Each runs in a fresh
subprocess, in a temporary folder that links the repository's top-level files and folders (so
``.venv/bin/python use_cases/...`` and ``lightrag/configs/...`` resolve, while files a snippet
writes stay in the temporary folder), with ``.venv/bin`` first on ``PATH`` and no API keys.

An HTML comment on the line before a block changes that:

* ``<!-- snippet: needs-key -->``: needs an API key: skipped (visibly, with that reason);
* ``<!-- snippet: needs-server -->``: needs a running server or cluster: skipped;
* ``<!-- snippet: skip REASON -->``: skipped with REASON (e.g. a benchmark of many minutes);
* ``<!-- snippet: continues -->``: a Python block run after the file's previous Python blocks
  (in one process), for examples that build on the one before.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN_LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "sh": "shell",
                 "shell": "shell", "console": "shell"}
MARKER = re.compile(r"<!--\s*snippet:\s*([\w-]+)\s*(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
TIMEOUT_S = 600
#: a snippet that mentions one of these loads real local models (marked slow: tens of seconds);
#: ``lightrag serve`` without --config serves the packaged offline config (spaCy, MiniLM)
REAL_MODELS = ("lightrag index", "lightrag query", "lightrag demo", "lightrag serve",
               "graph_rag_default", "LocalLLMClient", "LocalEmbedderClient")


@dataclass
class Snippet:
    path: Path
    line: int
    language: str
    code: str
    marker: Optional[str] = None
    reason: str = ""
    previous: Optional[Snippet] = None  # the block a 'continues' block follows

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def extract(path: Path) -> List[Snippet]:
    """The runnable snippets of a markdown file, in order, with their markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    snippets: List[Snippet] = []
    last_python: Optional[Snippet] = None
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = match.group(1), match.group(2), match.group(3).lower()
        start = i
        body: List[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        kind = RUN_LANGUAGES.get(language)
        if kind is None:
            continue
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        marker = MARKER.search(lines[j]) if j >= 0 else None
        snippet = Snippet(path, start + 1, kind, "\n".join(body) + "\n",
                          marker.group(1) if marker else None, marker.group(2) if marker else "")
        if snippet.marker == "continues":
            if kind != "python" or last_python is None:
                raise ValueError(f"{snippet.id}: 'continues' needs an earlier Python block")
            snippet.previous = last_python
        if kind == "python" and snippet.marker not in ("needs-key", "needs-server", "skip"):
            last_python = snippet
        snippets.append(snippet)
    return snippets


def all_snippets() -> List[Snippet]:
    return [s for path in DOCS for s in extract(path)]


def _python_source(snippet: Snippet) -> str:
    chain: List[Snippet] = []
    node: Optional[Snippet] = snippet
    while node is not None:
        chain.append(node)
        node = node.previous if node.marker == "continues" else None
    return "\n".join(s.code for s in reversed(chain))


LINKED = ["lightrag", "use_cases", "benchmarks", "docs", "tests", "README.md", "pyproject.toml",
          "constraints.txt", "Makefile", ".venv"]


def _workspace(tmp_path: Path) -> Path:
    for name in LINKED:
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and k not in ("LIGHTRAG_API_KEYS", "OPENAI_BASE_URL")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)  # .venv has lightrag installed; other venvs must not see it
    return env


def _param(snippet: Snippet) -> Any:
    slow = any(word in _python_source(snippet) if snippet.language == "python" else
               word in snippet.code for word in REAL_MODELS)
    return pytest.param(snippet, id=snippet.id, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("snippet", [_param(s) for s in all_snippets()])
def test_snippet_runs(snippet: Snippet, tmp_path: Path):
    if snippet.marker == "needs-key":
        pytest.skip("needs an API key" + (f": {snippet.reason}" if snippet.reason else ""))
    if snippet.marker == "needs-server":
        pytest.skip("needs a running server" + (f": {snippet.reason}" if snippet.reason else ""))
    if snippet.marker == "skip":
        pytest.skip(snippet.reason or "marked skip")
    cwd = _workspace(tmp_path)
    if snippet.language == "python":
        command = [sys.executable, "-c", _python_source(snippet)]
    else:
        command = ["bash", "-euo", "pipefail", "-c", snippet.code]
    result = subprocess.run(command, cwd=cwd, env=_env(), capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode == 0, (
        f"{snippet.id} failed ({result.returncode}):\n{snippet.code}\n--- stdout\n"
        f"{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")


def test_extractor_reads_markers_and_continuations(tmp_path: Path):
    doc = tmp_path / "x.md"
    doc.write_text("Text\n\n```python\nx = 1\n```\n\n<!-- snippet: continues -->\n```python\n"
                   "print(x)\n```\n\n<!-- snippet: needs-key OPENAI_API_KEY -->\n```bash\n"
                   "lightrag query hi\n```\n\n```\nplain output\n```\n\n```yaml\na: 1\n```\n")
    first, second, third = extract(doc)
    assert (first.language, first.code, first.marker) == ("python", "x = 1\n", None)
    assert second.marker == "continues" and _python_source(second) == "x = 1\n\nprint(x)\n"
    assert (third.language, third.marker, third.reason) == ("shell", "needs-key", "OPENAI_API_KEY")


def code_lines(path: Path) -> List[tuple]:
    """``(line number, text)`` of every line inside a fenced block, whatever its language."""
    found, fence = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is not None:
            found.append((number, line))
    return found


def test_install_instructions_use_the_repository():
    """PyPI's ``lightrag`` is another project: no code block installs it, nor does the README."""
    pypi = re.compile(r"pip install\s+(?:-U\s+)?['\"]?lightrag(?:\[|['\"]?(?:\s|$))")
    for path in DOCS:
        for number, line in code_lines(path):
            assert not pypi.search(line), f"{path.name}:{number}: {line.strip()}"
    for number, line in enumerate((ROOT / "README.md").read_text().splitlines(), start=1):
        assert not pypi.search(line) or "different project" in line, f"README.md:{number}"
