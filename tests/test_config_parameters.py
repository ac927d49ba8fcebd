"""A Generator's prompt Parameters survive its config: ``build(g.to_config())`` has them as
Parameters (their values alone became plain prompt variables, and a trainable prompt was no
longer trainable after a round trip through YAML)."""

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.generator import Generator
from lightrag.core.parameter import Parameter
from lightrag.utils.config import build


def test_prompt_parameters_round_trip() -> None:
    g = Generator(model_client=ScriptedClient(["hi"]), template="{{a}}",
                  prompt_kwargs={"a": Parameter(data="x")})
    rebuilt = build(g.to_config())
    assert [(n, p.data) for n, p in rebuilt.named_parameters()] == [("a", "x")]
    assert repr(rebuilt) == repr(g)
    assert rebuilt.get_prompt() == g.get_prompt() == "x"


def test_declared_and_parameter_keys_are_both_kept() -> None:
    g = Generator(model_client=ScriptedClient(["hi"]), template="{{a}} {{b}}",
                  prompt_kwargs={"a": Parameter(data="x"), "b": "y"}, trainable_params=["b"])
    config = g.to_config()["component_config"]
    assert config["trainable_params"] == ["b", "a"]
    assert sorted(n for n, _ in build(g.to_config()).named_parameters()) == ["a", "b"]
