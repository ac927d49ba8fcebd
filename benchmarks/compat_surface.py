"""Diff the public API surface of SylphAI's ``lightrag`` 0.1.0b6 against ours.

Both packages install the import name ``lightrag``, so 0.1 lives in its own virtual environment
and is inspected in a subprocess run with that environment's Python; ours is inspected in this
process. For every module of the package the dump records each public name (``__all__`` when the
module defines it, else the classes, functions and UPPER_CASE constants the module defines), its
kind, the parameters of its constructor or function, and the public method names of classes.

The check then asks, for each 0.1 name: does it import from the same module path in ours; does
our callable accept every parameter 0.1's accepts (by name, or through ``**kwargs``) without
requiring more; does our class have each of its public methods. Names listed in
``DELIBERATE`` are reported with their reason instead of as failures.

Usage::

    python3 -m venv /tmp/lr01 && /tmp/lr01/bin/pip install lightrag==0.1.0b6
    .venv/bin/python benchmarks/compat_surface.py --old-python /tmp/lr01/bin/python \
        --out docs/benchmarks/compat_surface.json

Exit status 0 when every 0.1 name is compatible or deliberately different, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

# The dumper runs in either interpreter, so it is kept as source text (stdlib only).
DUMPER = r'''
import importlib, inspect, json, sys, warnings, logging
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
SKIP_PREFIXES = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 and sys.argv[2] else ()
# names another version exports: described too when this module has them, exported or not
WANTED = json.load(open(sys.argv[3])) if len(sys.argv) > 3 and sys.argv[3] else {}

def params(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    out = []
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 and p.name in ("self", "cls"):
            continue
        out.append({"name": p.name, "kind": p.kind.name,
                    "required": p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)})
    return out

def describe(obj):
    if inspect.isclass(obj):
        init = obj.__dict__.get("__init__") or getattr(obj, "__init__", None)
        methods = sorted(
            n for n in dir(obj)
            if not n.startswith("_") and callable(getattr(obj, n, None))
            and not inspect.isclass(getattr(obj, n, None))
        )
        sig = None
        if init is not None and init is not object.__init__:
            sig = params(init)
        attrs = sorted(n for n in dir(obj) if not n.startswith("_"))
        return {"kind": "class", "params": sig, "methods": methods, "attrs": attrs}
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj):
        return {"kind": "function", "params": params(obj)}
    if inspect.ismodule(obj):
        return {"kind": "module"}
    return {"kind": "value", "type": type(obj).__name__}

def public_names(mod):
    if hasattr(mod, "__all__"):
        return [n for n in mod.__all__ if isinstance(n, str)]
    names = []
    for n, obj in vars(mod).items():
        if n.startswith("_"):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if getattr(obj, "__module__", None) == mod.__name__:
                names.append(n)
        elif n.isupper() and not inspect.ismodule(obj):
            names.append(n)
    return names

result = {}
import importlib.util, os
root = os.path.dirname(importlib.util.find_spec(sys.argv[1]).origin)
mods = []
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
    rel = os.path.relpath(dirpath, root)
    parts = [sys.argv[1]] + ([] if rel == "." else rel.split(os.sep))
    for f in filenames:
        if not f.endswith(".py") or (f.startswith("_") and f != "__init__.py"):
            continue
        mods.append(".".join(parts if f == "__init__.py" else parts + [f[:-3]]))
for name in sorted(set(mods)):
    if SKIP_PREFIXES and name.startswith(SKIP_PREFIXES):
        continue
    try:
        mod = importlib.import_module(name)
    except BaseException as e:
        result[name] = {"import_error": f"{type(e).__name__}: {e}"[:300]}
        continue
    entries = {}
    extra = [n for n in WANTED.get(name, []) if hasattr(mod, n)]
    for n in list(dict.fromkeys(public_names(mod) + extra)):
        if not hasattr(mod, n):
            entries[n] = {"kind": "missing-in-__all__"}
            continue
        try:
            entries[n] = describe(getattr(mod, n))
        except Exception as e:
            entries[n] = {"kind": "error", "error": str(e)[:200]}
    result[name] = {"names": entries}
print(json.dumps(result))
'''

# 0.1 names that differ on purpose: "module.Name" (or "module" for a whole module) -> reason.
DELIBERATE: Dict[str, str] = {
    "lightrag.database": (
        "0.1's SQLAlchemy demo schema (database.sqlalchemy.*) was an unfinished example that "
        "needs SQLAlchemy and a PostgreSQL server; our storages (components.storage) replace it"
    ),
    "lightrag.components.memory.memory.Memory": (
        "our Memory's first positional parameter is max_turns; a LocalDB given there (0.1's "
        "Memory(turn_db)) is taken as turn_db, so 0.1 calls still work"
    ),
    "lightrag.components.retriever.RerankerRetriever": (
        "ours takes (retriever, reranker); a ModelClient given first (0.1's "
        "RerankerRetriever(model_client, model_kwargs, top_k, documents)) selects 0.1's form"
    ),
    "lightrag.components.retriever.reranker_retriever.RerankerRetriever": (
        "the same class as lightrag.components.retriever.RerankerRetriever (see there)"
    ),
    "lightrag.icl": (
        "0.1's icl.retrieval_icl was an empty draft (a class with no working call); few-shot "
        "demos live in lightrag.optim"
    ),
}


def dump_surface(
    python: str,
    package: str = "lightrag",
    skip: str = "",
    env: Dict[str, str] | None = None,
    wanted: Dict[str, List[str]] | None = None,
) -> Dict[str, Any]:
    """Run the dumper with ``python`` (in a temporary directory, so the cwd's package is unseen).

    ``wanted`` names, per module, attributes to describe even when the module does not list
    them as public (so ``from module import name`` counts when it works).
    """
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "dump_surface.py"
        script.write_text(DUMPER, encoding="utf-8")
        wanted_path = Path(tmp) / "wanted.json"
        wanted_path.write_text(json.dumps(wanted or {}), encoding="utf-8")
        proc = subprocess.run(
            [python, str(script), package, skip, str(wanted_path)],
            capture_output=True,
            text=True,
            cwd=tmp,
            timeout=600,
            env={**os.environ, **(env or {})},
        )
    if proc.returncode != 0:
        raise RuntimeError(f"surface dump with {python} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def _deliberate(module: str, name: str) -> str | None:
    for key in (f"{module}.{name}", module):
        if key in DELIBERATE:
            return DELIBERATE[key]
    for key, reason in DELIBERATE.items():
        if module.startswith(key + "."):
            return reason
    return None


def _param_problems(old: List[dict] | None, new: List[dict] | None) -> List[str]:
    if old is None or new is None:
        return []
    problems = []
    new_by_name = {p["name"]: p for p in new}
    has_var_kw = any(p["kind"] == "VAR_KEYWORD" for p in new)
    has_var_pos = any(p["kind"] == "VAR_POSITIONAL" for p in new)
    old_names = {p["name"] for p in old}
    for p in old:
        if p["kind"] == "VAR_KEYWORD" and not has_var_kw:
            problems.append("**kwargs not accepted")
        elif p["kind"] == "VAR_POSITIONAL" and not has_var_pos:
            problems.append("*args not accepted")
        elif p["kind"] not in ("VAR_KEYWORD", "VAR_POSITIONAL"):
            if p["name"] not in new_by_name and not has_var_kw:
                problems.append(f"parameter {p['name']!r} missing")
    for p in new:
        if p["required"] and p["name"] not in old_names:
            problems.append(f"extra required parameter {p['name']!r}")
    # positional order: 0.1's positional parameters must sit at the same positions in ours
    old_pos = [p["name"] for p in old if p["kind"] == "POSITIONAL_OR_KEYWORD"]
    new_pos = [p["name"] for p in new if p["kind"] in ("POSITIONAL_OR_KEYWORD", "POSITIONAL_ONLY")]
    for i, name in enumerate(old_pos):
        if i < len(new_pos) and new_pos[i] != name and not has_var_pos:
            problems.append(f"positional parameter {i} is {new_pos[i]!r}, 0.1 has {name!r}")
            break
        if i >= len(new_pos) and name in new_by_name and new_by_name[name]["kind"] == "KEYWORD_ONLY":
            problems.append(f"{name!r} is keyword-only, positional in 0.1")
            break
    return problems


def compare(old: Dict[str, Any], new: Dict[str, Any]) -> Dict[str, Any]:
    """Per 0.1 name: ok, deliberate (with reason) or a list of problems."""
    rows = []
    for module, info in sorted(old.items()):
        if "import_error" in info:
            rows.append({"module": module, "name": None, "status": "skipped",
                         "problems": [f"0.1 itself cannot import it: {info['import_error']}"]})
            continue
        ours = new.get(module)
        for name, desc in sorted(info["names"].items()):
            reason = _deliberate(module, name)
            problems: List[str] = []
            if ours is None:
                problems.append("module missing")
            elif "import_error" in ours:
                problems.append(f"module fails to import: {ours['import_error']}")
            elif name not in ours["names"]:
                problems.append("name missing")
            else:
                mine = ours["names"][name]
                if desc["kind"] in ("class", "function") and mine["kind"] not in (
                    "class", "function"
                ):
                    problems.append(f"is a {mine['kind']}, 0.1 has a {desc['kind']}")
                else:
                    problems += _param_problems(desc.get("params"), mine.get("params"))
                    if desc["kind"] == "class" and mine["kind"] == "class":
                        missing = sorted(set(desc["methods"]) - set(mine.get("attrs", [])))
                        if missing:
                            problems.append(f"methods missing: {', '.join(missing)}")
            status = "ok" if not problems else ("deliberate" if reason else "differs")
            rows.append({"module": module, "name": name, "status": status,
                         "problems": problems, "reason": reason if problems else None})
    counts: Dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return {"counts": counts, "rows": rows}


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old-python", default="/tmp/lr01/bin/python",
                        help="python of the venv where lightrag==0.1.0b6 is installed")
    parser.add_argument("--new-python", default=sys.executable,
                        help="python that imports our lightrag (default: this one)")
    parser.add_argument("--out", default="docs/benchmarks/compat_surface.json")
    parser.add_argument("--tiktoken-cache", default="/tmp/lr01/tiktoken_cache",
                        help="TIKTOKEN_CACHE_DIR holding cl100k_base for 0.1 (it fetches it "
                        "at import time; see docs/compat.md)")
    parser.add_argument("--skip", default="lightrag.server,lightrag.cli",
                        help="comma-separated module prefixes of ours not to import")
    args = parser.parse_args(argv)
    old = dump_surface(args.old_python, env={"TIKTOKEN_CACHE_DIR": args.tiktoken_cache})
    wanted = {m: list(info.get("names", {})) for m, info in old.items()}
    new = dump_surface(args.new_python, skip=args.skip, wanted=wanted)
    report = compare(old, new)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    total = sum(v for k, v in report["counts"].items() if k != "skipped")
    ok = report["counts"].get("ok", 0)
    sys.stdout.write(f"0.1 public names: {total}; counts: {report['counts']}; "
                     f"ok {ok / max(total, 1):.1%}\n")
    for row in report["rows"]:
        if row["status"] in ("differs", "deliberate"):
            sys.stdout.write(f"  [{row['status']}] {row['module']}.{row['name']}: "
                             f"{'; '.join(row['problems'])}\n")
    return 0 if report["counts"].get("differs", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
