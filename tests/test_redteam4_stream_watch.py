"""Red team 4: a sync stream read by the Generator's reading thread (a timeout set) is read at
most a bounded number of pieces ahead of its reader: a paused reader (a slow /query client)
made the thread buffer an endless reply in memory (about 500 MB in 3 s)."""

import itertools
import threading
import time

from lightrag.core import stream_watch
from lightrag.core.stream_watch import watch_stream


def test_a_paused_reader_bounds_what_the_thread_reads_ahead():
    produced = itertools.count()
    progress = {"n": 0}

    def endless():
        for i in produced:
            progress["n"] = i
            yield "x"

    pieces = watch_stream(endless(), on_end=lambda: None, limit=5)
    assert next(pieces) == "x"
    time.sleep(0.5)  # the reader pauses
    assert progress["n"] <= stream_watch.MAX_AHEAD + 2
    pieces.close()
    deadline = time.monotonic() + 5
    while any(t.name == "lightrag-stream-read" and t.is_alive() for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the reading thread outlived its closed reader"
        time.sleep(0.05)


def test_a_long_stream_still_arrives_whole_and_in_order():
    n = stream_watch.MAX_AHEAD * 3 + 7
    ended = []
    pieces = list(watch_stream((str(i) for i in range(n)), on_end=lambda: ended.append(1), limit=5))
    assert pieces == [str(i) for i in range(n)] and ended == [1]


def test_an_error_after_a_full_buffer_still_reaches_the_reader():
    def failing():
        yield from ("a" for _ in range(stream_watch.MAX_AHEAD * 2))
        raise KeyError("boom")

    got = []
    try:
        for piece in watch_stream(failing(), on_end=lambda: None, limit=5):
            got.append(piece)
    except KeyError:
        pass
    else:
        raise AssertionError("the source's error was lost")
    assert len(got) == stream_watch.MAX_AHEAD * 2
