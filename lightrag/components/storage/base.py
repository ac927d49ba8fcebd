"""Storage interfaces of graph RAG: key-value, vector and graph stores (the document-status
store's is in ``doc_status_storage.py``; both are exported by ``lightrag.components.storage``).

Every store is a Component bound to a ``namespace`` inside ``working_dir/workspace``; a
workspace isolates one tenant's data. Stores keep their data in memory and write it to disk only
in ``index_done_callback()``, always atomically (temp file + rename), so a crash leaves the
previous file intact and reloadable. The methods are synchronous: the embedded stores are
in-memory and called from one thread.
"""

from __future__ import annotations

import logging
import re
from abc import abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from lightrag.core.base_data_class import DataClass
from lightrag.core.component import Component

log = logging.getLogger(__name__)

#: joins the values of a list field of a graph node or edge (chunk ids, files, descriptions)
GRAPH_FIELD_SEP = "<SEP>"
#: fields an older version wrote into graph nodes; stripped from anything shown to users
LEGACY_FIELDS = ("context_line_tokens", "context_line_crc")
#: records or rows a database store reads at a time in a pass over all of them (``iter_*``)
ITER_BATCH = 5000

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]*$")
#: longest workspace or namespace name (a folder or table name part; file systems allow 255)
MAX_NAME_LENGTH = 128


def check_name(label: str, value: Any) -> None:
    """Raise ``ValueError`` unless ``value`` can name a folder or table part safely."""
    if (not isinstance(value, str) or not _SAFE_NAME.match(value) or value.startswith(".")
            or len(value) > MAX_NAME_LENGTH):
        raise ValueError(f"{label} {value!r} must be a plain file-name part of at most {MAX_NAME_LENGTH} "
                         "characters: letters, digits, '_', '-', '.', not starting with '.'")


class StorageNameSpace(Component):
    """Base of all stores: where the data lives (``working_dir/workspace/``) and how it is flushed.

    Args:
        namespace: which data set this is (``"text_chunks"``, ``"entities"``...); part of the file name.
        workspace: a tenant; its files live in their own sub-folder ("" = ``working_dir`` itself).
        working_dir: the root folder of all stores.

    Example:
        >>> from lightrag.components.storage import JsonKVStorage
        >>> JsonKVStorage(namespace="full_docs", workspace="alice", working_dir="/tmp/rag")
        JsonKVStorage(namespace='full_docs', workspace='alice')
    """

    def __init__(self, namespace: str, workspace: str = "", working_dir: str = "./lightrag_storage") -> None:
        super().__init__()
        check_name("namespace", namespace)
        check_name("workspace", workspace)
        if not namespace:
            raise ValueError("namespace must not be empty")
        self.namespace = namespace
        self.workspace = workspace
        self.working_dir = str(working_dir)

    @property
    def storage_dir(self) -> Path:
        """The folder holding this workspace's files."""
        return Path(self.working_dir) / self.workspace if self.workspace else Path(self.working_dir)

    def index_done_callback(self) -> None:
        """Write the in-memory data to disk atomically (a no-op for stores without files)."""

    def drop(self) -> None:
        """Remove all data, in memory and on disk."""

    def _extra_repr(self) -> str:
        return f"namespace={self.namespace!r}" + (f", workspace={self.workspace!r}" if self.workspace else "")


