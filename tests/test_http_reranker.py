"""HTTP rerankers (Cohere/Jina shape) against a fake ``/rerank`` server on loopback: request shape,
ordering, top_n, auth, retries, errors, YAML building, and a GraphRAG ``mix`` query reranked by it."""

from __future__ import annotations

import asyncio
import json
import re
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Optional

import pytest
from graph_fakes import fake_graph_rag
from loopback_server import LoopbackServer
from sample_corpus import JUPITER, MARS, space_docs
from sample_corpus import PLANETS as ALL_PLANETS

from lightrag.components.retriever import (
    BM25Retriever,
    CohereReranker,
    CrossEncoderReranker,
    HTTPReranker,
    JinaReranker,
    RerankAPIError,
    RerankerRetriever,
    RerankOutput,
)
from lightrag.core.types import Document, RetrieverOutput
from lightrag.utils import build
from lightrag.utils.config import component_to_config

KEY = "sk-test-0123456789"
PLANETS = [ALL_PLANETS[i] for i in (0, JUPITER, MARS, 5)]  # Mercury, Jupiter, Mars, Saturn


def keyword_score(query: str, document: str) -> float:
    """The share of the query's words found in the document (a stand-in rerank model)."""
    words = set(re.findall(r"\w+", query.lower()))
    return round(len(words & set(re.findall(r"\w+", document.lower()))) / max(len(words), 1), 4)


