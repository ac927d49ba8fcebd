"""Known Jinja2 sandbox escapes: every one must fail with a clear error, nothing may run.

Issue 16: a Prompt template in a YAML config ran ``cycler.__init__.__globals__.os.popen('id')``
and rendered ``''.__class__.__mro__``; Prompt and the output parsers used a plain Environment.
"""

from __future__ import annotations

import time

import pytest

from lightrag.components.graph_rag.prompts import ENTITY_EXTRACTION_SYSTEM_PROMPT, render_prompt
from lightrag.components.output_parsers.outputs import ListOutputParser, render_template
from lightrag.core.prompt_builder import Prompt, get_jinja2_environment
from lightrag.utils.config import ConfigError, build

# lightrag.utils.sandbox is imported inside the tests that need it, so that the defect tests
# also run (and fail) against the code before the sandbox existed.


@pytest.fixture
def marker(tmp_path):
    return tmp_path / "pwned"


# Escapes written into the template text: refused when the template is compiled.
STATIC_ESCAPES = [
    "{{ cycler.__init__.__globals__.os.popen('touch MARKER').read() }}",
    "{{ joiner.__init__.__globals__.os.popen('touch MARKER').read() }}",
    "{{ namespace.__init__.__globals__.os.popen('touch MARKER').read() }}",
    "{{ lipsum.__globals__['os'].popen('touch MARKER').read() }}",
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ().__class__.__base__.__subclasses__() }}",
    "{{ self.__init__.__globals__ }}",
    "{{ range.__globals__ }}",
    "{{ dict.__init__ }}",
    "{{ x['__class__'] }}",
    "{{ x|attr('__class__') }}",
    "{{ (x|attr('__class__')|attr('__mro__'))[1] }}",
    "{{ '{0.__class__.__mro__}'.format(x) }}",
    "{{ '{x.__init__.__globals__}'.format_map({'x': x}) }}",
    "{{ fmt.format(x) }}",
    "{{ namespace().__class__ }}",
]

# Escapes built at run time (names hidden in variables or data): refused when rendered.
RUNTIME_ESCAPES = [
    ("{{ x|attr(name) }}", {"name": "__class__"}),
    ("{{ x[name] }}", {"name": "__class__"}),
    ("{{ (x|attr(a)|attr(b))[1]|attr(c) }}", {"a": "__class__", "b": "__mro__", "c": "__subclasses__"}),
    ("{% set f = fmt.format %}{{ f(x) }}", {"fmt": "{0.__class__}"}),
    ("{{ (fmt|attr(m))(x) }}", {"fmt": "{0.__class__}", "m": "format"}),
    ("{{ items.append(1) }}", {"items": []}),
    ("{{ d.update({'a': 1}) }}", {"d": {}}),
    ("{{ d.pop('k') }}", {"d": {"k": 1}}),
    ("{{ fn|attr(name) }}", {"fn": time.sleep, "name": "__self__"}),
]

# Resource bombs: bounded by the sandbox, refused quickly.
BOMBS = [
    "{{ 'a' * 1000000000 }}",
    "{{ [0] * 1000000000 }}",
    "{{ 10 ** 100 ** 100 ** 100 }}",
    "{{ 'x'|center(1000000000) }}",
    "{{ 'x'|indent(1000000000) }}",
    "{{ 'x'.center(1000000000) }}",
    "{{ 'x'.zfill(1000000000) }}",
    "{{ '%0999999999d'|format(1) }}",
    "{{ '%0999999999d' % 1 }}",
    "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}"
    "{% endfor %}{{ ns.s|length }}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "{{ ('a' * 1000000)|replace('', 'b' * 1000000) }}",
    "{{ ('a' * 1000000).replace('', 'bbbbbbbbbbbbbbbbbbbbbbbb') }}",
    "{% for x in [1] recursive %}{% if loop.depth < 9 %}{{ loop(range(100000)) }}{% endif %}{% endfor %}",
]


