"""Token counts of the entity/relation context lines: exact, remembered per line text (an
edited description is a new line), and never written into the graph or shown to users."""

import json

from test_graph_rag_system import insert_all, make_rag

from lightrag.components.graph_rag.context import truncate_by_tokens
from lightrag.components.graph_rag.kg_lines import (
    LEGACY_FIELDS,
    dump_line,
    entity_line,
    line_tokens,
    public_fields,
    relation_line,
)
from lightrag.core.tokenizer import count_tokens


def test_counts_are_exact_and_follow_edits():
    node = {"entity_name": "Saturn", "entity_type": "location",
            "description": 'A "ringed" planet.<SEP>Sixth from the Sun.'}
    line = dump_line(entity_line(node))
    rel = dump_line(relation_line({"src_id": "Saturn", "tgt_id": "Titan",
                                   "description": "Titan orbits Saturn."}))
    assert line_tokens([node, {}], [line, rel]) == [count_tokens(line), count_tokens(rel)]
    assert line_tokens([node], [line]) == [count_tokens(line)]  # remembered: same answer
    edited = dump_line(entity_line({**node, "description": "A gas giant with rings of ice " * 5}))
    assert line_tokens([node], [edited]) == [count_tokens(edited)]


def test_truncation_is_exact():
    items = [{"entity_name": f"E{i}", "entity_type": "x", "description": "word " * (i % 7 + 1)}
             for i in range(100)]
    kept, lines, used = truncate_by_tokens(items, entity_line, 300)
    assert used == sum(count_tokens(line) + 1 for line in lines) <= 300
    assert len(kept) < len(items)
    next_line = dump_line(entity_line(items[len(kept)]))
    assert used + count_tokens(next_line) + 1 > 300


def test_graph_holds_only_user_data(tmp_path):
    rag = make_rag(tmp_path)
    insert_all(rag)
    nodes = rag.graph.get_all_nodes()
    assert nodes and not any(f in n for n in nodes for f in LEGACY_FIELDS)
    result = rag.query("Saturn Titan Voyager", mode="hybrid", only_need_context=True)
    shown = json.dumps(result.raw_data)
    assert not any(f in shown for f in LEGACY_FIELDS)
    assert public_fields({"a": 1, LEGACY_FIELDS[0]: 3}) == {"a": 1}
