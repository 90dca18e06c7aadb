"""A small HTTP/1.1 client on a plain socket, for the CLI: keep-alive, chunked bodies, line reads.

`http.client` pulls in the `email` package and `ssl` and costs more to import than the whole
rest of a `workbench run`; the daemon speaks plain HTTP/1.1 on loopback or a Unix socket, which
needs only this. Even the `socket` module (selectors, enums, file objects) is loaded only for a
host name or TLS: an IP address or a Unix socket is reached with `_socket`, beneath it. (An
`https://` URL still works: `ssl` is then imported on demand.)
"""

from __future__ import annotations

import _socket

#: The longest status line, header line or chunk-size line accepted.
_LINE_MAX = 64 * 1024
#: How much one `recv` asks for.
_RECV = 256 * 1024

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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


class _Reader:
    """Buffered reads from a socket: the `readline` and `read1` of a file object, over `recv`."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._buf = bytearray()
        #: How far `_buf` is known to hold no newline.
        self._scanned = 0

    def _fill(self) -> bool:
        data = self._sock.recv(_RECV)
        self._buf += data
        return bool(data)

    def readline(self, limit: int = -1) -> bytes:
        """Up to and with the next b"\n", at most `limit` bytes (-1: any); less at the end."""
        while True:
            end = self._buf.find(b"\n", self._scanned)
            if end >= 0 and (limit < 0 or end < limit):
                size = end + 1
                break
            self._scanned = len(self._buf)
            if 0 <= limit <= len(self._buf):
                size = limit
                break
            if not self._fill():
                size = len(self._buf)
                break
        return self._take(size)

    def read1(self, size: int) -> bytes:
        """What is buffered (after one `recv` if nothing is), at most `size` bytes; b"" at the end."""
        if not self._buf and not self._fill():
            return b""
        return self._take(size)

    def _take(self, size: int) -> bytes:
        out = bytes(self._buf[:size])
        del self._buf[:size]
        self._scanned = max(0, self._scanned - size)
        return out

    def close(self) -> None:
        self._buf.clear()


def _is_address(host: str) -> bool:
    return ":" in host or host.replace(".", "").isdigit()


class Connection:
    """One HTTP/1.1 connection to `host:port`, or to the Unix socket `unix_path`."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        unix_path: str | None = None,
        tls: bool = False,
        ca_file: str | None = None,
    ) -> None:
        self.host, self.port, self.unix_path, self.tls = host, port, unix_path, tls
        #: The CA certificate (PEM) a TLS daemon is verified against; None: the system's store.
        self.ca_file = ca_file
        self.sock: Any = None
        self.fp: _Reader = None  # type: ignore[assignment]
        #: How many requests this connection carried (a reused one may have been closed by the peer).
        self.used = 0

    def connect(self, timeout: float) -> None:
        if self.unix_path is not None or (_is_address(self.host) and not self.tls):
            family = (
                _socket.AF_UNIX
                if self.unix_path is not None
                else _socket.AF_INET6
                if ":" in self.host
                else _socket.AF_INET
            )
            sock: Any = _socket.socket(family, _socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(self.unix_path if self.unix_path is not None else (self.host, self.port))
            except OSError:
                sock.close()
                raise
        else:
            import socket

            # A bytes host name skips loading the IDNA codec, which a str one costs on every start.
            sock = socket.create_connection((self.host.encode(), self.port), timeout)  # type: ignore[arg-type]
            if self.tls:
                import ssl

                context = ssl.create_default_context(cafile=self.ca_file)
                try:
                    sock = context.wrap_socket(sock, server_hostname=self.host)
                except BaseException:
                    sock.close()
                    raise
        if self.unix_path is None:
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        self.sock = sock
        self.fp = _Reader(sock)
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
        name = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address is bracketed
        host = "localhost" if self.unix_path is not None else f"{name}:{self.port}"
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
