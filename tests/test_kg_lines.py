"""Token counts of the entity/relation context lines: recorded by the merger, used by the
budgets only while they match the line, and never shown to users."""

import json
import re

from test_graph_rag_system import insert_all, make_rag

from lightrag.components.graph_rag.context import truncate_by_tokens
from lightrag.components.graph_rag.kg_lines import (
    LINE_CRC,
    LINE_TOKENS,
    annotate_entity,
    annotate_relation,
    dump_line,
    entity_line,
    line_tokens,
    relation_line,
)
from lightrag.core.tokenizer import count_tokens


def test_annotations_equal_the_exact_count_of_the_line():
    node = annotate_entity("Saturn", {"entity_type": "location",
                                      "description": 'A "ringed" planet.<SEP>Sixth from the Sun.'})
    line = dump_line(entity_line({**node, "entity_name": "Saturn"}))
    assert node[LINE_TOKENS] == count_tokens(line)
    edge = annotate_relation("Titan", "Saturn", {"description": "Titan orbits Saturn."})
    rel = dump_line(relation_line({**edge, "src_id": "Saturn", "tgt_id": "Titan"}))
    assert edge[LINE_TOKENS] == count_tokens(rel)
    assert line_tokens([node, edge], [line, rel]) == [count_tokens(line), count_tokens(rel)]


def test_stale_annotation_is_recounted():
    node = annotate_entity("Saturn", {"entity_type": "location", "description": "A planet."})
    edited = {**node, "entity_name": "Saturn", "description": "A gas giant with rings of ice " * 5}
    line = dump_line(entity_line(edited))
    assert line_tokens([edited], [line]) == [count_tokens(line)]
    lying = {**node, "entity_name": "Saturn", LINE_TOKENS: 1}
    line = dump_line(entity_line(lying))
    assert line_tokens([lying], [line]) == [1]  # the CRC matches: the stored count is trusted
    assert line_tokens([{**lying, LINE_CRC: 0}], [line]) == [count_tokens(line)]


def test_truncation_is_exact_with_and_without_annotations():
    items = [{"entity_name": f"E{i}", "entity_type": "x", "description": "word " * (i % 7 + 1)}
             for i in range(100)]
    annotated = [{**annotate_entity(e["entity_name"], e), "entity_name": e["entity_name"]}
                 for e in items]
    for candidates in (items, annotated):
        kept, lines, used = truncate_by_tokens(candidates, entity_line, 300)
        assert used == sum(count_tokens(line) + 1 for line in lines) <= 300
        assert len(kept) < len(items)
        next_line = dump_line(entity_line(candidates[len(kept)]))
        assert used + count_tokens(next_line) + 1 > 300
    assert truncate_by_tokens(items, entity_line, 300)[1] == truncate_by_tokens(annotated, entity_line, 300)[1]


def test_merger_records_counts_and_results_hide_them(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    nodes = rag.graph.get_all_nodes()
    assert nodes and all(isinstance(n.get(LINE_TOKENS), int) for n in nodes)
    some = nodes[0]
    name = some.get("entity_id") or some.get("id")
    line = dump_line(entity_line({**rag.graph.get_node(name), "entity_name": name}))
    assert rag.graph.get_node(name)[LINE_TOKENS] == count_tokens(line)
    result = rag.query("Saturn Titan Voyager", mode="hybrid", only_need_context=True)
    shown = json.dumps(result.raw_data)
    assert result.raw_data["entities"] and not re.search(LINE_TOKENS + "|" + LINE_CRC, shown)
