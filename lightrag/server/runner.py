"""Run the app with uvicorn in a background thread on a loopback port: for tests, benchmarks
and notebooks (production uses ``lightrag serve``).

Example:
    >>> with BackgroundServer(create_app(rag)) as server:  # doctest: +SKIP
    ...     httpx.get(server.url + "/health").json()["status"]
    'ok'
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Optional


class BackgroundServer:
    """A real uvicorn server in a thread; ``port=0`` picks a free port (see :attr:`url`).

    Args:
        app: the ASGI app.
        host / port: where to listen (default ``127.0.0.1``, a free port).
        **config: more ``uvicorn.Config`` arguments (e.g. ``timeout_graceful_shutdown``).
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, **config: Any) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.config = config
        self.server: Any = None
        self.thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 15.0) -> BackgroundServer:
        """Bind, start serving and wait until the server accepts requests."""
        import uvicorn

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        settings = {"log_config": None, "access_log": False, "lifespan": "on", **self.config}
        self.server = uvicorn.Server(uvicorn.Config(self.app, **settings))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       name=f"uvicorn-{self.port}", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop(timeout=1)
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful shutdown: stop accepting, finish open requests, run the app's shutdown."""
        if self.server is not None:
            self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout)
            if self.thread.is_alive():
                raise RuntimeError(f"the server on {self.url} did not stop within {timeout} s")

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
