"""How many entity and relation lines a query mode keeps as candidates (the lines the context
builder chooses from, and the items whose chunks are gathered): a query naming a hub must not
carry all of its relations through chunk gathering, and an explicit budget or a researcher's
setting widens the pool."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.graph_rag import QueryParam
from lightrag.components.graph_rag.kg_lines import dump_line, relation_line
from lightrag.components.graph_rag.query_modes import CANDIDATE_LINE_TOKENS
from lightrag.core.tokenizer import count_tokens

HUBS = ["North", "South", "East", "West"]
SPOKES = 80  # per hub: under the 100 edges a local search reads of one entity
FILLER = ("the two stations share a maintenance schedule, a supply route across the northern "
          "valley and a signal relay that was rebuilt after the winter storms of the last decade")
QUESTION = "Who is linked to " + ", ".join(f"Hub Station {h}" for h in HUBS) + "?"


@pytest.fixture(scope="module")
def rag(tmp_path_factory):
    rag = fake_graph_rag(tmp_path_factory.mktemp("hubs"), chunk_tokens=200, chunk_overlap=0,
                         embedding_dim=64, max_gleaning=0)
    spokes = [(h, i) for h in HUBS for i in range(SPOKES)]
    rag.insert_custom_kg({
        "chunks": [{"content": f"Hub Station {h} links to Spoke {h}{i}: {FILLER}.",
                    "source_id": f"c-{h}-{i}", "file_path": "network.md"} for h, i in spokes],
        "entities": [{"entity_name": f"Hub Station {h}", "entity_type": "place",
                      "description": f"The {h} hub.", "source_id": f"c-{h}-0"} for h in HUBS]
        + [{"entity_name": f"Spoke {h}{i}", "entity_type": "place", "description": f"Stop {h}{i}.",
            "source_id": f"c-{h}-{i}"} for h, i in spokes],
        "relationships": [{"src_id": f"Hub Station {h}", "tgt_id": f"Spoke {h}{i}", "keywords": "route",
                           "description": f"Hub Station {h} and Spoke {h}{i}: {FILLER}.",
                           "weight": 1.0 + (SPOKES - i) / SPOKES, "source_id": f"c-{h}-{i}"}
                          for h, i in spokes],
    })
    return rag


@pytest.fixture
def gathered(rag, monkeypatch):
    """The relations each local query gathered chunks for."""
    mode = rag.engine.mode("local")
    seen: List[List[Dict[str, Any]]] = []
    original = mode.rank_chunks

    def spy(stores, found, entities, relations, param, vectors):
        seen.append(list(relations))
        return original(stores, found, entities, relations, param, vectors)

    monkeypatch.setattr(mode, "rank_chunks", spy)
    return seen


def line_tokens(relations: List[Dict[str, Any]]) -> int:
    return sum(count_tokens(dump_line(relation_line(r))) + 1 for r in relations)


def test_the_lines_of_a_hub_are_bounded_by_default(rag, gathered):
    context = rag.query(QUESTION, QueryParam(mode="local", only_need_context=True))
    assert "Hub Station North" in str(context)
    relations = gathered[-1]
    assert line_tokens(relations) <= CANDIDATE_LINE_TOKENS
    assert 100 < len(relations) < len(HUBS) * SPOKES  # many candidates, not all of the hubs'


def test_an_explicit_relation_budget_widens_the_pool(rag, gathered):
    param = QueryParam(mode="local", only_need_context=True, max_total_tokens=60_000,
                       max_relation_tokens=25_000)
    rag.query(QUESTION, param)
    assert line_tokens(gathered[-1]) > CANDIDATE_LINE_TOKENS


def test_a_mode_can_be_given_another_pool(rag, gathered, monkeypatch):
    monkeypatch.setattr(rag.engine.mode("local"), "candidate_line_tokens", 60_000)
    rag.query(QUESTION, QueryParam(mode="local", only_need_context=True, max_total_tokens=60_000))
    assert len(gathered[-1]) == len(HUBS) * SPOKES
