"""``OnnxSentenceEncoder``: a sentence-transformers mean-pooling model run by ONNX Runtime.

The same vectors as ``SentenceTransformer.encode`` (cosine > 0.9999 against torch for the float32
model; about 0.994 on average for int8, 0.998 for int8-ffn, see
``docs/benchmarks/index_throughput.md``) in less CPU time: the model is exported once
(:mod:`~lightrag.components.onnx_encoder.export`), then each batch is tokenised by the model's fast
tokenizer, run by an ``onnxruntime.InferenceSession``, mean-pooled over its real tokens and
L2-normalised. All texts of a call are tokenised first and run longest first in batches of similar
token length under a padded-token budget (:func:`token_batches`; padding was 42% of the model's work
on a MuSiQue index with batches of 64 texts), and come back in input order.

Batches run side by side, one per CPU thread, each on a single ONNX Runtime thread (``threads``
batches at once): MiniLM's operators are small, and splitting each of them over the cores costs a
wake-up and a join per operator, which one whole batch per core does not (less CPU time for the
same vectors, see ``docs/benchmarks/index_throughput.md`` round 4).

``runtime="openvino"`` runs the same exported file with OpenVINO instead (it reads ONNX Runtime's
fused operators), one inference stream per thread. On a CPU with native bfloat16 arithmetic
(AVX512-BF16 or AMX) OpenVINO multiplies in bfloat16 with float32 accumulation: MiniLM's vectors
stay within a mean cosine of 0.99999 of float32 (minimum 0.99994 on MuSiQue texts) in half the CPU
time; elsewhere it runs float32 (``precision`` forces either).

Supported: a model folder whose ``modules.json`` is Transformer -> Pooling (mean tokens) [->
Normalize], as all-MiniLM-L6-v2 and most sentence-transformers BERT-style models are. Anything
else is refused with a clear error (use the torch backend for it).
"""

from __future__ import annotations

import functools
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.onnx_encoder.export import exported_model

log = logging.getLogger(__name__)

__all__ = ["OnnxSentenceEncoder", "check_mean_pooling_model", "token_batches"]

Encoded = Tuple[List[int], List[int]]
"""One text's ``(input_ids, token_type_ids)``."""

RUNTIMES = ("onnxruntime", "openvino")
PRECISIONS = ("f32", "bf16")
DEFAULT_BATCH_TOKENS = 512
"""Padded tokens per model run: batches of short texts stay large, long texts go a few at a
time (see ``docs/benchmarks/index_throughput.md``)."""

_KNOWN_MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read {path}: {e}") from e


def check_mean_pooling_model(model_dir: Path) -> int:
    """The maximum sequence length of a Transformer -> mean Pooling [-> Normalize] model folder;
    ``ValueError`` naming what differs for any other layout."""
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        raise ValueError(f"{model_dir} has no modules.json: not a sentence-transformers model folder")
    kinds = [m.get("type", "") for m in _read_json(modules_file)]
    if kinds[:2] != list(_KNOWN_MODULES[:2]) or any(k not in _KNOWN_MODULES for k in kinds):
        raise ValueError(f"the onnx backend runs Transformer -> Pooling [-> Normalize] models only; "
                         f"{model_dir} has {kinds}")
    pooling_dir = next(m["path"] for m in _read_json(modules_file) if m["type"].endswith("Pooling"))
    pooling = _read_json(model_dir / pooling_dir / "config.json")
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    if modes != ["pooling_mode_mean_tokens"]:
        raise ValueError(f"the onnx backend does mean pooling only; {model_dir} asks for {modes}")
    settings = model_dir / "sentence_bert_config.json"
    limit = _read_json(settings).get("max_seq_length") if settings.is_file() else None
    return int(limit or 512)


