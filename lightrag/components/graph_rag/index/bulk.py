"""Writing a pre-built store in one transaction (:meth:`GraphIndex.bulk_load
<lightrag.components.graph_rag.index.GraphIndex.bulk_load>`): chunks, entities, relations and
their vectors as given, without extraction; what is given no vectors is queued for embedding.
Entity names given ``name_vectors`` are indexed as an insert indexes new names (the vectors that
an insert's synonym search and name-vector reuse read); no synonym pairs are searched."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from lightrag.components.graph_rag.index.stores import IndexStores
from lightrag.components.graph_rag.index.vectors import queue_vectors, write_vectors
from lightrag.components.graph_rag.merger import split_field


def check_shapes(chunks: Dict[str, Any], entities: Dict[str, Any], relations: Dict[Any, Any],
                 chunk_vectors: Optional[np.ndarray], entity_vectors: Optional[np.ndarray],
                 relation_vectors: Optional[np.ndarray],
                 name_vectors: Optional[np.ndarray] = None) -> None:
    """``ValueError`` when vectors do not match their items (checked before any write)."""
    for what, items, vectors in (("chunk", chunks, chunk_vectors),
                                 ("entity", entities, entity_vectors),
                                 ("relation", relations, relation_vectors),
                                 ("entity name", entities, name_vectors)):
        if vectors is not None and len(vectors) != len(items):
            raise ValueError(f"{len(vectors)} {what} vectors for {len(items)} {what} items")


def bulk_load(stores: IndexStores, chunks: Dict[str, Dict[str, Any]],
              entities: Dict[str, Dict[str, Any]], relations: Dict[Tuple[str, str], Dict[str, Any]],
              chunk_vectors: Optional[np.ndarray] = None,
              entity_vectors: Optional[np.ndarray] = None,
              relation_vectors: Optional[np.ndarray] = None,
              name_vectors: Optional[np.ndarray] = None) -> None:
    """Write the items into ``stores`` (inside the index's write transaction); ``ValueError``
    for a relation whose end is neither given nor in the graph."""
    missing = [(s, t) for s, t in relations for n in (s, t)
               if n not in entities and not stores.graph.has_node(n)]
    if missing:
        raise ValueError(f"relation {missing[0]} names an entity that is not in the graph")
    stores.text_chunks.replace(chunks)
    if chunks and chunk_vectors is not None:
        stores.chunks_vdb.upsert({cid: {"content": c.get("content", ""),
                                        "full_doc_id": c.get("full_doc_id", ""),
                                        "file_path": c.get("file_path", ""),
                                        "chunk_order_index": c.get("chunk_order_index", 0)}
                                  for cid, c in chunks.items()}, vectors=chunk_vectors)
    stores.graph.upsert_nodes_batch({n: {"entity_id": n, **{k: v for k, v in d.items() if k != "source_id"}}
                                     for n, d in entities.items()})
    for name, data in entities.items():  # added to what cites it already: batches extend a hub
        stores.graph.add_node_sources(name, split_field(data.get("source_id")))
    stores.graph.upsert_edges_batch(dict(relations))
    named = ({n: ({**d, "entity_id": n}, entity_vectors[i])
              for i, (n, d) in enumerate(entities.items())} if entity_vectors is not None else {})
    paired = ({(s, t): ({**d, "src_id": s, "tgt_id": t}, relation_vectors[i])
               for i, ((s, t), d) in enumerate(relations.items())}
              if relation_vectors is not None else {})
    write_vectors(stores, named, paired)
    if name_vectors is not None and entities:
        index_names(stores, list(entities), name_vectors)
    queue_vectors(stores, [n for n in entities if n not in named],
                  [k for k in relations if k not in paired])


def index_names(stores: IndexStores, names: Sequence[str], vectors: np.ndarray) -> int:
    """Add the names not indexed yet to the entity-name vectors; returns how many."""
    known = stores.entity_names.get_vectors_by_ids(list(names))
    new = [i for i, n in enumerate(names) if n not in known]
    if new:
        stores.entity_names.upsert({names[i]: {"content": names[i]} for i in new},
                                   vectors=np.asarray(vectors)[new])
    return len(new)
