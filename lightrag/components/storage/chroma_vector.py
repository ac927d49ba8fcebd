"""``ChromaVectorStorage``: the vector store on ChromaDB, embedded or client/server.

Two modes, chosen by ``mode``:

* ``"persistent"`` (default): an embedded ``chromadb.PersistentClient`` writing to
  ``working_dir/workspace/chroma`` (or ``path``); nothing else to run.
* ``"http"``: a ``chromadb.HttpClient`` talking to a ``chroma run`` server at ``host:port``, when
  the vectors should live in a database service reachable over the network.

We always pass our own embeddings (the collection has no embedding function, so Chroma never
downloads its default model), in cosine space (``hnsw:space = cosine``); a hit's score is
``1 - distance``, i.e. the cosine similarity, and hits under ``cosine_threshold`` are dropped like
in :class:`NumpyVectorStorage`. The record's ``content`` is Chroma's document; the ``meta_fields``
are its metadata. Chroma holds only ``str``, ``int``, ``float`` and ``bool`` metadata: NumPy
scalars are converted, ``None`` removes the field, anything else (lists, dicts) is stored as JSON
text and decoded on read (the names of such fields are kept in ``_json_fields``). Telemetry is off.

Example:
    >>> import tempfile
    >>> from lightrag.core import Embedder
    >>> from lightrag.components.model_client import ScriptedClient
    >>> store = ChromaVectorStorage(namespace="chunks", working_dir=tempfile.mkdtemp(),
    ...     embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)), meta_fields=["src"])
    >>> store.upsert({"a": {"content": "grey seals in Halifax", "src": "x"},
    ...               "b": {"content": "bridges over rivers", "src": "y"}})
    >>> [h["id"] for h in store.query("seals of Halifax", top_k=1)]
    ['a']

In YAML: ``vector_storage: ChromaVectorStorage`` and, for a server,
``vector_storage_kwargs: {mode: http, host: 127.0.0.1, port: 8000}``.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Literal, Optional, Sequence, Set

import numpy as np

from lightrag.components.storage.base import BaseVectorStorage, at_least
from lightrag.utils.secrets import check_not_redacted

log = logging.getLogger(__name__)

JSON_FIELDS = "_json_fields"
_SCALARS = (str, bool, int, float)
_BAD_CHARS = re.compile(r"[^A-Za-z0-9._-]")


def collection_name(prefix: str, workspace: str, namespace: str) -> str:
    """A valid Chroma collection name (3-512 chars of ``[A-Za-z0-9._-]``, alphanumeric ends).

    >>> collection_name("lightrag", "", "chunks"), collection_name("lr", "team-a", "entities")
    ('lightrag_chunks', 'lr_team-a_entities')
    """
    raw = "_".join(p for p in (prefix, workspace, namespace) if p)
    name = re.sub(r"\.{2,}", ".", _BAD_CHARS.sub("_", raw)).strip("._-")
    if len(name) < 3:
        name = f"lr_{name}_vdb".replace("__", "_")
    return name[:512].rstrip("._-")


def _to_metadata(record: Dict[str, Any], fields: Sequence[str], warned: Set[str]) -> Dict[str, Any]:
    meta: Dict[str, Any] = {}
    encoded: List[str] = []
    for name in fields:
        value = record.get(name)
        if isinstance(value, np.generic):
            value = value.item()
        if value is not None and not isinstance(value, _SCALARS):
            if name not in warned:
                warned.add(name)
                log.warning("Chroma metadata holds only str/int/float/bool: field %r (%s) is "
                            "stored as JSON text", name, type(value).__name__)
            value = json.dumps(value, ensure_ascii=False, default=str)
            encoded.append(name)
        meta[name] = value  # None deletes the field of an existing record
    meta[JSON_FIELDS] = ",".join(encoded)
    return meta


def _from_metadata(meta: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    meta = dict(meta or {})
    encoded = meta.pop(JSON_FIELDS, "") or ""
    for name in filter(None, encoded.split(",")):
        if isinstance(meta.get(name), str):
            meta[name] = json.loads(meta[name])
    return meta


class ChromaVectorStorage(BaseVectorStorage):
    """Vectors in a ChromaDB collection, searched by cosine similarity.

    Args:
        namespace / embedder / cosine_threshold / meta_fields / embedding_batch_size /
            workspace / working_dir: as in :class:`BaseVectorStorage`.
        mode: ``"persistent"`` (embedded, on disk) or ``"http"`` (a ``chroma run`` server).
        path: the embedded database folder (default ``working_dir/workspace/chroma``).
        host / port / ssl / headers: the server (``headers`` carry e.g. an auth token).
        tenant / database: Chroma's tenant and database.
        collection_prefix: first part of the collection name ``prefix_workspace_namespace``.
    """

    def __init__(
        self,
        namespace: str,
        embedder: Any = None,
        cosine_threshold: float = 0.2,
        meta_fields: Optional[Sequence[str]] = None,
        embedding_batch_size: int = 32,
        workspace: str = "",
        working_dir: str = "./lightrag_storage",
        mode: Literal["persistent", "http"] = "persistent",
        path: Optional[str] = None,
        host: str = "localhost",
        port: int = 8000,
        ssl: bool = False,
        headers: Optional[Dict[str, str]] = None,
        tenant: str = "default_tenant",
        database: str = "default_database",
        collection_prefix: str = "lightrag",
    ) -> None:
        super().__init__(namespace, embedder, cosine_threshold, meta_fields, embedding_batch_size,
                         workspace, working_dir)
        if mode not in ("persistent", "http"):
            raise ValueError(f"mode must be 'persistent' or 'http', not {mode!r}")
        self.mode = mode
        self.path = path
        self.host, self.port, self.ssl = host, int(port), ssl
        self.headers = dict(headers or {})
        self.tenant, self.database = tenant, database
        self.collection_prefix = collection_prefix
        self.collection_name = collection_name(collection_prefix, workspace, namespace)
        self._warned: Set[str] = set()
        self._client = self._connect()
        self._collection = self._open()

    _to_dict_exclude = ("_client", "_collection", "_warned", "embedder", "collection_name")

    # ---------------------------------------------------------------- connection
    @property
    def db_path(self) -> Path:
        """The embedded database folder."""
        return Path(self.path) if self.path else self.storage_dir / "chroma"

    def _connect(self) -> Any:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as e:
            raise ImportError("ChromaVectorStorage needs chromadb: pip install -e '.[chroma]'") from e
        settings = Settings(anonymized_telemetry=False)
        if self.mode == "http":
            check_not_redacted(self.headers, "headers", owner="store")  # a saved secret is not sent
            try:
                return chromadb.HttpClient(host=self.host, port=self.port, ssl=self.ssl,
                                           headers=self.headers or None, settings=settings,
                                           tenant=self.tenant, database=self.database)
            except ValueError as e:
                raise ValueError(f"vector store {self.namespace!r}: no Chroma server at "
                                 f"{self.host}:{self.port} ({e}); start one with `chroma run "
                                 f"--host {self.host} --port {self.port}`") from e
        self.db_path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(self.db_path), settings=settings,
                                         tenant=self.tenant, database=self.database)

    def _open(self) -> Any:
        return self._client.get_or_create_collection(
            self.collection_name, metadata={"hnsw:space": "cosine"}, embedding_function=None)

    def __len__(self) -> int:
        return int(self._collection.count())

    def index_done_callback(self) -> None:
        """Nothing to do: Chroma persists every write itself."""

    def drop(self) -> None:
        """Delete the collection and start an empty one."""
        self._client.delete_collection(self.collection_name)
        self._collection = self._open()

    # -------------------------------------------------------------------- writes
    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        if not data:
            return
        if vectors is None:
            vectors = self.embed([record.get("content", "") for record in data.values()])
        vectors = self._normalize(vectors)
        if len(vectors) != len(data):
            raise ValueError(f"{len(vectors)} vectors for {len(data)} records")
        ids = list(data)
        documents = [str(record.get("content", "")) for record in data.values()]
        metadatas = [_to_metadata(record, self.meta_fields, self._warned) for record in data.values()]
        step = max(1, int(self._client.get_max_batch_size()))
        for start in range(0, len(ids), step):
            end = start + step
            try:
                self._collection.upsert(ids=ids[start:end], embeddings=vectors[start:end],
                                        documents=documents[start:end], metadatas=metadatas[start:end])
            except Exception as e:
                if "dimension" in str(e):
                    raise ValueError(
                        f"vector store {self.namespace!r}: {e}: the embedding model changed; "
                        "drop the store and re-index") from e
                raise

    def delete(self, ids: Iterable[str]) -> None:
        ids = list(dict.fromkeys(ids))
        if ids:
            self._collection.delete(ids=ids)

    # --------------------------------------------------------------------- reads
    def _as_vector(self, query: Any) -> np.ndarray:
        if isinstance(query, str):
            return self.embed([query])[0]
        return self._normalize(np.asarray(query, dtype=np.float32).reshape(-1))[0]

    def _hits(self, ids: List[str], distances: List[float], documents: List[Any],
              metadatas: List[Any]) -> List[Dict[str, Any]]:
        hits = []
        for key, distance, document, meta in zip(ids, distances, documents, metadatas):
            score = 1.0 - float(distance)
            if score >= self.cosine_threshold:
                hits.append({"id": key, "score": score, "content": document or "", **_from_metadata(meta)})
        return hits

    def _query(self, matrix: np.ndarray, top_k: int, ids: Optional[List[str]]) -> List[List[Dict[str, Any]]]:
        kwargs: Dict[str, Any] = {"ids": ids} if ids is not None else {}
        try:
            found = self._collection.query(query_embeddings=matrix, n_results=top_k,
                                           include=["documents", "metadatas", "distances"], **kwargs)
        except Exception as e:
            if "dimension" in str(e):
                raise ValueError(f"vector store {self.namespace!r}: {e}") from e
            raise
        return [self._hits(*row) for row in zip(found["ids"], found["distances"],
                                                found["documents"], found["metadatas"])]

    def query(self, query: Any, top_k: int, ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        if top_k <= 0 or (ids_filter is not None and not ids_filter):
            return []
        vector = self._as_vector(query)
        return self._query(vector[None, :], top_k, sorted(ids_filter) if ids_filter else None)[0]

    def query_batch(self, matrix: np.ndarray, top_k: int, nprobe: Optional[int] = None,
                    min_score: Optional[float] = None) -> List[List[Dict[str, Any]]]:
        matrix = np.asarray(matrix)
        if top_k <= 0 or len(matrix) == 0:
            return [[] for _ in range(len(matrix))]
        return at_least(self._query(self._normalize(matrix), top_k, None), min_score)

    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        return self.get_by_ids([id])[0]

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        if not ids:
            return []
        found = self._collection.get(ids=list(dict.fromkeys(ids)), include=["documents", "metadatas"])
        records = {key: {"id": key, "content": document or "", **_from_metadata(meta)}
                   for key, document, meta in zip(found["ids"], found["documents"], found["metadatas"])}
        return [records.get(i) for i in ids]

    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        if not ids:
            return {}
        found = self._collection.get(ids=list(dict.fromkeys(ids)), include=["embeddings"])
        return {key: np.asarray(vector, dtype=np.float32)
                for key, vector in zip(found["ids"], found["embeddings"])}

    def _extra_repr(self) -> str:
        where = f"{self.host}:{self.port}" if self.mode == "http" else str(self.db_path)
        return (super()._extra_repr() + f", mode={self.mode!r}, at={where!r}, "
                f"collection={self.collection_name!r}, cosine_threshold={self.cosine_threshold}")
