"""Export a sentence-transformers BERT-style encoder to ONNX, once, into a cache folder.

:func:`exported_model` returns the path of ``model.onnx`` (float32), ``model_int8.onnx``
(dynamic int8, per-channel weights) or ``model_int8_ffn.onnx`` (int8 only in the first
feed-forward MatMul of each layer) for a local model folder, building it on first use:

1. ``torch.onnx.export`` (the TorchScript exporter) of the transformer with eager attention
   (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``; output ``last_hidden_state``;
   batch and sequence axes dynamic). Eager attention exports the plain MatMul/Softmax pattern that
   ONNX Runtime's BERT optimiser recognises.
2. ``onnxruntime.transformers.optimizer`` fuses embedding + layer norm, attention, bias + GELU and
   skip + layer norm (kept unfused when the architecture is not one it knows).
3. For int8, ``onnxruntime.quantization.quantize_dynamic`` with per-channel int8 weights
   (per-tensor weights cost MiniLM a mean cosine of 0.957 against torch; per-channel 0.994).
   ``int8-ffn`` quantises only the MatMuls that feed a GELU (the feed-forward up-projection, a
   third of a layer's multiply-adds, and the one whose input quantises best): mean cosine
   0.998 to float32 on MuSiQue texts, against 0.991-0.995 for every MatMul.

The cache folder is ``<cache_dir>/onnx/<key>/``; the key hashes the model's files, the torch,
transformers and onnxruntime versions and :data:`EXPORT_RECIPE`, so a changed model or exporter
builds a new folder. A folder is built in a temporary sibling and renamed into place (atomic: a
crashed export leaves no half-written model behind; two processes exporting at once both
succeed and one result is kept). Export needs ``torch``, ``transformers``, ``onnx`` and
``onnxruntime`` (the ``onnx`` extra); running a cached model needs only ``onnxruntime``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Optional

log = logging.getLogger(__name__)

EXPORT_RECIPE = "bert-eager-opset17-ortopt-pc-int8-v1"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
FP32_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"
INT8_FFN_FILE = "model_int8_ffn.onnx"
QUANTIZED_FILES = {"int8": INT8_FILE, "int8-ffn": INT8_FFN_FILE}
"""The int8 variants by name (``exported_model(quantize=...)``)."""
_HASHED_SUFFIXES = (".json", ".safetensors", ".bin", ".txt", ".model")


def default_cache_dir() -> Path:
    """``$LIGHTRAG_CACHE_DIR``, else ``$XDG_CACHE_HOME/lightrag``, else ``~/.cache/lightrag``."""
    if os.environ.get("LIGHTRAG_CACHE_DIR"):
        return Path(os.environ["LIGHTRAG_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lightrag"


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for package in ("torch", "transformers", "onnxruntime"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=none")
    return ",".join(parts)


def model_key(model_dir: Path) -> str:
    """A short hash of a model folder's weights, configs and vocabulary plus the exporter."""
    digest = hashlib.sha256(f"{EXPORT_RECIPE}|{_versions()}".encode())
    for path in sorted(model_dir.rglob("*")):
        if path.is_file() and path.suffix in _HASHED_SUFFIXES and path.name != "README.md":
            digest.update(str(path.relative_to(model_dir)).encode())
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def quantized_variant(quantize: bool | str | None) -> str:
    """``""`` (float32), ``"int8"`` or ``"int8-ffn"`` from ``quantize`` (``True`` is ``"int8"``)."""
    if quantize is True:
        return "int8"
    if not quantize:
        return ""
    if quantize not in QUANTIZED_FILES:
        raise ValueError(f"unknown quantisation {quantize!r}; choose one of {', '.join(QUANTIZED_FILES)}")
    return str(quantize)


