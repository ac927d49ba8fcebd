"""Red team 3: YAML numbers and dates, and config class names (docs/security.md, "Configs").

* ``1:1:1:...`` is a base-60 integer PyYAML builds in quadratic time: a 2 MiB config took
  minutes; numbers over 4,300 characters are refused at once;
* a value YAML cannot build (``2001-13-45``, a 5,000-digit integer) is a config error naming
  it, not a bare ``ValueError`` traceback;
* a config names registered classes only: ``__class__`` (any package's module type), a class a
  package merely imports (``SQLiteDatabase``) and an unhashable name are config errors.
"""

import time

import pytest
import yaml

from lightrag.components.output_parsers import YamlOutputParser  # noqa: F401 (registry loaded)
from lightrag.core.string_parser import YamlParser
from lightrag.utils.config import ConfigError, build, load_config
from lightrag.utils.safe_yaml import YamlLimitError, safe_load

MAX_NUMBER_CHARS = 4300  # lightrag.utils.safe_yaml.MAX_NUMBER_CHARS


def test_a_base_60_integer_bomb_is_refused_at_once():
    bomb = "a: 1" + ":1" * 100_000 + "\n"
    started = time.perf_counter()
    with pytest.raises(YamlLimitError, match="at most 4300"):
        safe_load(bomb)
    assert time.perf_counter() - started < 1.0
    assert safe_load("a: 190:20:30\nb: 0x1f\nc: 1.5e+3\nd: 12345678901234567890") == {
        "a": 685230, "b": 31, "c": 1500.0, "d": 12345678901234567890}  # ordinary numbers load


def test_a_base_60_bomb_in_model_output_is_a_value_error_fast():
    started = time.perf_counter()
    with pytest.raises(ValueError):
        YamlParser()("value: 1" + ":1" * 100_000)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("scalar", ["9" * 5000, "0x" + "f" * 5000, "1:" * 2500 + "1",
                                    "1.5" + "0" * 5000])
def test_long_numbers_are_config_errors(scalar):
    assert len(scalar) > MAX_NUMBER_CHARS
    with pytest.raises(ConfigError, match="characters at line 1"):
        load_config(f"x: {scalar}\n")


@pytest.mark.parametrize("text", ["x: 2001-13-45\n", "x: 2001-02-30 25:61:61\n"])
def test_a_date_yaml_cannot_build_is_a_config_error(text):
    with pytest.raises(ConfigError, match="invalid YAML: cannot build a value"):
        load_config(text)
    with pytest.raises(yaml.YAMLError):
        safe_load(text)


@pytest.mark.parametrize("name", ["__class__", "SQLiteDatabase", "Any"])
def test_only_registered_classes_are_built(name):
    with pytest.raises(ConfigError, match="unknown component"):
        build({"component_name": name, "component_config": {"name": "x"}})


@pytest.mark.parametrize("ref", [["a"], {"a": 1}, "__class__", "SQLiteDatabase"])
def test_a_class_reference_that_is_not_a_registered_name_is_a_config_error(ref):
    config = {"component_name": "Generator", "component_config": {"model_client": {"class": ref}}}
    with pytest.raises(ConfigError, match="unknown class"):
        build(config)


def test_lazy_library_classes_build_but_module_attributes_do_not(tmp_path):
    with pytest.raises(ConfigError, match="unknown component '__class__'"):
        build({"component_name": "__class__", "component_config": {"name": "x"}})
    built = build({"component_name": "NetworkXGraphStorage", "component_config": {
        "namespace": "g", "working_dir": str(tmp_path)}})
    assert type(built).__name__ == "NetworkXGraphStorage"
