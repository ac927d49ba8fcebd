"""``lightrag serve`` loads the first query's models when it starts, in the background: /health
answers at once, and the load is done before any query asks for it."""

from __future__ import annotations

import threading
import time

from server_fixtures import DOCS, make_rag, serve  # noqa: F401 (serve is a fixture)

from lightrag.components.graph_rag import HeuristicKeywordExtractor


class SlowLoadingKeywords(HeuristicKeywordExtractor):
    """Heuristic keywords whose "model" takes ``seconds`` to load (the spaCy pipeline's part)."""

    def __init__(self, seconds: float = 0.6) -> None:
        super().__init__(use_spacy=False)
        self.seconds = seconds
        self.loaded = threading.Event()
        self.loads = 0

    _to_dict_exclude = ("loaded", "loads")

    def warm_up(self) -> None:
        self.loads += 1
        time.sleep(self.seconds)
        self.loaded.set()


def test_the_server_loads_the_models_at_start_without_holding_up_health(tmp_path, serve):  # noqa: F811
    rag = make_rag(tmp_path)
    keywords = SlowLoadingKeywords()
    rag.engine.keyword_extractor = keywords
    rag.insert(list(DOCS.values()), ids=list(DOCS))
    started = time.perf_counter()
    _, client, _ = serve(rag)
    assert client.get("/health").json()["status"] == "ok"
    assert not keywords.loaded.is_set() or time.perf_counter() - started >= keywords.seconds
    assert keywords.loaded.wait(10), "the models were not loaded at start"
    answer = client.post("/query", json={"query": "What did Voyager 1 photograph?", "mode": "local",
                                         "only_need_context": True})
    assert answer.status_code == 200 and "Titan" in answer.text
    assert keywords.loads == 1
