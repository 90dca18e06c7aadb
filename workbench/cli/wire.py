"""A small HTTP/1.1 client on a plain socket, for the CLI: keep-alive, chunked bodies, line reads.

`http.client` pulls in the `email` package and `ssl` and costs more to import than the whole
rest of a `workbench run`; the daemon speaks plain HTTP/1.1 on loopback or a Unix socket, which
needs only this. (An `https://` URL still works: `ssl` is then imported on demand.)
"""

from __future__ import annotations

import io
import socket

#: The longest status line, header line or chunk-size line accepted.
_LINE_MAX = 64 * 1024


class ProtocolError(OSError):
    """The daemon's answer is not HTTP/1.1 as expected, or the connection closed mid-answer."""


class Response:
    """A response whose body is read as it arrives (`read`, `readline`), then `close`d or reused."""

    def __init__(self, conn: Connection, status: int, headers: dict[str, str]) -> None:
        self._conn = conn
        self._fp = conn.fp
        self.status = status
        self.headers = headers
        self.keep_alive = headers.get("connection", "").lower() != "close"
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        if status in (204, 304) or status < 200:
            self._chunked, length = False, "0"
        #: Bytes left in the body (not chunked) or in the current chunk (chunked); None: until close.
        self._left: int | None = int(length) if length is not None and not self._chunked else None
        if self._chunked:
            self._left = 0
        elif self._left is None:
            self.keep_alive = False
        self._done = self._left == 0 and not self._chunked

    def _next_chunk(self) -> bool:
        """Move to the next chunk; False at the last one (trailers read)."""
        if self._left == 0 and self._chunked and not self._done:
            line = self._fp.readline(_LINE_MAX)
            if line in (b"\r\n", b"\n"):  # the CRLF that ends the previous chunk
                line = self._fp.readline(_LINE_MAX)
            if not line:
                raise ProtocolError("the connection closed in the middle of a response")
            size = int(line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while self._fp.readline(_LINE_MAX) not in (b"\r\n", b"\n", b""):
                    pass
                self._done = True
            self._left = size
        return not self._done

    def read(self, size: int = 256 * 1024) -> bytes:
        """Up to `size` bytes of the body; b"" at its end."""
        if self._done or not self._next_chunk():
            return b""
        want = size if self._left is None else min(size, self._left)
        data = self._fp.read1(want) if self._left is not None else self._fp.read1(size)
        if not data:
            if self._left is None:
                self._done = True
                return b""
            raise ProtocolError("the connection closed in the middle of a response")
        if self._left is not None:
            self._left -= len(data)
            if self._left == 0 and not self._chunked:
                self._done = True
        return data

    def readline(self) -> bytes:
        """The next line of the body with its line ending (b"" at the end); lines may span chunks."""
        parts = []
        while not self._done and self._next_chunk():
            limit = -1 if self._left is None else self._left
            part = self._fp.readline(limit)
            if not part:
                if self._left is None:
                    self._done = True
                    break
                raise ProtocolError("the connection closed in the middle of a response")
            if self._left is not None:
                self._left -= len(part)
                if self._left == 0 and not self._chunked:
                    self._done = True
            parts.append(part)
            if part.endswith(b"\n"):
                break
        return b"".join(parts)

    def read_all(self) -> bytes:
        chunks = []
        while data := self.read():
            chunks.append(data)
        return b"".join(chunks)

    def close(self) -> None:
        """Done with this response: the connection is reused when the body was read whole."""
        if not (self._done and self.keep_alive):
            self._conn.close()

    def discard(self) -> None:
        """Close the connection, whatever is left unread."""
        self._conn.close()


class Connection:
    """One HTTP/1.1 connection to `host:port`, or to the Unix socket `unix_path`."""

    def __init__(self, host: str, port: int, *, unix_path: str | None = None, tls: bool = False) -> None:
        self.host, self.port, self.unix_path, self.tls = host, port, unix_path, tls
        self.sock: socket.socket | None = None
        self.fp: io.BufferedReader = None  # type: ignore[assignment]
        #: How many requests this connection carried (a reused one may have been closed by the peer).
        self.used = 0

    def connect(self, timeout: float) -> None:
        if self.unix_path is not None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(self.unix_path)
            except OSError:
                sock.close()
                raise
        else:
            # A bytes host name skips loading the IDNA codec, which a str one costs on every start.
            sock = socket.create_connection((self.host.encode(), self.port), timeout)  # type: ignore[arg-type]
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls:
                import ssl

                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
        self.sock = sock
        self.fp = sock.makefile("rb")  # a BufferedReader
        self.used = 0

    def close(self) -> None:
        if self.sock is not None:
            self.fp.close()
            self.sock.close()
            self.sock = None

    def send(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None, timeout: float
    ) -> Response:
        """Send one request and read the status line and headers of its response."""
        if self.sock is None:
            self.connect(timeout)
        assert self.sock is not None
        self.sock.settimeout(timeout)
        host = "localhost" if self.unix_path is not None else f"{self.host}:{self.port}"
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None or method in ("POST", "PUT"):
            lines.append(f"Content-Length: {len(body or b'')}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.used += 1
        self.sock.sendall(head + body if body else head)
        status_line = self.fp.readline(_LINE_MAX)
        if not status_line:
            raise ConnectionResetError("the daemon closed the connection without answering")
        parts = status_line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"not an HTTP answer: {status_line[:80]!r}")
        fields: dict[str, str] = {}
        while True:
            line = self.fp.readline(_LINE_MAX)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise ProtocolError("the connection closed in the middle of the headers")
            name, _, value = line.decode("latin-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        return Response(self, int(parts[1]), fields)
