"""ConversationMemory and SummaryMemory: truncation, chat messages, summarisation (and its
failure), save/load, and use with a Generator."""

import doctest
import json
from datetime import datetime

import pytest

import lightrag.components.memory as memory_package
from lightrag.components.memory import ConversationMemory, Memory, SummaryMemory, buffer, summary
from lightrag.components.model_client import ScriptedClient
from lightrag.core.generator import Generator
from lightrag.core.tokenizer import count_tokens
from lightrag.core.types import AssistantResponse, UserQuery


def fill(memory, n):
    for i in range(n):
        memory.add(f"question {i}", f"answer {i}")
    return memory


def test_truncation_by_turns_keeps_the_newest():
    memory = fill(ConversationMemory(max_turns=2), 5)
    assert len(memory) == 2
    assert [t.user_query.query_str for t in memory.turns] == ["question 3", "question 4"]
    assert [t.order for t in memory.turns] == [3, 4]
    assert memory() == [
        {"role": "user", "content": "question 3"}, {"role": "assistant", "content": "answer 3"},
        {"role": "user", "content": "question 4"}, {"role": "assistant", "content": "answer 4"},
    ]
    assert memory.as_text() == "User: question 3\nAssistant: answer 3\nUser: question 4\nAssistant: answer 4"


def test_truncation_by_tokens_and_newest_turn_always_kept():
    per_turn = count_tokens("question 0") + count_tokens("answer 0")
    memory = fill(ConversationMemory(max_tokens=3 * per_turn), 6)
    assert len(memory) == 3 and memory.token_count() <= 3 * per_turn
    assert memory.turns[0].user_query.query_str == "question 3"
    memory.add("a very long question " * 20, "a very long answer " * 20)
    assert len(memory) == 1 and memory.turns[0].user_query.query_str.startswith("a very long")
    both = fill(ConversationMemory(max_turns=4, max_tokens=2 * per_turn), 5)
    assert len(both) == 2


def test_memory_as_generator_conversation_builds_chat_messages():
    client = ScriptedClient(responses=["Lyon."])
    memory = ConversationMemory()
    memory.add("I live in Lyon.", "Nice city!")
    gen = Generator(model_client=client, template="<SYS>You are terse.</SYS>{{input_str}}")
    assert gen({"input_str": "Where do I live?"}, conversation=memory()).data == "Lyon."
    assert client.requests[0]["prompt"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "I live in Lyon."},
        {"role": "assistant", "content": "Nice city!"},
        {"role": "user", "content": "Where do I live?"},
    ]


async def test_acall_aadd_clear_and_0_1_names():
    memory = Memory(max_turns=3)
    memory.add_dialog_turn(UserQuery("hi"), AssistantResponse("hello"))
    await memory.aadd("how are you?", "fine")
    assert await memory.acall() == memory() and len(memory) == 2
    old_id = memory.conversation.id
    memory.clear()
    assert len(memory) == 0 and memory() == [] and memory.conversation.id != old_id
    with pytest.raises(TypeError):
        memory.add(1, "x")
    with pytest.raises(ValueError, match="max_turns"):
        ConversationMemory(max_turns=0)


def test_save_and_load_round_trip(tmp_path):
    memory = fill(ConversationMemory(max_turns=5), 3)
    path = tmp_path / "sub" / "memory.json"
    memory.save(path)
    saved = json.loads(path.read_text())
    assert saved["type"] == "ConversationMemory" and len(saved["turns"]) == 3
    loaded = ConversationMemory(max_turns=5).load(path)
    assert loaded() == memory() and loaded.conversation.id == memory.conversation.id
    assert isinstance(loaded.turns[0].user_query_timestamp, datetime)
    assert [t.id for t in loaded.turns] == [t.id for t in memory.turns]
    small = ConversationMemory(max_turns=1).load(path)
    assert [t.user_query.query_str for t in small.turns] == ["question 2"]
    assert [t.order for t in loaded.turns] == [0, 1, 2]
    small.add("next", "turn")
    assert small.turns[-1].order == 3
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a saved conversation memory"):
        ConversationMemory().load(tmp_path / "bad.json")


