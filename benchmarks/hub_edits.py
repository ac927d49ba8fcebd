"""How long graph edits take on a large store: inserting and deleting one large document (1,200
chunk texts of the corpus, naming thousands of entities), importing and deleting a graph of
4,000 entities (``insert_custom_kg``), editing the busiest hub's description,
merging a small entity, deleting one of the hub's relations, and renaming that hub (a merge into
a new name), each on a copy of a store built by ``benchmarks/scale.py``.

Deleting the large document rebuilds every entity and relation it shares with other documents
from their cached extractions; at 1M chunks it took 251 s before the twenty-third session (a
cache of the writer's citation look-ups rebuilt whole for each rebuilt entity), 25 s after.

A hub's rename moves every relation and citation it has and renames it in the items of every
document that named it; the 1M-chunk scale store's busiest hub has ~167k citations and ~75k
relations (``docs/benchmarks.md``, twenty-second session).

Usage::

    python benchmarks/hub_edits.py /tmp/scale/n1000000
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402

#: chunk texts of the corpus joined into the large document inserted and deleted
LARGE_DOCUMENT_CHUNKS = 1200


#: entities (in a chain of relations) of the graph imported and deleted again
IMPORTED_ENTITIES = 4000


def imported_graph(n: int) -> dict:
    """A custom graph (HKU LightRAG's format) of ``n`` entities in a chain, ten per chunk."""
    name = "Imported item {}".format
    return {"chunks": [{"content": f"Imported chunk {c}.", "source_id": f"imported-{c}"}
                       for c in range(n // 10 + 1)],
            "entities": [{"entity_name": name(i), "entity_type": "thing", "description": f"Item {i}.",
                          "source_id": f"imported-{i // 10}"} for i in range(n)],
            "relationships": [{"src_id": name(i), "tgt_id": name(i + 1), "description": "next",
                               "keywords": "order", "weight": 1.0, "source_id": f"imported-{i // 10}"}
                              for i in range(n - 1)]}


def timed(label: str, action) -> None:
    started = time.perf_counter()
    action()
    print(f"{label}: {time.perf_counter() - started:.2f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a store folder built by benchmarks/scale.py")
    args = parser.parse_args()
    source = Path(args.store)
    if not (source / "corpus.json").exists():
        parser.error(f"{source} is not a store built by benchmarks/scale.py (no corpus.json)")
    with tempfile.TemporaryDirectory(dir=source.parent) as folder:
        copy = Path(folder) / source.name
        subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
        corpus = scale.Corpus.of_store(str(copy))
        rag = scale.make_rag(str(copy), corpus.dim)
        db = rag.index.stores.db
        hub, degree = db.query("SELECT id, degree FROM nodes ORDER BY degree DESC LIMIT 1")[0]
        citations = db.query("SELECT COUNT(*) FROM node_chunks WHERE node = ?", (hub,))[0][0]
        print(f"busiest hub: {hub!r}, {degree} relations, {citations} citations", flush=True)
        text = "\n\n".join(corpus.chunk_text(corpus.n_chunks + k) for k in range(LARGE_DOCUMENT_CHUNKS))
        timed(f"insert one document of {len(text):,} characters",
              lambda: rag.insert(text, ids="hub-edits-large"))
        timed("delete it (its entities and relations rebuilt from the other documents)",
              lambda: rag.delete_by_doc_id("hub-edits-large"))
        graph = imported_graph(IMPORTED_ENTITIES)
        timed(f"import a graph of {IMPORTED_ENTITIES:,} entities",
              lambda: rag.insert_custom_kg(graph, doc_id="hub-edits-import"))
        timed("delete it", lambda: rag.delete_by_doc_id("hub-edits-import"))
        timed("edit the hub's description", lambda: rag.edit_entity(hub, {"description": "A hub."}))
        small = db.query("SELECT id FROM nodes WHERE degree = 3 LIMIT 1")[0][0]
        timed("merge a small entity into a new name",
              lambda: rag.merge_entities([small], small + " Renamed"))
        timed("delete one of the hub's relations",
              lambda: rag.delete_relation(*rag.graph.get_node_edges(hub)[0]))
        timed("rename the hub (merge into a new name)", lambda: rag.merge_entities([hub], hub + " Renamed"))
        rag.index.close()
        shutil.rmtree(copy)


if __name__ == "__main__":
    main()
