import pytest

from lightrag.core.default_prompt_template import LIGHTRAG_DEFAULT_PROMPT_ARGS
from lightrag.core.parameter import Parameter
from lightrag.core.prompt_builder import Prompt


def test_render_with_preset_and_runtime_kwargs():
    p = Prompt(template="{{greeting}}, {{name}}!", prompt_kwargs={"greeting": "Hi"})
    assert p(name="Ann") == "Hi, Ann!"
    assert p(greeting="Bye", name="Bob") == "Bye, Bob!"
    p.update_prompt_kwargs(greeting="Yo")
    assert p(name="Cy") == "Yo, Cy!"


def test_prompt_variables_in_order_of_appearance():
    p = Prompt(template="{{b}} {% if a %}{{a}}{% endif %} {{c}} {{b}}")
    assert p.prompt_variables == ["b", "a", "c"]
    assert p.is_key_in_template("a") and not p.is_key_in_template("z")


def test_default_template_sections_are_optional():
    p = Prompt()
    assert set(p.prompt_variables) == set(LIGHTRAG_DEFAULT_PROMPT_ARGS)
    text = p(input_str="What is 2+2?")
    assert "You are a helpful assistant." in text
    assert "<User>\nWhat is 2+2?\n</User>" in text
    assert "<CONTEXT>" not in text
    assert "<CONTEXT>\nfacts\n</CONTEXT>" in p(context_str="facts")


def test_parameters_render_their_data():
    p = Prompt(template="{{task}}")
    assert p(task=Parameter(data="Summarise.")) == "Summarise."


def test_invalid_template_and_render_errors():
    with pytest.raises(ValueError, match="Invalid Jinja2 template"):
        Prompt(template="{% if x %}unclosed")
    with pytest.raises(ValueError, match="rendering failed"):
        Prompt(template="{{ x.attr }}")()


def test_repr_and_to_dict_round_trip():
    p = Prompt(template="Q: {{q}}", prompt_kwargs={"q": "why"})
    assert repr(p) == "Prompt(template: Q: {{q}}, prompt_kwargs: {'q': 'why'}, prompt_variables: ['q'])"
    rebuilt = Prompt.from_dict(p.to_dict())
    assert rebuilt() == "Q: why"
