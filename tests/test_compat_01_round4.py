"""0.1 behaviour found by a fourth round of 0.1-style programs run on both packages.

Each test is 0.1 code whose printed or caught result differed here (docs/compat.md, "fourth round").
"""

from __future__ import annotations

import pytest

from lightrag.components.retriever import FAISSRetriever
from lightrag.core import Prompt
from lightrag.core.default_prompt_template import DEFAULT_LIGHTRAG_SYSTEM_PROMPT
from lightrag.utils.config import ConfigError, new_component, new_components_from_config


def test_faiss_retriever_prints_01s_settings():
    retriever = FAISSRetriever(top_k=2, documents=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    text = repr(retriever)
    # 0.1: "top_k=2, metric=prob, dimensions=3, total_documents=2" (was metric='prob', backend='faiss')
    assert "top_k=2, metric=prob, dimensions=3, total_documents=2" in text
    assert "metric='prob'" not in text
    assert "top_k=1, metric=cosine" in repr(FAISSRetriever(top_k=1, metric="cosine"))


def test_default_template_is_01s_text_with_its_comments():
    for comment in ("{# task desc #}", "{# output format #}", "{# tools #}", "{# example #}",
                    "{# chat history #}", "{#contex#}", "{# steps #}"):
        assert comment in DEFAULT_LIGHTRAG_SYSTEM_PROMPT
    rendered = Prompt(template=DEFAULT_LIGHTRAG_SYSTEM_PROMPT)(input_str="hi", context_str="C")
    assert rendered == ("<SYS>\nYou are a helpful assistant.\n<CONTEXT>\nC\n</CONTEXT>\n</SYS>\n"
                        "<User>\nhi\n</User>\nYou:\n")  # the comments render as nothing, as in 0.1


def test_config_errors_are_caught_by_01s_exception_types():
    with pytest.raises(AssertionError):  # 0.1: assert "component_name" in config
        new_component({"component_config": {}})
    with pytest.raises(TypeError):  # 0.1: the unregistered name's None class was called
        new_components_from_config({"x": {"component_name": "NoSuchComponent"}})
    with pytest.raises(ConfigError, match="NoSuchComponent"):  # still a ConfigError / ValueError
        new_component({"component_name": "NoSuchComponent"})
    with pytest.raises(ValueError):
        new_component({"component_config": {}})