class OnnxSentenceEncoder:
    """Embed texts with the ONNX export of a sentence-transformers model.

    Args:
        model_dir: a local sentence-transformers model folder.
        quantize: run a dynamic int8 model instead of float32: ``"int8"`` (or ``True``, every
            MatMul) or ``"int8-ffn"`` (the feed-forward up-projections only).
        threads: batches run at once, each on one CPU thread (``None``: one per usable core).
        cache_dir: where exports are cached (default ``~/.cache/lightrag``).
        max_batch_tokens: padded tokens per model run (a batch of long texts holds fewer texts).
        runtime: ``"onnxruntime"`` (default) or ``"openvino"`` (needs the ``openvino`` package).
        precision: OpenVINO's arithmetic, ``"f32"`` or ``"bf16"`` (``None``: bf16 where the CPU
            has it natively, else f32); ONNX Runtime always runs the file's own types.
    """

    def __init__(self, model_dir: str | os.PathLike[str], quantize: bool | str = False,
                 threads: Optional[int] = None, cache_dir: Optional[str | os.PathLike[str]] = None,
                 max_batch_tokens: int = DEFAULT_BATCH_TOKENS, runtime: str = "onnxruntime",
                 precision: Optional[str] = None) -> None:
        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r}; choose one of {', '.join(RUNTIMES)}")
        if precision is not None and precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
        self.model_dir = Path(model_dir)
        self.max_seq_length = check_mean_pooling_model(self.model_dir)
        self.quantize = quantize
        self.path = exported_model(self.model_dir, quantize=quantize, cache_dir=cache_dir)
        if max_batch_tokens < 1:
            raise ValueError(f"max_batch_tokens must be at least 1, got {max_batch_tokens}")
        self.max_batch_tokens = int(max_batch_tokens)
        self.threads = max(1, int(threads)) if threads else usable_cores()
        self.runtime = runtime
        if runtime == "openvino":
            self._run = _OpenVinoRunner(self.path, self.threads, precision)
            self.precision = self._run.precision
        else:
            self._run = _OnnxRuntimeRunner(self.path)
            self.precision = None
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="onnx-encoder") \
            if self.threads > 1 else None
        self.input_names = self._run.input_names
        self.tokenizer, self.pad_id = _fast_tokenizer(self.model_dir, self.max_seq_length)
        self.dimension = self._run.dimension
        log.info("%s encoder %s (%s, %s, %d threads) ready", runtime, self.model_dir.name,
                 self.path.name, self.precision or "file types", self.threads)

    def encode(self, texts: Sequence[str], batch_size: int = 64, normalize: bool = True) -> np.ndarray:
        """A float32 matrix with one (unit, if ``normalize``) row per text, in input order.

        All texts are tokenised first; the model then runs on batches of texts of similar token
        length (:func:`token_batches`: at most ``batch_size`` texts and about
        :attr:`max_batch_tokens` padded tokens each), so little of its work is padding."""
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise TypeError("encode takes a sequence of str")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        encoded = self.tokenizer(list(texts))
        lengths = [len(ids) for ids, _ in encoded]
        batches = token_batches(lengths, batch_size, self.max_batch_tokens)
        if self._pool is None or len(batches) < 2:
            for rows in batches:
                self._fill(out, encoded, rows)
        else:  # list() waits for every batch and re-raises the first error
            list(self._pool.map(functools.partial(self._fill, out, encoded), batches))
        if normalize and len(texts):
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out

    def _fill(self, out: np.ndarray, encoded: List[Encoded], rows: np.ndarray) -> None:
        """Write the vectors of the texts ``rows`` (one batch) into their rows of ``out``."""
        out[rows] = self._encode_batch([encoded[i] for i in rows])

    def _encode_batch(self, encoded: List[Encoded]) -> np.ndarray:
        """Mean-pooled (not normalised) vectors of one batch."""
        width = max(len(ids) for ids, _ in encoded)
        input_ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        type_ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, (ids, types) in enumerate(encoded):
            input_ids[row, :len(ids)] = ids
            type_ids[row, :len(types)] = types
            mask[row, :len(ids)] = 1
        arrays = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": type_ids}
        hidden = self._run({name: arrays[name] for name in self.input_names})
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)


