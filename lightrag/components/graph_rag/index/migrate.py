"""Convert a working directory of the old file stores (lightrag 0.2: ``kv_store_*.json``,
``graph_*.graphml``, ``vdb_*.npz``) into the SQLite store of :class:`GraphIndex`, once.

Everything is copied, vectors included (no model is needed), in one transaction; the old files
are left where they are (delete them once the new store works) and leftover temporary files of
interrupted atomic writes (``.*.tmp``) are removed. ``lightrag migrate`` runs it.

Example:
    >>> migrate_legacy_store("./old_rag")  # doctest: +SKIP
    {'documents': 120, 'chunks': 480, 'entities': 3051, 'relations': 5120, ...}
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict

import numpy as np

from lightrag.components.graph_rag.index.stores import (
    CHUNK_META,
    ENTITY_META,
    RELATION_META,
    extraction_key,
)
from lightrag.components.storage.base import LEGACY_FIELDS
from lightrag.components.storage.databases import DB_FILE, LEGACY_FILES
from lightrag.components.storage.doc_items import DocItemsStorage
from lightrag.components.storage.json_kv import load_json_store
from lightrag.components.storage.networkx_graph import NetworkXGraphStorage
from lightrag.components.storage.numpy_vector import NumpyVectorStorage
from lightrag.components.storage.sql_db import SQLiteDatabase
from lightrag.components.storage.sql_graph import SQLGraphStorage
from lightrag.components.storage.sql_kv import SQLDocStatusStorage, SQLKVStorage
from lightrag.components.storage.sql_vector import SQLVectorStorage

log = logging.getLogger(__name__)


def _clean(data: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in data.items() if k not in LEGACY_FIELDS}


def migrate_legacy_store(working_dir: str, workspace: str = "", extractor_name: str = "") -> Dict[str, int]:
    """Copy the old JSON/GraphML/NumPy stores of ``working_dir/workspace`` into a new SQLite store.

    Args:
        working_dir / workspace: where the old files are; the new ``lightrag.sqlite3`` goes there.
        extractor_name: class name of the extractor that built the store (``EntityExtractor`` or
            ``SpacyEntityExtractor``); names the copied extraction cache so deletes can rebuild.
            Left empty, the cache is copied under both names.

    Returns:
        Counts of what was copied.

    Raises:
        ValueError: there is nothing to migrate, or the SQLite store exists already.
    """
    folder = Path(working_dir) / workspace if workspace else Path(working_dir)
    if (folder / DB_FILE).exists():
        raise ValueError(f"{folder / DB_FILE} exists already: this store was migrated")
    if not any((folder / name).exists() for name in LEGACY_FILES):
        raise ValueError(f"{folder} holds no old-format stores (looked for {', '.join(LEGACY_FILES)})")
    stale = list(folder.glob(".*.tmp"))
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    kv = {name: load_json_store(folder / f"kv_store_{name}.json")
          for name in ("full_docs", "text_chunks", "doc_status", "chunk_extractions", "doc_graph_items")}
    graph = NetworkXGraphStorage(namespace="chunk_entity_relation", working_dir=str(folder))
    vectors = {ns: NumpyVectorStorage(namespace=ns, working_dir=str(folder), meta_fields=meta)
               for ns, meta in (("chunks", CHUNK_META), ("entities", ENTITY_META),
                                ("relationships", RELATION_META))}
    db = SQLiteDatabase(folder / DB_FILE)
    try:
        with db.transaction():
            where = {"db": db, "working_dir": str(folder)}
            for name in ("full_docs", "text_chunks"):
                SQLKVStorage(namespace=name, **where).replace(kv[name])
            DocItemsStorage(db).replace(kv["doc_graph_items"])
            SQLDocStatusStorage(namespace="doc_status", **where).replace(kv["doc_status"])
            cache: Dict[str, Any] = {}
            names = [extractor_name] if extractor_name else ["EntityExtractor", "SpacyEntityExtractor"]
            for chunk_id, extraction in kv["chunk_extractions"].items():
                chunk = kv["text_chunks"].get(chunk_id)
                if chunk is not None:
                    for name in names:
                        cache[extraction_key(name, chunk.get("content", ""))] = extraction
            SQLKVStorage(namespace="extractions", **where).replace(cache)
            target = SQLGraphStorage(**where)
            target.upsert_nodes_batch({n["id"]: _clean({k: v for k, v in n.items() if k != "id"})
                                       for n in graph.get_all_nodes()})
            target.upsert_edges_batch({(e["source"], e["target"]): _clean(
                {k: v for k, v in e.items() if k not in ("source", "target")})
                for e in graph.get_all_edges()})
            for ns, old in vectors.items():
                ids = list(old._ids)
                if ids:
                    rows = old.get_vectors_by_ids(ids)
                    SQLVectorStorage(namespace=ns, meta_fields=old.meta_fields, **where).upsert(
                        {i: old.get_by_id(i) or {} for i in ids}, vectors=np.stack([rows[i] for i in ids]))
    except BaseException:
        db.close()
        (folder / DB_FILE).unlink(missing_ok=True)
        raise
    db.close()
    counts = {"documents": len(kv["doc_status"]), "chunks": len(kv["text_chunks"]),
              "entities": len(graph.get_all_labels()), "relations": len(graph.get_all_edges()),
              "vectors": sum(len(v) for v in vectors.values()), "stale_tmp_files_removed": len(stale)}
    log.info("migrated %s: %s", folder, counts)
    return counts
