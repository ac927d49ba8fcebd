"""Configs are untrusted and shared: secrets refused at any depth, dumps redacted, YAML bounded.

Issue 16: ``model_kwargs.api_key``, ``model_kwargs.extra_headers.Authorization``, ``apikey``,
credentials in a ``base_url`` and Chroma ``headers: {Authorization: ...}`` were accepted and printed
back by ``to_config`` / ``lightrag print-config``; a 600-byte alias bomb ran for minutes.
"""

from __future__ import annotations

import time

import pytest
import yaml

from lightrag.cli import main
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.generator import Generator
from lightrag.utils.config import ConfigError, build, load_config, to_yaml
from lightrag.utils.secrets import RedactedValueError

# The new helper modules (lightrag.utils.secrets, lightrag.utils.safe_yaml) are imported inside
# the tests that need them, so that the defect tests also run (and fail) against the old code.
REDACTED = "<redacted>"
SECRET = "s3cr3t-VALUE-123456789"


def generator_config(**model_kwargs):
    return {
        "component_name": "Generator",
        "component_config": {
            "model_client": {"component_name": "ScriptedClient", "component_config": {}},
            "model_kwargs": model_kwargs,
        },
    }


@pytest.mark.parametrize(
    "model_kwargs,where",
    [
        ({"api_key": SECRET}, "model_kwargs.api_key"),
        ({"apikey": SECRET}, "model_kwargs.apikey"),
        ({"apiKey": SECRET}, "model_kwargs.apiKey"),
        ({"extra_headers": {"Authorization": f"Bearer {SECRET}"}},
         "model_kwargs.extra_headers.Authorization"),
        ({"extra_headers": {"X-Api-Key": SECRET}}, "model_kwargs.extra_headers.X-Api-Key"),
        ({"headers": {"Cookie": f"session={SECRET}"}}, "model_kwargs.headers.Cookie"),
        ({"base_url": f"https://user:{SECRET}@api.example.com/v1"}, "model_kwargs.base_url"),
        ({"base_url": f"https://api.example.com/v1?api_key={SECRET}"}, "model_kwargs.base_url"),
        ({"endpoints": [{"url": f"https://h/x?token={SECRET}"}]}, "model_kwargs.endpoints[0].url"),
        ({"options": {"auth": {"password": SECRET}}}, "model_kwargs.options.auth.password"),
        ({"options": {"client_secret": SECRET}}, "model_kwargs.options.client_secret"),
        ({"note": "sk-proj-abcdefghijklmnopqrstuvwxyz"}, "model_kwargs.note"),
        ({"dsn": f"host=db user=app password={SECRET}"}, "model_kwargs.dsn"),
    ],
)
def test_secrets_at_any_depth_are_refused_with_the_path(model_kwargs, where):
    with pytest.raises(ConfigError) as info:
        build(generator_config(**model_kwargs))
    assert info.value.path == f"component_config.{where}"
    assert "environment" in str(info.value) and SECRET not in str(info.value)


def test_chroma_headers_with_a_token_are_refused():
    config = {
        "component_name": "ChromaVectorStorage",
        "component_config": {"namespace": "chunks", "mode": "http",
                             "headers": {"Authorization": f"Bearer {SECRET}"}},
    }
    with pytest.raises(ConfigError, match=r"component_config\.headers\.Authorization"):
        build(config)


def test_ordinary_settings_are_not_mistaken_for_secrets():
    config = generator_config(
        max_tokens=256, temperature=0.0, base_url="http://127.0.0.1:8080/v1?timeout=5",
        extra_headers={"Accept": "application/json", "User-Agent": "lightrag"},
        stop_token="</s>", api_key_env="MY_KEY", api_key=None, token="",
    )
    assert isinstance(build(config), Generator)
    from lightrag.utils.secrets import find_secrets

    assert find_secrets({"dsn": "postgresql://app@localhost:5432/rag", "pad_token": "<pad>"}) == []