class _OnnxRuntimeRunner:
    """Runs the model file with an ONNX Runtime session, each call on one thread (the calls
    themselves run side by side): ``runner(inputs) -> last_hidden_state``."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.dimension = int(self.session.get_outputs()[0].shape[-1])

    def __call__(self, inputs: dict) -> np.ndarray:
        return self.session.run(None, inputs)[0]


class _OpenVinoRunner:
    """Runs the model file with OpenVINO on the CPU: one inference stream (and request) per
    calling thread, each stream on one core, so ``threads`` batches run at once as with ONNX
    Runtime. ``precision=None`` keeps OpenVINO's own choice (bf16 on CPUs with native bf16).

    A batch's inputs are written into its request's tensors (reshaped to the batch) by one
    thread at a time, then the requests infer side by side: two threads reshaping and filling
    their requests at once hung for good in OpenVINO 2026.4 on 2 cores (both threads stopped in
    its input copy, ``update_tensor``, in two of three full test runs of one day), as others
    report for requests that take new shapes concurrently. The copy is microseconds of a batch's
    milliseconds."""

    def __init__(self, path: Path, threads: int, precision: Optional[str]) -> None:
        import threading

        import openvino as ov

        core = ov.Core()
        config: dict = {"NUM_STREAMS": threads, "INFERENCE_NUM_THREADS": threads}
        if precision is not None:
            config["INFERENCE_PRECISION_HINT"] = precision
        self.model = core.compile_model(core.read_model(str(path)), "CPU", config)
        chosen = str(self.model.get_property("INFERENCE_PRECISION_HINT")).lower()
        self.precision = "bf16" if "bf16" in chosen or "bfloat16" in chosen else "f32"
        self.input_names = [port.get_any_name() for port in self.model.inputs]
        self.dimension = int(self.model.outputs[0].get_partial_shape()[-1].get_length())
        self._local = threading.local()
        self._inputs_lock = threading.Lock()

    def __call__(self, inputs: dict) -> np.ndarray:
        request = getattr(self._local, "request", None)
        if request is None:
            request = self._local.request = self.model.create_infer_request()
        with self._inputs_lock:
            for name, values in inputs.items():
                tensor = request.get_tensor(name)
                if tuple(tensor.shape) != values.shape:
                    tensor.shape = values.shape
                tensor.data[:] = values
        request.infer()
        return np.array(request.get_output_tensor(0).data)


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def token_batches(lengths: Sequence[int], batch_size: int, max_tokens: int) -> List[np.ndarray]:
    """Row indices of ``lengths`` grouped into batches, longest texts first: each batch holds
    texts of similar length, at most ``batch_size`` of them and no more than ``max_tokens``
    tokens once padded to its longest (always at least one text)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    batches: List[np.ndarray] = []
    start = 0
    while start < len(order):
        longest = max(int(lengths[order[start]]), 1)
        size = max(1, min(batch_size, max_tokens // longest))
        batches.append(order[start:start + size])
        start += size
    return batches


def _fast_tokenizer(model_dir: Path, max_length: int) -> Tuple[Callable[[List[str]], List[Encoded]], int]:
    """``(tokenize, pad_id)``: ``tokenize(texts)`` gives each text's ``(input_ids,
    token_type_ids)``, unpadded and cut at ``max_length``. The model's ``tokenizer.json`` is run
    by the ``tokenizers`` library directly (transformers' AutoTokenizer gives the same ids but
    its import costs a fresh process about a second); AutoTokenizer when there is no such file."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(str(model_dir))

        def auto_tokenize(texts: List[str]) -> List[Encoded]:
            if not texts:
                return []
            batch = auto(texts, truncation=True, max_length=max_length)
            types = batch.get("token_type_ids") or [[0] * len(ids) for ids in batch["input_ids"]]
            return list(zip(batch["input_ids"], types))

        return auto_tokenize, int(auto.pad_token_id or 0)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    pad_id = int((tokenizer.padding or {}).get("pad_id", 0))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)

    def tokenize(texts: List[str]) -> List[Encoded]:
        return [(e.ids, e.type_ids) for e in tokenizer.encode_batch(texts)]

    return tokenize, pad_id
