"""Dense (NumPy, FAISS) and BM25 retrievers: known answers, bounds, errors, persistence."""

import math
from collections import Counter

import numpy as np
import pytest
from sample_corpus import BIGGEST, JUPITER, MARS, PLANETS

from lightrag.components.model_client import ScriptedClient
from lightrag.components.retriever import (
    BM25Retriever,
    FAISSRetriever,
    NumpyRetriever,
    split_text_by_word_fn,
    split_text_by_word_fn_then_lower_tokenized,
)
from lightrag.components.retriever import dense_retriever as dense_module
from lightrag.components.retriever import faiss_retriever as faiss_module
from lightrag.core.embedder import Embedder
from lightrag.core.types import Document


@pytest.fixture
def embedder():
    return Embedder(model_client=ScriptedClient(embedding_dim=256))


def random_vectors(n=200, d=16, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def cosine_top(matrix, query, k):
    m = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    s = m @ (query / np.linalg.norm(query))
    order = np.argsort(-s, kind="stable")[:k]
    return order.tolist(), s[order]


# ---- NumpyRetriever -------------------------------------------------------------------------


def test_numpy_planets_known_answer_and_batch(embedder):
    r = NumpyRetriever(embedder=embedder, top_k=3, documents=PLANETS)
    outs = r([BIGGEST, "red planet with iron oxide dust"])
    assert [o.doc_indices[0] for o in outs] == [JUPITER, MARS]
    assert outs[0].query == BIGGEST and outs[0].documents[0] == PLANETS[JUPITER]
    assert all(len(o.doc_indices) == 3 for o in outs)
    assert outs[0].doc_scores == sorted(outs[0].doc_scores, reverse=True)
    single = r(BIGGEST)
    assert isinstance(single, list) and len(single) == 1
    assert single[0].doc_indices == outs[0].doc_indices


def test_numpy_scores_are_cosine_and_match_brute_force():
    vecs = random_vectors()
    r = NumpyRetriever(top_k=7, documents=vecs)
    q = random_vectors(3, seed=1)
    outs = r(q)
    for query, out in zip(q, outs):
        expected_idx, expected_scores = cosine_top(vecs, query, 7)
        assert out.doc_indices == expected_idx
        np.testing.assert_allclose(out.doc_scores, expected_scores, rtol=1e-5, atol=1e-6)
        assert out.documents is None  # raw vectors are not kept as documents


def test_numpy_query_forms_agree():
    vecs = random_vectors(50, 8)
    r = NumpyRetriever(top_k=4, documents=vecs.tolist())
    q = random_vectors(1, 8, seed=3)[0]
    as_list = r(q.tolist())[0].doc_indices
    assert r(q)[0].doc_indices == as_list
    assert r(q[None, :])[0].doc_indices == as_list
    assert r([q.tolist(), q.tolist()])[1].doc_indices == as_list


def test_numpy_top_k_bounds_and_errors(embedder):
    r = NumpyRetriever(embedder=embedder, top_k=2, documents=PLANETS[:3])
    assert len(r(BIGGEST, top_k=10)[0].doc_indices) == 3
    assert len(r(BIGGEST)[0].doc_indices) == 2
    with pytest.raises(ValueError, match="top_k"):
        r(BIGGEST, top_k=0)
    with pytest.raises(ValueError, match="dimensions"):
        r([1.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        r([])
    with pytest.raises(ValueError, match="index is empty"):
        NumpyRetriever(embedder=embedder)(BIGGEST)
    empty = NumpyRetriever(embedder=embedder, documents=[])
    with pytest.raises(ValueError, match="index is empty"):
        empty(BIGGEST)
    with pytest.raises(ValueError, match="embedder"):
        NumpyRetriever(documents=["text needs an embedder"])
    with pytest.raises(ValueError, match="dtype"):
        NumpyRetriever(dtype="int8")
    with pytest.raises(ValueError, match="NaN"):
        NumpyRetriever(documents=[[1.0, float("nan")]])
    with pytest.raises(TypeError, match="document_map_func"):
        NumpyRetriever(documents=[{"text": "a dict needs a map function"}])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_numpy_chunked_batch_search_matches_brute_force(monkeypatch, dtype):
    monkeypatch.setattr(dense_module, "_ROW_CHUNK", 7)  # many chunks, merged at the end
    monkeypatch.setattr(dense_module, "_QUERY_BLOCK", 2)
    vecs = random_vectors(50, 8)
    q = random_vectors(5, 8, seed=4)
    outs = NumpyRetriever(top_k=6, documents=vecs, dtype=dtype)(q)
    for query, out in zip(q, outs):
        expected_idx, expected_scores = cosine_top(vecs, query, 6)
        assert out.doc_indices == expected_idx
        np.testing.assert_allclose(out.doc_scores, expected_scores, atol=2e-3)


def test_numpy_float16_agrees_with_float32():
    vecs = random_vectors(300, 32)
    q = random_vectors(5, 32, seed=9)
    full = NumpyRetriever(top_k=5, documents=vecs)(q)
    half = NumpyRetriever(top_k=5, documents=vecs, dtype="float16")(q)
    for a, b in zip(full, half):
        assert a.doc_indices[0] == b.doc_indices[0]
        np.testing.assert_allclose(a.doc_scores, b.doc_scores, atol=5e-3)


def test_numpy_copy_flag_controls_in_place_normalisation():
    vecs = random_vectors(20, 4)
    original = vecs.copy()
    NumpyRetriever(documents=vecs)
    np.testing.assert_array_equal(vecs, original)
    r = NumpyRetriever()
    r.build_index_from_documents(vecs, copy=False)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert r._matrix is vecs


def test_numpy_documents_with_and_without_vectors(embedder):
    docs = [Document(text=t) for t in PLANETS]
    docs[0].vector = embedder(PLANETS[0]).data[0].embedding
    r = NumpyRetriever(embedder=embedder, top_k=1, documents=docs)
    out = r(BIGGEST)[0]
    assert out.doc_indices == [JUPITER] and out.documents[0] is docs[JUPITER]
    mapped = NumpyRetriever(
        embedder=embedder,
        top_k=1,
        documents=[{"t": t} for t in PLANETS],
        document_map_func=lambda d: d["t"],
    )
    assert mapped(BIGGEST)[0].documents == [{"t": PLANETS[JUPITER]}]


def test_numpy_save_load_round_trip(tmp_path, embedder):
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(PLANETS)]
    r = NumpyRetriever(embedder=embedder, top_k=2, documents=docs)
    r.save_to_file(tmp_path / "planets")
    assert (tmp_path / "planets.npz").exists() and (tmp_path / "planets.json").exists()
    loaded = NumpyRetriever.load_from_file(tmp_path / "planets.npz", embedder=embedder)
    assert loaded.top_k == 2 and loaded.total_documents == len(PLANETS)
    out = loaded(BIGGEST)[0]
    assert out.doc_indices == r(BIGGEST)[0].doc_indices
    assert out.documents[0].text == PLANETS[JUPITER] and out.documents[0].id == str(JUPITER)
    fresh = NumpyRetriever(embedder=embedder)
    assert fresh.load_from_file(tmp_path / "planets") is fresh  # instance call loads in place
    assert fresh(BIGGEST)[0].doc_indices[0] == JUPITER
    with pytest.raises(ValueError, match="never built"):
        NumpyRetriever().save_to_file(tmp_path / "nothing")
    with pytest.raises(ValueError, match="not a FAISSRetriever"):
        FAISSRetriever.load_from_file(tmp_path / "planets")


# ---- FAISSRetriever -------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["cosine", "prob", "euclidean"])
def test_faiss_and_numpy_paths_agree(metric):
    pytest.importorskip("faiss")
    vecs = random_vectors(120, 12)
    q = random_vectors(4, 12, seed=5)
    fast = FAISSRetriever(top_k=6, documents=vecs, metric=metric, backend="faiss")
    slow = FAISSRetriever(top_k=6, documents=vecs, metric=metric, backend="numpy")
    assert fast.uses_faiss and not slow.uses_faiss
    for a, b in zip(fast(q), slow(q)):
        assert a.doc_indices == b.doc_indices
        np.testing.assert_allclose(a.doc_scores, b.doc_scores, rtol=1e-4, atol=2e-3)
    if metric == "euclidean":
        out = slow(q[0])[0]
        brute = ((vecs - q[0]) ** 2).sum(axis=1)
        assert out.doc_indices == np.argsort(brute)[:6].tolist()
        assert out.doc_scores == sorted(out.doc_scores)
    if metric == "cosine":
        dense = NumpyRetriever(top_k=6, documents=vecs)(q)
        assert [o.doc_indices for o in dense] == [o.doc_indices for o in fast(q)]


def test_faiss_prob_maps_cosine_to_unit_interval():
    docs = [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]
    out = FAISSRetriever(top_k=3, documents=docs, backend="numpy")([1.0, 0.0])[0]
    assert out.doc_indices == [0, 1, 2] and out.doc_scores == [1.0, 0.5, 0.0]
    cos = FAISSRetriever(top_k=3, documents=docs, metric="cosine", backend="numpy")
    assert cos([1.0, 0.0])[0].doc_scores == pytest.approx([1.0, 0.0, -1.0])


def test_faiss_bounds_errors_and_strings(embedder):
    r = FAISSRetriever(embedder=embedder, top_k=2, documents=PLANETS)
    assert r(BIGGEST)[0].doc_indices[0] == JUPITER
    everything = r(BIGGEST, top_k=50)[0]
    assert sorted(everything.doc_indices) == list(range(len(PLANETS)))
    assert len(everything.doc_scores) == len(PLANETS)
    with pytest.raises(ValueError, match="dimensions=3"):
        FAISSRetriever(dimensions=3, documents=[[1.0, 2.0]])
    with pytest.raises(ValueError, match="index is empty"):
        FAISSRetriever()([1.0])
    with pytest.raises(ValueError, match="metric"):
        FAISSRetriever(metric="dot")


def test_faiss_falls_back_to_numpy_when_missing(monkeypatch, caplog):
    def missing(name, hint):
        raise ImportError(hint)

    monkeypatch.setattr(faiss_module, "safe_import", missing)
    monkeypatch.setattr(faiss_module, "_fallback_logged", False)
    with caplog.at_level("INFO"):
        a = FAISSRetriever(documents=[[1.0, 0.0]])
        FAISSRetriever(documents=[[1.0, 0.0]])
    assert not a.uses_faiss and a([1.0, 0.0])[0].doc_indices == [0]
    assert sum("faiss could not be loaded" in m for m in caplog.messages) == 1
    with pytest.raises(ImportError):
        FAISSRetriever(backend="faiss")


def test_faiss_without_avx2_module_or_broken_build_falls_back(monkeypatch):
    """A faiss whose AVX2 module is missing loads its generic build; one that fails to load
    at all (an OSError, a module without IndexFlatIP) falls back to NumPy instead of raising."""
    import types

    monkeypatch.setattr(faiss_module, "safe_import", lambda name, hint: types.ModuleType("faiss"))
    r = FAISSRetriever(documents=[[1.0, 0.0], [0.0, 1.0]])
    assert r.index is None and r([0.0, 1.0])[0].doc_indices[0] == 1

    def broken(name, hint):
        raise OSError("libfaiss_avx2.so: cannot open shared object file")

    monkeypatch.setattr(faiss_module, "safe_import", broken)
    assert not FAISSRetriever(documents=[[1.0, 0.0]]).uses_faiss


def test_faiss_has_01_attributes():
    r = FAISSRetriever(top_k=2, documents=[[1.0, 0.0], [0.0, 1.0]])
    assert r.index is None or r.index.ntotal == 2
    assert r.xb.shape == (2, 2)
    probs = r._convert_cosine_similarity_to_probability(np.array([[1.0, 0.0, -1.0]]))
    assert probs.tolist() == [[1.0, 0.5, 0.0]]


def test_faiss_save_load_round_trip(tmp_path):
    vecs = random_vectors(40, 6)
    r = FAISSRetriever(top_k=3, documents=vecs, metric="euclidean")
    r.save_to_file(tmp_path / "idx")
    loaded = FAISSRetriever.load_from_file(tmp_path / "idx", backend="numpy")
    assert loaded.metric == "euclidean" and not loaded.uses_faiss
    q = random_vectors(2, 6, seed=2)
    assert [o.doc_indices for o in loaded(q)] == [o.doc_indices for o in r(q)]


# ---- BM25Retriever --------------------------------------------------------------------------


def reference_bm25(corpus, query, k1=1.5, b=0.75, epsilon=0.25):
    """A direct transcription of the Okapi formula, for checking the vectorised one."""
    docs = [split_text_by_word_fn(d) for d in corpus]
    n, avg = len(docs), sum(map(len, docs)) / len(docs)
    df = Counter(t for d in docs for t in set(d))
    idf = {t: math.log((n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    floor = epsilon * sum(idf.values()) / len(idf)
    idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}
    scores = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in split_text_by_word_fn(query):
            if t in tf:
                s += idf[t] * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * len(d) / avg))
        scores.append(s)
    return scores


def test_bm25_planets_known_answer_and_scores():
    outs = BM25Retriever(top_k=3, documents=PLANETS)([BIGGEST, "red dust"])
    assert [o.doc_indices[0] for o in outs] == [JUPITER, MARS]
    assert outs[0].documents[0] == PLANETS[JUPITER] and outs[1].query == "red dust"
    r = BM25Retriever(top_k=3, documents=PLANETS, use_tokenizer=False)
    query = "which planet is the biggest"
    expected = reference_bm25(PLANETS, query)
    np.testing.assert_allclose(r.get_scores(query), expected, rtol=1e-5)
    assert r(query)[0].doc_scores[0] == pytest.approx(max(expected), rel=1e-5)


def test_bm25_negative_idf_becomes_epsilon_times_mean():
    corpus = ["apple a", "apple b", "apple c", "apple d", "e"]  # "apple": 4 of 5 documents
    r = BM25Retriever(documents=corpus, epsilon=0.5)
    raw = {t: math.log((5 - f + 0.5) / (f + 0.5)) for t, f in [("apple", 4), ("a", 1)]}
    mean = (raw["apple"] + 5 * raw["a"]) / 6
    assert raw["apple"] < 0 < mean
    assert r.idf[r.vocab["apple"]] == pytest.approx(0.5 * mean, rel=1e-5)
    assert r.idf[r.vocab["a"]] == pytest.approx(raw["a"], rel=1e-5)
    tiny = BM25Retriever(documents=["x y", "x z"])  # the mean idf itself is negative here
    assert tiny.idf.min() >= 0


def test_bm25_tokenisation_options():
    # lightrag 0.1's splits: single spaces, punctuation kept; tiktoken keeps '?' as a piece
    assert split_text_by_word_fn("What is renewable energy?") == ["what", "is", "renewable", "energy?"]
    assert split_text_by_word_fn_then_lower_tokenized("Energy?") == ["energy", "?"]
    r = BM25Retriever(stopwords="en", documents=PLANETS, use_tokenizer=False)
    assert r.tokenize("Which planet is THE biggest?") == ["planet", "biggest?"]
    assert BM25Retriever(stopwords=["planet"]).tokenize("a planet") == ["a"]
    # lightrag 0.1's default: words split into tiktoken pieces, its constants and helper names
    from lightrag.components.retriever.bm25_retriever import (
        PARAM_B,
        PARAM_EPSILON,
        PARAM_K1,
    )

    default = BM25Retriever(documents=PLANETS)
    assert default.use_tokenizer and (default.k1, default.b, default.epsilon) == (
        PARAM_K1, PARAM_B, PARAM_EPSILON) == (1.5, 0.75, 0.25)
    assert default.tokenize("Which planet is THE biggest?") == (
        split_text_by_word_fn_then_lower_tokenized("Which planet is THE biggest?"))
    assert default(BIGGEST)[0].doc_indices[0] == JUPITER
    tok = BM25Retriever(use_tokenizer=True, top_k=1, documents=PLANETS)
    assert tok(BIGGEST)[0].doc_indices == [JUPITER]
    with pytest.raises(ValueError, match="stop-word"):
        BM25Retriever(stopwords="klingon")


def test_bm25_bounds_errors_and_document_types():
    docs = [Document(text=t) for t in PLANETS[:2]] + [{"text": PLANETS[JUPITER]}]
    r = BM25Retriever(top_k=10, documents=docs)
    out = r(BIGGEST)[0]
    assert len(out.doc_indices) == 3 and out.doc_indices[0] == 2 and out.documents[0] is docs[2]
    assert r("zebra")[0].doc_scores == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="index is empty"):
        BM25Retriever()("anything")
    with pytest.raises(ValueError, match="index is empty"):
        BM25Retriever(documents=[])("anything")
    with pytest.raises(ValueError, match="empty"):
        r([])
    with pytest.raises(TypeError):
        r(42)


def test_bm25_save_load_round_trip(tmp_path):
    r = BM25Retriever(top_k=2, k1=1.2, b=0.5, stopwords={"the", "is"}, documents=PLANETS)
    r.save_to_file(tmp_path / "bm25.json")
    loaded = BM25Retriever.load_from_file(tmp_path / "bm25.json")
    assert (loaded.k1, loaded.b, loaded.top_k) == (1.2, 0.5, 2)
    a, b = r(BIGGEST)[0], loaded(BIGGEST)[0]
    assert a.doc_indices == b.doc_indices and a.doc_scores == pytest.approx(b.doc_scores)
    assert b.documents == a.documents
    other = BM25Retriever()
    assert other.load_from_file(tmp_path / "bm25.json") is other
    assert other(BIGGEST)[0].doc_indices == a.doc_indices


def test_bm25s_backend_agrees_on_the_top_document(tmp_path):
    pytest.importorskip("bm25s")
    r = BM25Retriever(top_k=3, documents=PLANETS, backend="bm25s")
    outs = r([BIGGEST, "red dust", "zebra"])
    assert [o.doc_indices[0] for o in outs[:2]] == [JUPITER, MARS]
    assert len(outs[2].doc_indices) == 3
    r.save_to_file(tmp_path / "b.json")
    loaded = BM25Retriever.load_from_file(tmp_path / "b.json", backend="bm25s")
    assert loaded(BIGGEST)[0].doc_indices == outs[0].doc_indices


def test_faiss_0_1_string_and_embedding_query_methods(embedder):
    r = FAISSRetriever(embedder=embedder, top_k=1, documents=PLANETS)
    by_text = r.retrieve_string_queries(BIGGEST)[0]
    assert by_text.doc_indices == r(BIGGEST)[0].doc_indices == [JUPITER]
    vector = embedder(BIGGEST).data[0].embedding
    by_vector = r.retrieve_embedding_queries([vector])[0]
    assert by_vector.doc_indices == [JUPITER]
    with pytest.raises(TypeError):
        r.retrieve_embedding_queries(["text"])
    with pytest.raises(TypeError):
        r.retrieve_string_queries([vector])
