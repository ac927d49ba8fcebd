"""Reads kept between queries: answered again without the store while nothing was committed,
read anew after any commit (this process's or another writer's)."""

import subprocess
import sys

from lightrag.components.graph_rag.context import GraphStores
from lightrag.components.graph_rag.query_reads import query_reads
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage


class CountingGraph(SQLGraphStorage):
    """A SQL graph that counts the node look-ups reaching the database."""

    def get_nodes_batch(self, ids):
        object.__setattr__(self, "asked", getattr(self, "asked", 0) + len(ids))
        return super().get_nodes_batch(ids)


def graph_at(path, cls=SQLGraphStorage):
    return cls(SQLiteDatabase(path / "s.sqlite3"))


def seen(graph):
    """The graph as one query sees it."""
    return query_reads(GraphStores(graph=graph, entities_vdb=None, relations_vdb=None,
                                   chunks_vdb=None, text_chunks=None)).graph


def test_a_second_query_reads_nothing_again_until_a_commit(tmp_path):
    writer = graph_at(tmp_path)
    writer.upsert_node("Ada", {"description": "first"})
    reader = graph_at(tmp_path, CountingGraph)
    assert seen(reader).get_nodes_batch(["Ada"])["Ada"]["description"] == "first"
    assert seen(reader).get_nodes_batch(["Ada"])["Ada"]["description"] == "first"
    assert reader.asked == 1
    writer.upsert_node("Ada", {"description": "second"})
    assert seen(reader).get_nodes_batch(["Ada"])["Ada"]["description"] == "second"
    assert reader.asked == 2


def test_a_commit_of_another_process_is_seen(tmp_path):
    reader = graph_at(tmp_path, CountingGraph)
    graph_at(tmp_path).upsert_node("Ada", {"description": "first"})
    assert seen(reader).get_nodes_batch(["Ada"])["Ada"]["description"] == "first"
    script = ("import sys; from lightrag.components.storage.sql_db import SQLiteDatabase; "
              "from lightrag.components.storage.sql_graph import SQLGraphStorage; "
              "g = SQLGraphStorage(SQLiteDatabase(sys.argv[1])); "
              "g.upsert_node('Ada', {'description': 'other'})")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "s.sqlite3")], check=True, timeout=120)
    assert seen(reader).get_nodes_batch(["Ada"])["Ada"]["description"] == "other"


def test_a_deleted_node_is_not_answered_from_an_earlier_query(tmp_path):
    writer = graph_at(tmp_path)
    writer.upsert_node("Ada", {"description": "x"})
    writer.upsert_node("Bob", {"description": "y"})
    writer.upsert_edge("Ada", "Bob", {"weight": 1.0})
    reader = graph_at(tmp_path)
    assert set(seen(reader).get_nodes_batch(["Ada", "Bob"])) == {"Ada", "Bob"}
    assert seen(reader).get_edges_batch([("Ada", "Bob")])
    writer.delete_node("Bob")
    assert set(seen(reader).get_nodes_batch(["Ada", "Bob"])) == {"Ada"}
    assert not seen(reader).get_edges_batch([("Ada", "Bob")])


def test_a_caller_changing_a_returned_record_does_not_change_the_next_answer(tmp_path):
    graph = graph_at(tmp_path)
    graph.upsert_node("Ada", {"description": "x"})
    seen(graph).get_nodes_batch(["Ada"])["Ada"]["description"] = "scribbled"
    assert seen(graph).get_nodes_batch(["Ada"])["Ada"]["description"] == "x"
