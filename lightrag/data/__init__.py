"""Small sample corpora shipped with the package, for demos and tests (one document per line)."""

from __future__ import annotations

from importlib import resources
from typing import List


def load_sample_corpus(name: str) -> List[str]:
    """The documents of the packaged corpus ``name`` (e.g. ``"planets"``)."""
    path = resources.files(__package__).joinpath(f"{name}.txt")
    if not path.is_file():
        raise FileNotFoundError(f"no sample corpus named {name!r}")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_sample_docs(name: str = "sample_docs") -> List[tuple[str, str]]:
    """``(file name, text)`` of each document of a packaged folder (``sample_docs``: five short
    articles about space missions, used by ``lightrag demo``)."""
    folder = resources.files(__package__).joinpath(name)
    if not folder.is_dir():
        raise FileNotFoundError(f"no sample document folder named {name!r}")
    files = sorted((f for f in folder.iterdir() if f.name.endswith((".md", ".txt"))),
                   key=lambda f: f.name)
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]
