"""Red team 5, the server: deletes under a steady stream of inserts, errors nobody handled.

A delete waited for the workspace's intake to be idle (at most 2 s, then 503); under a steady
trickle of inserts (a 202 every ~0.1 s) the intake never was, and 25 of 25 deletes of a
two-server race got 503. A delete now takes its turn between two processing runs.
"""

from __future__ import annotations

import sys
import threading
import time

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402
from graph_fakes import extraction_reply  # noqa: E402
from pdf_files import pdf_of  # noqa: E402
from server_fixtures import SlowAsyncClient, make_rag  # noqa: E402

serve = server_fixtures.serve  # the fixture: a real uvicorn server over the scripted GraphRAG


def test_a_delete_is_not_starved_by_a_steady_stream_of_inserts(serve, tmp_path):
    server, client, rag = serve(make_rag(
        tmp_path, extraction_client=SlowAsyncClient(delay=0.05, response_fn=extraction_reply)))
    assert client.post("/documents", json={"texts": "Saturn has Titan.", "ids": "victim",
                                           "wait": True}).status_code == 200
    stop = threading.Event()

    def trickle() -> None:
        feed = httpx.Client(base_url=server.url, timeout=30)
        for i in range(1000):
            if stop.is_set():
                return
            feed.post("/documents", json={"texts": f"Probe{i} visited Planet{i}.", "ids": f"p{i}"})
            time.sleep(0.05)

    feeder = threading.Thread(target=trickle, daemon=True)
    feeder.start()
    try:
        time.sleep(0.5)  # the stream is going
        assert rag.doc_status.get_by_id("p1") is not None
        answers = []
        for _ in range(3):
            answers.append(client.delete("/documents/victim"))
            if answers[-1].status_code == 200:
                break
            time.sleep(0.2)
    finally:
        stop.set()
        feeder.join(10)
    assert answers[-1].status_code == 200, [(a.status_code, a.text) for a in answers]
    assert client.get("/documents/victim").status_code == 404


def test_an_unhandled_error_is_json_and_keeps_the_connection(serve, tmp_path):
    """A route's unexpected exception: JSON 500 without its text (which may name files and
    settings), and the client's kept-alive connection still serves the next request (Starlette's
    own 500 re-raised, and uvicorn closed the connection: ``Connection reset by peer``)."""
    server, client, rag = serve()

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals at /srv/private/config.yaml")

    rag.get_knowledge_graph = broken
    answer = client.get("/graph", params={"label": "*"})
    assert answer.status_code == 500
    assert answer.json() == {"detail": "internal server error; the server log has the details"}
    assert client.get("/health").status_code == 200  # the same connection


def docx_bomb(paragraphs: int) -> bytes:
    """A small .docx whose word/document.xml is ``paragraphs`` empty paragraphs (6 bytes each,
    compressed ~1000 to 1)."""
    import io
    import zipfile

    body = (b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            b"<w:body>" + b"<w:p/>" * paragraphs + b"</w:body></w:document>")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", body)
    return buffer.getvalue()


def resident_bytes() -> int:
    """This process's resident memory (Linux)."""
    import os

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_a_docx_bomb_upload_is_read_outside_the_server(serve):
    """A ~25 KB .docx of 3 million empty paragraphs cost the server ~300 MB while it was read
    (four 79 KB ones at once: 3.4 GB, and /health waited 11 s); it is now read in a child
    process, and the server's memory does not move."""
    server, client, rag = serve()
    data = docx_bomb(3_000_000)
    assert len(data) < 40_000
    answers, samples = [], []

    def upload() -> None:
        uploader = httpx.Client(base_url=server.url, timeout=120)
        answers.append(uploader.post("/documents/upload", files={"files": ("bomb.docx", data)}))

    before = resident_bytes()
    thread = threading.Thread(target=upload)
    thread.start()
    while thread.is_alive():
        samples.append(resident_bytes() - before)
        assert client.get("/health").status_code == 200
        time.sleep(0.02)
    thread.join()
    assert answers[0].status_code in (400, 415), answers[0].text
    assert max(samples) < 100 * 1024**2, f"the server grew by {max(samples) >> 20} MB"


