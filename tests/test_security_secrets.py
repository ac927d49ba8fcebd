"""Secrets in configs (issue 26, defect 9): every provider key shape, keys inside template text,
tokens in URL fragments and queries, and values under secret-named fields at any depth are
refused when a config is built and redacted from ``to_yaml`` / ``lightrag print-config``."""

from __future__ import annotations

import pytest
import yaml

from lightrag.cli import main
from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.generator import Generator
from lightrag.core.prompt_builder import Prompt
from lightrag.utils.config import ConfigError, build, to_yaml

TAIL = "Q7x9LmP2vR4tY6wZ8bN1cD3f"
KEYS = {
    "google": "AIzaSyD" + TAIL + "Kp0aB1c2",
    "openai": "sk-" + TAIL + "T3BlbkFJ",
    "openai_project": "sk-proj-" + TAIL + "_aB-cd",
    "openai_live": "sk-live-" + TAIL,
    "groq": "gsk_" + TAIL + "WGdyb3FY",
    "anthropic": "sk-ant-api03-" + TAIL + "-AA",
    "huggingface": "hf_" + TAIL + "Zz",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "cohere": "Zx4" + "aB9cD8eF7gH6iJ5kL4mN3oP2qR1sT0uV9wX8y",  # 40 letters and digits
    "github": "ghp_" + TAIL + "abcdefgh",
}
SECRET_FIELDS = ["key", "auth", "token", "secret", "password", "credential", "credentials",
                 "openai_key", "basic_auth", "client_secret"]  # fmt: skip


def generator_config(**model_kwargs):
    return {"component_name": "Generator",
            "component_config": {"model_client": {"component_name": "ScriptedClient",
                                                  "component_config": {}},
                                 "model_kwargs": model_kwargs}}


def prompt_config(template):
    return {"component_name": "Prompt", "component_config": {"template": template}}


def test_cohere_sample_is_forty_characters():
    assert len(KEYS["cohere"]) == 40


@pytest.mark.parametrize("provider", sorted(KEYS))
def test_provider_key_shapes_in_any_value_are_refused(provider):
    key = KEYS[provider]
    with pytest.raises(ConfigError) as info:
        build(generator_config(note=key))
    assert info.value.path == "component_config.model_kwargs.note"
    assert key not in str(info.value)


@pytest.mark.parametrize("provider", sorted(KEYS))
def test_provider_keys_inside_template_text_are_refused(provider):
    key = KEYS[provider]
    template = f"Call the tool with the header 'Authorization: Bearer {key}'.\n{{{{ query }}}}"
    with pytest.raises(ConfigError) as info:
        build(prompt_config(template))
    assert info.value.path == "component_config.template" and key not in str(info.value)


@pytest.mark.parametrize("value", [
    "https://app.example.com/callback#access_token=ya29.a0AfH6SMBxyz&token_type=bearer",
    "https://app.example.com/callback#id_token=abcdef123456",
    "https://api.example.com/v1?api_key=abcdef123456&region=eu",
    "https://api.example.com/v1?key=abcdef123456",
    "See https://h.example.com/x?token=abcdef123456 for details",
])
def test_tokens_in_url_fragments_and_queries_are_refused(value):
    with pytest.raises(ConfigError, match="model_kwargs.base_url") as info:
        build(generator_config(base_url=value))
    assert "abcdef123456" not in str(info.value)


@pytest.mark.parametrize("field", SECRET_FIELDS)
def test_secret_named_fields_at_any_depth_are_refused(field):
    with pytest.raises(ConfigError) as info:
        build(generator_config(options={"nested": [{field: "plain-looking-value"}]}))
    assert info.value.path == f"component_config.model_kwargs.options.nested[0].{field}"
    assert "plain-looking-value" not in str(info.value)


