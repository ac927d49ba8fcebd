"""The Ollama-compatible API of the server (``/api/*``) on a real uvicorn on 127.0.0.1, driven
with httpx in the request/response shapes of Ollama's API docs and with the ``ollama`` client,
answered by a scripted answer model that records what it was asked."""

import json
from typing import Any, Dict, List

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from graph_fakes import extraction_reply  # noqa: E402

from lightrag.components.graph_rag import Chunker, EntityExtractor, GraphRAG  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402
from lightrag.server.app import create_app  # noqa: E402
from lightrag.server.ollama_api import MODEL_TAG, split_mode_prefix  # noqa: E402
from lightrag.server.runner import BackgroundServer  # noqa: E402

KEY = "ollama-test-key"
ANSWER = "Voyager 1 photographed Titan, the largest moon of Saturn."
DOCS = ["NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
        "Voyager 1 photographed Titan, the largest moon of Saturn.",
        "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
        "Titan in 2005. Cassini found plumes on Enceladus."]
FINAL_FIELDS = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
                "eval_count", "eval_duration")


class RecordingAnswers:
    """The fake answer model: the same sentence every time; keeps the prompts it got."""

    def __init__(self) -> None:
        self.prompts: List[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return ANSWER


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server with two documents inserted, behind an API key; yields (server, answers)."""
    answers = RecordingAnswers()
    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=answers)),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(tmp_path_factory.mktemp("ollama")), cosine_threshold=0.05)
    running = BackgroundServer(create_app(rag, api_keys=[KEY])).start()
    client = httpx.Client(base_url=running.url, timeout=30, headers={"X-API-Key": KEY})
    inserted = client.post("/documents", json={"texts": DOCS, "wait": True})
    assert inserted.status_code == 200, inserted.text
    yield running, answers
    running.stop()


@pytest.fixture
def http(server):
    """An httpx client sending the key as Ollama clients do (``Authorization: Bearer``)."""
    running, _ = server
    with httpx.Client(base_url=running.url, timeout=30,
                      headers={"Authorization": f"Bearer {KEY}"}) as client:
        yield client


def ndjson(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_mode_prefixes():
    assert split_mode_prefix("/ppr  Which moon?") == ("Which moon?", {"mode": "ppr"})
    assert split_mode_prefix("/CONTEXT /naive Titan") == (
        "Titan", {"only_need_context": True, "mode": "naive"})
    assert split_mode_prefix("/bypass") == ("", {"mode": "bypass"})
    assert split_mode_prefix("no prefix /local here") == ("no prefix /local here", {})
    assert split_mode_prefix("/usr/bin is a path") == ("/usr/bin is a path", {})
    assert split_mode_prefix("/localized text") == ("/localized text", {})


def test_version_tags_ps_show(http):
    assert isinstance(http.get("/api/version").json()["version"], str)
    models = http.get("/api/tags").json()["models"]
    assert [m["name"] for m in models] == [MODEL_TAG] and models[0]["model"] == MODEL_TAG
    entry = models[0]
    assert {"modified_at", "size", "digest", "details"} <= set(entry)
    assert {"format", "family", "families", "parameter_size", "quantization_level"} <= set(
        entry["details"])
    assert http.get("/api/ps").json()["models"][0]["name"] == MODEL_TAG
    shown = http.post("/api/show", json={"model": MODEL_TAG})
    assert shown.status_code == 200 and shown.json()["details"]["family"] == "lightrag"
    assert "completion" in shown.json()["capabilities"]
    missing = http.post("/api/show", json={"model": "llama3.2"})
    assert missing.status_code == 404 and "not found" in missing.json()["error"]


def test_api_key_required(server):
    running, _ = server
    assert httpx.get(running.url + "/api/tags").status_code == 401
    wrong = httpx.post(running.url + "/api/chat", headers={"Authorization": "Bearer nope"},
                       json={"model": MODEL_TAG, "messages": [{"role": "user", "content": "hi"}]})
    assert wrong.status_code == 401
    assert httpx.get(running.url + "/api/tags", headers={"X-API-Key": KEY}).status_code == 200


def test_chat_non_streaming_shape_history_and_mode(http, server):
    _, answers = server
    before = len(answers.prompts)
    reply = http.post("/api/chat", json={
        "model": MODEL_TAG, "stream": False, "options": {"temperature": 0},
        "messages": [{"role": "system", "content": "Answer like a pirate."},
                     {"role": "user", "content": "Who launched Voyager 1?"},
                     {"role": "assistant", "content": "NASA did, in 1977."},
                     {"role": "user", "content": "/local Which moon did Voyager 1 photograph?"}]})
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert body["model"] == MODEL_TAG and body["created_at"].endswith("Z")
    assert body["message"] == {"role": "assistant", "content": ANSWER}
    assert body["done"] is True and body["done_reason"] == "stop"
    for field in FINAL_FIELDS:
        assert isinstance(body[field], int) and body[field] >= 0, field
    assert body["eval_count"] > 0 and body["prompt_eval_count"] > 0
    prompt = answers.prompts[-1]
    assert len(answers.prompts) == before + 1
    assert "Which moon did Voyager 1 photograph?" in prompt and "/local" not in prompt
    assert "NASA did, in 1977." in prompt, "earlier turns go to conversation_history"
    assert "Answer like a pirate." in prompt, "the system message is the user_prompt"


def test_chat_streams_ndjson_as_ollama(http):
    with http.stream("POST", "/api/chat", json={
            "model": MODEL_TAG,  # no "stream": Ollama streams by default
            "messages": [{"role": "user", "content": "/hybrid Tell me about Saturn"}]}) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("application/x-ndjson")
        lines = ndjson(stream.read().decode())
    assert len(lines) >= 3, "several pieces and a closing line"
    *pieces, last = lines
    assert all(p["done"] is False and p["message"]["role"] == "assistant" for p in pieces)
    assert "".join(p["message"]["content"] for p in pieces) == ANSWER
    assert last["done"] is True and last["done_reason"] == "stop"
    assert last["message"]["content"] == "" and last["model"] == MODEL_TAG
    assert all(isinstance(last[f], int) for f in FINAL_FIELDS)


def test_generate_streaming_and_not(http, server):
    _, answers = server
    body = http.post("/api/generate", json={"model": MODEL_TAG, "prompt": "/naive Cassini?",
                                            "system": "Be brief.", "stream": False}).json()
    assert body["response"] == ANSWER and body["done"] is True and "eval_count" in body
    assert "Be brief." in answers.prompts[-1]
    with http.stream("POST", "/api/generate", json={"model": MODEL_TAG, "prompt": "/ppr Titan"}) as s:
        lines = ndjson(s.read().decode())
    assert "".join(line.get("response", "") for line in lines) == ANSWER
    assert lines[-1]["done"] is True and all(not line["done"] for line in lines[:-1])
    loaded = http.post("/api/generate", json={"model": MODEL_TAG, "prompt": ""}).json()
    assert loaded["done"] is True and loaded["response"] == ""


def test_context_prefix_returns_context_only(http, server):
    _, answers = server
    before = len(answers.prompts)
    body = http.post("/api/chat", json={"model": MODEL_TAG, "stream": False, "messages": [
        {"role": "user", "content": "/context /naive Voyager 1"}]}).json()
    content = body["message"]["content"]
    assert "Voyager 1" in content and content != ANSWER and body["done"] is True
    with http.stream("POST", "/api/chat", json={"model": MODEL_TAG, "messages": [
            {"role": "user", "content": "/context Voyager 1"}]}) as s:
        lines = ndjson(s.read().decode())
    assert "Voyager 1" in "".join(line["message"]["content"] for line in lines)
    assert lines[-1]["done"] is True
    assert len(answers.prompts) == before, "context only: the answer model is not called"


def test_errors_in_ollama_shape(http):
    unknown = http.post("/api/chat", json={"model": "llama3.2", "stream": False,
                                           "messages": [{"role": "user", "content": "hi"}]})
    assert unknown.status_code == 404 and "not found" in unknown.json()["error"]
    empty = http.post("/api/chat", json={"model": MODEL_TAG, "stream": False,
                                         "messages": [{"role": "user", "content": "/local  "}]})
    assert empty.status_code == 400 and "empty" in empty.json()["error"]
    no_user = http.post("/api/chat", json={"model": MODEL_TAG, "stream": False,
                                           "messages": [{"role": "system", "content": "x"}]})
    assert no_user.status_code == 400 and "user message" in no_user.json()["error"]


def test_body_read_whatever_its_content_type(http):
    """``curl -d '{...}'`` (Ollama's docs) sends a form Content-Type; Ollama reads JSON anyway."""
    body = json.dumps({"model": MODEL_TAG, "stream": False,
                       "messages": [{"role": "user", "content": "/local Voyager 1"}]})
    reply = http.post("/api/chat", content=body,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status_code == 200 and reply.json()["message"]["content"] == ANSWER
    broken = http.post("/api/chat", content=b"{not json")
    assert broken.status_code == 400 and "invalid request" in broken.json()["error"]
    no_messages = http.post("/api/generate", json={"prompt": "hi"})
    assert no_messages.status_code == 400 and "model" in no_messages.json()["error"]
    schema = http.get("/openapi.json").json()["paths"]["/api/chat"]["post"]["requestBody"]
    fields = schema["content"]["application/json"]["schema"]["properties"]
    assert {"model", "messages", "stream"} <= set(fields)
    assert "content" in fields["messages"]["items"]["properties"]


def test_the_ollama_client(server):
    ollama = pytest.importorskip("ollama")
    running, _ = server
    client = ollama.Client(host=running.url, headers={"Authorization": f"Bearer {KEY}"})
    assert [m.model for m in client.list().models] == [MODEL_TAG]
    assert client.show(MODEL_TAG).details.family == "lightrag"
    reply = client.chat(model=MODEL_TAG, messages=[
        {"role": "user", "content": "/mix Which moon did Voyager 1 photograph?"}])
    assert reply.message.role == "assistant" and reply.message.content == ANSWER
    assert reply.done and reply.eval_count and reply.total_duration
    chunks = list(client.chat(model=MODEL_TAG, stream=True, messages=[
        {"role": "user", "content": "/global Saturn"}]))
    assert "".join(c.message.content for c in chunks) == ANSWER and chunks[-1].done
    assert client.generate(model=MODEL_TAG, prompt="/local Titan").response == ANSWER
    streamed = list(client.generate(model=MODEL_TAG, prompt="/bypass hello", stream=True))
    assert "".join(c.response for c in streamed) == ANSWER and streamed[-1].done_reason == "stop"
    with pytest.raises(ollama.ResponseError) as missing:
        client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])
    assert missing.value.status_code == 404
    keyless = ollama.Client(host=running.url)
    with pytest.raises(ollama.ResponseError) as denied:
        keyless.list()
    assert denied.value.status_code == 401


def test_async_ollama_client(server):
    ollama = pytest.importorskip("ollama")
    import asyncio

    running, _ = server

    async def ask() -> str:
        client = ollama.AsyncClient(host=running.url, headers={"Authorization": f"Bearer {KEY}"})
        parts = [c.message.content async for c in await client.chat(
            model=MODEL_TAG, stream=True, messages=[{"role": "user", "content": "/ppr Titan"}])]
        return "".join(parts)

    assert asyncio.run(ask()) == ANSWER


def test_answers_run_off_the_event_loop(tmp_path):
    """While a chat's answer model blocks its thread, the server still answers other requests."""
    import threading

    release, asked = threading.Event(), threading.Event()

    def blocking_answer(prompt: str) -> str:
        asked.set()
        assert release.wait(20), "the test never released the answer"
        return ANSWER

    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=blocking_answer)),
        working_dir=str(tmp_path), cosine_threshold=0.05)
    with BackgroundServer(create_app(rag, api_keys=[])) as running:
        outcome: Dict[str, Any] = {}

        def ask() -> None:
            outcome["reply"] = httpx.post(running.url + "/api/generate", timeout=30, json={
                "model": MODEL_TAG, "prompt": "/bypass hello", "stream": False})

        thread = threading.Thread(target=ask)
        thread.start()
        try:
            assert asked.wait(10), "the answer model was not called"
            assert httpx.get(running.url + "/health", timeout=5).json()["status"] == "ok"
            assert httpx.get(running.url + "/api/tags", timeout=5).status_code == 200
        finally:
            release.set()
            thread.join(30)
        assert outcome["reply"].json()["response"] == ANSWER
