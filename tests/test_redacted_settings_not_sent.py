"""A component rebuilt from a saved pipeline holds ``<redacted>`` where its secrets were: the
HTTP reranker and the Chroma client refuse to send the marker, naming the setting to set again
(red team 6 found they sent it; only the Generator checked)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List

import pytest

from lightrag.components.retriever.http_reranker import HTTPReranker
from lightrag.utils.secrets import REDACTED, RedactedValueError

SECRET = "hunter2-rerank-header"


@pytest.fixture()
def rerank_api() -> Iterator[Dict[str, Any]]:
    """A loopback ``/rerank`` endpoint recording each request's headers."""
    seen: List[Dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            seen.append({k.lower(): v for k, v in self.headers.items()})
            results = [{"index": i, "relevance_score": 1.0 / (i + 1)}
                       for i in range(len(request["documents"]))]
            body = json.dumps({"results": results}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_address[1]}/v1", "seen": seen}
    finally:
        server.shutdown()
        server.server_close()


def test_a_rebuilt_reranker_refuses_to_send_a_redacted_header(rerank_api):
    reranker = HTTPReranker(base_url=rerank_api["url"], model="r",
                            headers={"X-Api-Key": SECRET, "X-Trace": "t1"})
    saved = reranker.to_dict()
    assert SECRET not in json.dumps(saved, default=str)
    rebuilt = HTTPReranker.from_dict(saved)
    assert rebuilt.headers == {"X-Api-Key": REDACTED, "X-Trace": "t1"}
    with pytest.raises(RedactedValueError, match=r"headers\['X-Api-Key'\].*reranker\.headers"):
        rebuilt.call("q", ["a", "b"])
    assert rerank_api["seen"] == []  # nothing sent
    rebuilt.headers["X-Api-Key"] = SECRET
    assert len(rebuilt.call("q", ["a", "b"]).documents) == 2
    assert rerank_api["seen"][-1]["x-api-key"] == SECRET


def test_a_redacted_extra_body_field_is_refused_too(rerank_api):
    reranker = HTTPReranker(base_url=rerank_api["url"], model="r", extra_body={"api_key": REDACTED})
    with pytest.raises(RedactedValueError, match=r"extra_body\['api_key'\]"):
        reranker.call("q", ["a"])
    assert rerank_api["seen"] == []


def test_a_chroma_client_refuses_a_redacted_header(tmp_path):
    pytest.importorskip("chromadb", reason="the chroma extra is not installed")
    from lightrag.components.storage.chroma_vector import ChromaVectorStorage

    with pytest.raises(RedactedValueError, match=r"headers\['Authorization'\]"):
        ChromaVectorStorage(namespace="v", working_dir=str(tmp_path), mode="http",
                            host="127.0.0.1", port=9, headers={"Authorization": REDACTED})
