"""The documents that name a graph item, found through the item's citations, and the edits that
keep their recorded items (:class:`~lightrag.components.storage.doc_items.DocItemsStorage`) in
step with a merge or a deleted relation.

A document names an entity or relation only through its chunks, and every chunk that named one
is cited by it: an entity's citations are its ``node_chunks`` rows (all of them, a hub's too), a
relation's are its ``source_id``. So the documents to edit are those of the cited chunks (their
``full_doc_id``), each checked against its own recorded items. The store keeps no index of the
items by name: kept per insert, it wrote one random leaf per item, a quarter of an insert's
pages at 1M chunks (``docs/benchmarks.md``, twenty-second session), for the benefit of edits
that are rare and already read the item's citations.

A document's items can still name an item it no longer supports (a relation deleted and created
again by hand, an entity merged away and created again): the delete of that document checks that
its chunks cite an item before it removes or rebuilds it
(:func:`~lightrag.components.graph_rag.index.maintenance.remove_document_data`).
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Sequence, Set, Tuple

from lightrag.components.graph_rag.index.stores import IndexStores
from lightrag.components.graph_rag.schemas import relation_key
from lightrag.components.storage.doc_items import Items


def documents_of_chunks(stores: IndexStores, chunk_ids: Iterable[str]) -> List[str]:
    """The documents the stored chunks among ``chunk_ids`` belong to (sorted)."""
    ids = sorted(set(chunk_ids))
    return sorted({str(chunk["full_doc_id"]) for chunk in stores.text_chunks.get_by_ids(ids)
                   if chunk is not None and chunk.get("full_doc_id")})


def _edit_documents(stores: IndexStores, chunk_ids: Iterable[str], naming: Sequence[str],
                    edit: Callable[[Items], Items]) -> None:
    """Apply ``edit`` to the items naming ``naming`` of the documents of ``chunk_ids`` (the
    other items are not read: an edit changes only these) and write the rows that changed."""
    removed: Dict[str, Items] = {}
    added: Dict[str, Items] = {}
    documents = documents_of_chunks(stores, chunk_ids)
    for doc_id, items in stores.doc_graph_items.get_many(documents, naming).items():
        edited = edit(items)
        if edited != items:
            removed[doc_id], added[doc_id] = _minus(items, edited), _minus(edited, items)
    if removed:
        stores.doc_graph_items.change(removed, added)


def _minus(items: Items, other: Items) -> Items:
    """The entities and relations of ``items`` that ``other`` lacks."""
    entities, relations = set(other["entities"]), {tuple(r) for r in other["relations"]}
    return {"entities": [e for e in items["entities"] if e not in entities],
            "relations": [r for r in items["relations"] if tuple(r) not in relations]}


def rename_in_documents(stores: IndexStores, chunk_ids: Iterable[str], renamed: Set[str],
                        target: str) -> None:
    """The documents of ``chunk_ids`` (the merged entities' citations, read before the merge
    moved them) name ``target`` where they named one of ``renamed``, in their entities and
    relations (a relation between two merged entities is dropped)."""

    def rename(items: Items) -> Items:
        def new(name: str) -> str:
            return target if name in renamed else name

        pairs = {relation_key(new(src), new(tgt)) for src, tgt in items.get("relations", [])
                 if new(src) != new(tgt)}
        return {"entities": sorted({new(e) for e in items["entities"]}),
                "relations": sorted(list(p) for p in pairs)}

    _edit_documents(stores, chunk_ids, sorted(renamed), rename)


def forget_in_documents(stores: IndexStores, chunk_ids: Iterable[str],
                        pair: Tuple[str, str]) -> None:
    """The documents of ``chunk_ids`` (the relation's ``source_id``, read before it was
    removed) no longer name the relation ``pair``."""

    def forget(items: Items) -> Items:
        return {**items, "relations": [r for r in items.get("relations", [])
                                       if tuple(r) != tuple(pair)]}

    _edit_documents(stores, chunk_ids, [pair[0]], forget)
