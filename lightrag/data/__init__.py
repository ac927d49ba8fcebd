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
