"""Passes over a whole store, read a batch at a time (``SQLDatabase.pages``): ``lightrag check``
(``GraphIndex.verify``) names each kind of damage; exports write every row once."""

from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag.index.stores import SEP
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage
from lightrag.components.storage.sql_kv import SQLKVStorage

DOC_A = "Probe7 flew past Saturn. Zorblax Prime photographed Zorblax Moon."
DOC_B = "Cassini orbited Saturn. Huygens landed on Titan."


def test_each_kind_of_damage_is_named(tmp_path):
    rag = fake_graph_rag(tmp_path, embedding_dim=64, max_gleaning=0)
    rag.insert([DOC_A, DOC_B], ids=["a", "b"])
    index, stores = rag.index, rag.index.stores
    assert index.verify() == []
    lost = stores.doc_status.get_by_id("a")["chunks_list"][0]
    citing = [n["id"] for n in rag.graph.get_all_nodes() if lost in (n.get("source_id") or "")]
    edge = rag.graph.get_all_edges()[0]
    queued_edge = tuple(sorted((edge["source"], edge["target"])))
    with index.db.transaction():
        stores.text_chunks.delete([lost])
        stores.text_chunks.upsert({"chunk-ghost": {"content": "x", "full_doc_id": "ghost"}})
        stores.full_docs.delete(["b"])
        index.db.execute("UPDATE nodes SET degree = 99 WHERE id = ?", ("Saturn",))
        stores.pending_vectors.upsert({SEP.join(("r", "No", "Such")): {},
                                       SEP.join(("r", *queued_edge)): {}})
        stores.extractions.users.upsert({"ext-orphan": {"chunks": [lost]}})
    problems = index.verify()
    expected = [f"document a: PROCESSED but chunks ['{lost}'] are missing",
                "document b: status without text",
                "chunk chunk-ghost: its document ghost is gone",
                f"chunk vector {lost}: no such chunk",
                "chunk chunk-ghost: no vector",
                *(f"entity {n}: cites deleted chunks ['{lost}']" for n in citing),
                "entity Saturn: degree 99 stored",
                "queued vector ['No', 'Such']: no such relation",
                "extraction users ext-orphan: no such cached extraction"]
    for line in expected:
        assert any(p.startswith(line) for p in problems), (line, problems)
    assert citing and not [p for p in problems if str(list(queued_edge)) in p]  # it exists


def test_pages_read_every_row_of_a_namespace_in_key_order(tmp_path):
    db = SQLiteDatabase(tmp_path / "s.sqlite3")
    kv = SQLKVStorage(db, namespace="x")
    kv.upsert({f"k{i:02d}": {"v": i} for i in range(20)})  # four full batches of five
    SQLKVStorage(db, namespace="y").upsert({"k05": {"v": "other"}})
    assert list(kv.iter_items(batch=5)) == kv.items()
    assert [k for k, _ in kv.iter_items(batch=7)] == [f"k{i:02d}" for i in range(20)]
    graph = SQLGraphStorage(db)
    with db.transaction():
        graph.upsert_edges_batch({("A", f"n{i}"): {"source_id": f"c{i}"} for i in range(9)})
        graph.upsert_edges_batch({("B", "A"): {"source_id": "c9"}})
    edges = list(graph.iter_edge_sources(batch=2))
    assert sorted(edges) == edges and len(edges) == 10
    assert {tuple(sorted(e[:2])) for e in edges} == {
        tuple(sorted((e["source"], e["target"]))) for e in graph.get_all_edges()}
    assert dict(graph.iter_node_sources(batch=3)).keys() == set(graph.get_all_labels())


def test_an_sql_graph_exports_every_row_past_one_batch(tmp_path):
    """JSON and CSV exports stream the rows a batch at a time (5,000): a graph of more rows
    exports each node and edge once, with its properties, as the whole-graph view has them."""
    import csv
    import json

    graph = SQLGraphStorage(SQLiteDatabase(tmp_path / "s.sqlite3"))
    names = [f"E{i:05d}" for i in range(5003)]
    with graph.db.transaction():
        graph.upsert_nodes_batch({n: {"entity_type": "thing", "source_id": f"c{i}<SEP>d{i}"}
                                  for i, n in enumerate(names)})
        graph.upsert_edges_batch({(a, b): {"weight": 1.0, "description": "x<SEP>y"}
                                  for a, b in zip(names, names[1:])})
    [exported] = graph.export(str(tmp_path / "g.json"), "json")
    data = json.loads(exported.read_text())
    assert [n["id"] for n in data["nodes"]] == names
    assert data["nodes"][7]["source_id"] == ["c7", "d7"]
    assert {(e["source"], e["target"]) for e in data["edges"]} == set(zip(names, names[1:]))
    assert data["edges"][0]["description"] == "x\ny"
    entities, relations = graph.export(str(tmp_path / "g.csv"), "csv")
    with entities.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == names and rows[3]["source_id"] == "c3; d3"
    with relations.open(newline="") as f:
        assert sum(1 for _ in csv.DictReader(f)) == len(names) - 1


def test_a_pass_reads_one_committed_state_while_a_writer_commits(tmp_path):
    """Inside ``snapshot()`` this thread's reads (every batch of a pass) see the state of its
    start; a commit made meanwhile by another writer is seen after the block."""
    import threading

    db = SQLiteDatabase(tmp_path / "s.sqlite3")
    kv = SQLKVStorage(db, namespace="x")
    kv.upsert({f"k{i:02d}": {"v": i} for i in range(10)})
    writer = SQLiteDatabase(tmp_path / "s.sqlite3")  # another process's writer, in effect
    with db.snapshot():
        seen = [k for k, _ in kv.iter_items(batch=3)][:4]
        thread = threading.Thread(target=lambda: SQLKVStorage(writer, namespace="x").upsert(
            {"k00a": {"v": "new"}, "k99": {"v": "new"}}))
        thread.start()
        thread.join()
        seen += [k for k, _ in kv.iter_items(batch=3)][4:]
        assert seen == [f"k{i:02d}" for i in range(10)]
    assert len(list(kv.iter_items(batch=3))) == 12
    writer.close()
    db.close()


def test_graphml_is_written_as_networkx_writes_it(tmp_path):
    """The streamed GraphML is byte for byte ``networkx.write_graphml``'s: a key per property
    name, scope and type, escaped ids and texts, nodes without properties."""
    import io

    import networkx as nx

    from lightrag.components.storage.graph_export import export_graph

    graph = nx.Graph()
    graph.add_node("A & <b>", entity_type="moon", n=3)
    graph.add_node("B", flag=True, w=1.5)
    graph.add_node('q"\n', n="three")  # the same name with another type: a key of its own
    graph.add_edge("A & <b>", "B", weight=1.0, description='say "hi"\nthere\t&<x>')
    graph.add_edge("B", "C")
    expected = io.BytesIO()
    nx.write_graphml(graph, expected)
    [written] = export_graph(str(tmp_path / "g.graphml"), "graphml",
                             lambda: graph.nodes(data=True), lambda: graph.edges(data=True))
    assert written.read_bytes() == expected.getvalue()
    back = nx.read_graphml(written)
    assert back.nodes["B"]["flag"] is True and back.edges["A & <b>", "B"]["weight"] == 1.0
