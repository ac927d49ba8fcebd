"""``PostgresRetriever``: dense retrieval over documents stored in PostgreSQL (extra ``postgres``).

Documents live in one table (``id``, ``text``, ``meta_data`` JSONB, ``vector``). With the
pgvector extension the vector column has type ``vector`` and the search uses its operators
(``<#>`` negative inner product, ``<=>`` cosine distance, ``<->`` L2, ``<+>`` L1); without it the
column is ``float8[]`` and the same scores are computed in SQL, so the retriever works on any
PostgreSQL server. Scores come back as 0.1 returned them: probabilities in ``[0, 1]`` for the
inner product, cosine and L2 operators.

Unlike 0.1 (where a separate SQLAlchemy script filled the table),
:meth:`PostgresRetriever.build_index_from_documents` creates the table and inserts the documents
with their embeddings. Identifiers are validated and vectors are passed as query parameters.

Example:
    >>> from lightrag.core import Embedder
    >>> from lightrag.components.model_client import ScriptedClient
    >>> retriever = PostgresRetriever(embedder=Embedder(model_client=ScriptedClient()),
    ...                               database_url="postgresql://localhost/vector_db", top_k=2)
    >>> retriever(["red planet"])  # doctest: +SKIP
    [RetrieverOutput(doc_indices=[3, 1], doc_scores=[0.91, 0.62], ...)]
"""

from __future__ import annotations

import json
import logging
import re
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from lightrag.core.embedder import Embedder
from lightrag.core.retriever import Retriever
from lightrag.core.types import Document, RetrieverOutput
from lightrag.utils.lazy_import import OptionalPackages, safe_import

__all__ = ["DistanceToOperator", "PostgresRetriever"]

log = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
DEFAULT_DATABASE_URL = "postgresql://postgres:password@localhost:5432/vector_db"


class DistanceToOperator(Enum):
    """pgvector's distance operators (smaller is closer for all of them)."""

    L2 = "<->"
    INNER_PRODUCT = "<#>"  # the negative inner product (cosine similarity for unit vectors)
    COSINE = "<=>"  # 1 - cosine similarity
    L1 = "<+>"


# the same distances over float8[] columns, for servers without pgvector ("v" is the column)
_ARRAY_DISTANCE = {
    DistanceToOperator.INNER_PRODUCT: "-(SELECT sum(a * b) FROM unnest({v}, %s::float8[]) t(a, b))",
    DistanceToOperator.L2: "sqrt((SELECT sum((a - b) ^ 2) FROM unnest({v}, %s::float8[]) t(a, b)))",
    DistanceToOperator.L1: "(SELECT sum(abs(a - b)) FROM unnest({v}, %s::float8[]) t(a, b))",
    DistanceToOperator.COSINE: (
        "(1 - (SELECT sum(a * b) / NULLIF(sqrt(sum(a * a)) * sqrt(sum(b * b)), 0) "
        "FROM unnest({v}, %s::float8[]) t(a, b)))"
    ),
}


def _identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError(f"invalid {what} {name!r}: use letters, digits and _ (max 63)")
    return f'"{name}"'


def _vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


