"""Query-side context rules: keywords searched one by one and merged by turns, graph lines that
only repeat the chunks lose their description, graph lines take their tokens from the chunks."""

import numpy as np

from lightrag.components.graph_rag.context import (
    GraphStores,
    adds_information,
    entity_hits,
    select_lines,
    word_trigrams,
)
from lightrag.components.graph_rag.kg_lines import entity_line


class Entities:
    """Entity vectors on axes; a keyword vector matches the entities of its axis."""

    def __init__(self):
        self.names = ["Rome", "Roman Empire", "Romulus", "Paris", "Paris Agreement"]
        self.matrix = np.array([[1, 0], [0.95, 0.05], [0.9, 0.1], [0, 1], [0.05, 0.9]], dtype=np.float32)
        self.matrix /= np.linalg.norm(self.matrix, axis=1, keepdims=True)

    def _hits(self, row, top_k):
        scores = self.matrix @ row
        return [{"entity_name": self.names[i], "score": float(scores[i])}
                for i in np.argsort(-scores)[:top_k]]

    def query(self, vector, top_k):
        return self._hits(np.asarray(vector), top_k)

    def query_batch(self, matrix, top_k):
        return [self._hits(row, top_k) for row in np.asarray(matrix)]


def test_each_keyword_keeps_a_match_within_a_small_top_k():
    stores = GraphStores(graph=None, entities_vdb=Entities(), relations_vdb=None, chunks_vdb=None,
                         text_chunks=None)
    rome, paris = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    joined = (rome + paris) / np.linalg.norm(rome + paris)
    # one joined vector: a small top_k can be filled by one keyword's neighbours
    assert len(entity_hits(stores, joined, 2)) == 2
    hits = entity_hits(stores, np.stack([rome, paris]), 2)
    assert [h["entity_name"] for h in hits] == ["Rome", "Paris"]
    hits = entity_hits(stores, np.stack([rome, paris]), 4)
    assert [h["entity_name"] for h in hits] == ["Rome", "Paris", "Roman Empire", "Paris Agreement"]


def test_descriptions_that_repeat_the_chunks_are_dropped_from_lines():
    chunks = word_trigrams("Voyager 1 photographed Titan in 1980. NASA launched it in 1977.")
    assert not adds_information("Voyager 1 photographed Titan in 1980.", chunks)
    assert not adds_information("NASA launched it in 1977.<SEP>Voyager 1 photographed Titan in 1980.", chunks)
    assert adds_information("A space probe that left the solar system in 2012.", chunks)
    items = [{"entity_name": "Voyager 1", "entity_type": "artifact",
              "description": "Voyager 1 photographed Titan in 1980."},
             {"entity_name": "Titan", "entity_type": "location",
              "description": "The largest moon of Saturn, with a thick atmosphere."}]
    kept, lines, used = select_lines(items, entity_line, 1000, chunks)
    assert len(kept) == 2
    assert "description" not in lines[0] and "thick atmosphere" in lines[1]
    full_kept, full_lines, full_used = select_lines(items, entity_line, 1000)
    assert "photographed" in full_lines[0] and used < full_used
    assert select_lines(items, entity_line, 0)[0] == []
