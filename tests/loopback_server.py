"""A threaded HTTP server on 127.0.0.1 (a free port) for the fake APIs of the tests.

Subclass it, give ``_handler()`` (the ``BaseHTTPRequestHandler`` class to serve with; it may close
over ``self``), then ``with FakeThing(...) as server: ... server.url ...``.
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackServer:
    #: how often (seconds) serve_forever checks for shutdown: small makes ``with`` exits quick
    poll_interval = 0.5

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        args=(self.poll_interval,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type:
        raise NotImplementedError