def pdf_with(content: bytes) -> bytes:
    """A one-page PDF whose compressed content stream is ``content``. The loaders now bound a
    .docx bomb themselves (red team 6), so these tests of the reading process's own limits use
    what still costs the most within them: pypdf holds ~100 bytes per character of a text
    operand (2 MB of "a": ~200 MB) and spends ~16 us per text operator."""
    return pdf_of(content)


def test_an_upload_that_needs_too_much_memory_is_refused():
    import asyncio

    from lightrag.components.loaders import DocumentLoadError
    from lightrag.server.uploads import UploadReader

    pytest.importorskip("pypdf")
    reader = UploadReader(memory_bytes=300 * 1024**2)
    with pytest.raises(DocumentLoadError) as refused:
        asyncio.run(reader.read("big.pdf", pdf_with(b"BT /F1 12 Tf (" + b"a" * 1_990_000 + b") Tj ET")))
    assert "MemoryError" in str(refused.value) or refused.value.reason == "too-large", refused.value
    small = pdf_with(b"BT /F1 12 Tf 72 720 Td (Alice met Bob.) Tj ET")
    assert asyncio.run(reader.read("small.pdf", small)).endswith("Alice met Bob.")
    assert asyncio.run(reader.read("a.md", b"# A\n\nAlice met Bob.")).endswith("Alice met Bob.")


def test_an_upload_that_takes_too_long_is_refused():
    import asyncio

    from lightrag.components.loaders import DocumentLoadError
    from lightrag.server.uploads import UploadReader

    pytest.importorskip("pypdf")
    slow = pdf_with(b"BT /F1 12 Tf 72 720 Td " + b"(ab) Tj " * 240_000 + b"ET")  # ~4 s to read
    started = time.monotonic()
    with pytest.raises(DocumentLoadError) as refused:
        asyncio.run(UploadReader(seconds=0.5).read("slow.pdf", slow))
    assert refused.value.reason == "too-large" and time.monotonic() - started < 5


def test_a_graph_import_whose_embedder_reply_is_unreadable_is_a_502(serve, tmp_path):
    """A provider's unreadable reply (``ProviderResponseError``, a ValueError) during a graph
    import was answered 400, as if the client's graph were wrong."""
    from lightrag.components.model_client import ScriptedClient
    from lightrag.core import Embedder
    from lightrag.core.types import ModelType
    from lightrag.utils.http_errors import ProviderResponseError

    class HtmlEmbedder(ScriptedClient):
        def call(self, api_kwargs=None, model_type=ModelType.UNDEFINED):
            if model_type is ModelType.EMBEDDER:
                raise ProviderResponseError("the provider at http://127.0.0.1:9/v1 sent a reply "
                                            "that is not valid JSON: a proxy's error page?")
            return super().call(api_kwargs, model_type)

    from lightrag.components.graph_rag import Chunker, EntityExtractor, GraphRAG
    from lightrag.core import Generator

    rag = GraphRAG(embedder=Embedder(model_client=HtmlEmbedder(embedding_dim=64)),
                   extractor=EntityExtractor(generator=Generator(
                       model_client=ScriptedClient(response_fn=extraction_reply))),
                   answer_generator=Generator(model_client=ScriptedClient()),
                   chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
                   working_dir=str(tmp_path))
    _, client, _ = serve(rag)
    answer = client.post("/documents/custom_kg", json={"custom_kg": {
        "chunks": [{"content": "Rhea orbits Saturn.", "source_id": "c1"}],
        "entities": [{"entity_name": "Rhea", "description": "a moon", "source_id": "c1"}]}})
    assert answer.status_code == 502, answer.text
    assert answer.json()["detail"].startswith("a model provider failed: the provider at")
