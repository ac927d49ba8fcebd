"""``OnnxSentenceEncoder``: a sentence-transformers mean-pooling model run by ONNX Runtime.

The same vectors as ``SentenceTransformer.encode`` (cosine > 0.9999 against torch for the float32
model; about 0.994 on average for int8, see ``docs/benchmarks/index_throughput.md``) in less CPU
time: the model is exported once (:mod:`~lightrag.components.onnx_encoder.export`), then each
batch is tokenised by the model's fast tokenizer, run by an ``onnxruntime.InferenceSession``,
mean-pooled over its real tokens and L2-normalised. Texts are embedded longest first in batches of
similar length (little padding), and come back in input order.

Supported: a model folder whose ``modules.json`` is Transformer -> Pooling (mean tokens) [->
Normalize], as all-MiniLM-L6-v2 and most sentence-transformers BERT-style models are. Anything
else is refused with a clear error (use the torch backend for it).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, List, Optional, Sequence

import numpy as np

from lightrag.components.onnx_encoder.export import exported_model

log = logging.getLogger(__name__)

__all__ = ["OnnxSentenceEncoder", "check_mean_pooling_model"]

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
        quantize: run the dynamic int8 model instead of float32.
        threads: ONNX Runtime intra-op threads (``None``: one per core).
        cache_dir: where exports are cached (default ``~/.cache/lightrag``).
    """

    def __init__(self, model_dir: str | os.PathLike[str], quantize: bool = False,
                 threads: Optional[int] = None, cache_dir: Optional[str | os.PathLike[str]] = None) -> None:
        import onnxruntime as ort

        self.model_dir = Path(model_dir)
        self.max_seq_length = check_mean_pooling_model(self.model_dir)
        self.quantize = quantize
        self.path = exported_model(self.model_dir, quantize=quantize, cache_dir=cache_dir)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            options.intra_op_num_threads = int(threads)
        self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.tokenizer = _fast_tokenizer(self.model_dir, self.max_seq_length)
        self.dimension = int(self.session.get_outputs()[0].shape[-1])
        log.info("ONNX encoder %s (%s) ready", self.model_dir.name, self.path.name)

    def encode(self, texts: Sequence[str], batch_size: int = 64, normalize: bool = True) -> np.ndarray:
        """A float32 matrix with one (unit, if ``normalize``) row per text, in input order."""
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise TypeError("encode takes a sequence of str")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._encode_batch([texts[i] for i in rows])
        if normalize and len(texts):
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out

    def _encode_batch(self, texts: List[str]) -> np.ndarray:
        batch = self.tokenizer(texts)
        mask = batch["attention_mask"].astype(np.int64)
        feeds = {name: (batch[name] if name in batch else np.zeros_like(mask)).astype(np.int64)
                 for name in self.input_names}
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)


def _fast_tokenizer(model_dir: Path, max_length: int) -> Any:
    """``texts -> {"input_ids", "attention_mask", "token_type_ids"}`` arrays, padded to the
    longest text and cut at ``max_length``: the model's ``tokenizer.json`` run by the
    ``tokenizers`` library directly (transformers' AutoTokenizer gives the same ids but its
    import costs a fresh process about a second); AutoTokenizer when there is no such file."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(str(model_dir))
        return lambda texts: auto(texts, padding=True, truncation=True, max_length=max_length,
                                  return_tensors="np")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    padding = tokenizer.padding or {}
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(pad_id=int(padding.get("pad_id", 0)),
                             pad_type_id=int(padding.get("pad_type_id", 0)),
                             pad_token=str(padding.get("pad_token", "[PAD]")))

    def tokenize(texts: Sequence[str]) -> dict:
        encoded = tokenizer.encode_batch(list(texts))
        return {"input_ids": np.asarray([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in encoded], dtype=np.int64)}

    return tokenize
