"""Red team 3: the server's bounds on what a query puts into the answer prompt, and the
custom-KG import off the event loop.

* ``response_type``, ``user_prompt`` and ``conversation_history`` were unbounded (only the query
  was): 9 MB of them took 16 s of tokenising in a query thread, and eight such requests held
  every query thread while normal queries waited; the Ollama routes' system messages and
  earlier turns were unbounded the same way;
* ``POST /documents/custom_kg`` validated, merged and embedded the graph on the event loop: a
  7.8 MB graph stopped ``/health`` (and every other request) for 72 s.
"""

import threading
import time

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

import server_fixtures  # noqa: E402

serve = server_fixtures.serve

TURN = {"role": "user", "content": "hello"}
# lightrag.server.query_api's bounds
MAX_RESPONSE_TYPE_CHARS, MAX_USER_PROMPT_CHARS = 1_000, 20_000
MAX_HISTORY_TURNS, MAX_HISTORY_CHARS = 1_000, 200_000


@pytest.mark.parametrize("field,value", [
    ("response_type", "a" * (MAX_RESPONSE_TYPE_CHARS + 1)),
    ("user_prompt", "b" * (MAX_USER_PROMPT_CHARS + 1)),
    ("conversation_history", [TURN] * (MAX_HISTORY_TURNS + 1)),
    ("conversation_history", [{"role": "user", "content": "c" * (MAX_HISTORY_CHARS // 4)}] * 5),
])
def test_query_prompt_texts_are_bounded(serve, field, value):
    _, client, _ = serve()
    started = time.perf_counter()
    reply = client.post("/query", json={"query": "Voyager", field: value})
    assert reply.status_code == 422, reply.text
    assert field in reply.text and time.perf_counter() - started < 2
    reply = client.post("/query", json={"query": "Voyager", "response_type": "One line",
                                        "user_prompt": "Be brief.", "conversation_history": [TURN]})
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize("messages", [
    [{"role": "system", "content": "s" * (MAX_USER_PROMPT_CHARS + 1)},
     {"role": "user", "content": "Voyager"}],
    [{"role": "assistant", "content": "h" * 1000}] * (MAX_HISTORY_CHARS // 1000 + 1)
    + [{"role": "user", "content": "Voyager"}],
])
def test_ollama_chat_system_and_history_are_bounded(serve, messages):
    _, client, _ = serve()
    reply = client.post("/api/chat", json={"model": "lightrag", "stream": False,
                                           "messages": messages})
    assert reply.status_code == 400, reply.text
    assert "at most" in reply.json()["error"]


def test_ollama_generate_system_is_bounded(serve):
    _, client, _ = serve()
    reply = client.post("/api/generate", json={"model": "lightrag", "stream": False,
                                               "prompt": "Voyager",
                                               "system": "s" * (MAX_USER_PROMPT_CHARS + 1)})
    assert reply.status_code == 400 and "user_prompt" in reply.json()["error"]


def test_health_answers_while_a_graph_is_imported(serve, tmp_path, monkeypatch):
    rag = server_fixtures.make_rag(tmp_path)
    original = rag.index.merger.acall

    async def cpu_bound(*args, **kwargs):
        time.sleep(2)  # merging a big graph: CPU work that never yields to the event loop
        return await original(*args, **kwargs)

    monkeypatch.setattr(rag.index.merger, "acall", cpu_bound)
    server, client, _ = serve(rag)
    kg = {"entities": [{"entity_name": "Wa", "description": "a"},
                       {"entity_name": "Wb", "description": "b"}],
          "relationships": [{"src_id": "Wa", "tgt_id": "Wb", "description": "r"}]}
    answers = {}
    work = threading.Thread(target=lambda: answers.update(response=httpx.post(
        f"{server.url}/documents/custom_kg", json={"custom_kg": kg, "doc_id": "kg"}, timeout=60)))
    work.start()
    time.sleep(0.5)
    latencies = server_fixtures.health_latencies(client)
    work.join()
    assert answers["response"].status_code == 200, answers["response"].text
    assert client.get("/graph/entity/Wa").status_code == 200
    assert max(latencies) < 1, latencies


def test_a_bad_graph_is_still_a_400_from_the_worker_thread(serve):
    _, client, _ = serve()
    reply = client.post("/documents/custom_kg", json={"custom_kg": {"entities": [
        {"entity_name": "Wa", "description": "bell\x07"}]}})
    assert reply.status_code == 400 and "entities[0]: description holds" in reply.json()["detail"]
