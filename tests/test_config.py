"""Config: build component trees from YAML/dicts, dump them back, and reject bad configs clearly."""

import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.component import Component
from lightrag.core.container import Sequential
from lightrag.core.generator import Generator
from lightrag.utils.config import ConfigError, build, load_config, save_config, to_yaml
from lightrag.utils.registry import EntityMapping, register


@register
class Greeter(Component):
    def __init__(self, greeting: str = "Hello", times: int = 1, generator: Generator = None):
        super().__init__()
        self.greeting = greeting
        self.times = times
        self.generator = generator

    def call(self, name):
        return " ".join([f"{self.greeting}, {name}!"] * self.times)

    def _extra_repr(self):
        return f"greeting={self.greeting!r}, times={self.times}"


YAML = """
component_name: Greeter
component_config:
  greeting: Hi
  times: 2
  generator:
    component_name: Generator
    component_config:
      model_client:
        component_name: ScriptedClient
        component_config:
          responses: [scripted]
      model_kwargs: {model: tiny, temperature: 0.0}
      template: "Say {{input_str}}"
"""


def test_build_from_yaml_text_and_file(tmp_path):
    greeter = build(YAML)
    assert isinstance(greeter, Greeter) and greeter("Ann") == "Hi, Ann! Hi, Ann!"
    assert greeter.generator({"input_str": "x"}).data == "scripted"
    path = tmp_path / "pipeline.yaml"
    path.write_text(YAML)
    assert repr(build(path)) == repr(greeter)
    assert repr(build(str(path))) == repr(greeter)


def test_round_trip_rebuilds_equal_tree(tmp_path):
    greeter = build(YAML)
    config = greeter.to_config()
    assert config["component_name"] == "Greeter"
    rebuilt = build(config)
    assert repr(rebuilt) == repr(greeter)
    assert rebuilt.to_config() == config
    save_config(greeter, tmp_path / "out.yaml")
    assert repr(build(tmp_path / "out.yaml")) == repr(greeter)
    assert "component_name: Greeter" in to_yaml(greeter)


def test_sequential_round_trip():
    seq = Sequential(Greeter(greeting="A"), Greeter(greeting="B"))
    rebuilt = build(seq.to_config())
    assert repr(rebuilt) == repr(seq) and len(rebuilt) == 2


def test_from_config_flat_and_component_forms():
    flat = Greeter.from_config({"greeting": "Yo"})
    assert flat("B") == "Yo, B!"
    full = Greeter.from_config({"component_name": "Greeter", "component_config": {"times": 3}})
    assert full.times == 3
    gen = Generator.from_config(
        {"model_client": {"component_name": "ScriptedClient", "component_config": {}}}
    )
    assert isinstance(gen.model_client, ScriptedClient)


def test_unknown_class_is_refused_with_path():
    bad = {"component_name": "Greeter", "component_config": {
        "generator": {"component_name": "os.system", "component_config": {}}}}
    with pytest.raises(ConfigError) as info:
        build(bad)
    assert info.value.path == "component_config.generator.component_name"
    assert "only registered classes" in str(info.value)


def test_missing_required_argument_names_path():
    bad = {"component_name": "Greeter", "component_config": {
        "generator": {"component_name": "Generator", "component_config": {}}}}
    with pytest.raises(ConfigError, match="generator.component_config.model_client"):
        build(bad)


def test_wrong_type_names_path():
    with pytest.raises(ConfigError) as info:
        build({"component_name": "Greeter", "component_config": {"times": "two"}})
    assert info.value.path == "component_config.times"
    assert "expected int" in str(info.value)


def test_unknown_argument_names_path():
    with pytest.raises(ConfigError, match=r"component_config.colour.*no argument 'colour'"):
        build({"component_name": "Greeter", "component_config": {"colour": "red"}})


def test_secrets_refused():
    bad = {"component_name": "Generator", "component_config": {
        "model_client": {"component_name": "ScriptedClient", "component_config": {
            "api_key": "sk-123"}}}}
    with pytest.raises(ConfigError, match="environment"):
        build(bad)


def test_invalid_yaml_and_non_mapping():
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config("a: [unclosed\nb: 2")
    with pytest.raises(ConfigError, match="mapping"):
        load_config("- just\n- a list\n")
    with pytest.raises(FileNotFoundError):
        load_config("missing.yaml")


def test_unregistered_component_cannot_be_dumped():
    class Local(Component):
        def call(self):
            return None

    with pytest.raises(ConfigError, match="not registered"):
        Local().to_config()


def test_library_classes_are_registered_lazily():
    assert EntityMapping.get("Generator") is Generator
    assert EntityMapping.get("Sequential") is Sequential