def test_ordinary_values_are_kept():
    config = generator_config(
        model="gpt-4o-mini-2024-07-18", max_tokens=256, answer_key="answer", id_key="id",
        base_url="https://api.example.com/v1?region=eu#section-2", env_api_key_name="COHERE_API_KEY",
        note="Authorization: Bearer {{ token }} and the password: {{ password }}",
        sha="e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    )
    generator = build(config)
    assert isinstance(generator, Generator)
    assert generator.to_config()["component_config"]["model_kwargs"] == config[
        "component_config"]["model_kwargs"]


def test_to_yaml_redacts_every_shape_given_in_code():
    generator = Generator(
        model_client=ScriptedClient(),
        model_kwargs={
            "model": "m",
            "note": KEYS["google"],
            "header_line": f"Authorization: Bearer {KEYS['openai_live']}",
            "callback": "https://app.example.com/cb#access_token=abcdef123456&state=ok",
            "base_url": "https://api.example.com/v1?api_key=abcdef123456&region=eu",
            "deep": {"list": [{"key": "k-value-1", "auth": {"user": "u", "pass": "p-value-2"}}]},
            "providers": [KEYS[p] for p in sorted(KEYS)],
        },
    )
    dumped = to_yaml(generator)
    for secret in (*KEYS.values(), "abcdef123456", "k-value-1", "p-value-2"):
        assert secret not in dumped
    kwargs = yaml.safe_load(dumped)["component_config"]["model_kwargs"]
    assert kwargs["model"] == "m"
    assert kwargs["header_line"] == "Authorization: Bearer <redacted>"
    assert kwargs["callback"] == "https://app.example.com/cb#state=ok"
    assert kwargs["base_url"] == "https://api.example.com/v1?region=eu"
    assert build(dumped).model_kwargs["model"] == "m"  # the redacted dump loads back


def test_prompt_template_with_a_key_is_redacted_in_the_dump():
    prompt = Prompt(template=f"Use 'x-api-key: {KEYS['groq']}' then answer {{{{ q }}}}")
    dumped = to_yaml(prompt)
    assert KEYS["groq"] not in dumped and "<redacted>" in dumped
    assert "{{ q }}" in dumped


@pytest.mark.parametrize("model_kwargs", [
    {"note": KEYS["google"]},
    {"template_text": f"Bearer {KEYS['openai_live']}"},
    {"url": "https://h.example.com/#access_token=abcdef123456"},
    {"key": "plain-value-9"},
    {"auth": "plain-value-9"},
])
def test_print_config_never_prints_them(tmp_path, capsys, model_kwargs):
    path = tmp_path / "leaky.yaml"
    path.write_text(yaml.safe_dump(generator_config(**model_kwargs)))
    code = main(["print-config", str(path)])
    captured = capsys.readouterr()
    assert code != 0 and "model_kwargs" in captured.err
    for value in model_kwargs.values():
        assert value not in captured.out + captured.err
        assert value.split("=")[-1] not in captured.out + captured.err


def test_a_key_echoed_by_a_provider_error_is_redacted_from_output_and_logs(caplog):
    key = "sk-proj-LEAKCANARY0123456789abcdefABCDEF"
    client = ScriptedClient(responses=[RuntimeError(f"500 bad upstream; you sent Bearer {key}")])
    with caplog.at_level("WARNING"):
        out = Generator(model_client=client, template="{{q}}")({"q": "hi"})
    assert "LEAKCANARY" not in out.error and "Bearer <redacted>" in out.error
    assert "LEAKCANARY" not in caplog.text


@pytest.mark.parametrize("name", ["subscription-key", "subscription_key", "code", "sig"])
def test_query_parameters_sent_with_every_request_are_checked(name):
    config = generator_config(extra_query={name: "q1w2e3r4t5y6", "api-version": "2024-06-01"})
    with pytest.raises(ConfigError) as info:
        build(config)
    assert info.value.path == f"component_config.model_kwargs.extra_query.{name}"
    assert "q1w2e3r4t5y6" not in to_yaml(build(generator_config(extra_query={"api-version": "2024-06-01"})))
    with pytest.raises(ConfigError):
        build(generator_config(base_url="https://x.example.com/v1?subscription-key=q1w2e3r4t5y6"))
