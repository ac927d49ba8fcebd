"""Templates are bounded per render (issue 26, defect 5): recursion depth of macros, calls,
wall-clock time, output size and what the render builds in all. Each payload runs in a child
process with its address space capped, so a regression fails the test instead of the machine."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from lightrag.utils.sandbox import compile_template
started, cpu_started = time.perf_counter(), time.process_time()
try:
    compile_template(sys.argv[1]).render()
    outcome = "rendered"
except Exception as e:
    outcome = f"{type(e).__name__}: {e}"
# VmHWM: this process's peak RSS (ru_maxrss would carry the forking pytest's size across exec)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"seconds": time.perf_counter() - started, "outcome": outcome,
                  "cpu_seconds": time.process_time() - cpu_started, "rss_mb": peak / 1024}))
"""

PAYLOADS = {
    "macro_recursion_depth": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "macro_fan_out": "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
                     "{% endmacro %}{{ f(40) }}",
    "macro_in_loop": "{% macro f(n) %}{% for i in range(100000) %}{{ f(n) }}{% endfor %}"
                     "{% endmacro %}{{ f(1) }}",
    "heavy_work_inside_loop_budget": "{% for i in range(1000) %}{% for j in range(999) %}"
                                     "{% set x = ([3, 1, 2] * 300000)|sort %}{% endfor %}{% endfor %}",
    "slow_loop_under_every_size_bound": "{% for i in range(1000) %}{% for j in range(999) %}"
                                        "{{ (i ~ j)|center(99999)|length }}{% endfor %}{% endfor %}",
    "big_strings_in_a_loop": "{% for i in range(100000) %}{{ ('x' * 9000000)|length }}{% endfor %}",
    "kept_big_strings": "{% set ns = namespace(a=[]) %}{% for i in range(1000) %}"
                        "{% set ns.a = ns.a + ['x' * 9000000 ~ i] %}{% endfor %}",
    "kept_big_lists": "{% set ns = namespace(a=[]) %}{% for i in range(1000) %}"
                      "{% set ns.a = ns.a + [[0] * 1000000] %}{% endfor %}",
    "indent_bomb": "{{ ('x\\n' * 4999999)|indent(99999) }}",
    "indent_string_bomb": "{{ ('x\\n' * 4999999)|indent('y' * 99999) }}",
    "sort_ten_million": "{{ ([1] * 9999999)|sort }}",
    "sort_ten_million_chars": "{{ ('x' * 9999999)|sort }}",
    "huge_range": "{{ range(10 ** 12)|length }}",
    "list_multiplication": "{{ [0] * 10000000 }}",
    "expandtabs_bomb": "{{ ('\\t' * 9999999).expandtabs(99999) }}",
    "str_join_bomb": "{{ ('y' * 9999999).join(['a'] * 1000000) }}",
    "join_filter_bomb": "{{ (['a'] * 1000000)|join('y' * 9999999) }}",
    "batch_fill_bomb": "{{ [1]|batch(100000000, 'x') }}",
    "split_bomb": "{{ ('x ' * 4999999).split() }}",
    "wordwrap_bomb": "{{ ('x' * 9999999)|wordwrap(1, wrapstring='y' * 100) }}",
    "translate_bomb": "{{ ('x' * 9999999).translate({120: 'y' * 1000}) }}",
}


def run_payload(template: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, template], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_fails_fast_with_a_clear_error_and_bounded_memory(name):
    result = run_payload(PAYLOADS[name])
    assert result["outcome"].startswith("UnsafeTemplateError: template blocked by the sandbox"), result
    # CPU time: a render that is not stopped burns it, while a busy machine (other tests, other
    # jobs) stretches only the wall time, which the sandbox's own 1 s budget already bounds
    assert result["cpu_seconds"] < 2.5 and result["seconds"] < 15, result
    assert result["rss_mb"] < 600, result


def test_ordinary_templates_render_within_the_budget():
    from lightrag.utils.sandbox import MAX_MACRO_DEPTH, compile_template

    nested = ("{% macro f(n) %}{% if n > 0 %}({{ f(n - 1) }}){% endif %}{% endmacro %}"
              f"{{{{ f({MAX_MACRO_DEPTH - 1}) }}}}")
    depth = MAX_MACRO_DEPTH - 1
    assert compile_template(nested).render() == "(" * depth + ")" * depth
    started = time.process_time()  # CPU time: not stretched by a busy machine
    big = compile_template("{% for c in chunks %}[{{ loop.index }}] {{ c }}\n{% endfor %}")
    text = big.render(chunks=["word " * 200] * 2000)
    assert len(text) > 2_000_000 and time.process_time() - started < 1
    indented = compile_template("{{ text|indent(4) }}").render(text="line\n" * 100000)
    assert indented.count("    line") == 99999


def test_the_budget_is_per_render():
    from lightrag.utils.sandbox import compile_template

    template = compile_template("{% for i in range(100) %}{{ ('x' * 1000000)|length }}{% endfor %}")
    for _ in range(5):  # 100 MB built per render, under the per-render limit each time
        assert template.render().startswith("1000000")
