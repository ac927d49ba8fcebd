"""The second process of the race tests (tests/test_store_races.py): inserts one document per
trial with a slow extraction model, so that the test process can re-send or delete the same id
while it is being processed.

    python race_worker.py WORKDIR TRIALS

For each trial it enqueues ``race-<i>`` (version 1), prints ``ENQUEUED <i>``, processes it,
prints ``DONE <i>`` and waits for a line on stdin before the next trial.
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from graph_fakes import extraction_reply, the_answer  # noqa: E402

from lightrag.components.graph_rag import (  # noqa: E402
    Chunker,
    EntityExtractor,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402


def version(i: int, v: int) -> str:
    """Version ``v`` of trial ``i``'s document (two versions share no sentence)."""
    if v == 1:
        return f"Probe{i} flew past Saturn. Probe{i} photographed Titan. Alice{i} built Probe{i}."
    return f"Rover{i} landed on Mars. Rover{i} drilled Gale Crater. Bob{i} drove Rover{i}."


def make_rag(workdir: str, delay: float = 0.0) -> GraphRAG:
    """A GraphRAG on the scripted fakes; ``delay`` seconds (at most) per extraction call."""
    def slow_reply(prompt: str) -> str:
        time.sleep(random.uniform(0, delay))
        return extraction_reply(prompt)

    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=32)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=slow_reply if delay else extraction_reply)),
            max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=the_answer)),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=12, chunk_overlap_token_size=2),
        working_dir=workdir, cosine_threshold=0.05, llm_max_async=1)


def main() -> None:
    workdir, trials = sys.argv[1], int(sys.argv[2])
    rag = make_rag(workdir, delay=0.04)
    for i in range(trials):
        rag.enqueue_documents(version(i, 1), ids=f"race-{i}")
        print(f"ENQUEUED {i}", flush=True)
        rag.process_pending()
        print(f"DONE {i}", flush=True)
        sys.stdin.readline()


if __name__ == "__main__":
    main()
