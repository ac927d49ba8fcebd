"""``LightRAG``: HKU LightRAG's class and method names over :class:`GraphRAG`.

A program written for HKU LightRAG (``lightrag-hku``) keeps its shape: the model comes as
functions (``llm_model_func``, ``embedding_func``), storages are initialized and finalized,
``insert`` returns a track id and ``query`` the answer text::

    from lightrag import LightRAG, QueryParam, EmbeddingFunc

    rag = LightRAG(working_dir="./rag_storage", llm_model_func=my_llm,
                   embedding_func=EmbeddingFunc(embedding_dim=384, func=my_embed))
    await rag.initialize_storages()
    await rag.ainsert("Mira Oduya founded Tallow Ferries in 1987.")
    answer = await rag.aquery("Who founded Tallow Ferries?", param=QueryParam(mode="mix"))
    await rag.finalize_storages()

Without ``llm_model_func`` the offline defaults extract (spaCy) and answer (sentences quoted
from the sources); without ``embedding_func`` the packaged MiniLM embeds. Everything else of
:class:`GraphRAG` (sources, references, streaming, graph edits, export) is ``rag.graph_rag``.
What differs from HKU is listed in ``docs/compat.md`` ("Coming from HKU LightRAG").
"""

from __future__ import annotations

import asyncio
import logging
from importlib import resources
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Sequence, Union

from lightrag.components.graph_rag.hku_edits import HKUGraphEdits
from lightrag.components.graph_rag.hku_options import HKUOptions, read_hku_options
from lightrag.components.graph_rag.hku_results import (
    HKU_EXPORT_FORMATS,
    HKUDeletionResult,
    HKUKnowledgeGraph,
    HKUQueryResult,
    hku_timestamps,
    write_hku_export,
)
from lightrag.components.graph_rag.hku_storages import HKU_STORAGE_NAMES, hku_storage, status_counts
from lightrag.components.graph_rag.hku_utils import EmbeddingFunc
from lightrag.components.graph_rag.schemas import (
    DocStatus,
    QueryParam,
    QueryResult,
)
from lightrag.utils.run_sync import run_sync

log = logging.getLogger(__name__)

__all__ = ["EmbeddingFunc", "LightRAG"]

#: export formats of ``export_data``: HKU's one-file layouts, and this package's ``json`` /
#: ``graphml`` (written by :meth:`GraphRAG.export`)
EXPORT_FORMATS = (*HKU_EXPORT_FORMATS, "json", "graphml")

#: the answer Generator's template: the instructions and context go to ``llm_model_func`` as
#: ``system_prompt`` and the question alone as ``prompt``, as HKU calls it
ANSWER_TEMPLATE = "<SYS>\n{{task_desc_str}}\n</SYS>\n{{input_str}}"



def _checked(stream: Iterator[str]) -> Iterator[str]:
    """The pieces of ``stream``, then its failure raised (a ``GeneratorStream`` keeps a failed
    request's error in ``.error`` and ends empty: an HKU program would print nothing)."""
    yield from stream
    error = getattr(stream, "error", None)
    if error:
        raise RuntimeError(f"the answer stream failed: {error}")


async def _achecked(stream: Any) -> AsyncIterator[str]:
    async for piece in stream:
        yield piece
    error = getattr(stream, "error", None)
    if error:
        raise RuntimeError(f"the answer stream failed: {error}")


