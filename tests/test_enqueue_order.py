"""The documents of one insert are taken in one order whatever the clock: they share one
``created_at``. A call that straddled a second was taken in another order, and the entities'
descriptions were joined in another order (tests/test_group_commit.py failed on a busy machine)."""

from __future__ import annotations

import datetime as real_datetime
import itertools

import pytest
from graph_fakes import fake_graph_rag

from lightrag.components.storage import doc_status

DOCS = [f"Person{i} met Person{i + 1} in Town{i % 3}." for i in range(12)]
IDS = [f"doc-{i}" for i in range(12)]


@pytest.mark.parametrize("clock", ["still", "ticking"])
def test_one_calls_documents_are_taken_in_one_order(tmp_path, monkeypatch, clock) -> None:
    if clock == "ticking":  # every reading of the clock a second later
        seconds = itertools.count()
        start = real_datetime.datetime(2026, 1, 1, tzinfo=real_datetime.timezone.utc)

        class Ticking(real_datetime.datetime):
            @classmethod
            def now(cls, tz=None):
                return start + real_datetime.timedelta(seconds=next(seconds))

        monkeypatch.setattr(doc_status, "datetime", Ticking)
    rag = fake_graph_rag(tmp_path / clock)
    rag.index.enqueue(DOCS, IDS, ["unknown_source"] * len(IDS), "track")
    assert rag.unfinished_document_ids() == sorted(IDS)
    assert len({rag.index.doc_status.get_by_id(d)["created_at"] for d in IDS}) == 1
