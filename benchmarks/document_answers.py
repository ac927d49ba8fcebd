"""Answers on a folder of look-alike documents, per query mode (offline defaults).

Indexes ``benchmarks/data/bridges/docs`` (or ``--docs``) with the packaged offline pipeline
(spaCy graph, MiniLM, quoted answers) into a temporary folder and asks every question of
``questions.json`` in each mode; an answer counts when it contains the expected phrase (or,
for an item whose ``answer`` is null, when it says the context does not answer).

Usage::

    .venv/bin/python benchmarks/document_answers.py [--docs DIR] [--modes ppr mix naive local]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "bridges"
#: what the quoting answerer says when the context does not answer (``answer: null`` items):
#: no sentence answers, or the thing asked for is mentioned nowhere
DECLINED = ("does not contain a sentence that answers", "does not mention", "do not give the")


def is_right(answer: str, expected: str | None, question: str = "") -> bool:
    """The answer holds the expected phrase; a yes/no answer opens with it ("No: ..."), and so
    does the verdict of an "A or B?" question (the other option's evidence may quote the
    expected phrase); for an item the files do not answer (``None``), the answer says so."""
    from lightrag.components.graph_rag.question_types import choice_options

    if expected is None:
        return any(d in answer for d in DECLINED)
    if expected.lower() in ("yes", "no"):
        return answer.lower().startswith(expected.lower() + ":")
    if choice_options(question):
        verdict = answer.lower().split(", according to", 1)[0] if ", according to" in answer else ""
        return expected.lower().split(", according", 1)[0] in verdict
    return expected.lower() in answer.lower()


def gathered(paths: list, exclude: list, into: Path) -> list:
    """``paths`` as given, or, with names to leave out, their files copied into ``into``."""
    if not exclude:
        return paths
    into.mkdir(parents=True)
    for path in map(Path, paths):
        for found in ([path] if path.is_file() else sorted(path.rglob("*"))):
            if found.is_file() and found.name not in exclude:
                shutil.copy2(found, into / found.name)
    return [str(into)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", nargs="+", default=[str(DATA / "docs")],
                        help="files or folders to index (README.md docs: this repository's docs)")
    parser.add_argument("--exclude", nargs="*", default=[],
                        help="file names left out of the folders (benchmarks.md)")
    parser.add_argument("--questions", default=str(DATA / "questions.json"))
    parser.add_argument("--modes", nargs="+", default=["ppr", "mix", "naive", "local", "global", "hybrid"])
    args = parser.parse_args()
    questions = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as workdir:
        subprocess.run([sys.executable, "-m", "lightrag.cli", "index",
                        *gathered(args.docs, args.exclude, Path(workdir) / "docs"),
                        "--working-dir", workdir], check=True, capture_output=True)
        from lightrag.cli.common import load_rag

        rag = load_rag(argparse.Namespace(config=None, working_dir=workdir, workspace=None))
        totals = {}
        for mode in args.modes:
            started, right = time.perf_counter(), 0
            for item in questions:
                answer = rag.query(item["question"], mode=mode).content or ""
                hit = is_right(answer, item.get("answer"), item["question"])
                right += hit
                if not hit:
                    print(f"  [{mode}] MISS {item['question']} -> {answer[:120]!r}")
            totals[mode] = right
            print(f"{mode}: {right}/{len(questions)} in {time.perf_counter() - started:.1f} s")
        rag.close()
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