def exported_model(model_dir: str | os.PathLike[str], quantize: bool | str = False,
                   cache_dir: Optional[str | os.PathLike[str]] = None) -> Path:
    """The ONNX file for ``model_dir`` (a sentence-transformers or transformers model folder),
    exported into the cache on first use. ``quantize`` picks an int8 file: ``"int8"`` (or
    ``True``) every MatMul, ``"int8-ffn"`` the feed-forward up-projections only."""
    variant = quantized_variant(quantize)
    source = Path(model_dir)
    if not (source / "config.json").is_file():
        raise FileNotFoundError(f"{source} is not a model folder (no config.json in it)")
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = folder / "onnx" / model_key(source)
    wanted = target / (QUANTIZED_FILES[variant] if variant else FP32_FILE)
    if wanted.is_file():
        return wanted
    try:
        import onnx  # noqa: F401 - the exporter and the quantiser need it; running does not
    except ImportError as e:
        raise ImportError(f"exporting {source} to ONNX needs the `onnx` package: "
                          "pip install -e '.[local,onnx]'") from e
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        if (target / FP32_FILE).is_file():
            shutil.copy2(target / FP32_FILE, work / FP32_FILE)
        else:
            _export_fp32(source, work / FP32_FILE)
        if variant:
            _quantize(work / FP32_FILE, work / QUANTIZED_FILES[variant], ffn_only=variant == "int8-ffn")
        (work / "source.json").write_text(json.dumps({"model": str(source), "recipe": EXPORT_RECIPE,
                                                      "versions": _versions()}))
        _publish(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not wanted.is_file():
        raise RuntimeError(f"ONNX export of {source} did not produce {wanted}")
    return wanted


def _publish(work: Path, target: Path) -> None:
    """Move the finished files of ``work`` into ``target``, each by an atomic rename."""
    target.mkdir(parents=True, exist_ok=True)
    for path in work.iterdir():
        os.replace(path, target / path.name)


def _export_fp32(source: Path, out: Path) -> None:
    import inspect

    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(source)
    model = AutoModel.from_pretrained(source, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(source)
    accepted = inspect.signature(model.forward).parameters
    names = [name for name in INPUT_NAMES if name in accepted]
    sample = tokenizer(["an example sentence", "two"], padding=True, return_tensors="pt")
    inputs = tuple(sample[name] if name in sample else torch.zeros_like(sample["input_ids"])
                   for name in names)

    class Encoder(torch.nn.Module):
        """The transformer's last hidden state from its token inputs, passed by name."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return self.model(**dict(zip(names, tensors))).last_hidden_state

    raw = out.with_name("raw.onnx")
    log.info("exporting %s to ONNX (once; cached in %s)", source, out.parent)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on constant shapes; outputs are tested
        torch.onnx.export(
            Encoder().eval(), inputs, str(raw), input_names=names,
            output_names=["last_hidden_state"], opset_version=17, dynamo=False,
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in (*names, "last_hidden_state")})
    _optimize(raw, out, config)


def _optimize(raw: Path, out: Path, config: Any) -> None:
    from onnxruntime.transformers import optimizer

    heads = int(getattr(config, "num_attention_heads", 0) or 0)
    hidden = int(getattr(config, "hidden_size", 0) or 0)
    try:
        optimized = optimizer.optimize_model(str(raw), model_type="bert", num_heads=heads,
                                             hidden_size=hidden, opt_level=1)
        optimized.save_model_to_file(str(out))
    except Exception as e:  # noqa: BLE001 - an unfused model is still correct
        log.warning("ONNX Runtime could not fuse %s (%s); keeping the plain export", raw, e)
        os.replace(raw, out)
        return
    log.info("fused operators: %s", {k: v for k, v in optimized.get_fused_operator_statistics().items() if v})
    raw.unlink(missing_ok=True)


def _quantize(fp32: Path, out: Path, ffn_only: bool = False) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    excluded = _not_feed_forward(onnx.load(str(fp32))) if ffn_only else []
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     nodes_to_exclude=excluded,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


_GELUS = ("Gelu", "BiasGelu", "FastGelu")


def _not_feed_forward(model: Any) -> list[str]:
    """Names of the quantisable nodes (MatMul, Attention) other than the feed-forward
    up-projections: MatMuls whose output reaches a GELU directly or through one Add (bias)."""
    consumers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def feeds_gelu(node: Any) -> bool:
        nexts = [n for out in node.output for n in consumers.get(out, [])]
        if any(n.op_type in _GELUS for n in nexts):
            return True
        return any(n.op_type == "Add" and feeds_gelu(n) for n in nexts if n is not node)

    quantisable = [n for n in model.graph.node if n.op_type in ("MatMul", "Attention")]
    ffn = [n for n in quantisable if n.op_type == "MatMul" and feeds_gelu(n)]
    if not ffn:
        log.warning("no MatMul feeding a GELU found: the int8-ffn model is float32")
    return [n.name for n in quantisable if all(n is not f for f in ffn)]