class PostgresRetriever(Retriever[Any, str]):
    """Embed queries and fetch the nearest stored documents from PostgreSQL.

    Args:
        embedder: embeds queries (and documents in :meth:`build_index_from_documents`).
        top_k: results per query.
        database_url: a libpq URL; 0.1's default ``postgresql://postgres:password@localhost:5432/vector_db``.
        table_name: the documents table.
        distance_operator: a :class:`DistanceToOperator`.
        vector_column: the column holding the vectors.
    """

    _config_exclude = ("database_url",)
    _to_dict_exclude = ("_conn",)

    def __init__(
        self,
        embedder: Embedder,
        top_k: Optional[int] = 1,
        database_url: Optional[str] = None,
        table_name: str = "document",
        distance_operator: DistanceToOperator = DistanceToOperator.INNER_PRODUCT,
        vector_column: str = "vector",
    ) -> None:
        super().__init__()
        self.embedder = embedder
        self.top_k = top_k or 1
        self.database_url = database_url or DEFAULT_DATABASE_URL
        self.table_name = table_name
        self.vector_column = vector_column
        self._table = _identifier(table_name, "table name")
        self._column = _identifier(vector_column, "vector column")
        self.distance_operator = DistanceToOperator(distance_operator)
        self._conn: Any = None
        self.score_prob_fun: Optional[Callable[[List[float]], List[float]]] = {
            DistanceToOperator.COSINE: self._convert_cosine_distance_to_probability,
            DistanceToOperator.L2: self._convert_l2_distance_to_probability,
            DistanceToOperator.INNER_PRODUCT: self._convert_cosine_similarity_to_probability,
        }.get(self.distance_operator)

    # ------------------------------------------------------------------ database
    def connection(self) -> Any:
        """The open psycopg connection (autocommit), opened on first use."""
        if self._conn is None or self._conn.closed:
            psycopg = safe_import(*OptionalPackages.PSYCOPG.value)
            from psycopg.rows import dict_row

            self._conn = psycopg.connect(self.database_url, autocommit=True, row_factory=dict_row)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _after_from_dict(self) -> None:
        self._conn = None

    def _uses_pgvector(self) -> bool:
        row = self.connection().execute(
            "SELECT udt_name FROM information_schema.columns WHERE table_name = %s "
            "AND column_name = %s",
            (self.table_name, self.vector_column),
        ).fetchone()
        if row is None:
            raise ValueError(
                f"table {self.table_name!r} with column {self.vector_column!r} does not exist: "
                "call build_index_from_documents() first"
            )
        return row["udt_name"] == "vector"

    def retrieve_by_sql(self, query: str, params: Sequence[Any] = ()) -> List[Dict[str, Any]]:
        """Rows of ``query`` as dicts."""
        return list(self.connection().execute(query, tuple(params)).fetchall())

    @classmethod
    def format_vector_search_query(
        cls,
        table_name: str,
        vector_column: str,
        query_embedding: Sequence[float],
        top_k: int,
        distance_operator: DistanceToOperator,
        sort_desc: bool = False,
    ) -> str:
        """The pgvector SQL (0.1's helper): every column plus ``score``, nearest first.

        Identifiers are validated and the embedding is written as numbers only.
        """
        table = _identifier(table_name, "table name")
        column = _identifier(vector_column, "vector column")
        order = "DESC" if sort_desc else "ASC"
        return (
            f"SELECT *, ({column} {DistanceToOperator(distance_operator).value} "
            f"'{_vector_literal(query_embedding)}'::vector) AS score FROM {table} "
            f"ORDER BY score {order} LIMIT {int(top_k)}"
        )

    def build_index_from_documents(
        self,
        documents: Sequence[Any],
        document_map_func: Optional[Callable[[Any], Any]] = None,
    ) -> None:
        """Create the table if needed and insert ``documents`` with their embeddings.

        ``documents`` are strings, ``Document`` s or dicts with ``text`` (and ``id``,
        ``meta_data``); ``document_map_func`` maps each to one of those first.
        """
        docs = [document_map_func(d) if document_map_func else d for d in documents]
        rows = []
        for d in docs:
            if isinstance(d, str):
                rows.append({"id": None, "text": d, "meta_data": None})
            elif isinstance(d, Document):
                rows.append({"id": d.id, "text": d.text, "meta_data": d.meta_data})
            elif isinstance(d, dict) and "text" in d:
                rows.append({"id": d.get("id"), "text": d["text"], "meta_data": d.get("meta_data")})
            else:
                raise TypeError(f"cannot index a {type(d).__name__}: give str, Document or dict")
        out = self.embedder([r["text"] for r in rows])
        if out.error:
            raise RuntimeError(f"embedding the documents failed: {out.error}")
        conn = self.connection()
        pgvector = True
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as e:  # no pgvector on this server: float8[] columns
            log.info("pgvector unavailable (%s); storing vectors as float8[]", e)
            pgvector = False
        column_type = f"vector({len(out.data[0].embedding)})" if pgvector and out.data else "float8[]"
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self._table} (id TEXT PRIMARY KEY, text TEXT NOT NULL, "
            f"meta_data JSONB, {self._column} {column_type})"
        )
        cast = "::vector" if self._uses_pgvector() else "::float8[]"
        with conn.transaction():
            for i, (row, emb) in enumerate(zip(rows, out.data)):
                vector = _vector_literal(emb.embedding) if cast == "::vector" else list(emb.embedding)
                conn.execute(
                    f"INSERT INTO {self._table} (id, text, meta_data, {self._column}) "
                    f"VALUES (%s, %s, %s, %s{cast}) ON CONFLICT (id) DO UPDATE SET "
                    f"text = EXCLUDED.text, meta_data = EXCLUDED.meta_data, "
                    f"{self._column} = EXCLUDED.{self._column}",
                    (str(row["id"] or i), row["text"],
                     json.dumps(row["meta_data"]) if row["meta_data"] is not None else None,
                     vector),
                )

    # ------------------------------------------------------------------- scores
    @staticmethod
    def _convert_cosine_similarity_to_probability(neg_inner: List[float]) -> List[float]:
        """``<#>`` gives the negative inner product: similarity s -> (1 + s) / 2."""
        return [(1 - float(d)) / 2 for d in neg_inner]

    @staticmethod
    def _convert_l2_distance_to_probability(l2_distance: List[float]) -> List[float]:
        """Unit vectors are at most 2 apart: d -> 1 - d / 2."""
        return (1 - np.clip(np.asarray(l2_distance, dtype=float), 0, 2) / 2).tolist()

    @staticmethod
    def _convert_cosine_distance_to_probability(cosine_distance: List[float]) -> List[float]:
        return [1 - float(d) for d in cosine_distance]

    # ---------------------------------------------------------------- retrieval
    def call(
        self, input: Any, top_k: Optional[int] = None, **kwargs: Any
    ) -> List[RetrieverOutput]:
        """The ``top_k`` nearest stored documents for each query string."""
        k = int(top_k or self.top_k)
        queries = [input] if isinstance(input, str) else list(input)
        embedded = self.embedder(queries)
        if embedded.error:
            raise RuntimeError(f"embedding the queries failed: {embedded.error}")
        pgvector = self._uses_pgvector()
        outputs = []
        for query, emb in zip(queries, embedded.data):
            if pgvector:
                sql = self.format_vector_search_query(
                    self.table_name, self.vector_column, emb.embedding, k, self.distance_operator
                )
                rows = self.retrieve_by_sql(sql)
            else:
                distance = _ARRAY_DISTANCE[self.distance_operator].format(v=self._column)
                rows = self.retrieve_by_sql(
                    f"SELECT id, text, meta_data, {distance} AS score FROM {self._table} "
                    f"ORDER BY score ASC LIMIT %s",
                    (list(map(float, emb.embedding)), k),
                )
            scores = [float(r["score"]) for r in rows]
            if self.score_prob_fun is not None:
                scores = [round(s, 6) for s in self.score_prob_fun(scores)]
            outputs.append(RetrieverOutput(
                doc_indices=[r["id"] for r in rows],
                doc_scores=scores,
                query=query,
                documents=[Document(text=r["text"], id=r["id"], meta_data=r.get("meta_data"))
                           for r in rows],
            ))
        return outputs

    def _extra_repr(self) -> str:
        return (f"top_k={self.top_k}, table_name={self.table_name!r}, "
                f"distance_operator={self.distance_operator.name}")
