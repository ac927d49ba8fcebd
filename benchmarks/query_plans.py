"""Which SQL statements of an insert, a delete, a graph edit or a query read a big store whole.

A statement whose plan scans a table, or sorts its rows in a temporary B-tree, costs time in
proportion to the store: invisible on a test store, 62 ms per insert at 1M chunks for the
twenty-third session's ``unfinished_document_ids`` (an ``ORDER BY id`` that made SQLite walk the
primary key through every document instead of the status index). This tool runs the real
pipeline (``benchmarks/scale.py``'s instant fakes): one insert of a few documents, a document
delete and a user's edits of the graph (an imported graph, relations and entities created,
edited, renamed, merged and deleted, the explorer's views) on a copy of a small scale store, a
query in every mode on a big one, capturing every distinct statement sent to SQLite; then it
asks SQLite for the plan of each statement against
the big store, opened read-only (plans depend on its schema and indexes, which every store of
this version shares), and lists those that read a whole table, or every row of its namespace,
or sort rows in a temporary B-tree. Exit status 1 when one does.

Usage::

    python benchmarks/query_plans.py --capture-on /tmp/scale/n10000 --explain-on /tmp/scale/n1000000
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402

from lightrag.components.graph_rag.index.stores import STORE_TABLES  # noqa: E402

MODES = ("naive", "local", "global", "hybrid", "mix", "ppr")
#: tables a statement may scan whole: the change log and metadata are small by design
SMALL_TABLES = {"changes", "meta", "sqlite_master", "sqlite_schema"}
#: key-value namespaces read whole by design: the queue of vectors to embed, emptied by every
#: insert
SMALL_NAMESPACES = ("'pending_vectors'",)
#: indexes small by design, which a statement may read and sort whole: the busy nodes' partial
#: index (degree 64 or more: 6,500 of 450k nodes at 1M chunks)
SMALL_INDEXES = ("nodes_busiest",)
#: reads bounded by their LIMIT whatever they scan: the explorer's substring search of labels
#: (a rare substring reads every name: 72-83 ms at 450k nodes; there is no substring index)
BOUNDED_READS = ("LOWER(id) LIKE",)


def normalized(sql: str) -> str:
    """The statement with its literal values and value lists folded (one entry per shape); the
    namespace a statement reads stays (the same read of a small namespace and of a big one)."""
    text = re.sub(r"\bns = '((?:[^']|'')*)'", lambda m: "ns = NS_" + m.group(1).encode().hex(),
                  " ".join(sql.split()))
    text = re.sub(r"'(?:[^']|'')*'", "?", text)
    text = re.sub(r"\bX'[0-9A-Fa-f]*'", "?", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "?", text)
    text = re.sub(r"\?(\s*,\s*\?)+", "?..", text)
    return re.sub(r"NS_([0-9a-f]*)", lambda m: repr(bytes.fromhex(m.group(1)).decode()), text)


@contextmanager
def traced(seen: Dict[str, str]) -> Iterator[None]:
    """Record every distinct statement the connections opened inside the block send."""
    connect = sqlite3.connect

    def tracing(*args, **kwargs):  # type: ignore[no-untyped-def]
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(lambda sql: seen.setdefault(normalized(sql), sql))
        return conn

    sqlite3.connect = tracing  # type: ignore[assignment]
    try:
        yield
    finally:
        sqlite3.connect = connect  # type: ignore[assignment]


def edit_the_graph(rag: Any) -> None:
    """The edits a user makes by hand, on a hub and on quiet entities: import a small graph,
    create, edit and delete a relation, edit, rename and merge entities, delete one, and show
    the explorer's views."""
    busiest = rag.graph.get_popular_labels(3)
    kg = {"chunks": [{"content": "Plans met Audit in Lyon.", "source_id": "plans-c1"}],
          "entities": [{"entity_name": n, "entity_type": "concept", "description": f"{n}.",
                        "source_id": "plans-c1"} for n in ("Plans", "Audit", "Lyon")],
          "relationships": [{"src_id": "Plans", "tgt_id": "Audit", "description": "met",
                             "keywords": "meeting", "weight": 1.0, "source_id": "plans-c1"}]}
    rag.insert_custom_kg(kg, doc_id="plans-kg")
    rag.create_relation("Lyon", busiest[0], {"description": "a hub's new relation"})
    rag.edit_relation("Lyon", busiest[0], {"description": "edited"})
    rag.delete_relation("Lyon", busiest[0])
    rag.edit_entity(busiest[1], {"description": "a hub, edited"})
    rag.edit_entity("Audit", {}, rename_to="Audit Two")
    rag.merge_entities(["Audit Two", "Lyon"], "Plans")
    rag.delete_entity("Plans")
    rag.get_knowledge_graph("*", max_nodes=200)
    rag.get_knowledge_graph(busiest[2], max_depth=2, max_nodes=200)
    rag.graph.search_labels(busiest[0][:3])


