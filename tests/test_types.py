"""The shared data types: model outputs, documents, tools, agent steps and conversations."""

import json
from collections import OrderedDict
from dataclasses import fields

import pytest

from lightrag.core.base_data_class import DataClass
from lightrag.core.tokenizer import count_tokens
from lightrag.core.types import (
    AssistantResponse,
    CompletionUsage,
    Conversation,
    DialogTurn,
    Document,
    EmbedderOutput,
    Embedding,
    Function,
    FunctionDefinition,
    FunctionExpression,
    FunctionOutput,
    GeneratorOutput,
    GeneratorOutputType,
    ModelType,
    RetrieverOutput,
    StepOutput,
    TokenLogProb,
    Usage,
    UserQuery,
    get_model_args,
)

ALL_TYPES = [
    Embedding,
    Usage,
    CompletionUsage,
    EmbedderOutput,
    TokenLogProb,
    GeneratorOutput,
    Document,
    RetrieverOutput,
    FunctionDefinition,
    Function,
    FunctionExpression,
    FunctionOutput,
    StepOutput,
    UserQuery,
    AssistantResponse,
    DialogTurn,
    Conversation,
]


@pytest.mark.parametrize("cls", ALL_TYPES, ids=lambda c: c.__name__)
def test_every_field_has_a_desc(cls):
    assert issubclass(cls, DataClass)
    assert all(f.metadata.get("desc") for f in fields(cls))


def test_model_type_and_args():
    assert [m.name for m in ModelType] == ["EMBEDDER", "LLM", "RERANKER", "UNDEFINED"]
    assert get_model_args(ModelType.LLM) == ["model"]
    assert get_model_args(ModelType.EMBEDDER) == ["model"]
    assert get_model_args(ModelType.RERANKER) == ["model", "top_k", "documents", "query"]
    assert get_model_args(ModelType.UNDEFINED) == []


# ---- embedder output ----------------------------------------------------------------------


def test_embedder_output_properties():
    out = EmbedderOutput(
        data=[Embedding([0.6, 0.8], 0), Embedding([0.0, 1.0], 1)],
        model="m",
        usage=Usage(prompt_tokens=3, total_tokens=3),
    )
    assert (out.length, out.embedding_dim, out.is_normalized) == (2, 2, True)
    out.data.append(Embedding([3.0, 4.0], 2))
    assert out.is_normalized is False


def test_empty_embedder_output():
    out = EmbedderOutput(error="boom")
    assert (out.length, out.embedding_dim, out.is_normalized) == (0, -1, False)  # 0.1's -1
    assert out.data == [] and EmbedderOutput().data is not out.data


def test_embedder_output_round_trip():
    out = EmbedderOutput(data=[Embedding([0.5, 0.5], 0)], usage=Usage(2, 2), input=["hi"])
    loaded = EmbedderOutput.from_json(out.to_json())
    assert loaded == out
    assert isinstance(loaded.data[0], Embedding) and isinstance(loaded.usage, Usage)


# ---- generator output ---------------------------------------------------------------------


def test_generator_output_fields_and_defaults():
    assert [f.name for f in fields(GeneratorOutput)] == [
        "data",
        "error",
        "usage",
        "raw_response",
        "metadata",
        "id",
    ]
    out = GeneratorOutput(data={"a": 1}, raw_response='{"a": 1}')
    assert out.error is None and out.usage is None and out.metadata is None
    assert GeneratorOutputType is not None


def test_generator_output_round_trip_with_usage():
    out = GeneratorOutput(
        id="1",
        data=["x", 2],
        usage=CompletionUsage(completion_tokens=1, prompt_tokens=2, total_tokens=3),
        raw_response="raw",
        metadata={"k": "v"},
    )
    loaded = GeneratorOutput.from_dict(json.loads(out.to_json()))
    assert loaded == out
    assert isinstance(loaded.usage, CompletionUsage)


def test_token_log_prob():
    assert TokenLogProb(token="a", logprob=-0.1).to_dict() == {"token": "a", "logprob": -0.1}


# ---- documents and retriever output -------------------------------------------------------


def test_document_counts_tokens():
    doc = Document(text="hello world", meta_data={"source": "a"})
    assert doc.estimated_num_tokens == count_tokens("hello world") == 2
    assert Document(text="hi", estimated_num_tokens=7).estimated_num_tokens == 7
    assert Document().estimated_num_tokens is None


def test_document_defaults_are_not_shared():
    a, b = Document(text="a"), Document(text="b")
    a.vector.append(1.0)
    assert b.vector == []
    assert a.id != b.id and isinstance(a.id, str)


def test_document_repr_truncates_text_and_vector():
    doc = Document(text="x" * 150, vector=[0.0] * 12, id="d1")
    text = repr(doc)
    assert text.startswith("Document(id=d1, text='" + "x" * 100 + "...'")
    assert "x" * 101 not in text
    assert "...(len=12)" in text


def test_document_from_dict():
    doc = Document.from_dict({"text": "hello world", "meta_data": None, "id": None})
    assert doc.id and doc.estimated_num_tokens == 2
    original = Document(text="a b c", meta_data={"k": 1}, vector=[0.1], order=2, parent_doc_id="p")
    assert Document.from_dict(original.to_dict()) == original
    assert Document.from_json(original.to_json()) == original