def test_summary_memory_folds_older_turns_into_a_system_message():
    client = ScriptedClient(responses=["The user is Ada; she likes tea.",
                                       "Ada likes tea and lives in Lyon."])
    memory = SummaryMemory(Generator(model_client=client), keep_last=2)
    memory.add("I am Ada.", "Hi Ada.")
    memory.add("I like tea.", "Noted.")
    assert client.requests == [] and memory.summary == ""
    memory.add("I live in Lyon.", "Lovely.")
    assert memory.summary == "The user is Ada; she likes tea."
    assert [t.user_query.query_str for t in memory.turns] == ["I like tea.", "I live in Lyon."]
    request = client.requests[0]["prompt"]
    assert "User: I am Ada." in request and "(none yet)" in request
    memory.add("What do I like?", "Tea.")
    assert "The user is Ada; she likes tea." in client.requests[1]["prompt"]
    messages = memory()
    assert messages[0] == {"role": "system", "content":
                           "Summary of the earlier conversation:\nAda likes tea and lives in Lyon."}
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user", "assistant"]
    assert memory.as_text().startswith("Summary: Ada likes tea")


def test_summary_memory_waits_for_its_token_budget():
    client = ScriptedClient(responses=["short summary"])
    per_turn = count_tokens("question 0") + count_tokens("answer 0")
    memory = SummaryMemory(Generator(model_client=client), keep_last=1, max_tokens=3 * per_turn)
    fill(memory, 3)
    assert client.requests == [] and len(memory) == 3
    memory.add("question 3", "answer 3")
    assert memory.summary == "short summary" and len(memory) == 1


def test_summariser_failure_keeps_the_turns_and_retries_later():
    client = ScriptedClient(responses=[RuntimeError("model down"), "   ", "Summary of 0-2."])
    memory = SummaryMemory(Generator(model_client=client), keep_last=1)
    memory.add("question 0", "answer 0")
    memory.add("question 1", "answer 1")      # fails: error
    assert len(memory) == 2 and memory.summary == ""
    memory.add("question 2", "answer 2")      # fails: empty summary
    assert len(memory) == 3 and memory.summary == ""
    memory.add("question 3", "answer 3")      # succeeds: folds all three older turns
    assert memory.summary == "Summary of 0-2." and len(memory) == 1
    assert "question 0" in client.requests[2]["prompt"] and "question 2" in client.requests[2]["prompt"]

    class Raising(Generator):
        def call(self, *args, **kwargs):
            raise ValueError("boom")

    broken = SummaryMemory(Raising(model_client=ScriptedClient()), keep_last=0)
    broken.add("keep me", "please")
    assert len(broken) == 1


async def test_summary_memory_async_save_and_load(tmp_path):
    client = ScriptedClient(responses=["async summary"])
    memory = SummaryMemory(Generator(model_client=client), keep_last=1)
    await memory.aadd("a", "b")
    await memory.aadd("c", "d")
    assert memory.summary == "async summary" and len(memory) == 1
    memory.save(tmp_path / "summary.json")
    restored = SummaryMemory(Generator(model_client=ScriptedClient()), keep_last=1)
    restored.load(tmp_path / "summary.json")
    assert restored.summary == "async summary" and restored() == memory()
    restored.clear()
    assert restored.summary == "" and restored() == []


def test_memories_print_as_components():
    summary = SummaryMemory(Generator(model_client=ScriptedClient()), keep_last=3)
    text = repr(summary)
    assert text.startswith("SummaryMemory(\n  keep_last=3, max_tokens=None, turns=0")
    assert "(generator): Generator(" in text
    assert repr(ConversationMemory(max_turns=4)) == (
        "ConversationMemory(max_turns=4, max_tokens=None, turns=0)")


@pytest.mark.parametrize("module", [memory_package, buffer, summary])
def test_docstring_examples_run(module):
    assert doctest.testmod(module).failed == 0


def test_to_dict_from_dict_and_config_round_trip():
    from lightrag.utils.config import build

    memory = fill(ConversationMemory(max_turns=3), 2)
    as_dict = json.loads(json.dumps(memory.to_dict()))
    restored = ConversationMemory.from_dict(as_dict)
    assert restored() == memory() and restored.max_turns == 3
    assert restored.conversation.id == memory.conversation.id
    summary = SummaryMemory(Generator(model_client=ScriptedClient(responses=["S"])), keep_last=1)
    fill(summary, 2)
    again = SummaryMemory.from_dict(json.loads(json.dumps(summary.to_dict())))
    assert again.summary == "S" and again() == summary()
    built = build(SummaryMemory(Generator(model_client=ScriptedClient()), keep_last=4).to_config())
    assert isinstance(built, SummaryMemory) and built.keep_last == 4