class FakeReranker(LoopbackServer):
    """A Cohere/Jina-shaped ``/rerank`` server; ``with FakeReranker() as server:``.

    ``statuses`` is a script of error statuses answered before the real replies (one per request);
    ``key`` (when set) must arrive as ``Authorization: Bearer <key>`` or the reply is 401.
    """

    poll_interval = 0.05

    def __init__(self, score: Callable[[str, str], float] = keyword_score,
                 statuses: Optional[List[int]] = None, key: Optional[str] = KEY,
                 result_key: str = "relevance_score") -> None:
        self.score = score
        self.statuses = list(statuses or [])
        self.key = key
        self.result_key = result_key
        self.requests: List[Dict[str, Any]] = []
        super().__init__()

    def _handler(self) -> type:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def _reply(self, status: int, payload: Any, headers: Optional[Dict[str, str]] = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if not self.path.endswith("/rerank"):
                    return self._reply(404, {"message": "not found"})
                if fake.key and self.headers.get("Authorization") != f"Bearer {fake.key}":
                    return self._reply(401, {"message": "invalid api token"})
                if fake.statuses:
                    status = fake.statuses.pop(0)
                    return self._reply(status, {"message": "slow down"}, {"Retry-After": "0"})
                scores = [fake.score(body["query"], d) for d in body["documents"]]
                order = sorted(range(len(scores)), key=lambda i: -scores[i])
                top_n = body.get("top_n") or len(order)
                results = [{"index": i, fake.result_key: scores[i]} for i in order[:top_n]]
                self._reply(200, {"id": "r1", "results": results, "meta": {"billed_units": {}}})

        return Handler


@pytest.fixture
def server():
    with FakeReranker() as fake:
        yield fake


def test_request_shape_auth_and_ordering(server):
    reranker = HTTPReranker(base_url=server.url + "/v1", model="rerank-test", api_key=KEY)
    out = reranker("biggest gas giant planet?", PLANETS, top_k=2)
    request = server.requests[-1]
    assert request["path"] == "/v1/rerank"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["body"] == {"model": "rerank-test", "query": "biggest gas giant planet?",
                               "documents": PLANETS, "top_n": 2}
    assert isinstance(out, RerankOutput) and isinstance(out, RetrieverOutput)
    assert out.doc_indices[0] == 1 and out.documents[0] == PLANETS[1]
    assert len(out.doc_indices) == 2 and out.doc_scores == sorted(out.doc_scores, reverse=True)
    # every input's score, in input order; the one the API left out ranks below the scored ones
    assert len(list(out)) == len(PLANETS) and out[1] == max(out)


def test_top_n_default_documents_and_retriever_output(server):
    reranker = HTTPReranker(base_url=server.url + "/v1/rerank", api_key=KEY, top_n=1)
    docs = [Document(text=p) for p in PLANETS]
    out = reranker("red planet", docs)
    assert server.requests[-1]["path"] == "/v1/rerank"  # a URL ending in /rerank is used as is
    assert server.requests[-1]["body"]["top_n"] == 1 and "model" not in server.requests[-1]["body"]
    assert out.doc_indices == [2] and out.documents[0] is docs[2]
    first_stage = RetrieverOutput(doc_indices=[7, 9], doc_scores=[1.0, 0.5],
                                  documents=["Saturn has bright rings.", "Mars is the red planet."])
    assert reranker("red planet", first_stage).doc_indices == [9]  # the retriever's own indices
    assert reranker("anything", []).doc_indices == []
    assert len(server.requests) == 2  # no request for nothing


def test_presets_env_keys_and_secrets_never_serialised(server, monkeypatch):
    monkeypatch.setenv("COHERE_API_KEY", KEY)
    cohere = CohereReranker(base_url=server.url + "/v2", top_n=2)
    cohere("biggest planet", PLANETS)
    assert server.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert server.requests[-1]["body"]["model"] == "rerank-v3.5"
    assert CohereReranker().url == "https://api.cohere.com/v2/rerank"
    assert JinaReranker().url == "https://api.jina.ai/v1/rerank"
    explicit = JinaReranker(api_key=KEY)
    for text in (repr(explicit), json.dumps(explicit.to_dict()), json.dumps(component_to_config(explicit))):
        assert KEY not in text
    monkeypatch.delenv("COHERE_API_KEY")
    with pytest.raises(ValueError, match="COHERE_API_KEY"):
        CohereReranker(base_url=server.url)("q", ["a"])


def test_retries_429_and_5xx_then_succeeds():
    with FakeReranker(statuses=[429, 503]) as fake:
        reranker = HTTPReranker(base_url=fake.url, api_key=KEY, backoff=0.01)
        out = reranker("red planet", PLANETS)
        assert len(fake.requests) == 3 and out.doc_indices[0] == 2


def test_retries_exhausted_and_401_fails_at_once():
    with FakeReranker(statuses=[429, 429, 429]) as fake:
        reranker = HTTPReranker(base_url=fake.url, api_key=KEY, backoff=0.01, max_retries=2)
        with pytest.raises(RerankAPIError) as caught:
            reranker("red planet", PLANETS)
        assert caught.value.status_code == 429 and len(fake.requests) == 3
    with FakeReranker() as fake:
        reranker = HTTPReranker(base_url=fake.url, api_key="wrong-key", backoff=0.01)
        with pytest.raises(RerankAPIError, match="401") as caught:
            reranker("red planet", PLANETS)
        assert caught.value.status_code == 401 and len(fake.requests) == 1  # no retry on 4xx
        assert "wrong-key" not in str(caught.value)


def test_unreachable_server_is_a_clear_error():
    with FakeReranker() as fake:
        url = fake.url
    reranker = HTTPReranker(base_url=url, max_retries=1, backoff=0.01, timeout=2)
    with pytest.raises(RerankAPIError, match="unreachable"):
        reranker("q", ["a", "b"])


def test_async_call_and_tei_style_score_key():
    with FakeReranker(key=None, result_key="score") as fake:  # self-hosted: no key, TEI's "score"
        reranker = HTTPReranker(base_url=fake.url, model="bge-reranker")
        out = asyncio.run(reranker.acall("Saturn rings", PLANETS, top_k=1))
        assert out.doc_indices == [3] and "Authorization" not in fake.requests[-1]["headers"]


def test_built_from_yaml_config_and_in_reranker_retriever(server, monkeypatch):
    monkeypatch.setenv("RERANK_BINDING_API_KEY", KEY)  # the generic class's key, as HKU names it
    reranker = build({"component_name": "HTTPReranker",
                      "component_config": {"base_url": server.url + "/v1",
                                           "model": "bge-reranker-v2-m3", "top_n": 2}})
    assert isinstance(reranker, HTTPReranker) and reranker.top_n == 2
    with pytest.raises(Exception, match="secret"):  # a key is never read from a config
        build({"component_name": "HTTPReranker",
               "component_config": {"base_url": server.url, "api_key": KEY}})
    pipeline = RerankerRetriever(BM25Retriever(documents=PLANETS), reranker, top_k=1)
    assert pipeline("which planet is the biggest?")[0].doc_indices == [1]


def test_local_rerankers_also_give_scores_in_input_order():
    class Overlap:
        def predict(self, pairs):
            return [keyword_score(q, p) for q, p in pairs]

    out = CrossEncoderReranker(model_obj=Overlap(), top_k=1)("red planet", PLANETS)
    assert out.doc_indices == [2] and list(out) == [keyword_score("red planet", p) for p in PLANETS]


def make_rag(tmp_path, reranker):
    return fake_graph_rag(tmp_path, reranker=reranker)


DOCS = space_docs(3)


def test_graph_rag_mix_query_follows_the_servers_scores(tmp_path, monkeypatch):
    monkeypatch.setenv("COHERE_API_KEY", KEY)

    def prefer_cassini(query: str, document: str) -> float:  # the server's own judgement
        return 0.9 if "Cassini" in document else (0.5 if "Huygens" in document else 0.1)

    with FakeReranker(score=prefer_cassini) as fake:
        rag = make_rag(tmp_path, build({
            "component_name": "CohereReranker",
            "component_config": {"base_url": fake.url + "/v2"}}))
        rag.insert(list(DOCS.values()), file_paths=list(DOCS))
        question = "Which moon of Saturn was photographed by Voyager 1?"
        result = rag.query(question, mode="mix", only_need_context=True)
        request = fake.requests[-1]["body"]
        assert request["query"] == question and request["model"] == "rerank-v3.5"
        chunks = result.raw_data["chunks"]
        assert chunks and all("rerank_score" in c for c in chunks)
        expected = [prefer_cassini(question, c["content"]) for c in chunks]
        assert [c["rerank_score"] for c in chunks] == expected
        assert expected == sorted(expected, reverse=True) and expected[0] == 0.9
        assert "Cassini" in chunks[0]["content"]

        config = rag.to_config()  # a GraphRAG config names the reranker, without the key
        assert config["component_config"]["reranker"] == {
            "component_name": "CohereReranker",
            "component_config": {"base_url": fake.url + "/v2"}}
        assert KEY not in json.dumps(config)
        rebuilt = build(config)
        again = rebuilt.query(question, mode="mix", only_need_context=True)
        assert [c["rerank_score"] for c in again.raw_data["chunks"]] == expected

        calls = len(fake.requests)
        plain = rag.query(question, mode="mix", only_need_context=True, enable_rerank=False)
        assert len(fake.requests) == calls  # enable_rerank=False: the server is not asked
        assert all("rerank_score" not in c for c in plain.raw_data["chunks"])
        assert "Cassini" not in plain.raw_data["chunks"][0]["content"]  # the PPR scorer's order
