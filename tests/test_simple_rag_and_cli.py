"""SimpleRAG, the packaged demo config and the `lightrag` command."""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lightrag.cli import main
from lightrag.cli.common import packaged_config
from lightrag.components.model_client import ScriptedClient
from lightrag.components.rag import SimpleRAG
from lightrag.components.retriever import BM25Retriever
from lightrag.core import Generator
from lightrag.data import load_sample_corpus
from lightrag.utils import build

ROOT = Path(__file__).resolve().parents[1]


def make_rag(responses):
    return SimpleRAG(
        retriever=BM25Retriever(top_k=2),
        generator=Generator(model_client=ScriptedClient(responses=responses),
                            template="CONTEXT: {{context}}\nQUESTION: {{question}}\nANSWER:"),
    )


def test_simple_rag_retrieves_then_answers():
    rag = make_rag(["Jupiter", "Saturn"])
    rag.build_index(load_sample_corpus("planets"))
    out = rag("Which planet is the biggest?")
    assert out.documents[0].startswith("Jupiter is the biggest planet")
    assert out.answer.data == "Jupiter"
    prompt = rag.generator.model_client.requests[0]["prompt"]
    assert prompt.startswith("CONTEXT: Jupiter is the biggest") and "QUESTION: Which planet" in prompt
    again = asyncio.run(rag.acall("Which one is famous for its rings?"))
    assert "rings" in again.documents[0] and again.answer.data == "Saturn"


def test_an_answer_the_passages_do_not_support_is_listed():
    rag = make_rag(["Jupiter has rings.", "Saturn is famous for its bright rings made of ice and rock."])
    rag.build_index(load_sample_corpus("planets"))
    wrong = rag("Which planet has rings?")
    assert wrong.unsupported == ["Jupiter has rings."]  # the passages say it of Saturn
    right = rag("Which planet has rings?")
    assert right.unsupported == []


def test_sample_corpus_errors():
    with pytest.raises(FileNotFoundError, match="no sample corpus"):
        load_sample_corpus("nope")


def test_packaged_demo_config_builds_and_round_trips():
    rag = build(packaged_config("numpy_rag.yaml"))
    assert type(rag).__name__ == "SimpleRAG"
    assert "(model_client): LocalLLMClient(model='smollm2-135m-instruct', n_ctx=2048)" in repr(rag)
    assert repr(build(rag.to_config())) == repr(rag)


def test_cli_demo_with_a_scripted_config(tmp_path, capsys):
    config = yaml.safe_load(packaged_config("numpy_rag.yaml").read_text())
    retriever = {"component_name": "BM25Retriever", "component_config": {"top_k": 2}}
    config["component_config"]["retriever"] = retriever
    config["component_config"]["generator"]["component_config"]["model_client"] = {
        "component_name": "ScriptedClient",
        "component_config": {"responses": ["Jupiter."], "cycle": True}}
    config["component_config"]["generator"]["component_config"]["model_kwargs"] = {}
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["demo-rag", "--config", str(path), "--question", "Which planet is the biggest?"]) == 0
    out = capsys.readouterr().out
    assert "== Pipeline" in out and "SimpleRAG(" in out
    retrieved = out.split("== Retrieved ==")[1]
    assert retrieved.strip().startswith("1. score=") and "Jupiter is the biggest" in retrieved.split("\n")[1]
    assert "== Answer ==\nJupiter." in out


def test_cli_print_config_and_errors(tmp_path, capsys):
    assert main(["print-config", str(packaged_config("numpy_rag.yaml"))]) == 0
    assert "component_name: SimpleRAG" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("component_name: Nope\n")
    assert main(["print-config", str(bad)]) == 2
    assert "unknown component 'Nope'" in capsys.readouterr().err
    assert main(["version"]) == 0


@pytest.mark.slow
def test_rag_numpy_use_case_with_real_models():
    result = subprocess.run([sys.executable, str(ROOT / "use_cases" / "rag_numpy.py")],
                            capture_output=True, text=True, timeout=300, env=_no_keys_env())
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for section in ("== Pipeline ==", "== Documents (8) ==", "== Query ==", "== Top-2 retrieved ==",
                    "== Prompt ==", "== Answer =="):
        assert section in out
    first_hit = out.split("== Top-2 retrieved ==")[1].strip().splitlines()[0]
    assert "Jupiter" in first_hit
    assert "CONTEXT: Jupiter" in out and "QUESTION: which planet is the biggest?" in out
    answer = out.split("== Answer ==")[1].strip()
    assert answer and not answer.startswith("ERROR")


def _no_keys_env():
    import os

    return {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GROQ_API_KEY")}