def test_retriever_output():
    out = RetrieverOutput(doc_indices=[2, 0], doc_scores=[0.9, 0.1], query="q")
    assert out.documents is None
    with pytest.raises(TypeError):
        RetrieverOutput()
    assert RetrieverOutput.to_schema()["required"] == ["doc_indices"]


# ---- tools --------------------------------------------------------------------------------


def test_function_definition_schema_str():
    fd = FunctionDefinition(func_name="add", func_desc="Add two numbers")
    assert json.loads(fd.fn_schema_str()) == {
        "func_name": "add",
        "func_desc": "Add two numbers",
        "func_parameters": {},
    }
    assert (
        fd.fn_schema_str("yaml")
        == "func_name: add\nfunc_desc: Add two numbers\nfunc_parameters: {}\n"
    )
    with pytest.raises(ValueError):
        fd.fn_schema_str("xml")


def test_function_defaults_are_not_shared():
    a, b = Function(name="f"), Function(name="g")
    a.args.append(1)
    a.kwargs["x"] = 1
    assert (b.args, b.kwargs) == ([], {})


def add(a: int, b: int = 0) -> int:
    return a + b


def test_function_expression_from_function():
    expr = FunctionExpression.from_function(add, "adding", 1, b=2)
    assert expr == FunctionExpression(thought="adding", action="add(1, b=2)")
    assert FunctionExpression.from_function(add, None, "s").action == "add('s')"
    assert FunctionExpression.from_function(add, None, a=[1, 2]).action == "add(a=[1, 2])"
    with pytest.raises(ValueError, match="Arguments do not fit add"):
        FunctionExpression.from_function(add, None, 1, c=3)


def test_function_expression_action_is_required():
    with pytest.raises(TypeError):
        FunctionExpression(thought="t")
    assert FunctionExpression.to_schema()["required"] == ["action"]
    assert FunctionExpression.to_yaml_signature().splitlines()[0] == (
        "thought: Why the function is called (Optional[str]) (optional)"
    )


def test_function_output_round_trip():
    out = FunctionOutput(name="add", input=Function(name="add", args=[1]), output=3)
    loaded = FunctionOutput.from_dict(out.to_dict())
    assert loaded == out and isinstance(loaded.input, Function)


def test_step_output_with_action_type():
    NewStep = StepOutput.with_action_type(FunctionExpression)
    assert NewStep.__name__ == "StepOutput" and issubclass(NewStep, StepOutput)
    action_type = NewStep.to_schema()["properties"]["action"]["type"]
    assert action_type == str(FunctionExpression.to_schema())
    assert StepOutput.to_schema()["properties"]["action"]["type"] == "T"
    step = NewStep.from_dict({"step": 1, "action": {"thought": "t", "action": "add(1)"}})
    assert step.action == FunctionExpression(thought="t", action="add(1)")
    assert StepOutput.from_dict({"action": {"x": 1}}).action == {"x": 1}


# ---- conversations ------------------------------------------------------------------------


def turn(query: str, answer: str, order=None) -> DialogTurn:
    return DialogTurn(
        order=order, user_query=UserQuery(query), assistant_response=AssistantResponse(answer)
    )


def test_conversation_append_rules():
    conv = Conversation()
    conv.append_dialog_turn(turn("hi", "hello"))
    conv.append_dialog_turn(turn("how are you?", "fine", order=1))
    assert list(conv.dialog_turns) == [0, 1] and conv.dialog_turns[0].order == 0
    with pytest.raises(ValueError, match="must be 2"):
        conv.append_dialog_turn(turn("skip", "ahead", order=5))
    assert conv.get_chat_history_str() == (
        "User: hi\nAssistant: hello\nUser: how are you?\nAssistant: fine\n"
    )


def test_conversation_update_and_delete():
    conv = Conversation(name="c")
    for q in ("a", "b", "c"):
        conv.append_dialog_turn(turn(q, q.upper()))
    conv.update_dialog_turn(1, turn("bb", "BB", order=1))
    conv.delete_dialog_turn(0)
    assert conv.get_chat_history_str() == "User: bb\nAssistant: BB\nUser: c\nAssistant: C\n"
    assert conv.next_order == 3
    with pytest.raises(KeyError):
        conv.delete_dialog_turn(0)


def test_conversation_round_trip_keeps_int_keys_and_timestamps():
    conv = Conversation(user_id="u")
    conv.append_dialog_turn(turn("hi", "hello"))
    for loaded in (Conversation.from_json(conv.to_json()), Conversation.from_yaml(conv.to_yaml())):
        assert loaded == conv
        assert isinstance(loaded.dialog_turns, OrderedDict)
        assert list(loaded.dialog_turns) == [0]
        assert (
            loaded.dialog_turns[0].user_query_timestamp == conv.dialog_turns[0].user_query_timestamp
        )


def test_dialog_turn_session_id_alias():
    t = DialogTurn(conversation_id="c1")
    assert t.session_id == "c1"
    t.session_id = "c2"
    assert t.conversation_id == "c2"


def test_user_query_requires_text():
    with pytest.raises(TypeError):
        UserQuery()
    assert UserQuery("q").metadata is None
