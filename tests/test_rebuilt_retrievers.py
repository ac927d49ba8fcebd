"""Retrievers and rerankers rebuilt from ``to_dict`` (so from a pickled or saved pipeline)
answer as the originals did. Their indexes are not plain attributes (a faiss index, a bm25s
object, an HTTP client): rebuilt ones raised ``AttributeError`` on their first call."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from lightrag.components.retriever.bm25_retriever import BM25Retriever
from lightrag.components.retriever.faiss_retriever import FAISSRetriever
from lightrag.core.component import Component

DOCS = ["apple pie recipe with cinnamon", "the moon orbits the earth", "saturn has bright rings",
        "the earth orbits the sun", "a recipe for moon cakes"]


def _rebuilt(component: Component) -> Component:
    return type(component).from_dict(pickle.loads(pickle.dumps(component.to_dict())))


@pytest.mark.parametrize("backend", ["numpy", "bm25s"])
def test_a_rebuilt_bm25_retriever_ranks_as_the_original(backend):
    if backend == "bm25s":
        pytest.importorskip("bm25s", reason="the bm25s extra is not installed")
    original = BM25Retriever(documents=DOCS, top_k=3, backend=backend)
    rebuilt = _rebuilt(original)
    for query in ("moon earth", "recipe", "rings of saturn"):
        want, got = original.call(query)[0], rebuilt.call(query)[0]
        assert got.doc_indices == want.doc_indices
        assert got.doc_scores == pytest.approx(want.doc_scores)


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_a_rebuilt_faiss_retriever_keeps_its_vectors(backend):
    vectors = np.random.default_rng(0).normal(size=(40, 16)).astype(np.float32)
    original = FAISSRetriever(documents=vectors, top_k=4, backend=backend)
    rebuilt = _rebuilt(original)
    assert rebuilt.uses_faiss == original.uses_faiss and rebuilt.total_documents == 40
    for row in (0, 7, 39):
        want, got = original.call(vectors[row:row + 1])[0], rebuilt.call(vectors[row:row + 1])[0]
        assert got.doc_indices == want.doc_indices and got.doc_indices[0] == row
        assert got.doc_scores == pytest.approx(want.doc_scores, abs=1e-5)


def test_an_empty_faiss_retriever_rebuilds_empty():
    rebuilt = _rebuilt(FAISSRetriever(top_k=2))
    assert not rebuilt.indexed and rebuilt.index is None