class BaseKVStorage(StorageNameSpace):
    """A map from string ids to JSON records; ``upsert`` merges fields into existing records."""

    @abstractmethod
    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        """The record, or None."""

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        """The records in the order of ``ids`` (None where missing)."""
        return [self.get_by_id(i) for i in ids]

    def filter_keys(self, keys: Iterable[str]) -> Set[str]:
        """The keys that are *not* stored."""
        return {k for k in keys if self.get_by_id(k) is None}

    @abstractmethod
    def upsert(self, data: Dict[str, Dict[str, Any]]) -> None:
        """Insert records, or merge their fields into existing ones."""

    @abstractmethod
    def delete(self, ids: Iterable[str]) -> None:
        """Remove the records (missing ids are ignored)."""

    @abstractmethod
    def keys(self) -> List[str]:
        """All ids."""

    def items(self) -> List[Tuple[str, Dict[str, Any]]]:
        """All ``(id, record)`` pairs."""
        return [(k, self.get_by_id(k)) for k in self.keys()]  # type: ignore[misc]

    def iter_items(self, batch: int = ITER_BATCH) -> Iterator[Tuple[str, Dict[str, Any]]]:
        """Every ``(id, record)`` pair, by id; a database store reads ``batch`` records at a
        time, so a pass over a million records holds only one batch (:meth:`items` holds all)."""
        yield from self.items()

    def is_empty(self) -> bool:
        return len(self) == 0

    def __len__(self) -> int:
        return len(self.keys())



