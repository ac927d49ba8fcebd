"""``LocalEmbedderClient`` remembers the vectors of texts it embedded: the same vectors as
embedding them again, each text run by the model once, bounded least-recently-used."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from lightrag.components.model_client.local_embedder_client import LocalEmbedderClient, VectorCache


class FakeModel:
    """A deterministic stand-in for the model: a text's vector depends on the text only."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def run(self, texts, batch_size=None):
        self.seen.extend(texts)
        rows = [np.random.default_rng(sum(map(ord, t)) + len(t)).standard_normal(8) for t in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), 8)


def client_with(model: FakeModel, cache_texts: int) -> LocalEmbedderClient:
    client = LocalEmbedderClient(cache_texts=cache_texts)
    client._run_model = model.run  # the model run itself is tested in test_onnx_embedder.py
    return client


def test_cached_vectors_equal_embedding_again():
    texts = ["alpha", "beta", "alpha", "gamma", "beta"]
    cached, plain = FakeModel(), FakeModel()
    with_cache, without = client_with(cached, 100), client_with(plain, 0)
    first = with_cache.encode(texts)
    second = with_cache.encode(list(reversed(texts)) + ["delta"])
    np.testing.assert_array_equal(first, without.encode(texts))
    np.testing.assert_array_equal(second, without.encode(list(reversed(texts)) + ["delta"]))
    assert cached.seen == ["alpha", "beta", "gamma", "delta"]  # each distinct text once
    assert plain.seen.count("alpha") == 2 and len(without.vector_cache) == 0


def test_the_least_recently_used_text_is_dropped_first():
    model = FakeModel()
    client = client_with(model, 2)
    client.encode(["a", "b"])
    client.encode(["a"])  # "a" used again: "b" is now the oldest
    client.encode(["c"])
    assert len(client.vector_cache) == 2
    client.encode(["a", "c"])
    client.encode(["b"])
    assert model.seen == ["a", "b", "c", "b"]


def test_a_copy_in_another_process_starts_empty():
    client = client_with(FakeModel(), 10)
    client.encode(["a", "b"])
    copy = pickle.loads(pickle.dumps(client.vector_cache))
    assert len(copy) == 0 and copy.max_texts == 10
    restored = LocalEmbedderClient.from_dict(LocalEmbedderClient(cache_texts=7).to_dict())
    assert restored.cache_texts == 7 and len(restored.vector_cache) == 0
    with pytest.raises(ValueError, match="max_texts"):
        VectorCache(-1)
