"""A Generator's ``conversation`` reaches each client's SDK as native chat messages.

Fake SDK objects stand in for ``openai.OpenAI``, ``groq.Groq`` and llama.cpp's ``Llama``: the
test checks the exact request each client sends, sync and async, offline.
"""

import threading
from types import SimpleNamespace

import pytest

from lightrag.components.memory import ConversationMemory, SummaryMemory
from lightrag.components.model_client import (
    GroqAPIClient,
    LocalLLMClient,
    OpenAIClient,
    ScriptedClient,
)
from lightrag.core.generator import Generator
from lightrag.core.messages import conversation_to_messages
from lightrag.core.types import AssistantResponse, Conversation, DialogTurn, UserQuery

TEMPLATE = "<SYS>You answer in one word.</SYS>{{input_str}}"
EXPECTED = [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "I live in Lyon."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "And my sister?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "Where do I live?"},
]


def conversation() -> Conversation:
    conv = Conversation()
    for query, answer in [("I live in Lyon.", "Noted."), ("And my sister?", "Paris.")]:
        conv.append_dialog_turn(DialogTurn(user_query=UserQuery(query),
                                           assistant_response=AssistantResponse(answer)))
    return conv


class FakeCompletions:
    """``client.chat.completions`` of an OpenAI-style SDK: records requests, replies "Lyon"."""

    def __init__(self, is_async: bool) -> None:
        self.requests = []
        self.is_async = is_async

    def _reply(self, kwargs):
        self.requests.append(kwargs)
        message = SimpleNamespace(content="Lyon", role="assistant")
        usage = SimpleNamespace(prompt_tokens=20, completion_tokens=1, total_tokens=21)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=usage)

    def create(self, **kwargs):
        if self.is_async:
            async def reply():
                return self._reply(kwargs)
            return reply()
        return self._reply(kwargs)


class FakeLlama:
    """llama.cpp's ``Llama``: records ``create_chat_completion`` requests."""

    def __init__(self) -> None:
        self.requests = []

    def create_chat_completion(self, **kwargs):
        self.requests.append(kwargs)
        return {"choices": [{"message": {"role": "assistant", "content": "Lyon"}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}}


def sdk_client(client_cls):
    """The client with fake SDK objects, and the lists their sync and async requests go to."""
    if client_cls is LocalLLMClient:
        client = LocalLLMClient()
        llama = FakeLlama()
        client.sync_client = (llama, threading.Lock())
        return client, llama.requests, llama.requests
    client = client_cls(api_key="test-key")
    sync, aio = FakeCompletions(False), FakeCompletions(True)
    client.sync_client = SimpleNamespace(chat=SimpleNamespace(completions=sync))
    client.async_client = SimpleNamespace(chat=SimpleNamespace(completions=aio))
    return client, sync.requests, aio.requests


CLIENTS = [OpenAIClient, GroqAPIClient, LocalLLMClient]


@pytest.mark.parametrize("client_cls", CLIENTS)
def test_conversation_is_sent_as_native_chat_messages(client_cls):
    client, sent, _ = sdk_client(client_cls)
    kwargs = {} if client_cls is LocalLLMClient else {"model": "some-model"}
    gen = Generator(model_client=client, model_kwargs={**kwargs, "temperature": 0.0},
                    template=TEMPLATE)
    output = gen({"input_str": "Where do I live?"}, conversation=conversation())
    assert output.error is None and output.data == "Lyon" and output.usage.total_tokens == 21
    assert sent[0]["messages"] == EXPECTED
    assert sent[0]["temperature"] == 0.0
    if client_cls is LocalLLMClient:
        assert "model" not in sent[0]
    else:
        assert sent[0]["model"] == "some-model"
    gen({"input_str": "Where do I live?"}, conversation=list(conversation().dialog_turns.values()))
    gen({"input_str": "Where do I live?"}, conversation=EXPECTED[1:5])
    assert sent[1]["messages"] == sent[2]["messages"] == EXPECTED
    gen({"input_str": "Hi"})  # no conversation: the prompt alone, system + user
    assert sent[3]["messages"] == [{"role": "system", "content": "You answer in one word."},
                                   {"role": "user", "content": "Hi"}]


@pytest.mark.parametrize("client_cls", CLIENTS)
async def test_async_conversation_and_memory_are_sent_as_chat_messages(client_cls):
    client, _, sent = sdk_client(client_cls)
    memory = ConversationMemory(max_turns=2)
    memory.add("I live in Lyon.", "Noted.")
    memory.add("And my sister?", "Paris.")
    kwargs = {} if client_cls is LocalLLMClient else {"model": "some-model"}
    gen = Generator(model_client=client, model_kwargs=kwargs, template=TEMPLATE)
    output = await gen.acall({"input_str": "Where do I live?"}, conversation=memory)
    assert output.data == "Lyon"
    assert sent[0]["messages"] == EXPECTED


def test_system_turns_single_turns_and_memories_as_conversations():
    turn = DialogTurn(user_query=UserQuery("Hi"), assistant_response=AssistantResponse("Hey"))
    assert conversation_to_messages(turn) == [{"role": "user", "content": "Hi"},
                                              {"role": "assistant", "content": "Hey"}]
    summary = SummaryMemory(Generator(model_client=ScriptedClient(responses=["User is Ada."])),
                            keep_last=1)
    summary.add("I am Ada.", "Hi Ada.")
    summary.add("Hi again.", "Hello.")
    client = ScriptedClient(responses=["Ada."])
    gen = Generator(model_client=client, template=TEMPLATE)
    gen({"input_str": "Who am I?"}, conversation=summary)
    assert client.requests[0]["prompt"] == [
        {"role": "system", "content": "You answer in one word."},
        {"role": "system", "content": "Summary of the earlier conversation:\nUser is Ada."},
        {"role": "user", "content": "Hi again."},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Who am I?"},
    ]
    with pytest.raises(TypeError, match="not a DialogTurn"):
        conversation_to_messages([42])