def test_to_config_and_yaml_dump_redact_secrets_at_any_depth():
    generator = Generator(
        model_client=ScriptedClient(),
        model_kwargs={
            "model": "m",
            "extra_headers": {"Authorization": f"Bearer {SECRET}", "Accept": "json"},
            "base_url": f"https://me:{SECRET}@api.example.com/v1?api_key={SECRET}&region=eu",
            "api_key": SECRET,
        },
    )
    dumped = to_yaml(generator)
    assert SECRET not in dumped and SECRET not in str(generator.to_config())
    kwargs = generator.to_config()["component_config"]["model_kwargs"]
    assert kwargs["extra_headers"] == {"Authorization": REDACTED, "Accept": "json"}
    assert kwargs["api_key"] == REDACTED and kwargs["model"] == "m"
    assert kwargs["base_url"] == "https://api.example.com/v1?region=eu"
    rebuilt = build(dumped)  # the redacted dump loads back; the key is dropped (the environment)
    assert "api_key" not in rebuilt.model_kwargs
    # a redacted header is kept, and refused: dropped, requests went out without it
    assert rebuilt.model_kwargs["extra_headers"] == {"Authorization": REDACTED, "Accept": "json"}
    with pytest.raises(RedactedValueError, match=r"\['extra_headers'\]\['Authorization'\]"):
        rebuilt(prompt_kwargs={"input_str": "hi"})


def test_print_config_refuses_a_config_with_a_secret(tmp_path, capsys):
    path = tmp_path / "leaky.yaml"
    path.write_text(yaml.safe_dump(generator_config(extra_headers={"Authorization": f"Bearer {SECRET}"})))
    code = main(["print-config", str(path)])
    captured = capsys.readouterr()
    assert code != 0
    assert "model_kwargs.extra_headers.Authorization" in captured.err
    assert SECRET not in captured.out + captured.err


def test_redact_leaves_plain_values_alone():
    from lightrag.utils.secrets import redact

    value = {"top_k": 5, "items": ["a", {"password": ""}], "url": "https://x.org/p?q=1"}
    assert redact(value) == value


BILLION_LAUGHS = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
)


def test_billion_laughs_fails_fast_with_a_clear_error(tmp_path):
    assert len(BILLION_LAUGHS) < 700
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    for source in (BILLION_LAUGHS, path):
        started = time.perf_counter()
        with pytest.raises(ConfigError, match="expands to more than"):
            load_config(source)
        assert time.perf_counter() - started < 2


def test_print_config_of_an_alias_bomb_fails_fast(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text("component_name: Sequential\ncomponent_config:\n  args: []\n" + BILLION_LAUGHS)
    started = time.perf_counter()
    assert main(["print-config", str(path)]) != 0
    assert "aliases" in capsys.readouterr().err
    assert time.perf_counter() - started < 5


def test_yaml_bounds():
    from lightrag.utils.safe_yaml import YamlLimitError, safe_load

    with pytest.raises(YamlLimitError, match="recursive alias"):
        safe_load("a: &a [1, *a]")
    with pytest.raises(YamlLimitError, match="deeper than"):
        safe_load("[" * 500 + "]" * 500)
    with pytest.raises(YamlLimitError, match="over the limit"):
        safe_load("a: " + "x" * 100, max_bytes=50)
    with pytest.raises(YamlLimitError, match="more than 3 aliases"):
        safe_load("a: &a 1\nb: [*a, *a, *a, *a]", max_aliases=3)
    assert safe_load("base: &base {t: 0.1}\nrun:\n  <<: *base\n  n: 2") == {
        "base": {"t": 0.1}, "run": {"t": 0.1, "n": 2}}
    assert safe_load("") is None


def test_oversized_config_file_is_refused_before_reading(tmp_path):
    from lightrag.utils.safe_yaml import YamlLimitError, read_yaml_file

    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * 3_000_000)
    with pytest.raises(ConfigError, match="size limit"):
        load_config(path)
    with pytest.raises(YamlLimitError):
        read_yaml_file(path)


def test_printed_component_trees_hide_secrets():
    from lightrag.components.model_client import OpenAIClient
    from lightrag.core import Generator

    generator = Generator(model_client=OpenAIClient(api_key="sk-live-123", base_url="http://u:pw@host/v1"),
                          model_kwargs={"model": "m", "api_key": "sk-live-456",
                                        "extra_headers": {"Authorization": "Bearer sk-live-789"}})
    text = repr(generator)
    assert "sk-live" not in text and "pw@" not in text and "<redacted>" in text
