"""The change log: another process's writer's changes reach a reader by key, and a reader left
behind by pruning reloads everything."""

from lightrag.components.storage import change_log
from lightrag.components.storage.sql_db import SQLiteDatabase


def test_a_reader_gets_changed_keys_then_a_full_reload_once_the_log_is_pruned(tmp_path, monkeypatch):
    writer, reader = SQLiteDatabase(tmp_path / "s.db"), SQLiteDatabase(tmp_path / "s.db")
    seen = []
    reader.register("kv", seen.append)
    with writer.transaction():
        writer.log_changes("kv", ["a", "b"])
    assert reader.refresh() and seen == [{"a", "b"}]
    assert not reader.refresh()

    monkeypatch.setattr(change_log, "CHANGE_LOG_KEEP", 4)
    for i in range(8):  # past KEEP + KEEP // 4 rows since the last pruning: the old rows go
        with writer.transaction():
            writer.log_changes("kv", [f"k{i}"])
    assert int(writer.meta("changes_pruned_upto")) > 2  # beyond what the reader has seen
    assert reader.refresh() and seen[-1] is None  # reload everything
    with writer.transaction():
        writer.log_changes("kv", ["z"])
    assert reader.refresh() and seen[-1] == {"z"}
    writer.close()
    reader.close()
