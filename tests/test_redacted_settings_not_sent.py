"""A component rebuilt from a saved pipeline holds ``<redacted>`` where its secrets were: the
HTTP reranker and the Chroma client refuse to send the marker, naming the setting to set again
(red team 6 found they sent it; only the Generator checked)."""

from __future__ import annotations

import json
from typing import Iterator

import pytest
from test_http_reranker import FakeReranker

from lightrag.components.retriever.http_reranker import HTTPReranker
from lightrag.utils.secrets import REDACTED, RedactedValueError

SECRET = "hunter2-rerank-header"


@pytest.fixture()
def rerank_api() -> Iterator[FakeReranker]:
    """The ``/rerank`` server of tests/test_http_reranker.py (no key), recording each request."""
    with FakeReranker(key=None) as fake:
        yield fake


def test_a_rebuilt_reranker_refuses_to_send_a_redacted_header(rerank_api):
    reranker = HTTPReranker(base_url=rerank_api.url, model="r",
                            headers={"X-Api-Key": SECRET, "X-Trace": "t1"})
    saved = reranker.to_dict()
    assert SECRET not in json.dumps(saved, default=str)
    rebuilt = HTTPReranker.from_dict(saved)
    assert rebuilt.headers == {"X-Api-Key": REDACTED, "X-Trace": "t1"}
    with pytest.raises(RedactedValueError, match=r"headers\['X-Api-Key'\].*reranker\.headers"):
        rebuilt.call("q", ["a", "b"])
    assert rerank_api.requests == []  # nothing sent
    rebuilt.headers["X-Api-Key"] = SECRET
    assert len(rebuilt.call("q", ["a", "b"]).documents) == 2
    assert rerank_api.requests[-1]["headers"]["X-Api-Key"] == SECRET


def test_a_redacted_extra_body_field_is_refused_too(rerank_api):
    reranker = HTTPReranker(base_url=rerank_api.url, model="r", extra_body={"api_key": REDACTED})
    with pytest.raises(RedactedValueError, match=r"extra_body\['api_key'\]"):
        reranker.call("q", ["a"])
    assert rerank_api.requests == []


def test_a_chroma_client_refuses_a_redacted_header(tmp_path):
    pytest.importorskip("chromadb", reason="the chroma extra is not installed")
    from lightrag.components.storage.chroma_vector import ChromaVectorStorage

    with pytest.raises(RedactedValueError, match=r"headers\['Authorization'\]"):
        ChromaVectorStorage(namespace="v", working_dir=str(tmp_path), mode="http",
                            host="127.0.0.1", port=9, headers={"Authorization": REDACTED})


def test_a_config_dump_keeps_a_redacted_header_so_the_reranker_refuses_it(rerank_api):
    """Red team 6's open item: a YAML dump loaded back dropped ``<redacted>`` entries, so the
    rebuilt reranker sent its requests without the header. Keys and passwords are still dropped
    (the environment supplies them); a header, query or body entry is kept, and refused."""
    from lightrag.utils.config import build, to_yaml

    reranker = HTTPReranker(base_url=rerank_api.url, model="r", api_key="sk-" + "a" * 40,
                            headers={"X-Custom-Auth": SECRET, "X-Trace": "t1"})
    dumped = to_yaml(reranker)
    assert SECRET not in dumped and "a" * 40 not in dumped
    rebuilt = build(dumped)
    assert rebuilt.headers == {"X-Custom-Auth": REDACTED, "X-Trace": "t1"}
    with pytest.raises(RedactedValueError, match=r"headers\['X-Custom-Auth'\]"):
        rebuilt.call("q", ["a"])
    assert rerank_api.requests == []