def _model_parts(llm_model_func: Optional[Callable[..., Any]], embedding_func: Optional[Callable[..., Any]],
                 llm_model_name: str, max_gleaning: int, config: Dict[str, Any],
                 hku: HKUOptions) -> None:
    """Replace the packaged config's model parts by components calling the user's functions
    (``hku``: HKU's fields read by :func:`read_hku_options`: ``llm_model_kwargs`` go with every
    call, the extractor and the merger's summaries take ``addon_params`` and the summary sizes).
    With an ``llm_model_func`` the merger summarizes an entity's or relation's descriptions
    with it, as HKU does."""
    from lightrag.components.graph_rag.entity_extractor import EntityExtractor
    from lightrag.components.graph_rag.keyword_extractor import KeywordExtractor
    from lightrag.components.graph_rag.merger import GraphMerger
    from lightrag.components.graph_rag.prompts import SUMMARIZE_DESCRIPTIONS_PROMPT
    from lightrag.components.model_client.function_client import FunctionClient
    from lightrag.core.embedder import Embedder
    from lightrag.core.generator import Generator

    if embedding_func is not None:
        config["embedder"] = Embedder(model_client=FunctionClient(
            embedding_func=embedding_func, model_name=getattr(embedding_func, "__name__", "embedding")))
    if llm_model_func is not None:
        def generator(template: Optional[str] = None, **prompt_kwargs: Any) -> Generator:
            return Generator(model_client=FunctionClient(llm_func=llm_model_func, model_name=llm_model_name),
                             template=template, model_kwargs=dict(hku.llm_kwargs),
                             prompt_kwargs=prompt_kwargs or None, **hku.generator_kwargs)

        config["extractor"] = EntityExtractor(generator=generator(), max_gleaning=max_gleaning,
                                              **hku.extractor_kwargs)
        config["keyword_extractor"] = KeywordExtractor(generator=generator())
        config["answer_generator"] = generator(ANSWER_TEMPLATE)
        language = hku.extractor_kwargs.get("language")
        summarizer = generator(SUMMARIZE_DESCRIPTIONS_PROMPT, **hku.summary_prompt_kwargs,
                               **({"language": language} if language else {}))
        config["merger"] = GraphMerger(summarizer=summarizer, **hku.merger_kwargs)
    elif hku.merger_kwargs:
        config["merger"] = GraphMerger(**hku.merger_kwargs)


