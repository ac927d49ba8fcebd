"""A GraphRAG over a working directory with the scripted fakes, driven from the command line by
the crash and concurrency tests (so that a real process can be killed at any instant).

    python store_worker.py WORKDIR insert FIRST COUNT
    python store_worker.py WORKDIR delete DOC_ID...
    python store_worker.py WORKDIR merge TARGET SOURCE...

It prints ``READY`` once the store is open and ``DONE`` when the operation finished.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from graph_fakes import fake_graph_rag  # noqa: E402

from lightrag.components.graph_rag import GraphRAG  # noqa: E402

PLANETS = ["Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"]
AGENCIES = ["NASA", "ESA", "JAXA", "Roscosmos", "ISRO"]


def document(i: int) -> str:
    """A small document with names shared with other documents (so merges rebuild shared items)."""
    planet, other = PLANETS[i % 8], PLANETS[(i * 3 + 1) % 8]
    agency = AGENCIES[i % 5]
    return (f"Probe{i} of {agency} flew past {planet} in {1960 + i}. Probe{i} photographed {other} "
            f"and Moon{i % 11}. Scientist{i % 7} of {agency} studied {planet} with Probe{i}.")


def doc_id(i: int) -> str:
    return f"doc-{i:04d}"


def make_rag(workdir: str, **kwargs) -> GraphRAG:
    return fake_graph_rag(workdir, chunk_tokens=24, chunk_overlap=4, embedding_dim=64,
                          max_gleaning=0, **kwargs)


def operate(rag: GraphRAG, op: str, args: list) -> None:
    """Run one operation (``insert FIRST COUNT``, ``delete DOC_ID...``, ``merge TARGET
    SOURCE...``) on ``rag``, then embed the vectors it queued: delete and merge commit first, so
    a kill in between leaves them queued (consistent), and a re-run that finds nothing left to
    do must still embed them."""
    if op == "insert":
        first, count = int(args[0]), int(args[1])
        ids = list(range(first, first + count))
        rag.insert([document(i) for i in ids], ids=[doc_id(i) for i in ids],
                   file_paths=[f"probe{i}.md" for i in ids])
    elif op == "delete":
        for target in args:
            if rag.doc_status.get_by_id(target) is not None:
                rag.delete_by_doc_id(target)
    elif op == "merge":
        target, sources = args[0], [s for s in args[1:] if rag.graph.has_node(s)]
        if sources:
            rag.merge_entities(sources, target)
    else:
        raise ValueError(f"unknown operation {op!r}")
    rag.flush()


def run(workdir: str, op: str, args: list) -> None:
    rag = make_rag(workdir, insert_batch_size=2, vector_flush_size=8, lock_timeout=60)
    print("READY", flush=True)
    operate(rag, op, args)
    print("DONE", flush=True)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3:])
