"""Time added by a Component call, against plain Python functions, in one process.

A three-level tree (``Top -> Middle -> Leaf``, each level one call) is timed against the same
three plain functions calling each other. The overhead per Component call is
``(t_components - t_functions) / 3``. Given ``--anchor-python`` (the interpreter of a virtual
environment with SylphAI's ``lightrag==0.1.0b6``), the same tree built on that library is timed in
a subprocess, against its own plain-function baseline.

Run:
    python benchmarks/component_overhead.py [--anchor-python /path/to/venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile

TREE_SOURCE = '''
from {module} import Component


class Leaf(Component):
    def __init__(self):
        super().__init__()

    def call(self, x):
        return x + 1


class Middle(Component):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()

    def call(self, x):
        return self.leaf(x) + 1


class Top(Component):
    def __init__(self):
        super().__init__()
        self.middle = Middle()

    def call(self, x):
        return self.middle(x) + 1


def leaf(x):
    return x + 1


def middle(x):
    return leaf(x) + 1


def top(x):
    return middle(x) + 1
'''

MEASURE_SOURCE = '''
import json, timeit
ns = {}
exec(TREE, ns)
tree = ns["Top"]()
plain = ns["top"]
assert tree(0) == plain(0) == 3


def best(fn, number, repeat):
    return min(timeit.repeat(lambda: fn(1), number=number, repeat=repeat)) / number


results = {"functions_s": best(plain, NUMBER, REPEAT), "components_s": best(tree, NUMBER, REPEAT)}
print(json.dumps(results))
'''


def measure(python: str, module: str, number: int, repeat: int) -> dict:
    code = (
        f"TREE = {TREE_SOURCE.format(module=module)!r}\nNUMBER = {number}\nREPEAT = {repeat}\n"
        + MEASURE_SOURCE
    )
    # Run outside the repo so `import lightrag` finds the interpreter's installed library, not ./lightrag.
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                             cwd=cwd)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["added_per_call_us"] = (result["components_s"] - result["functions_s"]) / 3 * 1e6
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--anchor-python", help="python of a venv with lightrag==0.1.0b6")
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    rows = {"lightrag (this repo)": measure(sys.executable, "lightrag.core.component",
                                            args.number, args.repeat)}
    if args.anchor_python:
        rows["lightrag 0.1.0b6 (SylphAI)"] = measure(
            args.anchor_python, "lightrag.core.component", args.number, args.repeat
        )
    sys.stdout.write(f"python {platform.python_version()}, {args.number} calls x {args.repeat}\n")
    sys.stdout.write("| library | 3 plain functions | 3-level Component tree | added per Component call |\n")
    sys.stdout.write("|---|---|---|---|\n")
    for name, r in rows.items():
        sys.stdout.write(
            f"| {name} | {r['functions_s'] * 1e9:.0f} ns | {r['components_s'] * 1e9:.0f} ns "
            f"| {r['added_per_call_us']:.3f} µs |\n"
        )


if __name__ == "__main__":
    main()
