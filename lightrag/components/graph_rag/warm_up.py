"""Load the models a first query needs, side by side, before it runs.

A fresh process (``lightrag query``, a server worker) pays for its models at the first query:
the local embedder (torch and sentence-transformers) to embed the question, spaCy for the
heuristic keywords. Loaded one after the other inside the query, their times add up; loaded in
two threads while nothing else runs, the file reads and native initialisation of one overlap
the other's. Only local models are touched: nothing here calls a paid API.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, List

log = logging.getLogger(__name__)


def _local_embedder_loader(embedder: Any) -> List[Callable[[], Any]]:
    from lightrag.components.model_client.local_embedder_client import LocalEmbedderClient

    client = getattr(embedder, "model_client", None)
    if isinstance(client, LocalEmbedderClient) and client.sync_client is None:
        return [lambda: client.dimensions]  # reading it loads the model
    return []


def warm_up(embedder: Any, keyword_extractor: Any) -> float:
    """Load the local embedder's model and the keyword extractor's pipeline in parallel;
    returns the seconds it took (errors are logged: the query reports them itself)."""
    tasks = _local_embedder_loader(embedder)
    if callable(getattr(keyword_extractor, "warm_up", None)):
        tasks.append(keyword_extractor.warm_up)
    started = time.perf_counter()

    def run(task: Callable[[], Any]) -> None:
        try:
            task()
        except Exception as e:  # noqa: BLE001 - the query raises it again where it matters
            log.info("warm-up of %s failed: %s", task, e)

    threads = [threading.Thread(target=run, args=(t,), daemon=True) for t in tasks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started