def unit_rows(matrix: Any) -> np.ndarray:
    """Rows scaled to unit length, as a float32 2-D array (zero rows stay zero). What every
    vector store keeps; code that composes vectors from parts uses it too, so that a part
    embedded just now and one read back from a store are the same bits.

    Example:
        >>> unit_rows([[3.0, 4.0], [0.0, 0.0]]).tolist()
        [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2:
        raise ValueError(f"vectors must be a 1-D or 2-D array, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def at_least(results: List[List[Dict[str, Any]]],
             min_score: Optional[float]) -> List[List[Dict[str, Any]]]:
    """The hits of each result list scoring at least ``min_score`` (all when it is None)."""
    if min_score is None:
        return results
    return [[h for h in hits if h["score"] >= min_score] for hits in results]


class BaseVectorStorage(StorageNameSpace):
    """Vectors with metadata, searched by cosine similarity (results under the threshold dropped).

    Args:
        embedder: an :class:`~lightrag.core.embedder.Embedder` (or None when vectors are passed in).
        cosine_threshold: hits scoring below it are dropped.
        meta_fields: record fields kept besides ``content`` and returned with hits.
        embedding_batch_size: texts per embedder call.
        embedding_dim: the embedder's dimension if known; stored vectors of another size raise.
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
        embedding_dim: Optional[int] = None,
    ) -> None:
        super().__init__(namespace, workspace, working_dir)
        if not -1.0 <= cosine_threshold <= 1.0:
            raise ValueError(f"cosine_threshold must be in [-1, 1], got {cosine_threshold}")
        if embedding_batch_size < 1:
            raise ValueError("embedding_batch_size must be at least 1")
        # Not a registered child: the GraphRAG system shares one embedder between its three vector
        # stores and prints it once, as its own child.
        object.__setattr__(self, "embedder", embedder)
        self.cosine_threshold = float(cosine_threshold)
        self.meta_fields = list(meta_fields or [])
        self.embedding_batch_size = embedding_batch_size
        self.embedding_dim = embedding_dim

    def _check_embedder(self) -> None:
        if self.embedder is None:
            raise ValueError(f"vector store {self.namespace!r} has no embedder: pass vectors instead")

    @staticmethod
    def _normalize(matrix: Any) -> np.ndarray:
        """:func:`unit_rows`: every store keeps unit vectors."""
        return unit_rows(matrix)

    def _collect(self, outputs: List[Any], texts: Sequence[str]) -> np.ndarray:
        rows: List[List[float]] = []
        for out in outputs:
            if out.error is not None:
                raise RuntimeError(f"embedding failed in store {self.namespace!r}: {out.error}")
            rows.extend(e.embedding for e in out.data)
        if len(rows) != len(texts):
            raise RuntimeError(f"embedder returned {len(rows)} vectors for {len(texts)} texts")
        if not rows:
            return np.zeros((0, self.embedding_dim or 0), dtype=np.float32)
        return self._normalize(np.array(rows, dtype=np.float32))

    def _batches(self, texts: Sequence[str]) -> List[List[str]]:
        size = self.embedding_batch_size
        return [list(texts[i:i + size]) for i in range(0, len(texts), size)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (in batches) into a float32 matrix of unit rows."""
        self._check_embedder()
        return self._collect([self.embedder(batch) for batch in self._batches(texts)], texts)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Async :meth:`embed` (``embedder.acall``, batches one after another)."""
        self._check_embedder()
        return self._collect([await self.embedder.acall(batch) for batch in self._batches(texts)], texts)

    @abstractmethod
    def upsert(self, data: Dict[str, Dict[str, Any]], vectors: Optional[np.ndarray] = None) -> None:
        """Insert or replace records ``{id: {"content": text, **meta}}``; embeds the contents
        unless ``vectors`` (rows aligned with the order of ``data``) are given."""

    async def aupsert(self, data: Dict[str, Dict[str, Any]]) -> None:
        """Async upsert: embeds the contents with ``embedder.acall``."""
        if not data:
            return
        vectors = await self.aembed([record.get("content", "") for record in data.values()])
        self.upsert(data, vectors=vectors)

    @abstractmethod
    def query(self, query: Union[str, np.ndarray], top_k: int,
              ids_filter: Optional[Set[str]] = None) -> List[Dict[str, Any]]:
        """Best matches of a text or vector, best first: ``{"id", "score", "content", **meta}``."""

    def query_batch(self, matrix: np.ndarray, top_k: int, nprobe: Optional[int] = None,
                    min_score: Optional[float] = None) -> List[List[Dict[str, Any]]]:
        """:meth:`query` for each row of ``matrix``. ``nprobe``: inverted lists scored per
        query by a store with an approximate index (a near-duplicate search needs few);
        stores that search exactly ignore it. ``min_score``: only hits at or above it (besides
        ``cosine_threshold``; a near-duplicate search wants few)."""
        return at_least([self.query(row, top_k) for row in np.asarray(matrix)], min_score)

    @abstractmethod
    def delete(self, ids: Iterable[str]) -> None:
        """Remove the records (missing ids are ignored)."""

    @abstractmethod
    def get_by_id(self, id: str) -> Optional[Dict[str, Any]]:
        """``{"id", "content", **meta}`` or None."""

    def get_by_ids(self, ids: Sequence[str]) -> List[Optional[Dict[str, Any]]]:
        return [self.get_by_id(i) for i in ids]

    @abstractmethod
    def get_vectors_by_ids(self, ids: Sequence[str]) -> Dict[str, np.ndarray]:
        """The stored (unit) vectors of the ids that exist."""

    def get_vector_matrix(self, ids: Sequence[str]) -> Tuple[List[str], np.ndarray]:
        """The stored vectors of ``ids`` as one matrix: ``(found, matrix)``, row ``i`` the
        vector of ``found[i]`` (ids in their first order; those not stored left out). A store
        that reads vectors by file row overrides it to skip the dict of
        :meth:`get_vectors_by_ids` (a query compares 2-4k chunk vectors at once)."""
        return stack_by_id(ids, self.get_vectors_by_ids(ids))

    @abstractmethod
    def __len__(self) -> int: ...


def stack_by_id(ids: Sequence[str], vectors: Dict[str, np.ndarray]) -> Tuple[List[str], np.ndarray]:
    """``(found, matrix)`` of the ``ids`` in ``vectors`` (first order; others left out), the
    shape :meth:`BaseVectorStorage.get_vector_matrix` returns."""
    found = [i for i in dict.fromkeys(ids) if i in vectors]
    if not found:
        return [], np.zeros((0, 0), dtype=np.float32)
    return found, np.stack([vectors[i] for i in found])


@dataclass
class KnowledgeGraph(DataClass):
    """A subgraph for display: nodes ``{id, labels, properties}`` and edges
    ``{id, source, target, properties}``."""

    nodes: List[Dict[str, Any]] = field(default_factory=list, metadata={"desc": "id, labels, properties"})
    edges: List[Dict[str, Any]] = field(default_factory=list,
                                        metadata={"desc": "id, source, target, properties"})
    is_truncated: bool = field(default=False, metadata={"desc": "True when max_nodes cut it"})


class BaseGraphStorage(StorageNameSpace):
    """An undirected property graph of entities (nodes) and relations (edges).

    The batch helpers have per-item defaults; backends override them when they can do better.
    """

    @abstractmethod
    def has_node(self, node_id: str) -> bool: ...
    @abstractmethod
    def has_edge(self, src: str, tgt: str) -> bool: ...

    @abstractmethod
    def node_degree(self, node_id: str) -> int:
        """Number of edges at the node (0 when missing)."""

    def edge_degree(self, src: str, tgt: str) -> int:
        """Sum of the two endpoint degrees."""
        return self.node_degree(src) + self.node_degree(tgt)

    @abstractmethod
    def get_node(self, node_id: str) -> Optional[Dict[str, Any]]: ...
    @abstractmethod
    def get_edge(self, src: str, tgt: str) -> Optional[Dict[str, Any]]: ...

    @abstractmethod
    def get_node_edges(self, node_id: str) -> Optional[List[Tuple[str, str]]]:
        """``[(node_id, neighbour), ...]``, or None when the node does not exist."""

    @abstractmethod
    def upsert_node(self, node_id: str, data: Dict[str, Any]) -> None:
        """Create the node or merge ``data`` into its properties."""

    @abstractmethod
    def upsert_edge(self, src: str, tgt: str, data: Dict[str, Any]) -> None:
        """Create the (undirected) edge or merge ``data`` into its properties."""

    @abstractmethod
    def delete_node(self, node_id: str) -> None:
        """Remove the node and its edges (missing nodes are ignored)."""

    @abstractmethod
    def remove_edges(self, pairs: Iterable[Tuple[str, str]]) -> None:
        """Remove the (undirected) edges; missing ones are ignored."""

    @abstractmethod
    def get_all_labels(self) -> List[str]:
        """All node ids, sorted."""

    @abstractmethod
    def get_all_nodes(self) -> List[Dict[str, Any]]:
        """``{**properties, "id"}`` for every node."""

    @abstractmethod
    def get_all_edges(self) -> List[Dict[str, Any]]:
        """``{**properties, "source", "target"}`` for every edge."""

    def iter_node_sources(self, batch: int = ITER_BATCH) -> Iterator[Tuple[str, str]]:
        """``(node, source_id)`` of every node; a database store reads ``batch`` rows at a
        time without parsing the other properties."""
        for node in self.get_all_nodes():
            yield node["id"], str(node.get("source_id") or "")

    def iter_edge_sources(self, batch: int = ITER_BATCH) -> Iterator[Tuple[str, str, str]]:
        """``(source, target, source_id)`` of every edge, read as :meth:`iter_node_sources`."""
        for edge in self.get_all_edges():
            yield edge["source"], edge["target"], str(edge.get("source_id") or "")

    @abstractmethod
    def search_labels(self, query: str, limit: int = 50) -> List[str]:
        """Labels containing ``query`` (case-insensitive): exact, then prefix, then substring."""

    @abstractmethod
    def get_popular_labels(self, limit: int = 300) -> List[str]:
        """Labels by degree, highest first."""

    @abstractmethod
    def get_knowledge_graph(self, node_label: str, max_depth: int = 3,
                            max_nodes: int = 1000) -> KnowledgeGraph:
        """``"*"``: the ``max_nodes`` highest-degree nodes; else a BFS from ``node_label``."""

    def remove_nodes(self, node_ids: Iterable[str]) -> None:
        for node_id in node_ids:
            self.delete_node(node_id)

    def has_nodes_batch(self, node_ids: Sequence[str]) -> Set[str]:
        """The ids that exist."""
        return {n for n in node_ids if self.has_node(n)}

    def get_nodes_batch(self, node_ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
        return {n: d for n in node_ids if (d := self.get_node(n)) is not None}

    def node_degrees_batch(self, node_ids: Sequence[str]) -> Dict[str, int]:
        return {n: self.node_degree(n) for n in node_ids}

    def edge_degrees_batch(self, pairs: Sequence[Tuple[str, str]]) -> Dict[Tuple[str, str], int]:
        return {(s, t): self.edge_degree(s, t) for s, t in pairs}

    def get_edges_batch(self, pairs: Sequence[Tuple[str, str]]) -> Dict[Tuple[str, str], Dict[str, Any]]:
        return {p: d for p in pairs if (d := self.get_edge(*p)) is not None}

    def get_nodes_edges_batch(self, node_ids: Sequence[str]) -> Dict[str, List[Tuple[str, str]]]:
        return {n: self.get_node_edges(n) or [] for n in node_ids}

    # -------------------------------------------------- which chunks cite a node
    def _field_ids(self, node_id: str) -> List[str]:
        node = self.get_node(node_id) or {}
        return list(dict.fromkeys(v for v in str(node.get("source_id") or "").split(GRAPH_FIELD_SEP) if v))

    def prefetch_node_sources(self, chunk_ids: Sequence[str]) -> None:
        """A hint before a merge asks :meth:`node_cites` about ``chunk_ids``: a store that keeps
        the citations as rows reads them at once; here (the ``source_id`` property) nothing."""

    def node_cites(self, node_id: str, chunk_ids: Sequence[str]) -> Set[str]:
        """Which of ``chunk_ids`` the node already cites (its ``source_id`` here; a store that
        keeps the citations as rows looks them up by key)."""
        known = set(self._field_ids(node_id))
        return {c for c in chunk_ids if c in known}

    def add_node_sources(self, node_id: str, chunk_ids: Sequence[str]) -> List[str]:
        """Add chunk ids to an existing node's sources; returns those that were new."""
        old = self._field_ids(node_id)
        known = set(old)
        new = [c for c in dict.fromkeys(chunk_ids) if c and c not in known]
        if new:
            self.upsert_node(node_id, {"source_id": GRAPH_FIELD_SEP.join(old + new)})
        return new

    def node_source_ids(self, node_ids: Sequence[str]) -> Dict[str, List[str]]:
        """Every chunk id citing each node (``source_id`` may hold only the most recent)."""
        return {n: self._field_ids(n) for n in node_ids}

    def get_nodes_edges_bounded(self, node_ids: Sequence[str], limit: int, prefer: Sequence[str] = (),
                                degrees: Optional[Dict[str, int]] = None) -> Dict[str, List[Tuple[str, str]]]:
        """At most ``limit`` edges per node: those to ``prefer`` nodes first, then others
        (``degrees``: the nodes' degrees when the caller has read them already).

        A hub's 100k edges are never all read: a store that reads by key overrides this to
        look the preferred pairs up by key and take the rest with a ``LIMIT``."""
        wanted = set(prefer)
        bounded = {}
        for node, edges in self.get_nodes_edges_batch(node_ids).items():
            if len(edges) <= limit:
                bounded[node] = edges
                continue
            inner = [e for e in edges if e[1] in wanted]
            bounded[node] = (inner + [e for e in edges if e[1] not in wanted])[:max(limit, len(inner))]
        return bounded

    def upsert_nodes_batch(self, nodes: Dict[str, Dict[str, Any]]) -> None:
        for node_id, data in nodes.items():
            self.upsert_node(node_id, data)

    def upsert_edges_batch(self, edges: Dict[Tuple[str, str], Dict[str, Any]]) -> None:
        for (src, tgt), data in edges.items():
            self.upsert_edge(src, tgt, data)
