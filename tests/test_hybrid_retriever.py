"""HybridRetriever: reciprocal-rank fusion on hand-computed rankings and on real retrievers."""

import pytest
from sample_corpus import BIGGEST, JUPITER, MARS, PLANETS

from lightrag.components.model_client import ScriptedClient
from lightrag.components.retriever import (
    BM25Retriever,
    HybridRetriever,
    NumpyRetriever,
    reciprocal_rank_fusion,
)
from lightrag.core.embedder import Embedder
from lightrag.core.retriever import Retriever
from lightrag.core.types import RetrieverOutput


@pytest.fixture
def embedder():
    return Embedder(model_client=ScriptedClient(embedding_dim=256))


class FixedRetriever(Retriever):
    """Returns a fixed ranking and records the top_k it was asked for."""

    def __init__(self, ranking):
        super().__init__()
        self.ranking = ranking
        self.asked = []
        self.indexed_docs = None

    def build_index_from_documents(self, documents, document_map_func=None, **kwargs):
        self.indexed_docs = [document_map_func(d) if document_map_func else d for d in documents]

    def call(self, input, top_k=None, **kwargs):
        self.asked.append(top_k)
        queries = [input] if isinstance(input, str) else input
        return [RetrieverOutput(doc_indices=self.ranking[:top_k], query=q) for q in queries]


def test_hybrid_rrf_hand_computed():
    a, b = FixedRetriever([0, 1, 2]), FixedRetriever([2, 0, 3])
    out = HybridRetriever([a, b], top_k=4, k=60)("q")[0]
    # 0: 1/61 + 1/62 = .032522; 2: 1/63 + 1/61 = .032266; 1: 1/62; 3: 1/63
    assert out.doc_indices == [0, 2, 1, 3]
    assert out.doc_scores == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63])
    assert a.asked == [12] and b.asked == [12]  # top_k * candidate_multiplier (3)
    weighted = HybridRetriever([a, b], top_k=2, k=60, weights=[1.0, 2.0])("q")[0]
    # 2: 1/63 + 2/61 = .048660 beats 0: 1/61 + 2/62 = .048651
    assert weighted.doc_indices == [2, 0]
    assert reciprocal_rank_fusion([[5]], k=0) == {5: 1.0}


def test_hybrid_forwards_documents_and_validates():
    a, b = FixedRetriever([0]), FixedRetriever([0])
    h = HybridRetriever([a, b])
    h.build_index_from_documents(["x", "y"], document_map_func=[None, str.upper])
    assert a.indexed_docs == ["x", "y"] and b.indexed_docs == ["X", "Y"]
    assert h.get_subcomponent("retriever_1") is b
    with pytest.raises(ValueError, match="weights"):
        HybridRetriever([a, b], weights=[1.0])
    with pytest.raises(ValueError, match="at least one"):
        HybridRetriever([])


def test_hybrid_dense_plus_bm25(tmp_path, embedder):
    h = HybridRetriever([NumpyRetriever(embedder=embedder), BM25Retriever()], top_k=2)
    h.build_index_from_documents(PLANETS)
    outs = h([BIGGEST, "red dust"])
    assert [o.doc_indices[0] for o in outs] == [JUPITER, MARS]
    assert outs[0].documents[0] == PLANETS[JUPITER]
    h.save_to_file(tmp_path / "hybrid.json")
    loaded = HybridRetriever.load_from_file(tmp_path / "hybrid.json", embedder=embedder)
    assert loaded(BIGGEST)[0].doc_indices == outs[0].doc_indices
    again = HybridRetriever([NumpyRetriever(embedder=embedder), BM25Retriever()])
    again.load_from_file(tmp_path / "hybrid.json")
    assert again.top_k == 2 and again(BIGGEST)[0].doc_indices == outs[0].doc_indices
