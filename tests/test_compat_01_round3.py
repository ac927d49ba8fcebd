"""0.1 behaviour found by a third round of 0.1-style programs run on both packages.

Each test is 0.1 code whose result differed here (see docs/compat.md, "third round").
"""

from __future__ import annotations

import logging
import re

import pytest

from lightrag.components.agent import ReActAgent
from lightrag.components.model_client import ScriptedClient
from lightrag.components.output_parsers.outputs import BooleanOutputParser
from lightrag.components.retriever import BM25Retriever
from lightrag.core import Parameter
from lightrag.core.base_data_class import DynamicDataClassFactory
from lightrag.core.db import LocalDB
from lightrag.core.tool_manager import ToolManager
from lightrag.core.types import Function, FunctionExpression, StepOutput
from lightrag.optim.llm_optimizer import LLMOptimizer
from lightrag.optim.sampler import RandomSampler
from lightrag.utils.logger import get_logger

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A fox is a small animal.",
    "Dogs are loyal animals.",
    "Machine learning builds models from data.",
    "The dog sleeps; the fox runs.",
]


def test_bm25_has_01s_index_statistics():
    bm = BM25Retriever(top_k=3, documents=CORPUS)
    # 0.1's numbers for this corpus (its tokenizer splits "jumps" into "j" + "umps")
    assert bm.total_documents == 5 and bm.doc_len == [11, 7, 6, 8, 9]
    assert bm.avgdl == pytest.approx(8.2)
    assert {k: bm.nd[k] for k in ("fox", "dog", "the", ".")} == {"fox": 3, "dog": 2, "the": 2, ".": 5}
    assert bm.t2d[0] == {"the": 2, "quick": 1, "brown": 1, "fox": 1, "j": 1, "umps": 1,
                         "over": 1, "lazy": 1, "dog": 1, ".": 1}
    assert bm.idf["fox"] == pytest.approx(0.2124, abs=1e-4)
    assert bm.idf["machine"] == pytest.approx(1.0986, abs=1e-4)
    assert bm.average_idf == pytest.approx(0.8497, abs=1e-4)
    assert bm.index_keys == ["nd", "t2d", "idf", "doc_len", "avgdl", "total_documents",
                             "top_k", "k1", "b", "epsilon", "indexed", "use_tokenizer"]
    bm.reset_index()
    assert (bm.nd, bm.t2d, bm.idf, bm.doc_len, bm.avgdl, bm.indexed) == ({}, [], {}, [], 0, False)


def test_bm25_statistics_without_tokenizer():
    bm = BM25Retriever(top_k=2, documents=CORPUS, use_tokenizer=False)
    assert bm.doc_len == [9, 6, 4, 6, 6]
    out = bm("fox")[0]
    assert out.doc_indices == [1, 4] and out.doc_scores[0] == pytest.approx(0.2564, abs=1e-4)


def add(a: int, b: int = 0) -> int:
    return a + b


def test_sandbox_accepts_an_action_that_assigns_output():
    tm = ToolManager(tools=[add])
    result = tm.execute_func_expr_via_sandbox(FunctionExpression(action="output = add(2, 5)"))
    assert result.error is None and result.output.output == 7
    assert result.name == "output = add(2, 5)"


def test_step_output_with_action_type_annotates_action():
    cls = StepOutput.with_action_type(FunctionExpression)
    assert cls.__annotations__["action"] is FunctionExpression


def test_dynamic_dataclass_field_without_desc():
    cls = DynamicDataClassFactory.create_from_dict({"name": {"value": "John"}})
    assert cls.to_schema()["properties"]["name"]["desc"] == "No description provided"


def test_function_field_descriptions_are_01s():
    props = Function.to_schema()["properties"]
    assert props["args"]["desc"] == "The positional arguments of the function"
    assert props["kwargs"]["desc"] == "The keyword arguments of the function"
    action = FunctionExpression.to_schema()["properties"]["action"]["desc"]
    assert action.startswith(
        'FuncName(<kwargs>) Valid function call expression. Example: "FuncName(a=1, b=2)"'
    )


def test_boolean_output_parser_instructions():
    instructions = BooleanOutputParser().format_instructions()
    assert instructions == "The output should be a boolean value. True or False."


def test_parameter_type_error_message():
    with pytest.raises(TypeError, match=r"^Parameter expects int, got str$"):
        Parameter(data=1).update_value("s")


def _upper(items):
    return [s.upper() for s in items]


def test_localdb_unknown_key_is_a_key_error():
    db = LocalDB(items=["a"])
    with pytest.raises(KeyError):
        db.get_transformed_data("nope")
    with pytest.raises(KeyError):
        db.transform(key="nope")
    with pytest.raises(ValueError, match="No transformed data under 'nope'"):
        db.get_transformed_data("nope")


def test_react_agent_examples_end_with_finish():
    example = FunctionExpression.from_function(add, thought="add numbers", a=1, b=2)
    agent = ReActAgent(tools=[add], examples=[example], model_client=ScriptedClient([]))
    assert [e.action for e in agent._examples] == [
        "add(a=1, b=2)",
        "finish(answer=\"final answer: 'answer'\")",
    ]


def test_llm_optimizer_raises_temperature_to_int_one():
    opt = LLMOptimizer(Parameter(data="x"), ScriptedClient([]), {"model": "m", "temperature": 0.2})
    assert opt.generator.model_kwargs["temperature"] == 1
    assert isinstance(opt.generator.model_kwargs["temperature"], int)


def test_sampler_too_many_shots_is_an_assertion_error():
    sampler = RandomSampler(list(range(5)))
    current = sampler(2)
    with pytest.raises(AssertionError):
        sampler.random_replace(3, current)
    with pytest.raises(ValueError):
        sampler.random_replace(3, current)


def test_log_file_lines_have_01s_format(tmp_path):
    logger = get_logger(name="round3", save_dir=str(tmp_path), filename="r.log", enable_console=False)
    try:
        logger.info("hello")
        for handler in logger.handlers:
            handler.flush()
        line = (tmp_path / "r.log").read_text().splitlines()[0]
    finally:
        for handler in list(logger.handlers):
            handler.close()
            logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d - test_compat_01_round3 - INFO - "
        r"\[test_compat_01_round3\.py:\d+:test_log_file_lines_have_01s_format\] - hello",
        line,
    ), line