class LightRAG(HKUGraphEdits):
    """HKU LightRAG's entry point on this package's graph RAG (see the module doc).

    Args:
        working_dir: the store's folder (one SQLite file and vector files).
        workspace: a name that keeps this instance's data apart from others in the folder.
        llm_model_func: ``async (prompt, system_prompt=None, history_messages=[], **kwargs) ->
            str`` (or sync): extraction, keywords and answers. None: the offline defaults.
        embedding_func: an :class:`EmbeddingFunc` or ``(texts) -> array``. None: MiniLM.
        llm_model_name: the name usage and the extraction cache record for the LLM.
        chunk_token_size / chunk_overlap_token_size: the chunker's sizes (1200 / 100).
        entity_extract_max_gleaning: extra extraction rounds per chunk (1).
        llm_model_max_async: concurrent extraction calls (4).
        cosine_better_than_threshold: vector matches below it are dropped (0.2).
        **graph_rag_options: HKU's other fields (``llm_model_kwargs``, ``addon_params``,
            ``enable_llm_cache``, the storage names, ...: what each becomes is in
            :mod:`~lightrag.components.graph_rag.hku_options`) and :class:`GraphRAG` arguments.
    """

    def __init__(self, working_dir: str = "./rag_storage", workspace: str = "",
                 llm_model_func: Optional[Callable[..., Any]] = None,
                 embedding_func: Optional[Callable[..., Any]] = None,
                 llm_model_name: str = "llm_model_func",
                 chunk_token_size: int = 1200, chunk_overlap_token_size: int = 100,
                 entity_extract_max_gleaning: int = 1, llm_model_max_async: int = 4,
                 cosine_better_than_threshold: float = 0.2, **graph_rag_options: Any) -> None:
        from lightrag.components.graph_rag.chunking import Chunker
        from lightrag.utils.config import build, load_config

        packaged = resources.files("lightrag.configs").joinpath("graph_rag_default.yaml")
        config = load_config(str(packaged))["component_config"]
        config.pop("query_defaults", None)  # HKU's QueryParam defaults (mix) hold
        built = {name: build(part) if isinstance(part, dict) and "component_name" in part else part
                 for name, part in config.items()
                 if name not in ("embedder", "extractor", "keyword_extractor", "answer_generator")
                 or (name == "embedder" and embedding_func is None)
                 or (name != "embedder" and llm_model_func is None)}
        hku = read_hku_options(graph_rag_options, has_llm=llm_model_func is not None)
        _model_parts(llm_model_func, embedding_func, llm_model_name, entity_extract_max_gleaning, built, hku)
        built.update(chunker=Chunker(chunk_token_size=chunk_token_size,
                                     chunk_overlap_token_size=chunk_overlap_token_size),
                     working_dir=working_dir, cosine_threshold=cosine_better_than_threshold,
                     llm_max_async=llm_model_max_async)
        if workspace:
            built["workspace"] = workspace
        built.update(hku.graph_rag_options)
        self.working_dir, self.workspace = working_dir, workspace
        self._parts = built
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._graph_rag: Optional[Any] = self._open()

    def _open(self) -> Any:
        """A :class:`GraphRAG` of this instance's parts; the conversation goes to
        ``llm_model_func`` as ``history_messages``, as HKU sends it."""
        from lightrag.components.graph_rag.system import GraphRAG

        graph_rag = GraphRAG(**self._parts)
        graph_rag.engine.history_as_messages = True
        return graph_rag

    @property
    def graph_rag(self) -> Any:
        """The :class:`GraphRAG` behind this facade."""
        if self._graph_rag is None:
            raise RuntimeError("the storages were finalized: call initialize_storages() again "
                               "(or make a new LightRAG) before using this instance")
        return self._graph_rag

    def __repr__(self) -> str:
        return f"LightRAG(working_dir={self.working_dir!r}, workspace={self.workspace!r})\n{self.graph_rag!r}"

    def _run(self, coro: Any) -> Any:
        """Run ``coro`` for a sync method: on one event loop kept by this instance, as HKU's
        sync methods do, so async model functions bound to a loop (a module-level
        ``AsyncOpenAI`` client) work across calls, where a new loop per call ("Event loop is
        closed") did not; inside a running loop (a notebook), in a helper thread."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self._loop is None or self._loop.is_closed():
                self._loop = asyncio.new_event_loop()
            return self._loop.run_until_complete(coro)
        return run_sync(coro)

    # ------------------------------------------------------------- life cycle
    async def initialize_storages(self) -> None:
        """HKU's set-up call: the store is open from the constructor on; after
        :meth:`finalize_storages` it is opened again."""
        if self._graph_rag is None:
            self._graph_rag = self._open()

    async def finalize_storages(self) -> None:
        """Close the store (HKU's tear-down call); later calls ask for initialize_storages()."""
        if self._graph_rag is not None:
            self._graph_rag.close()
            self._graph_rag = None

    # ----------------------------------------------------------------- insert
    async def ainsert(self, input: Union[str, Sequence[str]], split_by_character: Optional[str] = None,
                      split_by_character_only: bool = False,
                      ids: Optional[Union[str, Sequence[str]]] = None,
                      file_paths: Optional[Union[str, Sequence[str]]] = None,
                      track_id: Optional[str] = None) -> str:
        """Insert documents; returns the track id (HKU's order of arguments: ``ids`` is the
        fourth). ``split_by_character`` is refused: chunks are cut by tokens."""
        if split_by_character is not None or split_by_character_only:
            raise ValueError("split_by_character is not supported: documents are chunked by "
                             "tokens (chunk_token_size); split the text yourself and insert the parts")
        result = await self.graph_rag.ainsert(input, ids=ids, file_paths=file_paths, track_id=track_id)
        if result.failed:
            log.warning("LightRAG.insert: %d document(s) failed: %s", len(result.failed),
                        "; ".join(f"{k}: {v}" for k, v in list(result.failed.items())[:3]))
        return result.track_id

    def insert(self, input: Union[str, Sequence[str]], split_by_character: Optional[str] = None,
               split_by_character_only: bool = False, ids: Optional[Union[str, Sequence[str]]] = None,
               file_paths: Optional[Union[str, Sequence[str]]] = None,
               track_id: Optional[str] = None) -> str:
        return self._run(self.ainsert(input, split_by_character, split_by_character_only, ids,
                                     file_paths, track_id))

    def insert_custom_kg(self, custom_kg: Dict[str, Any], full_doc_id: Optional[str] = None) -> None:
        self._run(self.ainsert_custom_kg(custom_kg, full_doc_id))

    async def ainsert_custom_kg(self, custom_kg: Dict[str, Any], full_doc_id: Optional[str] = None) -> None:
        await self.graph_rag.ainsert_custom_kg(custom_kg, doc_id=full_doc_id)

    # ------------------------------------------------------------------ query
    async def _aquery_result(self, query: str, param: Optional[QueryParam],
                             system_prompt: Optional[str]) -> QueryResult:
        if system_prompt is not None:
            raise ValueError("system_prompt is not supported: give extra answer instructions in "
                             "QueryParam(user_prompt=...), or a template to the answer Generator")
        return await self.graph_rag.aquery(query, param)

    async def aquery_llm(self, query: str, param: Optional[QueryParam] = None,
                         system_prompt: Optional[str] = None) -> HKUQueryResult:
        """HKU's dict: ``{"status", "message", "data", "metadata", "llm_response": {"content",
        "response_iterator", "is_streaming"}}``; the :class:`QueryResult` fields read as
        attributes of it (``result.content``, ``result.sources``)."""
        result = await self._aquery_result(query, param, system_prompt)
        chosen = param or QueryParam()
        shaped = self._data_dict(result.raw_data, chosen.mode)
        streaming = bool(result.is_streaming)
        shaped["llm_response"] = {
            "content": None if streaming else (result.content or ""),
            "response_iterator": _achecked(result.response_iterator) if streaming else None,
            "is_streaming": streaming,
            "llm_generated": not (chosen.only_need_context or chosen.only_need_prompt
                                  or result.raw_data.get("error"))}
        return HKUQueryResult(result, shaped)

    async def aquery(self, query: str, param: Optional[QueryParam] = None,
                     system_prompt: Optional[str] = None) -> Union[str, Iterator[str], Any]:
        """The answer text, or an iterator of its pieces with ``stream=True`` (HKU's return; a
        stream whose request failed raises at its end instead of ending empty)."""
        result = await self._aquery_result(query, param, system_prompt)
        return _achecked(result.response_iterator) if result.is_streaming else (result.content or "")

    def query(self, query: str, param: Optional[QueryParam] = None,
              system_prompt: Optional[str] = None) -> Union[str, Iterator[str], Any]:
        if system_prompt is not None:
            raise ValueError("system_prompt is not supported: give extra answer instructions in "
                             "QueryParam(user_prompt=...), or a template to the answer Generator")
        if param is not None and param.stream:  # a sync iterator of pieces
            result = self.graph_rag.query(query, param)
            return _checked(result.response_iterator) if result.is_streaming else (result.content or "")
        return self._run(self.aquery(query, param))

    async def aquery_data(self, query: str, param: Optional[QueryParam] = None) -> Dict[str, Any]:
        """What retrieval found, without an answer: HKU's ``{"status", "message", "data":
        {entities, relationships, chunks, references}, "metadata"}``."""
        chosen = (param or QueryParam()).with_changes(only_need_context=True, stream=False)
        result = await self.graph_rag.aquery(query, chosen)
        return self._data_dict(result.raw_data, chosen.mode)

    @staticmethod
    def _data_dict(raw: Dict[str, Any], mode: str) -> Dict[str, Any]:
        """HKU's retrieval dict of a query's ``raw_data`` (``created_at`` as HKU's unix
        seconds)."""
        data = {key: list(raw.get(key, [])) for key in ("entities", "relationships", "chunks", "references")}
        data["entities"] = hku_timestamps(data["entities"])
        data["relationships"] = hku_timestamps(data["relationships"])
        info = raw.get("processing_info", {})
        return {"status": "success", "message": "Query processed successfully", "data": data,
                "metadata": {"query_mode": info.get("mode", mode),
                             "keywords": raw.get("keywords", {}), "processing_info": info}}

    def query_data(self, query: str, param: Optional[QueryParam] = None) -> Dict[str, Any]:
        return self._run(self.aquery_data(query, param))

    # ---------------------------------------------------------------- deletes
    async def adelete_by_doc_id(self, doc_id: str, delete_llm_cache: bool = False) -> HKUDeletionResult:
        """Delete a document and what only it supported; HKU's ``DeletionResult`` (``status``
        ``"success"`` or ``"not_found"``, ``status_code`` 200 / 404), this package's deletion
        record as ``.details``. ``delete_llm_cache`` is accepted for HKU programs; cached
        extractions are kept (they are keyed by chunk content and let a re-insert of the same
        text skip the model)."""
        record = self.graph_rag.doc_status.get_by_id(doc_id) or {}
        try:
            deleted = await self.graph_rag.adelete_by_doc_id(doc_id)
        except KeyError:
            return HKUDeletionResult("not_found", doc_id, f"Document {doc_id} not found.", 404)
        return HKUDeletionResult("success", doc_id, f"Document {doc_id} deleted.", 200,
                                 record.get("file_path"), deleted)

    def delete_by_doc_id(self, doc_id: str, delete_llm_cache: bool = False) -> HKUDeletionResult:
        return self._run(self.adelete_by_doc_id(doc_id, delete_llm_cache))

    def delete_by_entity(self, entity_name: str) -> HKUDeletionResult:
        """Delete an entity and its relations; HKU's ``DeletionResult`` (``not_found`` / 404
        when there is none)."""
        try:
            self.graph_rag.delete_entity(entity_name)
        except KeyError:
            return HKUDeletionResult("not_found", entity_name, f"Entity '{entity_name}' not found.", 404)
        return HKUDeletionResult("success", entity_name,
                                 f"Entity '{entity_name}' and its relationships have been deleted.")

    async def adelete_by_entity(self, entity_name: str) -> HKUDeletionResult:
        return self.delete_by_entity(entity_name)

    def delete_by_relation(self, source_entity: str, target_entity: str) -> HKUDeletionResult:
        """Delete a relation; HKU's ``DeletionResult`` (``not_found`` / 404 when there is none)."""
        label = f"{source_entity} -> {target_entity}"
        try:
            self.graph_rag.delete_relation(source_entity, target_entity)
        except KeyError:
            return HKUDeletionResult("not_found", label, f"Relation {label} does not exist.", 404)
        return HKUDeletionResult("success", label, f"Relation {label} has been deleted.")

    async def adelete_by_relation(self, source_entity: str, target_entity: str) -> HKUDeletionResult:
        return self.delete_by_relation(source_entity, target_entity)

    # --------------------------------------------------------- status, export
    async def get_processing_status(self) -> Dict[str, int]:
        """Documents by status: a count for each of HKU's statuses (``pending``, ``parsing``,
        ``analyzing``, ``processing``, ``preprocessed``, ``processed``, ``failed``; the
        ones this package never sets are 0)."""
        return status_counts(self.graph_rag.status().get("documents", {}))

    async def aget_docs_by_track_id(self, track_id: str) -> Dict[str, Any]:
        """``doc_id -> status record`` of the documents inserted under ``track_id``."""
        return dict(self.graph_rag.doc_status.get_by_track_id(track_id))

    async def get_docs_by_status(self, status: DocStatus) -> Dict[str, Any]:
        """``doc_id -> status record`` of the documents in ``status``."""
        value = status.value if isinstance(status, DocStatus) else str(status)
        return dict(self.graph_rag.doc_status.get_by_statuses([value]))

    async def aget_docs_by_ids(self, ids: Union[str, Sequence[str]]) -> Dict[str, Any]:
        wanted = [ids] if isinstance(ids, str) else list(ids)
        found = self.graph_rag.doc_status.get_by_ids(wanted)
        return {doc_id: record for doc_id, record in zip(wanted, found) if record is not None}

    def export_data(self, output_path: str, file_format: str = "csv",
                    include_vector_data: bool = False) -> None:
        """Write the entities and relations to the file ``output_path``: ``csv``, ``md`` and
        ``txt`` in HKU's layout (``# ENTITIES`` / ``# RELATIONS`` sections of ``entity_name,
        source_id, graph_data`` rows), or this package's ``json`` / ``graphml``
        (:meth:`GraphRAG.export`). HKU's ``excel`` is refused by name; vectors are not
        exported."""
        if file_format not in EXPORT_FORMATS:
            raise ValueError(f"export format {file_format!r} is not supported; use one of "
                             f"{', '.join(EXPORT_FORMATS)}")
        if include_vector_data:
            log.warning("export_data: include_vector_data is not supported; vectors are not written")
        if file_format in HKU_EXPORT_FORMATS:
            self.graph_rag.index.refresh()
            write_hku_export(self.graph_rag.graph, output_path, file_format)
        else:
            self.graph_rag.export(output_path, format=file_format)

    async def aexport_data(self, output_path: str, file_format: str = "csv",
                           include_vector_data: bool = False) -> None:
        self.export_data(output_path, file_format, include_vector_data)

    def get_knowledge_graph(self, node_label: str = "*", max_depth: int = 3,
                            max_nodes: Optional[int] = 1000) -> HKUKnowledgeGraph:
        """HKU's ``KnowledgeGraph`` (nodes with ``id``, ``labels``, ``properties``; edges with
        ``id``, ``type``, ``source``, ``target``, ``properties``). HKU's method is async: the
        result can be awaited (``await rag.get_knowledge_graph(...)``) or used as it is."""
        graph = self.graph_rag.get_knowledge_graph(node_label, max_depth=max_depth,
                                                   max_nodes=1000 if max_nodes is None else max_nodes)
        return HKUKnowledgeGraph(graph)

    async def get_graph_labels(self) -> List[str]:
        """Every entity name, sorted (HKU's call; on a large store prefer
        ``graph_rag.graph.search_labels(text)``)."""
        return sorted(self.graph_rag.graph.get_all_labels())

    async def get_entity_info(self, entity_name: str, include_vector_data: bool = False) -> Dict[str, Any]:
        """``{"entity_name", "source_id", "graph_data"}`` of an entity (``graph_data`` None when
        there is none); ``include_vector_data`` adds HKU's ``vector_data``, a copy of the
        stored fields (HKU's is too; vectors are not returned)."""
        node = self.graph_rag.graph.get_node(entity_name)
        info = {"entity_name": entity_name, "source_id": (node or {}).get("source_id"),
                "graph_data": node}
        if include_vector_data:
            info["vector_data"] = dict(node) if node is not None else None
        return info

    async def get_relation_info(self, src_entity: str, tgt_entity: str,
                                include_vector_data: bool = False) -> Dict[str, Any]:
        """``{"src_entity", "tgt_entity", "source_id", "graph_data"}`` of a relation."""
        edge = self.graph_rag.graph.get_edge(src_entity, tgt_entity)
        info = {"src_entity": src_entity, "tgt_entity": tgt_entity,
                "source_id": (edge or {}).get("source_id"), "graph_data": edge}
        if include_vector_data:
            info["vector_data"] = dict(edge) if edge is not None else None
        return info

    def __getattr__(self, name: str) -> Any:
        """Everything else is :class:`GraphRAG`'s (``export``, ``status``, ``index``, ...)."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name in HKU_STORAGE_NAMES:  # HKU's storages, read-only and async
            return hku_storage(self.graph_rag, name)
        try:
            return getattr(self.graph_rag, name)
        except AttributeError:
            raise AttributeError(
                f"LightRAG has no {name!r}: neither an HKU LightRAG name supported here nor a "
                "GraphRAG attribute (docs/compat.md, 'Coming from HKU LightRAG')") from None
