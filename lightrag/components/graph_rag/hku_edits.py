"""HKU LightRAG's graph edits (create/edit entities and relations, merge entities) for
:class:`~lightrag.components.graph_rag.hku_compat.LightRAG`, a mixin over its ``graph_rag`` and
``_run``.

The async edits work on the index and embed in the caller's event loop, where a model function
bound to it (a shared AsyncOpenAI client) keeps working; the sync ones run them on the
instance's loop (``_run``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from lightrag.components.graph_rag.hku_results import HKUNotFoundError, entity_result, relation_result
from lightrag.components.graph_rag.index.maintenance import EDITABLE_ENTITY_FIELDS
from lightrag.components.graph_rag.schemas import GRAPH_FIELD_SEP, normalize_entity_name

__all__ = ["HKUGraphEdits", "not_found"]


def not_found(error: KeyError) -> HKUNotFoundError:
    """``error`` as one that ``except ValueError`` (HKU) and ``except KeyError`` both catch."""
    return HKUNotFoundError(error.args[0] if error.args else str(error))




class HKUGraphEdits:
    """The graph-edit methods of HKU's ``LightRAG`` (see the module doc)."""

    graph_rag: Any  # the GraphRAG, and ``_run(coro)``, are LightRAG's
    _run: Callable[[Any], Any]

    async def _embedded(self, result: Any) -> Any:
        """``result`` of an index edit, once the vectors it queued are embedded in this loop."""
        await self.graph_rag.index.index_pending()
        return result

    def _new_entity(self, entity_name: str, entity_data: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
        """``(stored name, custom-KG record)`` of an entity to create; an existing name, in any
        letter case the store folds together, is refused, as in HKU."""
        stored_name = normalize_entity_name(entity_name)
        if not stored_name:
            raise ValueError("the entity name is empty")
        graph = self.graph_rag.graph
        existing = stored_name if graph.get_node(stored_name) is not None else \
            graph.find_case_variants([stored_name]).get(stored_name)
        if existing is not None:
            raise ValueError(f"Entity '{entity_name}' already exists (as '{existing}')")
        record = {"entity_name": stored_name,
                  "entity_type": str(entity_data.get("entity_type", "UNKNOWN")),
                  "description": str(entity_data.get("description", "")),
                  "file_path": str(entity_data.get("file_path", "manual"))}
        if entity_data.get("source_id"):  # kept when it names stored chunks; the entity is its
            # own document either way (HKU takes any label here, such as "manual")
            chunk_ids = [c for c in str(entity_data["source_id"]).split(GRAPH_FIELD_SEP) if c]
            if chunk_ids and all(self.graph_rag.text_chunks.get_by_ids(chunk_ids)):
                record["source_id"] = GRAPH_FIELD_SEP.join(chunk_ids)
        return stored_name, record

    def _created(self, name: str) -> Dict[str, Any]:
        return entity_result(name, self.graph_rag.graph.get_node(name))

    def create_entity(self, entity_name: str, entity_data: Dict[str, Any]) -> Dict[str, Any]:
        """Add an entity by hand (a document of its own: ``manual-entity-<name>``, which
        ``delete_by_doc_id`` removes), under the name the store keeps ("ops/plan" is stored as
        "Ops/Plan"); returns HKU's ``{"entity_name", "source_id", "graph_data"}`` with the
        stored fields at the top level too."""
        return self._run(self.acreate_entity(entity_name, entity_data))

    async def acreate_entity(self, entity_name: str, entity_data: Dict[str, Any]) -> Dict[str, Any]:
        name, record = self._new_entity(entity_name, entity_data)
        await self.graph_rag.ainsert_custom_kg({"entities": [record]}, doc_id=f"manual-entity-{name}")
        return self._created(name)

    @staticmethod
    def _entity_edit(entity_name: str, updated_data: Dict[str, Any], allow_rename: bool,
                     allow_merge: bool) -> Tuple[Dict[str, Any], Optional[str]]:
        """``(field updates, new name or None)`` of an HKU ``edit_entity`` call, checked."""
        if allow_merge:
            raise ValueError("allow_merge is not supported: use merge_entities(sources, target)")
        updates = dict(updated_data)
        new_name = updates.pop("entity_name", None)
        if new_name is None or new_name == entity_name:
            return updates, None
        if not normalize_entity_name(str(new_name)):
            raise ValueError("cannot rename an entity to an empty name")
        if normalize_entity_name(str(new_name)) == normalize_entity_name(entity_name):
            raise ValueError(f"'{new_name}' is stored as '{entity_name}' (names that differ only "
                             "in case are one entity): nothing to rename")
        if not allow_rename:
            raise ValueError(f"renaming '{entity_name}' to '{new_name}' needs allow_rename=True")
        return updates, str(new_name)

    def edit_entity(self, entity_name: str, updated_data: Dict[str, Any], allow_rename: bool = True,
                    allow_merge: bool = False) -> Dict[str, Any]:
        """Change an entity's fields; ``updated_data["entity_name"]`` renames it (refused with
        ``allow_rename=False``; ``allow_merge`` is not supported: merge with
        :meth:`merge_entities`)."""
        return self._run(self.aedit_entity(entity_name, updated_data, allow_rename, allow_merge))

    async def aedit_entity(self, entity_name: str, updated_data: Dict[str, Any],
                           allow_rename: bool = True, allow_merge: bool = False) -> Dict[str, Any]:
        updates, rename_to = self._entity_edit(entity_name, updated_data, allow_rename, allow_merge)
        try:
            edited = self.graph_rag.index.edit_entity(entity_name, updates, rename_to)
        except KeyError as error:
            raise not_found(error) from None
        summary = {"merged": False, "merge_status": "not_attempted", "merge_error": None,
                   "operation_status": "success", "target_entity": None, "final_entity": None,
                   "renamed": rename_to is not None}
        name = rename_to if rename_to is not None else entity_name
        stored = self.graph_rag.graph.get_node(normalize_entity_name(name)) is not None
        return await self._embedded(entity_result(normalize_entity_name(name) if stored else name, edited,
                                                  operation_summary=summary))

    def create_relation(self, source_entity: str, target_entity: str,
                        relation_data: Dict[str, Any]) -> Dict[str, Any]:
        return self._run(self.acreate_relation(source_entity, target_entity, relation_data))

    async def acreate_relation(self, source_entity: str, target_entity: str,
                               relation_data: Dict[str, Any]) -> Dict[str, Any]:
        try:
            created = self.graph_rag.index.create_relation(source_entity, target_entity, relation_data)
        except KeyError as error:
            raise not_found(error) from None
        return await self._embedded(relation_result(source_entity, target_entity, created))

    def edit_relation(self, source_entity: str, target_entity: str,
                      updated_data: Dict[str, Any]) -> Dict[str, Any]:
        return self._run(self.aedit_relation(source_entity, target_entity, updated_data))

    async def aedit_relation(self, source_entity: str, target_entity: str,
                             updated_data: Dict[str, Any]) -> Dict[str, Any]:
        try:
            edited = self.graph_rag.index.edit_relation(source_entity, target_entity, updated_data)
        except KeyError as error:
            raise not_found(error) from None
        return await self._embedded(relation_result(source_entity, target_entity, edited))

    @staticmethod
    def _check_merge(merge_strategy: Optional[Dict[str, str]],
                     target_entity_data: Optional[Dict[str, Any]]) -> None:
        """Everything a merge call can get wrong, checked before the merge commits."""
        if merge_strategy:
            raise ValueError("merge_strategy is not supported: descriptions are concatenated; "
                             "set the result with target_entity_data")
        unknown = sorted(set(target_entity_data or {}) - set(EDITABLE_ENTITY_FIELDS))
        if unknown:  # the index checks the sources itself, before it writes
            raise ValueError(f"cannot set entity fields {unknown}; editable: {list(EDITABLE_ENTITY_FIELDS)}")

    def merge_entities(self, source_entities: List[str], target_entity: str,
                       merge_strategy: Optional[Dict[str, str]] = None,
                       target_entity_data: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Merge ``source_entities`` into ``target_entity`` (descriptions joined, relations
        moved); ``target_entity_data`` then sets the target's fields. ``merge_strategy`` is
        not supported (descriptions are always concatenated)."""
        return self._run(self.amerge_entities(source_entities, target_entity, merge_strategy,
                                              target_entity_data))

    async def amerge_entities(self, source_entities: List[str], target_entity: str,
                              merge_strategy: Optional[Dict[str, str]] = None,
                              target_entity_data: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self._check_merge(merge_strategy, target_entity_data)
        index = self.graph_rag.index
        try:
            merged = index.merge_entities(source_entities, target_entity)
        except KeyError as error:
            raise not_found(error) from None
        if target_entity_data:
            merged = index.edit_entity(target_entity, dict(target_entity_data))
        return await self._embedded(entity_result(target_entity, merged))
