"""The CLI's plumbing without a daemon: discovery, durations, the SSE reader, and the HTTP/1.1 wire."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from workbench.cli.http import ApiError, Http
from workbench.client.config import DEFAULT_URL, parse_duration_ms, resolve
from workbench.client.sse import FrameReader


def test_durations() -> None:
    assert [parse_duration_ms(t) for t in ("500ms", "30s", "10m", "2h", "1d", "1.5", "0s")] == [
        500,
        30_000,
        600_000,
        7_200_000,
        86_400_000,
        1500,
        0,
    ]
    for bad in ("soon", "-1s", "10 minutes", ""):
        with pytest.raises(ValueError, match="bad duration"):
            parse_duration_ms(bad)


def test_url_and_token_discovery(tmp_path: Path) -> None:
    assert resolve(environ={}).base_url == DEFAULT_URL
    env = {"WORKBENCH_URL": "http://10.0.0.1:9/", "WORKBENCH_DATA_DIR": str(tmp_path)}
    found = resolve(environ=env)
    assert (found.base_url, found.token) == ("http://10.0.0.1:9", None)
    (tmp_path / "token").write_text("from-the-file\n")
    assert resolve(environ=env).token == "from-the-file"
    assert resolve(environ={**env, "WORKBENCH_TOKEN": "from-env"}).token == "from-env"
    assert resolve("http://x:1", "from-flag", environ={**env, "WORKBENCH_TOKEN": "e"}).token == "from-flag"
    unix = resolve("unix:///run/wb.sock", environ={})
    assert (unix.socket_path, unix.base_url, unix.display_url) == (
        "/run/wb.sock",
        "http://localhost",
        "unix:///run/wb.sock",
    )
    for bad in ("ftp://x", "unix://relative.sock", "localhost:8787"):
        with pytest.raises(ValueError, match="bad daemon URL"):
            resolve(bad, environ={})


def test_sse_frames() -> None:
    reader = FrameReader()
    lines = ["id: 3", "event: output", 'data: {"a":', "data: 1}", "", ": keepalive", "", "event: gap",
             'data: {"missedBytes": 5}', "", "retry: 10", ""]  # fmt: skip
    frames = [f for f in (reader.line(line) for line in lines) if f is not None]
    assert [(f.id, f.event, f.data) for f in frames] == [
        (3, "output", '{"a":\n1}'),
        (None, "gap", '{"missedBytes": 5}'),
    ]


WAIT_S = 10


@contextmanager
def server(answers: list[list[bytes]]) -> Iterator[tuple[int, list[bytes]]]:
    """A raw HTTP server: connection i answers its requests with answers[i], then closes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    # Bounds: no accept or read waits more than WAIT_S, and a client that hangs up ends the script.
    listener.settimeout(WAIT_S)
    seen: list[bytes] = []

    def receive(conn: socket.socket) -> bytes:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the client hung up before its request was whole")
        return chunk

    def serve() -> None:
        for script in answers:
            conn, _ = listener.accept()
            conn.settimeout(WAIT_S)
            with conn:
                data = b""
                for answer in script:
                    while b"\r\n\r\n" not in data:
                        data += receive(conn)
                    head, _, data = data.partition(b"\r\n\r\n")
                    length = next(
                        (
                            int(h.split(b":")[1])
                            for h in head.split(b"\r\n")
                            if h.lower().startswith(b"content-length")
                        ),
                        0,
                    )
                    while len(data) < length:
                        data += receive(conn)
                    seen.append(head + b"\r\n\r\n" + data[:length])
                    data = data[length:]
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        thread.join(5)
        listener.close()


def ok(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


def test_keep_alive_chunked_bodies_and_a_connection_closed_by_the_daemon() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'7\r\n{"a": [\r\n5\r\n1, 2]\r\n1\r\n}\r\n0\r\n\r\n'
    )
    # Connection 1 answers twice, then the daemon drops it without saying so; connection 2 takes over.
    with server([[ok(b'{"n": 1}'), chunked], [ok(b'{"n": 2}'), b"HTTP/1.1 204 No Content\r\n\r\n"]]) as (
        port,
        seen,
    ):
        http = Http(resolve(f"http://127.0.0.1:{port}", "secret-token", environ={}))
        assert http.json("GET", "/one") == {"n": 1}
        assert http.json("GET", "/two", query={"a": "x y", "skip": None}) == {"a": [1, 2]}
        assert http.json("GET", "/three") == {"n": 2}
        assert http.request("POST", "/four", {"k": 1}, ok=(204,)).body == b""
        http.close()
    assert seen[1].startswith(b"GET /two?a=x+y HTTP/1.1\r\n")
    assert b"Authorization: Bearer secret-token\r\n" in seen[0]
    assert seen[3].endswith(b'\r\n\r\n{"k": 1}')


def test_a_start_is_not_resent_on_a_connection_that_broke() -> None:
    with server([[ok(b"{}")]]) as (port, _):
        http = Http(resolve(f"http://127.0.0.1:{port}", environ={}))
        http.json("GET", "/first")
        with pytest.raises(ApiError) as broken:
            http.request("POST", "/v1/executions/workbench_bash", {"command": "x"}, resend=False)
        http.close()
    assert broken.value.code == "unavailable"


def test_errors_keep_the_api_code() -> None:
    body = b'{"error": {"code": "conflict", "message": "still running"}}'
    answer = b"HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    with server([[answer, b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 4\r\n\r\noops"]]) as (port, _):
        http = Http(resolve(f"http://127.0.0.1:{port}", environ={}))
        with pytest.raises(ApiError) as conflict:
            http.request("DELETE", "/x")
        with pytest.raises(ApiError) as other:
            http.request("GET", "/y")
        http.close()
    assert (conflict.value.code, conflict.value.message, conflict.value.status) == (
        "conflict",
        "still running",
        409,
    )
    assert other.value.code == "unavailable" and "is not a Workbench daemon" in other.value.message
    assert "HTTP 502" in other.value.message and "oops" not in other.value.message
