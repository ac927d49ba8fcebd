"""What a graph store holds, compared by the crash tests (SQLite and PostgreSQL alike)."""

from typing import Any, Dict


def store_state(rag: Any) -> Dict[str, Any]:
    """Everything ``rag``'s store holds, without timestamps; asserts it is consistent first."""
    index = rag.index
    assert index.verify() == []

    def strip(data):
        return {k: v for k, v in data.items() if k not in ("created_at", "source", "target")}

    vectors = {}
    for name, store in (("chunks", index.chunks_vdb), ("entities", index.entities_vdb),
                        ("relations", index.relations_vdb)):
        found = store.get_vectors_by_ids(sorted(store._ids))
        vectors[name] = {i: v.round(5).tolist() for i, v in found.items()}
    return {
        "nodes": {n["id"]: strip(n) for n in rag.graph.get_all_nodes()},
        "edges": {tuple(sorted((e["source"], e["target"]))): strip(e)
                  for e in rag.graph.get_all_edges()},
        "chunks": dict(index.text_chunks.items()),
        "status": {k: v["status"] for k, v in index.doc_status.items()},
        "graph_items": dict(index.stores.doc_graph_items.items()),
        "vectors": vectors,
        "pending": index.stores.pending_vectors.keys(),
        "synonyms": index.stores.synonyms.pairs(),
    }
