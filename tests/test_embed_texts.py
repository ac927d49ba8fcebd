"""``embed_texts``: each distinct text once, batches by length, and as many texts per call as a
client that batches by token length itself asks for."""

from __future__ import annotations

import asyncio

import numpy as np

from lightrag.components.graph_rag.embedding import embed_texts
from lightrag.core.types import EmbedderOutput, Embedding


class CountingEmbedder:
    def __init__(self, texts_per_call=None):
        self.calls = []
        self.model_client = type("Client", (), {"texts_per_call": texts_per_call})()

    async def acall(self, texts):
        self.calls.append(list(texts))
        return EmbedderOutput(data=[Embedding(embedding=[float(len(t)), 1.0], index=i)
                                    for i, t in enumerate(texts)])


def test_a_client_that_batches_itself_gets_its_call_size():
    texts = [f"text {i}" * (i % 7 + 1) for i in range(250)]
    plain, batching = CountingEmbedder(), CountingEmbedder(texts_per_call=100)
    a = asyncio.run(embed_texts(plain, texts, batch_size=64))
    b = asyncio.run(embed_texts(batching, texts, batch_size=64))
    assert [len(c) for c in plain.calls] == [64, 64, 64, 58]
    assert [len(c) for c in batching.calls] == [100, 100, 50]
    assert np.allclose(a, b)  # the same vector for each text, in the caller's order
    assert np.allclose(a[:, 0] / a[:, 1], [len(t) for t in texts])


def test_each_distinct_text_is_embedded_once():
    embedder = CountingEmbedder(texts_per_call=4096)
    vectors = asyncio.run(embed_texts(embedder, ["b", "a", "b", "a"]))
    assert sum(len(c) for c in embedder.calls) == 2
    assert np.allclose(vectors[0], vectors[2]) and np.allclose(vectors[1], vectors[3])
