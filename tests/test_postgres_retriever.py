"""PostgresRetriever against a real PostgreSQL server: the session's throwaway one
(``postgres_server`` in conftest.py, started from Debian's postgresql; skipped where psycopg or the
server binaries are missing). Each test writes its own table.
"""

from __future__ import annotations

import pytest

from lightrag.components.model_client import ScriptedClient
from lightrag.components.retriever import PostgresRetriever
from lightrag.components.retriever.postgres_retriever import DistanceToOperator
from lightrag.core import Document, Embedder

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def database_url(postgres_server):
    return postgres_server.dsn


PLANETS = ["Jupiter is the biggest planet.", "Mars is the red planet.",
           "Mercury is the closest planet to the Sun.", "Saturn has bright rings."]


@pytest.mark.parametrize("operator", list(DistanceToOperator))
def test_postgres_retriever_indexes_and_ranks(database_url, operator):
    embedder = Embedder(model_client=ScriptedClient())
    retriever = PostgresRetriever(embedder=embedder, top_k=2, database_url=database_url,
                                  table_name=f"planets_{operator.name.lower()}",
                                  distance_operator=operator)
    retriever.build_index_from_documents(
        [Document(text=t, id=f"p{i}", meta_data={"n": i}) for i, t in enumerate(PLANETS)])
    out = retriever(["which is the red planet", "rings of Saturn"])
    assert out[0].doc_indices[0] == "p1" and out[1].doc_indices[0] == "p3"
    assert out[0].documents[0].text == PLANETS[1] and out[0].documents[0].meta_data == {"n": 1}
    assert len(out[0].doc_indices) == 2
    if operator is not DistanceToOperator.L1:
        assert all(0.0 <= s <= 1.0 for s in out[0].doc_scores)
        assert out[0].doc_scores[0] >= out[0].doc_scores[1]
    retriever.build_index_from_documents(["Mars is the red planet."])  # upsert by id "0"
    retriever.close()


def test_invalid_identifiers_are_refused():
    with pytest.raises(ValueError, match="invalid table name"):
        PostgresRetriever(embedder=Embedder(model_client=ScriptedClient()),
                          table_name="x; DROP TABLE y")
    sql = PostgresRetriever.format_vector_search_query(
        "document", "vector", [0.5, 0.25], 3, DistanceToOperator.COSINE)
    assert sql == ('SELECT *, ("vector" <=> \'[0.5,0.25]\'::vector) AS score FROM "document" '
                   "ORDER BY score ASC LIMIT 3")
