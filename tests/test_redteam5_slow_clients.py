"""Red team 5: slow clients against a real ``lightrag serve`` process.

uvicorn gives a request's headers all the time in the world: 1,100 connections that each sent
``GET /health HTTP/1.1`` and one header, under a limit of 1,024 open files, left the server
answering nobody for as long as they stayed. ``lightrag serve`` now closes a connection whose
request headers take over ``--header-timeout`` seconds (after it opened, or after the previous
answer on a kept-alive connection), and raises its open-file limit to the hard one.
"""

from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from test_server_intake import free_port, kill, start_server  # noqa: E402


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (what it sends meanwhile is read)."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if sock.recv(65536) == b"":
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return False


@pytest.fixture
def server(tmp_path):
    port = free_port()
    proc, client = start_server(tmp_path, port, tmp_path / "store", "--header-timeout", "1",
                                "--body-timeout", "1")
    yield port, client
    kill(proc)


def test_a_request_whose_headers_never_end_is_closed(server):
    port, client = server
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    silent = socket.create_connection(("127.0.0.1", port))  # connects and sends nothing
    assert closed_within(slow, 5), "a request with unfinished headers held its connection"
    assert closed_within(silent, 5)
    assert client.get("/health").status_code == 200


def test_a_kept_alive_connection_gets_the_same_limit_for_its_next_request(server):
    port, _ = server
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    sock.settimeout(5)
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # the next request, never finished
    assert closed_within(sock, 5)


def test_a_slow_body_after_timely_headers_is_answered(server):
    """An upload that keeps coming is not cut, however long it takes in all: the body's limit is
    on its pauses."""
    port, _ = server
    body = b'{"texts": "Alice met Bob in Paris.", "ids": "slow"}'
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    for start in range(0, len(body), 10):
        sock.sendall(body[start:start + 10])
        time.sleep(0.4)  # ~2 s in all, twice the header timeout
    sock.settimeout(10)
    assert sock.recv(65536).startswith(b"HTTP/1.1 202")


def test_a_body_that_stalls_gets_408_and_its_connection_closed(server):
    """Red team 5: a body that stopped after timely headers held its connection for ever."""
    port, client = server
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n" + b'{"texts": "Alice')
    sock.settimeout(5)
    assert sock.recv(65536).startswith(b"HTTP/1.1 408")
    assert closed_within(sock, 5)
    assert client.get("/health").status_code == 200


def _protocol_base(implementation: str) -> type:
    import importlib

    pytest.importorskip(implementation)
    module = importlib.import_module(f"uvicorn.protocols.http.{implementation}_impl")
    return getattr(module, "H11Protocol" if implementation == "h11" else "HttpToolsProtocol")


def _reads_body_after(seconds: float):
    """An ASGI app that waits ``seconds``, reads the whole body and answers its size."""
    import asyncio

    async def app(scope, receive, send) -> None:
        await asyncio.sleep(seconds)
        size, more = 0, True
        while more:
            message = await receive()
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        answer = str(size).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(answer)).encode())]})
        await send({"type": "http.response.body", "body": answer})

    return app


@pytest.mark.parametrize("implementation", ["h11", "httptools"])
def test_a_body_the_server_stopped_reading_is_not_cut(implementation):
    """A body over uvicorn's buffer, sent at once to an app that reads it only 2 s later: the
    server paused reading, so the client's silence is not a stall."""
    from lightrag.server.runner import BackgroundServer
    from lightrag.server.slow_clients import header_timeout_protocol

    body = b"x" * 400_000
    protocol = header_timeout_protocol(5, _protocol_base(implementation), body_seconds=0.5)
    with BackgroundServer(_reads_body_after(2.0), http=protocol,
                          lifespan="off") as server:
        port = int(server.url.rsplit(":", 1)[1])
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        sock.settimeout(10)
        answer = b""
        while not answer.endswith(b"400000"):
            more = sock.recv(65536)
            if not more:
                break
            answer += more
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert answer.endswith(b"400000"), answer


@pytest.mark.parametrize("implementation", ["h11", "httptools"])
def test_the_body_timeout_works_with_either_http_implementation(implementation):
    from lightrag.server.runner import BackgroundServer
    from lightrag.server.slow_clients import header_timeout_protocol

    protocol = header_timeout_protocol(5, _protocol_base(implementation), body_seconds=0.5)
    with BackgroundServer(_reads_body_after(0.0), http=protocol,
                          lifespan="off") as server:
        port = int(server.url.rsplit(":", 1)[1])
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 408")
        assert closed_within(sock, 5)


@pytest.mark.parametrize("implementation", ["h11", "httptools"])
def test_the_header_timeout_works_with_either_http_implementation(implementation):
    """``lightrag serve`` wraps what ``http="auto"`` picks: httptools when installed, else h11."""
    from lightrag.server.runner import BackgroundServer
    from lightrag.server.slow_clients import header_timeout_protocol

    base = _protocol_base(implementation)

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    with BackgroundServer(app, http=header_timeout_protocol(0.5, base), lifespan="off") as server:
        port = int(server.url.rsplit(":", 1)[1])
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET / HTTP/1.1\r\n")
        assert closed_within(sock, 5)