def capture(small: str, big: str, documents: int, offset: int) -> Dict[str, str]:
    """Distinct statements (normalized -> one full text) of an insert, a delete and the edits of
    :func:`edit_the_graph`, run on a temporary copy of the ``small`` store, and of a query in
    every mode on the ``big`` store itself (queries write nothing; some reads depend on the
    store's size, e.g. ``ppr`` reads the whole graph of a small store and a neighbourhood of a
    big one)."""
    seen: Dict[str, str] = {}
    copy = Path(tempfile.mkdtemp(dir=Path(small).parent)) / Path(small).name
    shutil.copytree(small, copy)
    try:
        with traced(seen):
            corpus = scale.Corpus.of_store(str(copy))
            rag = scale.make_rag(str(copy), corpus.dim)
            base = corpus.n_chunks + 4 * offset
            texts = [" ".join(corpus.chunk_text(base + 4 * d + k) for k in range(4))
                     for d in range(documents)]
            ids = [f"plans-{base}-{d}" for d in range(documents)]
            rag.insert(texts, ids=ids)
            rag.delete_by_doc_id(ids[0])
            edit_the_graph(rag)
            rag.index.db.close()
    finally:
        shutil.rmtree(copy.parent)
    with traced(seen):
        rag = scale.make_rag(big, scale.Corpus.of_store(big).dim)
        for mode in MODES:
            rag.query("Who did anyone meet?", mode=mode, only_need_context=True)
        rag.index.db.close()
    return seen


def whole_table_steps(sql: str, plan: List[str]) -> List[str]:
    """The steps of a plan that read a store table whole (a ``SCAN``, or a ``SEARCH`` on the
    namespace alone: every row of a store shares it) or sort rows in a temporary B-tree. Not
    flagged: a statement whose condition is false as written (``WHERE 0 = 1``: the columns of a
    table), and a read that a ``LIMIT`` ends with no condition but the namespace (the first rows
    in the order of an index)."""
    if re.search(r"\bWHERE\s+(0\s*=\s*1|1\s*=\s*0)\b", sql, re.I):
        return []
    where = re.search(r"\bWHERE\b(.*?)(\bORDER\b|\bGROUP\b|\bLIMIT\b|$)", sql, re.I | re.S)
    only_namespace = where is None or re.fullmatch(r"\s*(\w+\.)?ns\s*=\s*(\?|'[^']*')\s*",
                                                   where.group(1)) is not None
    early_stop = bool(re.search(r"\bLIMIT\b", sql, re.I)) and only_namespace
    tables = "|".join(sorted({*STORE_TABLES, "node_windows", "doc_items"}))
    whole = re.compile(rf"(SCAN ({tables})\b(?!.*\(.*=)|SEARCH ({tables}) USING .*\(ns=\?\)$)")
    return [step for step in plan
            if (whole.match(step) and not early_stop and not any(t in step for t in SMALL_TABLES))
            or "TEMP B-TREE" in step]


def explain(statements: Dict[str, str], store: str) -> List[Tuple[str, List[str]]]:
    """``(statement, its plan)`` of each statement whose plan reads a table whole in ``store``."""
    conn = sqlite3.connect(f"file:{Path(store) / 'lightrag.sqlite3'}?mode=ro", uri=True)
    flagged = []
    for key, sql in sorted(statements.items()):
        if not re.match(r"\s*(SELECT|UPDATE|DELETE|INSERT|WITH)\b", sql, re.I):
            continue
        try:
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        except sqlite3.Error:  # a temporary table of the capture, absent here
            continue
        if (whole_table_steps(sql, plan) and not any(n in sql for n in (*SMALL_NAMESPACES, *BOUNDED_READS))
                and not any(i in step for step in plan for i in SMALL_INDEXES)):
            flagged.append((key, plan))
    conn.close()
    return flagged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--capture-on", required=True,
                        help="a small scale store: an insert and a delete run on a copy of it")
    parser.add_argument("--explain-on", required=True,
                        help="a big scale store: queried, and the plans are read on it")
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--offset", type=int, default=0, help="where in the corpus the documents start")
    args = parser.parse_args()
    statements = capture(args.capture_on, args.explain_on, args.documents, args.offset)
    flagged = explain(statements, args.explain_on)
    print(f"{len(statements)} distinct statements of an insert, a delete, graph edits and "
          f"{len(MODES)} queries; {len(flagged)} read a table whole in {args.explain_on}")
    for key, plan in flagged:
        print(f"\n{key}")
        for step in plan:
            print(f"    {step}")
    sys.exit(1 if flagged else 0)


if __name__ == "__main__":
    main()