@pytest.mark.parametrize("template", STATIC_ESCAPES)
def test_static_escapes_are_refused_at_compile_time(template, marker):
    source = template.replace("MARKER", str(marker))
    with pytest.raises(ValueError, match="sandbox|undefined"):
        Prompt(template=source)(x=1)
    with pytest.raises(ValueError, match="sandbox|undefined"):
        render_template(source, x=1)
    assert not marker.exists()


@pytest.mark.parametrize("template,variables", RUNTIME_ESCAPES)
def test_runtime_escapes_are_refused_when_rendered(template, variables):
    with pytest.raises(ValueError, match="template blocked by the sandbox"):
        Prompt(template=template)(x=1, **variables)
    if "d" in variables:
        assert variables["d"] in ({}, {"k": 1})  # unchanged
    if "items" in variables:
        assert variables["items"] == []


@pytest.mark.parametrize("template", BOMBS)
def test_resource_bombs_fail_fast(template):
    started = time.perf_counter()
    with pytest.raises(ValueError, match="template blocked by the sandbox"):
        Prompt(template=template)()
    assert time.perf_counter() - started < 5


def test_loop_budget_counts_every_loop_of_one_render():
    from lightrag.utils.sandbox import MAX_LOOP_ITERATIONS, compile_template

    ok = compile_template("{% for i in range(1000) %}{% for j in range(999) %}{% endfor %}{% endfor %}")
    assert ok.render() == ""  # 999,000 + 1,000 iterations: under the budget
    assert 1000 * 999 + 1000 <= MAX_LOOP_ITERATIONS
    assert ok.render() == ""  # the budget is per render, not per template


def test_cycler_escape_in_a_yaml_config_does_not_run(marker):
    """The exact defect: a Prompt template in a config ran a shell command."""
    payload = "{{ cycler.__init__.__globals__.os.popen('touch MARKER').read() }}"
    payload = payload.replace("MARKER", str(marker))
    config = {"component_name": "Prompt", "component_config": {"template": payload}}
    with pytest.raises(ConfigError, match="component_config.*sandbox|sandbox"):
        build(config)
    yaml_text = (
        "component_name: Generator\n"
        "component_config:\n"
        "  model_client: {component_name: ScriptedClient, component_config: {}}\n"
        f"  template: \"{payload}\"\n"
    )
    with pytest.raises(ConfigError, match="sandbox"):
        build(yaml_text)
    assert not marker.exists()


def test_one_shared_sandbox_everywhere():
    from lightrag.utils.sandbox import TemplateSandbox, compile_template, get_template_sandbox

    env = get_template_sandbox()
    assert isinstance(env, TemplateSandbox)
    assert get_jinja2_environment() is env
    assert Prompt(template="{{a}}")._template.environment is env
    assert compile_template("{{schema}}").template.environment is env
    assert sorted(env.globals) == ["dict", "namespace", "range"]


def test_ordinary_templates_still_render():
    prompt = Prompt(
        template="{% for k, v in d|dictsort %}{{ k }}={{ v|upper }}{{ ', ' if not loop.last }}"
        "{% endfor %}|{{ '%.2f'|format(x) }}|{{ items|join('; ') }}|{{ 'a' ~ 'b' }}|{{ 2 ** 8 }}"
        "|{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"
    )
    assert prompt(d={"b": "y", "a": "x"}, x=3.14159, items=["p", "q"]) == "a=X, b=Y|3.14|p; q|ab|256|3"
    assert "person" in render_prompt(ENTITY_EXTRACTION_SYSTEM_PROMPT, entity_types=["person"])
    assert ListOutputParser("{{n}} items").format_instructions(n=2) == "2 items"


def test_parsers_and_graph_prompts_use_the_sandbox():
    with pytest.raises(ValueError, match="sandbox"):
        ListOutputParser("{{ ''.__class__ }}")
    with pytest.raises(ValueError, match="sandbox"):
        render_prompt("{{ query|attr(a) }}", query="q", a="__class__")  # graph-RAG prompt helper
